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
from mcp_types import CallToolResult, ContentBlock, ImageContent, Resource, TextContent, Tool, ToolAnnotations
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
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


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
    tools publish the output schemas of their answers' models (:meth:`add_answering_tool`)."""

    def __init__(self, settings: McpSettings, **kwargs) -> None:
        super().__init__(**kwargs)
        self._kg_settings = settings
        self._kg_output_schemas: dict[str, dict] = {}

    def add_answering_tool(self, function: Callable, answer: type[BaseModel], **kwargs) -> None:
        """``function``, which returns :func:`_answered` ``answer``s, as a tool whose output schema is
        ``answer``'s, published without references (:func:`schemas.published`: what each client checks
        every answer against).

        The function is declared to return a ``CallToolResult``: the SDK passes it on as it is. Given
        the model instead, the SDK would serialise it twice (its structured content, and indented JSON
        for the text) and check it against the model again, which built it: on a trace 15 % of the
        server's CPU, and an answer twice the bytes a client reads (``docs/mcp.md``, Cost)."""
        self.add_tool(function, **kwargs)
        self._kg_output_schemas[function.__name__] = schemas.published(answer.model_json_schema())

    async def list_tools(self) -> list[Tool]:
        listed = await super().list_tools()
        for tool in listed:
            tool.output_schema = self._kg_output_schemas.get(tool.name, tool.output_schema)
        return listed

    async def list_resources(self) -> list[Resource]:
        listed = await anyio.to_thread.run_sync(resources.listed_resources, self._kg_settings)
        return [Resource(uri=uri, name=name, description=description, mime_type="application/json")
                for uri, name, description in listed] + await super().list_resources()


def _answered(answer: BaseModel, *content: ContentBlock) -> CallToolResult:
    """A tool's result: ``content`` (a picture), the answer as JSON text (what a client without
    structured content reads), and as structured content."""
    return CallToolResult(content=[*content, TextContent(type="text", text=answer.model_dump_json())],
                          structured_content=answer.model_dump(mode="json"))


Limit = Annotated[int, Field(ge=1, le=tools.MAX_PLACES, description="places to answer with")]
Offset = Annotated[int, Field(ge=0, description="places to skip (ranked: as written first)")]
Document = Annotated[Optional[str], Field(description="a document's IRI, its uuid or its file name "
                                                      "(list_documents names them)")]


def _add_tools(server: _KgMcpServer, settings: McpSettings) -> None:
    _add_finding_tools(server, settings)
    _add_store_tools(server, settings)
    _add_writing_tools(server, settings)


def _add_finding_tools(server: _KgMcpServer, settings: McpSettings) -> None:
    """search, trace and page_image: where words are, and the page that shows them."""

    @_typed
    def search(quote: Annotated[str, Field(description="the words to find, as the document writes them (case, "
                                                      "ligatures, hyphenation and spacing do not matter)")],
               document: Document = None, limit: Limit = 10, offset: Offset = 0) -> CallToolResult:
        return _answered(tools.search_tool(settings, quote, document, limit, offset))

    server.add_answering_tool(search, schemas.SearchAnswer, title="Search the documents for a quote",
                              annotations=READ_ONLY, description=(
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
              limit: Limit = 5, offset: Offset = 0) -> CallToolResult:
        return _answered(tools.trace_tool(settings, quote, document, subject, predicate, object, limit, offset))

    server.add_answering_tool(trace, schemas.TraceAnswer, title="Trace a quote or a fact to its page",
                              annotations=READ_ONLY, description=(
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
                   ) -> CallToolResult:
        png, answer = tools.page_image_tool(settings, document, page, quote, max_side)
        return _answered(answer, ImageContent(type="image", data=base64.b64encode(png).decode("ascii"),
                                              mime_type="image/png"))

    server.add_answering_tool(page_image, schemas.PageImageAnswer, title="Show a page", annotations=READ_ONLY,
                              description=(
        "A page of a document as a PNG image (PDF pages and images as they are; Office documents as their "
        "rendering draws them), scaled to at most max_side pixels, with the boxes of a quote drawn on it: red "
        "for verified boxes, orange for an element's box."))


def _add_store_tools(server: _KgMcpServer, settings: McpSettings) -> None:
    """list_documents, document_outline, sparql and audit: what the store holds."""
    @_typed
    def list_documents(format: Annotated[Optional[str], Field(description="only this format: pdf, docx, html...")]
                       = None,
                       limit: Annotated[int, Field(ge=1, le=1000)] = 100,
                       offset: Annotated[int, Field(ge=0)] = 0) -> CallToolResult:
        return _answered(tools.list_documents_tool(settings, format, limit, offset))

    server.add_answering_tool(list_documents, schemas.DocumentList, title="List the documents",
                              annotations=READ_ONLY, description=(
        "The decoded documents, by file name: IRI, format, title, counts of pages, sections, elements, tables "
        "and images, and the resource URI of each document's text."))

    @_typed
    def document_outline(document: Annotated[str, Field(description="a document's IRI, uuid or file name")]
                         ) -> CallToolResult:
        return _answered(tools.document_outline_tool(settings, document))

    server.add_answering_tool(document_outline, schemas.DocumentOutline, title="Outline a document",
                              annotations=READ_ONLY, description=(
        "What one document holds: its pages and sections (IRI, page number, length), its tables (page, rows, "
        "columns), its images, and counts of elements by category and of chunks."))

    @_typed
    def sparql(query: Annotated[str, Field(description="a SPARQL 1.1 SELECT, ASK or CONSTRUCT query")]
               ) -> CallToolResult:
        return _answered(tools.sparql_tool(settings, query))

    server.add_answering_tool(sparql, schemas.SparqlAnswer, title="Query the graph with SPARQL",
                              annotations=READ_ONLY, description=(
        "Run a read-only SPARQL query over the provenance graph (named graph <urn:graph:source>: tg:Document, "
        "tg:Page, tg:Section, tg:Element, tg:Chunk... with prov:wasDerivedFrom, tg:pageNumber, tg:charOffset) "
        f"and the facts (default graph). Time-limited and capped at {settings.row_cap} rows; SERVICE and LOAD "
        f"are refused. tg: is <{term_context()['tg']}>."))

    @_typed
    def audit(name: Annotated[Optional[str], Field(description="one audit (e.g. audit-pages-without-text); "
                                                               "none: every audit")] = None,
              rows: Annotated[int, Field(ge=0, le=tools.MAX_AUDIT_ROWS, description="rows to show per audit")]
              = 20) -> CallToolResult:
        return _answered(tools.audit_tool(settings, name, rows))

    names = ", ".join(definition.name for definition in tools.audit_definitions())
    server.add_answering_tool(audit, schemas.AuditAnswer, title="Audit what the store covers",
                              annotations=READ_ONLY, description=(
        "Run the coverage audits, a table each: finding audits list problems (pages without text, elements "
        "without a position, chunks without facts...), report audits give counts. The audits: " + names))


def _add_writing_tools(server: _KgMcpServer, settings: McpSettings) -> None:
    """decode and add_facts: refused unless the server was started with --allow-writes."""
    @_typed
    def decode(paths: Annotated[list[str], Field(description="files or folders under the server's roots "
                                                              "(relative: to the first root)")],
               chunk: Annotated[bool, Field(description="chunk each document too (facts need chunks)")] = True,
               ) -> CallToolResult:
        return _answered(tools.decode_tool(settings, paths, chunk))

    server.add_answering_tool(decode, schemas.DecodeAnswer, title="Decode files into the store",
                              annotations=WRITES, description=(
        "Decode files (PDF, Office, HTML, Markdown, text, e-mail, images...) from under the server's roots into "
        "the store, in an isolated worker, and chunk them. Needs a server started with --allow-writes; paths "
        "outside its --root folders are refused."))

    @_typed
    def add_facts(facts: Annotated[list[FactInput], Field(description="the facts, each with its quote and its "
                                                                      "chunk (or document)")],
                  extractor: Annotated[Optional[str], Field(description="who extracted them")] = None,
                  ) -> CallToolResult:
        return _answered(tools.add_facts_tool(settings, facts, extractor))

    server.add_answering_tool(add_facts, schemas.FactsAnswer, title="Add facts with their quotes",
                              annotations=WRITES, description=(
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

