"""The MCP server: the tools of :mod:`kg_decoder.mcp.tools` on the official SDK's ``MCPServer``, each
with a description a model reads, an input schema and an output schema; every document and chunk as
a resource; the prompt "answer with citations".

A typed error (:class:`~kg_decoder.model.errors.KgDecoderError`) becomes an MCP tool error carrying
its code and message; anything else is the SDK's generic tool error, its traceback logged on stderr,
never sent. The server goes on either way.
"""

import base64
import functools
from contextlib import asynccontextmanager
from typing import Annotated, Callable, Optional

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp_types import CallToolResult, ImageContent, Resource, TextContent, Tool, ToolAnnotations
from pydantic import BaseModel, Field

from ..graph.vocabulary import term_context
from ..model import software_versions
from ..model.errors import KgDecoderError
from ..serve import worker_pool
from . import resources, schemas, tools
from .tools import McpSettings

INSTRUCTIONS = """\
kg-decoder's store of decoded documents: every page, section, element, table and chunk, with the boxes
on the pages that hold their words. Use it to answer with citations a reader can check:
- search finds a quote (words as they are written) in every document, with its page and boxes;
- trace takes a quote (in a document, or anywhere) or a fact and gives its page, its boxes, how far
  each box was verified, and the W3C Web Annotation of the place; a quote found nowhere is said so;
- page_image shows a page, with a quote's boxes drawn;
- list_documents and document_outline say what the store holds; sparql and audit query it.
Quote the documents' own words; never cite a place trace did not find."""

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                            open_world_hint=False)


class FactInput(BaseModel):
    """A fact an extractor took from a document, with the words that state it."""

    subject: str = Field(description="the subject's IRI")
    predicate: str = Field(description="the predicate's IRI")
    object: str = Field(description="an IRI written <like this>, else a plain literal")
    quote: Optional[str] = Field(None, description="the words of the document that state the fact")
    chunk: Optional[str] = Field(None, description="the chunk's IRI (urn:chunk:...)")
    document: Optional[str] = Field(None, description="without chunk: the document whose chunk holds the quote "
                                                      "(without either, the text index finds it)")


def _typed(function: Callable) -> Callable:
    """``function`` with kg-decoder's typed errors as MCP tool errors (code and message)."""

    @functools.wraps(function)
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except KgDecoderError as error:
            raise ToolError(tools.typed_message(error)) from None

    return call


def build_server(settings: McpSettings, request_workers: int = 2, worker_memory_mb: int = 1024) -> MCPServer:
    """The MCP server over ``settings.store``. The request workers (``request_workers`` of them; 0: none,
    the work runs in the server's threads) start with the server's session, once its transport holds
    the standard streams."""

    @asynccontextmanager
    async def lifespan(_server):
        if request_workers > 0 and settings.workers is None:
            settings.workers = await anyio.to_thread.run_sync(
                lambda: worker_pool(settings.store, request_workers, worker_memory_mb, request_workers,
                                            reserve=0))
        yield {}

    server = _KgMcpServer(settings, name="kg-decoder", title="kg-decoder: cited answers from decoded documents",
                          instructions=INSTRUCTIONS, version=software_versions()["kg-decoder"], lifespan=lifespan,
                          log_level="WARNING")
    _add_tools(server, settings)
    _add_resources(server, settings)
    _add_prompt(server)
    return server


class _KgMcpServer(MCPServer):
    """MCPServer whose resource list is the store's documents and chunks as they are now, and whose
    tools' output schemas are published without references (:func:`schemas.published`): what each
    client checks every answer against."""

    def __init__(self, settings: McpSettings, **kwargs) -> None:
        super().__init__(**kwargs)
        self._kg_settings = settings

    async def list_tools(self) -> list[Tool]:
        listed = await super().list_tools()
        for tool in listed:
            if tool.output_schema is not None:
                tool.output_schema = schemas.published(tool.output_schema)
        return listed

    async def list_resources(self) -> list[Resource]:
        listed = await anyio.to_thread.run_sync(resources.listed_resources, self._kg_settings)
        return [Resource(uri=uri, name=name, description=description, mime_type="application/json")
                for uri, name, description in listed] + await super().list_resources()


Limit = Annotated[int, Field(ge=1, le=tools.MAX_PLACES, description="places to answer with")]
Offset = Annotated[int, Field(ge=0, description="places to skip (ranked: as written first)")]
Document = Annotated[Optional[str], Field(description="a document's IRI, its uuid or its file name "
                                                      "(list_documents names them)")]


def _add_tools(server: MCPServer, settings: McpSettings) -> None:
    _add_finding_tools(server, settings)
    _add_store_tools(server, settings)
    _add_writing_tools(server, settings)


def _add_finding_tools(server: MCPServer, settings: McpSettings) -> None:
    """search, trace and page_image: where words are, and the page that shows them."""

    @_typed
    def search(quote: Annotated[str, Field(description="the words to find, as the document writes them (case, "
                                                      "ligatures, hyphenation and spacing do not matter)")],
               document: Document = None, limit: Limit = 10, offset: Offset = 0) -> schemas.SearchAnswer:
        return tools.search_tool(settings, quote, document, limit, offset)

    server.add_tool(search, title="Search the documents for a quote", annotations=READ_ONLY, description=(
        "Find where a quote occurs in the decoded documents (all of them, or one). Each place gives the "
        "document, the page (or section), the text around the quote, the rectangles on the page that hold its "
        "words and how far each was verified against the page. No place means no document holds these words."))

    @_typed
    def trace(quote: Annotated[Optional[str], Field(description="a quote to trace to its page")] = None,
              document: Document = None,
              subject: Annotated[Optional[str], Field(description="a fact's subject IRI (with predicate and "
                                                                  "object, instead of a quote)")] = None,
              predicate: Annotated[Optional[str], Field(description="a fact's predicate IRI")] = None,
              object: Annotated[Optional[str], Field(description="a fact's object: an IRI written <like this>, "
                                                                 "else a literal")] = None,
              limit: Limit = 5, offset: Offset = 0) -> schemas.TraceAnswer:
        return tools.trace_tool(settings, quote, document, subject, predicate, object, limit, offset)

    server.add_tool(trace, title="Trace a quote or a fact to its page", annotations=READ_ONLY, description=(
        "Trace a quote (in a document, or in every document) or a stored fact (subject, predicate, object) back "
        "to where it comes from: document, page, section, chunks, the boxes of the words on the page with their "
        "verification (verified, element, unverified), for a fact the verdicts of its source's later versions "
        "(current, moved, changed, removed), and the places as a W3C Web Annotation. An invented or paraphrased "
        "quote gives no place, and the answer says so: cite only what this finds."))

    @_typed
    def page_image(document: Annotated[str, Field(description="a document's IRI, uuid or file name")],
                   page: Annotated[int, Field(ge=1, description="the page number, from 1")],
                   quote: Annotated[Optional[str], Field(description="a quote on that page whose boxes to draw")]
                   = None,
                   max_side: Annotated[int, Field(ge=256, le=2048, description="longest side in pixels")] = 1568,
                   ) -> Annotated[CallToolResult, schemas.PageImageAnswer]:
        png, answer = tools.page_image_tool(settings, document, page, quote, max_side)
        return CallToolResult(content=[ImageContent(type="image", data=base64.b64encode(png).decode("ascii"),
                                                    mime_type="image/png"),
                                       TextContent(type="text", text=answer.model_dump_json())],
                              structured_content=answer.model_dump(mode="json"))

    server.add_tool(page_image, title="Show a page", annotations=READ_ONLY, description=(
        "A page of a document as a PNG image (PDF pages and images as they are; Office documents as their "
        "rendering draws them), scaled to at most max_side pixels, with the boxes of a quote drawn on it: red "
        "for verified boxes, orange for an element's box."))


def _add_store_tools(server: MCPServer, settings: McpSettings) -> None:
    """list_documents, document_outline, sparql and audit: what the store holds."""
    @_typed
    def list_documents(format: Annotated[Optional[str], Field(description="only this format: pdf, docx, html...")]
                       = None,
                       limit: Annotated[int, Field(ge=1, le=1000)] = 100,
                       offset: Annotated[int, Field(ge=0)] = 0) -> schemas.DocumentList:
        return tools.list_documents_tool(settings, format, limit, offset)

    server.add_tool(list_documents, title="List the documents", annotations=READ_ONLY, description=(
        "The decoded documents, by file name: IRI, format, title, counts of pages, sections, elements, tables "
        "and images, and the resource URI of each document's text."))

    @_typed
    def document_outline(document: Annotated[str, Field(description="a document's IRI, uuid or file name")]
                         ) -> schemas.DocumentOutline:
        return tools.document_outline_tool(settings, document)

    server.add_tool(document_outline, title="Outline a document", annotations=READ_ONLY, description=(
        "What one document holds: its pages and sections (IRI, page number, length), its tables (page, rows, "
        "columns), its images, and counts of elements by category and of chunks."))

    @_typed
    def sparql(query: Annotated[str, Field(description="a SPARQL 1.1 SELECT, ASK or CONSTRUCT query")]
               ) -> schemas.SparqlAnswer:
        return tools.sparql_tool(settings, query)

    server.add_tool(sparql, title="Query the graph with SPARQL", annotations=READ_ONLY, description=(
        "Run a read-only SPARQL query over the provenance graph (named graph <urn:graph:source>: tg:Document, "
        "tg:Page, tg:Section, tg:Element, tg:Chunk... with prov:wasDerivedFrom, tg:pageNumber, tg:charOffset) "
        f"and the facts (default graph). Time-limited and capped at {settings.row_cap} rows; SERVICE and LOAD "
        f"are refused. tg: is <{term_context()['tg']}>."))

    @_typed
    def audit(name: Annotated[Optional[str], Field(description="one audit (e.g. audit-pages-without-text); "
                                                               "none: every audit")] = None,
              rows: Annotated[int, Field(ge=0, le=tools.MAX_AUDIT_ROWS, description="rows to show per audit")]
              = 20) -> schemas.AuditAnswer:
        return tools.audit_tool(settings, name, rows)

    names = ", ".join(definition.name for definition in tools.audit_definitions())
    server.add_tool(audit, title="Audit what the store covers", annotations=READ_ONLY, description=(
        "Run the coverage audits, a table each: finding audits list problems (pages without text, elements "
        "without a position, chunks without facts...), report audits give counts. The audits: " + names))


def _add_writing_tools(server: MCPServer, settings: McpSettings) -> None:
    """decode and add_facts: refused unless the server was started with --allow-writes."""
    @_typed
    def decode(paths: Annotated[list[str], Field(description="files or folders under the server's roots "
                                                              "(relative: to the first root)")],
               chunk: Annotated[bool, Field(description="chunk each document too (facts need chunks)")] = True,
               ) -> schemas.DecodeAnswer:
        return tools.decode_tool(settings, paths, chunk)

    server.add_tool(decode, title="Decode files into the store", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False), description=(
        "Decode files (PDF, Office, HTML, Markdown, text, e-mail, images...) from under the server's roots into "
        "the store, in an isolated worker, and chunk them. Needs a server started with --allow-writes; paths "
        "outside its --root folders are refused."))

    @_typed
    def add_facts(facts: Annotated[list[FactInput], Field(description="the facts, each with its quote and its "
                                                                      "chunk (or document)")],
                  extractor: Annotated[Optional[str], Field(description="who extracted them")] = None,
                  ) -> schemas.FactsAnswer:
        return tools.add_facts_tool(settings, facts, extractor)

    server.add_tool(add_facts, title="Add facts with their quotes", annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False), description=(
        "Store facts (subject, predicate, object) an extractor took from documents, each grounded in the words "
        "that state it, so that trace leads from the fact to its page and boxes. Give each fact's quote and "
        "its chunk, or its document, or neither (the store's text index finds the chunk). Each gets a verdict: "
        "exact, normalised, fuzzy (with a score), inferred, or unsupported (stored without a box: the quote is "
        "not in the text); a malformed fact is refused with its reason, the others stored. Needs a server "
        "started with --allow-writes."))


def _add_resources(server: MCPServer, settings: McpSettings) -> None:
    def readable(function: Callable) -> Callable:
        def read(uuid: str) -> str:
            try:
                return function(settings, uuid)
            except KgDecoderError as error:
                raise ResourceError(tools.typed_message(error)) from None

        read.__name__, read.__doc__ = function.__name__, function.__doc__
        return read

    server.resource("kg-decoder://document/{uuid}", name="document", mime_type="application/json",
                    description="A decoded document: its IRI, then each page or section with its IRI, page number "
                                "and text")(readable(resources.document_text))
    server.resource("kg-decoder://chunk/{uuid}", name="chunk", mime_type="application/json",
                    description="A chunk: its IRI, document, page or section, text, and the boxes on the pages "
                                "its text covers")(readable(resources.chunk_text))


ANSWER_WITH_CITATIONS = """\
Answer the question below from the documents in the kg-decoder store, with citations a reader can check.

1. Find the passages that answer it: search (words you expect the documents to use), list_documents
   and document_outline to see what there is; read a document's or chunk's resource for context.
2. For every claim, take the exact words of the document that support it, and trace them (trace with
   quote and document). Keep only quotes trace finds; drop or rephrase any claim without one.
3. Answer in your own words, each claim followed by its citation: the quote in quotation marks, the
   document's file name, the page number, and whether the boxes were verified.
4. Say plainly what the documents do not answer.

Question: {question}"""


def _add_prompt(server: MCPServer) -> None:
    def answer_with_citations(question: Annotated[str, Field(description="the question to answer")]) -> str:
        return ANSWER_WITH_CITATIONS.format(question=question)

    server.prompt(name="answer_with_citations", title="Answer with citations", description=(
        "Answer a question from the store's documents, quoting their words and tracing each quote to its page "
        "and boxes."))(answer_with_citations)

