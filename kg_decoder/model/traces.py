"""What a trace and a search return: the places a fact, a span or a quote comes from, each with its
document, page, elements, table cells and boxes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .results import JsonResult, Placed, Verification


@dataclass
class DocumentRef(JsonResult):
    """A document as a trace names it."""

    iri: str
    mime_type: str
    format: str
    title: Optional[str] = None
    file_name: Optional[str] = None


@dataclass
class Box(JsonResult):
    """A rectangle on a page: ``source`` says what it bounds (the exact characters, a whole element, a table
    cell, an OCR word); ``element`` is the element or cell it belongs to."""

    page_number: int
    left: float
    top: float
    right: float
    bottom: float
    page_width: Optional[float]
    page_height: Optional[float]
    coordinate_system: Optional[str]
    # "characters" (of a text layer), "element" (the whole element), "cell" (a table cell) or "ocr" (a word
    # OCR read in a picture)
    source: str
    element: str
    verification: Verification = Verification.UNVERIFIED


@dataclass
class TracedCell(Placed):
    """A table cell a traced span touches (with its box, where the decode knows where it is). ``row`` and
    ``column`` count from 1, as a person reads them (the graph keeps 0-based indexes); ``label`` says
    it the one way every output does, with a sheet cell's A1 ``reference``."""

    iri: str = ""
    row: int = 1
    column: int = 1
    row_span: int = 1
    column_span: int = 1
    text: Optional[str] = None
    header: bool = False
    reference: Optional[str] = None
    confidence: Optional[float] = None
    # Where its markup's inside is in the table's markup (the table element's text in its segment).
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    label: str = ""

    def __post_init__(self) -> None:
        self.label = self.label or cell_label(self.row, self.column, self.reference)


def cell_label(row: int, column: int, reference: Optional[str] = None) -> str:
    """A cell's place as a person reads it, from its 1-based row and column (and a sheet cell's A1 address).

    >>> cell_label(3, 1), cell_label(3, 1, "A3")
    ('row 3, column 1', 'row 3, column 1 (A3)')
    """
    return f"row {row}, column {column}" + (f" ({reference})" if reference else "")


@dataclass
class TracedElement(JsonResult):
    iri: str
    category: str
    text: str
    char_offset: int
    char_length: int
    page_number: Optional[int] = None
    sheet_name: Optional[str] = None
    cells: list[TracedCell] = field(default_factory=list)


@dataclass
class QuotePiece(JsonResult):
    """A run of a segment's text that holds part of a quote."""

    start: int
    end: int
    text: str


@dataclass
class TraceSource(JsonResult):
    """One place a fact or span comes from. ``start``/``end`` are offsets in the segment's text.

    ``pieces`` is set where a quote runs across text the stored reading order does not keep
    together (a table row read cell by cell down its columns, a line split between two blocks):
    the spans of the segment's text that hold it, in the quote's order; ``start``/``end`` then
    bound them, and ``quote`` is the pieces' text joined by a space.
    """

    document: DocumentRef
    segment: str
    segment_kind: str
    start: int
    end: int
    quote: str
    page_number: Optional[int] = None
    page: Optional[str] = None
    section: Optional[str] = None
    heading_path: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    chunk_span: Optional[tuple[int, int]] = None
    subgraph: Optional[str] = None
    fact: Optional[str] = None
    # For a fact added with a grounding (kg_decoder.add_fact_lines): how its evidence was found in the
    # chunk (Grounding's values), a fuzzy match's score, and the evidence as the extractor wrote it.
    grounding: Optional[str] = None
    grounding_score: Optional[float] = None
    evidence: Optional[str] = None
    elements: list[TracedElement] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)
    pieces: Optional[list[QuotePiece]] = None
    # For boxes on a rendering of the document (coordinate system rendered-pdf-points-top-left): its renderer.
    rendered_by: Optional[str] = None
    # For a quote from the text OCR read in a picture (segment kind "image"): the picture.
    image: Optional[str] = None
    # For a fact whose source has later versions: what each says of it (model.revisions.VerdictStep),
    # and where the latest that still holds it has it (traced, with its boxes).
    verdicts: list = field(default_factory=list)
    latest: Optional["TraceSource"] = None


@dataclass
class SearchHit(JsonResult):
    """A place a searched quote is found (``start``/``end`` in the segment's text), with the text
    around it (``before``, ``quote`` as stored, ``after``); ``source`` is its trace (boxes and all)
    where asked for."""

    document: str
    segment: str
    segment_kind: str
    start: int
    end: int
    quote: str
    as_written: bool
    before: str = ""
    after: str = ""
    page_number: Optional[int] = None
    file_name: Optional[str] = None
    source: Optional[TraceSource] = None


@dataclass
class SearchResults(JsonResult):
    """One page of the places a quote is found in every document, ranked (as written first within
    each window of texts read, then in the index's order: :mod:`kg_decoder.cite.search`), ``hits``
    from ``offset``. ``total``: the places in the texts read for this page, the total where
    ``total_exact``, else a lower bound ("at least": texts that may hold more were left unread)."""

    query: str
    total: int
    offset: int
    limit: int
    hits: list[SearchHit] = field(default_factory=list)
    total_exact: bool = True
