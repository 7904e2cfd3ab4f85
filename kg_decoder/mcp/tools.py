"""What each MCP tool does, over the same public API and bounded calls as the web app: plain
functions of the server's :class:`McpSettings` and the tool's arguments, returning the models of
:mod:`kg_decoder.mcp.schemas`. Every failure is a :class:`KgDecoderError` with its typed message;
:mod:`kg_decoder.mcp.server` turns it into an MCP tool error.

The work a client can make expensive runs where the web server runs it: traces, searches, page
drawings and the page reads in the request workers (``kg_decoder.serve``), within the server's
time limit; SPARQL through the web's guard (SERVICE and LOAD refused, a time limit, a row cap);
decodes in the decoding worker; writes one at a time, and only when the server allows them.
"""

from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..cite.annotations import web_annotations
from ..cite.chunks import chunk_document
from ..cite.fact_lines import add_fact_lines
from ..versions import decode
from ..graph.store import KgStore
from ..graph.terms import is_iri
from ..model import RENDERED_PDF_POINTS, Box, ChunkOptions, DecodeOptions, TraceSource
from ..model.errors import (DecodeError, Forbidden, KgDecoderError, LimitExceeded, RequestError, UnknownEntity)
from ..quality.audits import audit_definitions, run_audits
from ..serve import (Bounds, WorkerPool, bounded_page_image, bounded_read, bounded_rendered_page_image,
                     bounded_search, bounded_trace, document_iri, run_query)
from . import schemas
from .images import fit_and_draw

MAX_PLACES = 50  # places one search or trace answers with
MAX_FACTS = 1000  # facts one add_facts call takes
MAX_DECODE_FILES = 50  # files one decode call takes (a folder's included)
MAX_LISTED = 200  # pages, sections, tables or images one outline lists
MAX_AUDIT_ROWS = 200  # rows of one audit in an answer
MAX_TEXT_CHARACTERS = 200_000  # of a document or chunk resource
MAX_ANSWER_BYTES = 2_000_000  # of a SPARQL answer, as the store writes it
_ORDER = {"verified": 0, "element": 1, "unverified": 2}


@dataclass
class McpSettings:
    """What the tools share: the store, the limits, the workers, the roots files may be read under, and
    whether the server writes."""

    store: KgStore
    roots: tuple[Path, ...] = ()
    allow_writes: bool = False
    bounds: Bounds = field(default_factory=Bounds)
    workers: Optional[WorkerPool] = None
    row_cap: int = 1000
    allow_service: tuple[str, ...] = ()
    decode_options: DecodeOptions = field(default_factory=DecodeOptions)
    chunk_options: ChunkOptions = field(default_factory=ChunkOptions)
    write_lock: threading.Lock = field(default_factory=threading.Lock)

    def require_writes(self, what: str) -> None:
        if not self.allow_writes:
            raise Forbidden(f"{what} writes to the store, and this server is read-only: start it with "
                            f"kg-decoder mcp --allow-writes")
        if self.store.read_only:
            raise Forbidden(f"{what} writes to the store, and the store is open read-only (another process "
                            f"holds it for writing)")


# ---------------------------------------------------------------- search and trace


def search_tool(settings: McpSettings, quote: str, document: Optional[str], limit: int,
                offset: int) -> schemas.SearchAnswer:
    if not quote or not quote.strip():
        raise RequestError("give the quote to search for", code="bad-query")
    _check_page(limit, offset)
    store = settings.store
    if document:
        iri = _traced_document(store, document)
        sources = _trace(settings, {"quote": quote, "document": iri, "offset": offset, "limit": limit})
        places = [_search_place(store, source) for source in sources]
        total, exact = offset + len(places), len(places) < limit
    else:
        found = bounded_search(store, quote, limit, offset, boxes=True, bounds=settings.bounds,
                               workers=settings.workers)
        places = [_search_place(store, hit.source, hit) for hit in found.hits]
        total, exact = found.total, found.total_exact
    where = f" in {document}" if document else ""
    if places:
        message = f"{'' if exact else 'at least '}{total} places{where}; places {offset + 1}-{offset + len(places)} here"
    elif offset:
        message = f"no places{where} after the first {offset}"
    else:
        message = (f"no document{where} holds this quote: it is not in the store as written (case, ligatures, "
                   f"hyphens and spacing are folded); try fewer or other words")
    return schemas.SearchAnswer(query=quote, found=bool(places), message=message, total=total, total_exact=exact,
                                offset=offset, places=places)


def trace_tool(settings: McpSettings, quote: Optional[str], document: Optional[str], subject: Optional[str],
               predicate: Optional[str], object: Optional[str], limit: int, offset: int) -> schemas.TraceAnswer:
    _check_page(limit, offset)
    store = settings.store
    fact_given = [value is not None for value in (subject, predicate, object)]
    if any(fact_given):
        if not all(fact_given) or quote is not None:
            raise RequestError("trace either a fact (subject, predicate and object) or a quote, not both",
                               code="bad-trace")
        sources = _trace(settings, {"fact": (subject, predicate, object)})
        what = "this fact"
    elif quote is not None and quote.strip():
        iri = _traced_document(store, document) if document else None
        sources = _trace(settings, {"quote": quote, "document": iri, "offset": offset, "limit": limit})
        what = "this quote"
    else:
        raise RequestError("give a quote (and optionally its document), or a fact: subject, predicate, object",
                           code="bad-trace")
    if sources:
        message = f"{len(sources)} place{'s' if len(sources) > 1 else ''} found for {what}"
    elif what == "this fact":
        message = "no place found: no subgraph in the store contains this fact (add it with add_facts first)"
    else:
        message = (f"no place found: no {'such document holds' if document else 'document holds'} this quote "
                   f"as written; it may be invented or paraphrased")
    return schemas.TraceAnswer(found=bool(sources), message=message,
                               places=[_traced_place(source) for source in sources],
                               annotation=web_annotations(sources))


def _trace(settings: McpSettings, request: dict) -> list[TraceSource]:
    return bounded_trace(settings.store, request, settings.bounds, settings.workers)


def _traced_document(store: KgStore, name: str) -> str:
    """The IRI of the document a trace is asked to look in. A document IRI is taken as it is: the
    trace asks the store whether it holds it, in its worker, and answers UnknownEntity with the words
    :func:`document_iri` would (asking here too cost a query of the server's own, 0.3 ms a trace).
    A uuid or a file name is looked up.

    >>> _traced_document(None, " urn:document:df7bac5b-71d7-5db0-b1e1-2a203cf837b3 ")
    'urn:document:df7bac5b-71d7-5db0-b1e1-2a203cf837b3'
    """
    stripped = name.strip()
    if stripped.startswith("urn:document:") and is_iri(stripped):
        return stripped
    return document_iri(store, name)


def _check_page(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_PLACES:
        raise RequestError(f"limit is from 1 to {MAX_PLACES}", code="bad-limit")
    if offset < 0:
        raise RequestError("offset is 0 or more", code="bad-offset")


def _boxes(boxes: Iterable[Box]) -> list[schemas.PageBox]:
    return [schemas.PageBox(page_number=box.page_number, left=box.left, top=box.top, right=box.right,
                            bottom=box.bottom, page_width=box.page_width, page_height=box.page_height,
                            coordinate_system=box.coordinate_system, verification=str(box.verification))
            for box in boxes]


def verification_of(boxes: Sequence[Box]) -> str:
    """The weakest verification of ``boxes``; "none" without any.

    >>> verification_of([])
    'none'
    """
    if not boxes:
        return "none"
    return max((str(box.verification) for box in boxes), key=lambda value: _ORDER.get(value, 3))


def _search_place(store: KgStore, source: Optional[TraceSource], hit=None) -> schemas.SearchPlace:
    if hit is not None:
        before, after = hit.before, hit.after
        segment, kind, start, end, quote = hit.segment, hit.segment_kind, hit.start, hit.end, hit.quote
        document, file_name, page_number, as_written = hit.document, hit.file_name, hit.page_number, hit.as_written
    else:
        segment, kind, start, end, quote = (source.segment, source.segment_kind, source.start, source.end,
                                            source.quote)
        document, file_name, page_number = source.document.iri, source.document.file_name, source.page_number
        before, after = _around(store, segment, start, end)
        as_written = True
    boxes = source.boxes if source is not None else []
    return schemas.SearchPlace(document=document, file_name=file_name, page_number=page_number, segment=segment,
                               segment_kind=kind, start=start, end=end, quote=quote, as_written=as_written,
                               before=before, after=after, verification=verification_of(boxes),
                               boxes=_boxes(boxes), chunks=list(source.chunks) if source is not None else [])


def _around(store: KgStore, segment: str, start: int, end: int, width: int = 80) -> tuple[str, str]:
    info = store.segment_info(segment)
    if info is None:
        return "", ""
    text = store.text(info.sha256, segment)
    return " ".join(text[max(0, start - width):start].split()), " ".join(text[end:end + width].split())


def _traced_place(source: TraceSource) -> schemas.TracedPlace:
    latest = None
    if source.latest is not None:
        latest = schemas.LatestPlace(document=source.latest.document.iri, page_number=source.latest.page_number,
                                     segment=source.latest.segment, quote=source.latest.quote,
                                     verification=verification_of(source.latest.boxes),
                                     boxes=_boxes(source.latest.boxes))
    return schemas.TracedPlace(
        document=source.document.iri, file_name=source.document.file_name, title=source.document.title,
        mime_type=source.document.mime_type, page_number=source.page_number, page=source.page,
        section=source.section, heading_path=list(source.heading_path), segment=source.segment,
        segment_kind=source.segment_kind, start=source.start, end=source.end, quote=source.quote,
        chunks=list(source.chunks), fact=source.fact, subgraph=source.subgraph,
        elements=[element.iri for element in source.elements], verification=verification_of(source.boxes),
        boxes=_boxes(source.boxes),
        verdicts=[schemas.VerdictStep(source=step.source, version=step.version, document=step.document,
                                      verdict=str(step.verdict), page_number=step.page_number,
                                      previous_page_number=step.previous_page_number, text=step.text,
                                      previous_text=step.previous_text) for step in source.verdicts],
        latest=latest)


# ---------------------------------------------------------------- pages


def page_image_tool(settings: McpSettings, document: str, page: int, quote: Optional[str],
                    max_side: int) -> tuple[bytes, schemas.PageImageAnswer]:
    """The page as a PNG at most ``max_side`` pixels on its longer side, with the boxes of ``quote`` on
    it drawn, and what was drawn."""
    store = settings.store
    iri = document_iri(store, document)
    if page < 1:
        raise RequestError("pages are counted from 1", code="bad-page")
    own = [segment for segment in store.document_segments(iri) if segment.kind == "page" and
           segment.page_number == page]
    if own:
        png = bounded_page_image(store, own[0].segment, settings.bounds, settings.workers)
        drawn_from = "page"
    elif store.rendering_run(iri) is not None:
        png = bounded_rendered_page_image(store, iri, page, settings.bounds, settings.workers)
        drawn_from = "rendering"
    else:
        raise UnknownEntity(f"{document} has no page {page} to draw (see document_outline for its pages)")
    boxes: list[Box] = []
    if quote:
        for source in _trace(settings, {"quote": quote, "document": iri, "limit": MAX_PLACES}):
            boxes += [box for box in source.boxes if box.page_number == page and
                      (box.coordinate_system == RENDERED_PDF_POINTS) == (drawn_from == "rendering")]
    image, width, height = fit_and_draw(png, boxes, max_side)
    return image, schemas.PageImageAnswer(document=iri, page_number=page, drawn_from=drawn_from, width=width,
                                          height=height, mime_type="image/png", boxes_drawn=len(boxes))


# ---------------------------------------------------------------- documents


def list_documents_tool(settings: McpSettings, format: Optional[str], limit: int,
                        offset: int) -> schemas.DocumentList:
    if not 1 <= limit <= 1000 or offset < 0:
        raise RequestError("limit is from 1 to 1000, offset 0 or more", code="bad-limit")
    listed = bounded_read(settings.store, "documents_page", format or None, offset, limit, bounds=settings.bounds,
                          workers=settings.workers)
    return schemas.DocumentList(total=listed.total, offset=listed.offset, left_out=listed.left_out, documents=[
        schemas.DocumentItem(document=d.document, file_name=d.file_name, title=d.title, format=d.format,
                             mime_type=d.mime_type, pages=d.pages, sections=d.sections, elements=d.elements,
                             tables=d.tables, images=d.images, resource=document_resource_uri(d.document))
        for d in listed.items])


def document_outline_tool(settings: McpSettings, document: str) -> schemas.DocumentOutline:
    store = settings.store
    iri = document_iri(store, document)
    view = bounded_read(store, "document_view", iri, bounds=settings.bounds, workers=settings.workers)
    summary = view.summary
    categories: dict[str, int] = {}
    for element in view.elements:
        categories[element.element.category] = categories.get(element.element.category, 0) + 1
    tables = [schemas.TableItem(element=e.element.element, page_number=e.element.page_number,
                                rows=max((c.row + c.row_span for c in e.cells), default=0),
                                columns=max((c.column + c.column_span for c in e.cells), default=0))
              for e in view.elements if e.element.category == "Table"]
    images = [schemas.ImageItem(image=i.iri, page_number=i.page_number, width=i.width, height=i.height,
                                has_text=bool(i.image_text)) for i in view.images]
    segments = [schemas.SegmentItem(segment=s.segment, kind=s.kind, page_number=s.page_number,
                                    characters=s.char_length) for s in view.segments]
    counts = {"pages": sum(1 for s in view.segments if s.kind == "page"),
              "sections": sum(1 for s in view.segments if s.kind == "section"),
              "elements": len(view.elements), "tables": len(tables), "images": len(images),
              "chunks": len(store.document_chunks(iri))}
    counts.update({f"category:{name}": count for name, count in sorted(categories.items())})
    truncated = max(len(tables), len(images), len(segments)) > MAX_LISTED
    return schemas.DocumentOutline(document=iri, file_name=summary.file_name, title=summary.title,
                                   format=summary.format, mime_type=summary.mime_type, pages=summary.pages,
                                   counts=counts, segments=segments[:MAX_LISTED], tables=tables[:MAX_LISTED],
                                   images=images[:MAX_LISTED], truncated=truncated)


def document_resource_uri(iri: str) -> str:
    """``kg-decoder://document/<uuid>`` for ``urn:document:<uuid>`` (chunks alike).

    >>> document_resource_uri("urn:document:1234")
    'kg-decoder://document/1234'
    """
    _, kind, uuid = iri.split(":", 2)
    return f"kg-decoder://{kind}/{uuid}"


def sparql_tool(settings: McpSettings, query: str) -> schemas.SparqlAnswer:
    """A user's query through the web's guard and bounds: SERVICE and LOAD refused, the time limit,
    the row cap."""
    if not query or not query.strip():
        raise RequestError("give a SPARQL query", code="missing-query")
    answer = run_query(settings.store, query, accept="application/sparql-results+json, application/n-triples",
                       timeout=settings.bounds.seconds, row_cap=settings.row_cap,
                       allow_service=settings.allow_service, workers=settings.workers)
    if len(answer.body) > MAX_ANSWER_BYTES:
        raise LimitExceeded(f"the answer is over {MAX_ANSWER_BYTES} bytes: select fewer columns or rows (LIMIT)")
    if answer.content_type == "application/n-triples":
        text = answer.body.decode("utf-8")
        return schemas.SparqlAnswer(kind="construct", triples=text,
                                    row_count=sum(1 for line in text.splitlines() if line.strip()))
    body = json.loads(answer.body)
    if "boolean" in body:
        return schemas.SparqlAnswer(kind="ask", boolean=body["boolean"], row_count=1)
    columns = body.get("head", {}).get("vars", [])
    rows = [{column: binding[column].get("value") for column in columns if column in binding}
            for binding in body.get("results", {}).get("bindings", [])]
    return schemas.SparqlAnswer(kind="select", columns=columns, rows=rows, row_count=len(rows))


def audit_tool(settings: McpSettings, name: Optional[str], rows: int) -> schemas.AuditAnswer:
    if not 0 <= rows <= MAX_AUDIT_ROWS:
        raise RequestError(f"rows is from 0 to {MAX_AUDIT_ROWS}", code="bad-rows")
    definitions = {audit.name: audit for audit in audit_definitions()}
    tables = []
    if name:
        if name not in definitions:
            raise UnknownEntity(f"no audit {name[:100]}; the audits are: {', '.join(definitions)}")
        page = bounded_read(settings.store, "audit_page", name, bounds=settings.bounds, workers=settings.workers)
        audit = definitions[name]
        tables.append(schemas.AuditTable(audit=name, title=audit.title, finds=audit.finds, kind=audit.kind,
                                         columns=page.rows.columns, rows=page.rows.records()[:rows],
                                         total_rows=page.total))
    else:
        for audit in run_audits(settings.store, timeout=settings.bounds.seconds):
            tables.append(schemas.AuditTable(audit=audit.name, title=audit.title, finds=audit.finds,
                                             kind=audit.kind, columns=audit.table.columns,
                                             rows=audit.table.records()[:rows], total_rows=len(audit.table.rows),
                                             error=audit.error,
                                             seconds=None if audit.seconds is None else round(audit.seconds, 3)))
    return schemas.AuditAnswer(audits=tables, with_findings=sum(1 for t in tables if t.kind == "finding" and
                                                                t.total_rows))


# ---------------------------------------------------------------- writes


def within_roots(settings: McpSettings, name: str) -> Path:
    """The file or folder ``name`` names (relative: to the first root), symlinks resolved, if it is
    under one of the roots; Forbidden otherwise, and for a path that does not exist."""
    if not settings.roots:
        raise Forbidden("this server reads no files: start it with --root DIR")
    path = Path(os.path.expanduser(name))
    if not path.is_absolute():
        path = settings.roots[0] / path
    try:
        resolved = path.resolve(strict=True)
    except (OSError, RuntimeError, ValueError):  # ValueError: a NUL in the path
        resolved = None
    if resolved is None or not any(resolved.is_relative_to(root) for root in settings.roots):
        # the same answer for a path outside the roots and one that does not exist: nothing is told
        # of the machine's files beyond the roots
        raise Forbidden(f"{name[:200]} is not a file or folder under the server's roots "
                        f"({', '.join(str(root) for root in settings.roots)})")
    return resolved


def _files_under(folder: Path):
    """The files under a folder, hidden ones aside, in a fixed order, listed as they are walked."""
    for directory, folders, names in os.walk(folder):
        folders[:] = sorted(f for f in folders if not f.startswith("."))
        for name in sorted(names):
            if not name.startswith(".") and os.path.isfile(os.path.join(directory, name)):
                yield Path(directory) / name


def decode_tool(settings: McpSettings, paths: list[str], chunk: bool) -> schemas.DecodeAnswer:
    settings.require_writes("decode")
    if not paths:
        raise RequestError("give the paths of files or folders to decode", code="no-paths")
    files: dict[Path, None] = {}  # in the order found, each once
    for name in paths:
        path = within_roots(settings, name)
        for file in _files_under(path) if path.is_dir() else [path]:
            file = file.resolve()
            if any(file.is_relative_to(root) for root in settings.roots):
                files[file] = None  # a link inside a folder that leads out of the roots is left out
            if len(files) > MAX_DECODE_FILES:  # told before a large folder is listed to its end
                raise LimitExceeded(f"more than {MAX_DECODE_FILES} files: decode them in several calls")
    decoded = []
    for file in files:
        with settings.write_lock:
            try:
                result = decode(file, store=settings.store, options=settings.decode_options, record_failure=True)
            except DecodeError as exc:
                decoded.append(schemas.DecodedFile(path=str(file), status="failed", error=f"{exc.code}: {exc}"))
                continue
            chunks = 0
            if chunk:
                chunk_document(result.document, store=settings.store, options=settings.chunk_options,
                               in_worker=True)
                chunks = len(settings.store.document_chunks(result.document))
        decoded.append(schemas.DecodedFile(path=str(file), document=result.document, status=str(result.status),
                                           format=result.format, pages=result.pages, elements=result.elements,
                                           tables=result.tables, images=result.images, chunks=chunks))
    return schemas.DecodeAnswer(files=decoded)


def add_facts_tool(settings: McpSettings, facts: list, extractor: Optional[str]) -> schemas.FactsAnswer:
    """Facts with their evidence, grounded and stored in bulk (``kg_decoder.add_fact_lines``, the path of
    ``kg-decoder facts add``): each tied to its chunk, else to the chunk of its document that holds its
    quote best, else to the chunk the text index finds; each with its verdict (exact, normalised, fuzzy,
    inferred, unsupported) or refused with its reason; all in one transaction under the write lock."""
    settings.require_writes("add_facts")
    if not facts:
        raise RequestError("give at least one fact", code="no-facts")
    if len(facts) > MAX_FACTS:
        raise LimitExceeded(f"more than {MAX_FACTS} facts: add them in several calls")
    lines = []
    for fact in facts:
        line = {"s": fact.subject, "p": fact.predicate, "o": fact.object}
        for key in ("quote", "chunk", "document"):
            if getattr(fact, key):
                line[key] = getattr(fact, key)
        lines.append(line)
    with settings.write_lock:
        result = add_fact_lines(lines, store=settings.store, extractor=extractor, read_files=False,
                                batch_lines=MAX_FACTS)
    return schemas.FactsAnswer(facts=result.stored, counts=result.counts, outcomes=[
        schemas.FactOutcome(fact=outcome.line, grounding=str(outcome.grounding) if outcome.grounding else None,
                            chunk=outcome.chunk, subgraph=outcome.subgraph, score=outcome.score,
                            reason=outcome.reason) for outcome in result.outcomes])


def typed_message(error: KgDecoderError) -> str:
    """What a tool error says: the typed error's code and message.

    >>> typed_message(UnknownEntity("no document urn:document:x in the store"))
    'unknown-entity: no document urn:document:x in the store'
    """
    return f"{error.code}: {error}"
