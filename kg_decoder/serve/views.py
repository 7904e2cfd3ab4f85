"""What the web pages and the JSON API show, as dataclasses: a document with its parts, a trace
with the page picture's boxes in percent, the store at a glance."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import quote, urlencode

from ..cite.documents import document_named
from ..decode.backends import renders_pages
from ..graph.rows import DecodeRun, DocumentSummary, ElementRow, FactRow, SegmentRow, TableCellRow
from ..graph.store import KgStore
from ..model import (RENDERED_PDF_POINTS, DecodeResult, EmbeddedResult, ImageInfo, JsonResult, TextDocument,
                     TraceSource, cell_label, to_jsonable)
from ..model.errors import RequestError
from ..quality.audits import audit_definitions
from ..graph.queries import query_file


XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


@dataclass
class ElementView(JsonResult):
    element: ElementRow
    cells: list[TableCellRow] = field(default_factory=list)

    def to_json(self) -> dict:
        """The element and its cells, rows and columns counted from 1 as everything a person reads."""
        return to_jsonable(self.element) | {"cells": [
            to_jsonable(cell) | {"row": cell.row + 1, "column": cell.column + 1,
                                 "label": cell_label(cell.row + 1, cell.column + 1, cell.reference)}
            for cell in self.cells]}


@dataclass
class DocumentView(JsonResult):
    """A document with its pages and sections, elements (tables with their cells), images and decode run."""

    iri: str
    summary: DocumentSummary
    segments: list[SegmentRow]
    elements: list[ElementView]
    images: list[ImageInfo]
    activity: Optional[DecodeRun]

    def to_json(self) -> dict:
        return to_jsonable(self) | {"elements": [element.to_json() for element in self.elements]}


def document_iri(store: KgStore, identifier: str) -> str:
    """A document named as the command line names it (IRI, uuid, file name; a path by its file's
    name: a request never makes the server read a file); UnknownEntity if the store has none."""
    return document_named(identifier, store, read_files=False)


def document_view(store: KgStore, iri: str) -> DocumentView:
    [summary] = store.document_summaries(iri)
    elements = [ElementView(row, store.table_cells(row.element) if row.category == "Table" else [])
                for row in store.document_elements(iri)]
    return DocumentView(iri=iri, summary=summary, segments=store.document_segments(iri), elements=elements,
                        images=store.document_images(iri), activity=store.decode_run(iri))


@dataclass
class FactView:
    """A fact cited to a document, with the address of its trace (the fact's page)."""

    fact: FactRow
    trace_url: str


def fact_trace_url(s: str, p: str, o: str, object_is_iri: bool, datatype: Optional[str] = None,
                   language: Optional[str] = None) -> str:
    """The trace page of a fact: its three terms as text, the object's kind beside it (no brackets
    to write by hand).

    >>> fact_trace_url("http://ex.org/a", "http://ex.org/b", "c d", False)
    '/trace?s=http%3A%2F%2Fex.org%2Fa&p=http%3A%2F%2Fex.org%2Fb&o=c+d&object=literal'
    """
    fields = {"s": s, "p": p, "o": o, "object": "iri" if object_is_iri else "literal"}
    if datatype and datatype != XSD_STRING and not object_is_iri:
        fields["datatype"] = datatype
    if language and not object_is_iri:
        fields["language"] = language
    return "/trace?" + urlencode(fields)


def fact_object(o: str, kind: Optional[str], datatype: Optional[str] = None, language: Optional[str] = None):
    """A fact's object as a trace form sends it: ``kind`` "iri" or "literal" (with a datatype or a
    language), or None for the older form, where an IRI is written ``<...>``."""
    if kind == "iri":
        return {"type": "uri", "value": o.strip().removeprefix("<").removesuffix(">")}
    if kind == "literal":
        term = {"type": "literal", "value": o}
        if language:
            term["xml:lang"] = language
        elif datatype:
            term["datatype"] = datatype
        return term
    if kind:
        raise RequestError("object must be iri or literal", code="bad-fact")
    return o


def document_facts(store: KgStore, document: str) -> list[FactView]:
    """The facts cited to a document's chunks, each with its trace page's address."""
    return [fact_view(row) for row in store.document_facts(document)]


def fact_view(row) -> FactView:
    """A fact row of :meth:`KgStore.document_facts` with its trace page's address."""
    return FactView(row, fact_trace_url(str(row.s), str(row.p), row.object_text, row.object_is_iri,
                                        row.object_datatype, row.object_language))


@dataclass
class BoxView:
    """A box on the page picture, in percent of the page's width and height."""

    left: float
    top: float
    width: float
    height: float
    page: int
    source: str
    verification: str  # verified (drawn solid), element (dashed), unverified (dotted)


@dataclass
class Drawing:
    """The picture of the page a trace's boxes are on: the document's own page, or a page of the
    rendering its elements were placed on (then ``caption`` says so)."""

    url: str
    page_number: int
    caption: str
    boxes: list[BoxView]


@dataclass
class TraceView:
    source: TraceSource
    parts: list[tuple[str, bool]]  # the segment's text in runs, each marked when the trace holds it
    drawing: Optional[Drawing]
    rendered_pages: list[int] = field(default_factory=list)  # the rendering's pages the boxes are on

    @property
    def page_numbers(self) -> list[int]:
        """The pages a person finds the source on: the document's own, or its rendering's."""
        return [self.source.page_number] if self.source.page_number else self.rendered_pages


TEXT_AROUND = 1000  # characters of a source's page or section shown before and after what it marks


def trace_view(store: KgStore, source: TraceSource, texts: Optional[dict] = None) -> TraceView:
    """A traced source as the trace page shows it: its text from :data:`TEXT_AROUND` characters before
    what it marks to as many after (a section may be a whole book: a page of 100 places of a common
    phrase in one was 25.9 MB), and its drawing. ``texts``, when given, keeps the texts read across
    the sources of one page."""
    info = store.segment_info(source.segment)
    key = (info.sha256, source.segment)
    text = texts.get(key) if texts is not None else None
    if text is None:
        text = store.text(info.sha256, source.segment)
        if texts is not None:
            texts[key] = text
    marked = sorted((piece.start, piece.end) for piece in source.pieces) if source.pieces else \
        [(source.start, source.end)]
    first, last = max(0, marked[0][0] - TEXT_AROUND), min(len(text), marked[-1][1] + TEXT_AROUND)
    parts: list[tuple[str, bool]] = [("…", False)] if first > 0 else []
    position = first
    for start, end in marked:
        parts += [(text[position:start], False), (text[start:end], True)]
        position = end
    parts.append((text[position:last], False))
    if last < len(text):
        parts.append(("…", False))
    rendered = sorted({box.page_number for box in source.boxes if box.coordinate_system == RENDERED_PDF_POINTS
                       and box.page_number})
    return TraceView(source=source, parts=parts, drawing=_drawing(store, source), rendered_pages=rendered)


def trace_drawing(store: KgStore, source: TraceSource) -> Optional[Drawing]:
    """The page a source is drawn on, with its boxes (what a search hit's thumbnail shows), without
    reading its text."""
    return _drawing(store, source)


def _drawing(store: KgStore, source: TraceSource) -> Optional[Drawing]:
    if not renders_pages(source.document.format):
        return None
    rendered = [box for box in source.boxes if box.coordinate_system == RENDERED_PDF_POINTS]
    if rendered:  # the boxes are on the rendering the decode placed the elements on
        number = rendered[0].page_number
        run = store.rendering_run(source.document.iri)
        renderer = run.renderer if run else "the renderer"
        return Drawing(url=f"/renderings/{quote(source.document.iri, safe='')}/{number}.png", page_number=number,
                       caption=f"page {number} of the document as {renderer} draws it", boxes=_box_views(rendered))
    if source.page is None:
        return None
    own = [box for box in source.boxes if box.page_number == source.page_number]
    return Drawing(url=f"/pages/{quote(source.page, safe='')}/image.png", page_number=source.page_number or 1,
                   caption=f"page {source.page_number}", boxes=_box_views(own))


def _box_views(boxes) -> list[BoxView]:
    return [BoxView(left=100 * box.left / box.page_width, top=100 * box.top / box.page_height,
                    width=100 * (box.right - box.left) / box.page_width,
                    height=100 * (box.bottom - box.top) / box.page_height, page=box.page_number, source=box.source,
                    verification=str(box.verification))
            for box in boxes if box.page_width and box.page_height]


@dataclass
class StoreOverview:
    counts: dict[str, int]
    facts: int
    quads: int


def store_overview(store: KgStore) -> StoreOverview:
    return StoreOverview(counts=store.entity_counts(), facts=store.fact_count(), quads=len(store))


@dataclass
class QueryExample:
    name: str
    title: str
    text: str


EXAMPLES = [("store_statistics", "entities per class"), ("document_summary", "documents"),
            ("fact_count", "facts in the default graph")]


def query_examples() -> tuple[list[QueryExample], list[QueryExample]]:
    """The example queries and the audits, with their text, for the SPARQL page."""
    examples = [QueryExample(name, title, query_file(name).text) for name, title in EXAMPLES]
    audits = [QueryExample(a.name, a.title, query_file(a.name).text) for a in audit_definitions()]
    return examples, audits


def decoded_json(result: DecodeResult, chunks: Optional[dict[str, int]] = None) -> dict:
    """What the upload API answers about a decode: the document, its pages and sections, the chunks
    made (per document IRI in ``chunks``; null when chunking was not asked), its children."""
    return {"document": result.document, "status": result.status.value, "format": result.format,
            "mime_type": result.mime_type, "strategy": result.strategy,
            "pages": [_segment(t) for t in result.text_documents if t.kind == "page"],
            "sections": [_segment(t) for t in result.text_documents if t.kind == "section"],
            "elements": result.elements, "tables": result.tables, "images": result.images,
            "chunks": chunks.get(result.document, 0) if chunks is not None else None,
            "warnings": result.warnings, "problems": to_jsonable(result.problems),
            "embedded": [_embedded(entry, chunks) for entry in result.embedded]}


def _embedded(entry: EmbeddedResult, chunks: Optional[dict[str, int]]) -> dict:
    """A child document (attachment, embedded file) and, nested, its own children; or why it failed."""
    if entry.result is None:
        return {"path": entry.path, "name": entry.name, "depth": entry.depth, "error": entry.error.to_json()}
    return {"path": entry.path, "name": entry.name, "depth": entry.depth, **decoded_json(entry.result, chunks)}


def _segment(text_document: TextDocument) -> dict:
    return {"iri": text_document.iri, "page_number": text_document.page_number,
            "char_offset": text_document.char_offset, "char_length": text_document.char_length}


def form_options(kind: type, form, names: tuple[str, ...]) -> dict:
    """The fields ``names`` of an options dataclass ``kind`` given in a form, typed as the dataclass
    declares them; RequestError ``bad-option`` for a value that is not of its type."""
    import typing
    from dataclasses import fields as dataclass_fields

    hints = typing.get_type_hints(kind)
    known = {f.name for f in dataclass_fields(kind)}
    values = {}
    for name in names:
        raw = form.get(name)
        if name not in known or raw in (None, ""):
            continue
        declared = hints[name]
        base = next((a for a in typing.get_args(declared) if a is not type(None)), declared)
        if base is bool:
            values[name] = raw.lower() in ("1", "true", "yes", "on")
        elif base in (int, float):
            try:
                values[name] = base(raw)
            except ValueError:
                raise RequestError(f"{name} must be a number", code="bad-option") from None
        else:
            values[name] = raw
    return values
