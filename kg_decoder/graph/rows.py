"""The rows typed reads return (``reads.GraphReads``): a field for every variable the headers
``# Returns:`` of the queries that read it name (the camelCase names in snake_case); what a query
does not return is None. One dataclass an entity (a segment, a text element, a chunk) where its reads
differ only in what they return; a document's list row, identity and state, and an element's row
with its box (their JSON views), stay apart."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Optional, TypeVar

from ..model import BBox

Row = TypeVar("Row")


@dataclass(kw_only=True)
class _Boxed:
    """A box on a page with the page's size and coordinate system (each may be missing); for a box on
    the document's rendering (coordinate system ``rendered-pdf-points-top-left``), its rendered page."""

    left: Optional[float] = None
    top: Optional[float] = None
    right: Optional[float] = None
    bottom: Optional[float] = None
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = None
    rendered_page_number: Optional[int] = None

    @property
    def bbox(self) -> Optional[BBox]:
        if self.left is None or self.top is None or self.right is None or self.bottom is None:
            return None
        return (self.left, self.top, self.right, self.bottom)


@dataclass
class RenderingRun:
    """The rendering a document's elements were placed on (``document_rendering``)."""

    rendering: str
    renderer: str
    rendered_page_count: int


@dataclass
class DocumentSummary:
    document: str
    format: str
    mime_type: str
    sections: int
    elements: int
    tables: int
    images: int
    file_name: Optional[str] = None
    title: Optional[str] = None
    pages: Optional[int] = None
    strategy: Optional[str] = None
    versions: Optional[str] = None  # the versions of a source it is ("1, 3 (latest)"), where a list shows them
    chunks: Optional[int] = None  # how many chunks and facts it has, where a list shows them
    facts: Optional[int] = None


@dataclass
class DocumentInfo:
    document: str
    mime_type: str
    format: str
    sha256: str
    title: Optional[str] = None
    file_name: Optional[str] = None


@dataclass
class DocumentState:
    document: str
    activity: Optional[str] = None
    file_name: Optional[str] = None


@dataclass
class DocumentFailure:
    document: str
    failure: str
    code: str
    message: str
    agent: str  # the software versions that failed
    settings_key: Optional[str] = None  # the settings it failed with
    file_name: Optional[str] = None


@dataclass
class DecodeRun:
    """A document's decode activity with the versions of its agent."""

    document: str
    activity: str
    started: str
    ended: str
    requested: str
    strategy: str
    section_strategy: str
    ocr_languages: str
    versions: list[str] = field(default_factory=list)


@dataclass
class PageInfo:
    document: str
    page: str
    page_number: int
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = None
    sheet_name: Optional[str] = None


@dataclass(kw_only=True)
class SegmentRow:
    """A page or section of a document, or a picture's OCR text (``text_documents``: those whose text
    goes downstream; ``document_segments``: every one; ``segment_info``: one).

    A picture's text (kind "image") is not part of the document text: no ``char_offset``;
    ``derived_from`` (and ``image``) is the picture, ``image_segment`` the page or section it is in."""

    document: str
    segment: str
    kind: str
    char_length: int
    sha256: str
    index: Optional[int] = None
    char_offset: Optional[int] = None
    page_number: Optional[int] = None
    derived_from: Optional[str] = None
    text_document: Optional[bool] = None  # whether its text goes downstream (``document_segments``)
    parent: Optional[str] = None
    image: Optional[str] = None
    image_segment: Optional[str] = None


@dataclass
class ElementRow(_Boxed):
    """An element or image of a document (``document_elements``)."""

    document: str
    element: str
    segment: str
    category: str
    index: int
    text: Optional[str] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    page_number: Optional[int] = None


@dataclass
class TextElement(_Boxed):
    """A text element with its offsets in its page or section text (``segment_text_elements``,
    ``document_text_elements``, ``segment_elements``); what a read does not return is None."""

    segment: str
    element: str
    category: str
    char_offset: int
    char_length: int
    index: Optional[int] = None
    document: Optional[str] = None
    text: Optional[str] = None
    page_number: Optional[int] = None
    heading_depth: Optional[int] = None
    sheet_name: Optional[str] = None
    verification: Optional[str] = None


@dataclass
class TableCellRow(_Boxed):
    table: str
    cell: str
    row: int
    column: int
    row_span: int
    column_span: int
    header: bool
    padding: bool
    text: Optional[str] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    reference: Optional[str] = None
    confidence: Optional[float] = None


@dataclass
class ChunkRow:
    """A chunk as a read gives it: one (``chunk_info``), a document's (``document_chunks``, with its
    heading path) or a segment's (``segment_chunks``); what a read does not return is None."""

    chunk: str
    segment: str
    chunk_index: int
    char_offset: int
    char_length: int
    document: Optional[str] = None
    prefix_length: Optional[int] = None
    token_count: Optional[int] = None
    sha256: Optional[str] = None
    heading_path: Optional[str] = None


@dataclass
class AnchorRow(_Boxed):
    document: str
    chunk: str
    page_number: int
    page: Optional[str] = None
    verification: Optional[str] = None


@dataclass
class FactSource:
    s: object
    p: object
    o: object
    subgraph: str
    chunk: Optional[str] = None  # what the subgraph derives from: its chunk (a document, or none, for some unsupported)
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    grounding: Optional[str] = None
    grounding_score: Optional[float] = None
    evidence: Optional[str] = None


@dataclass
class DetachedSubgraph:
    subgraph: str
    chunk: str  # the chunk it was anchored in, gone with a later decode or chunking
    text: Optional[str] = None  # the words it was grounded to there
    char_offset: Optional[int] = None
    char_length: Optional[int] = None


@dataclass
class FactRow:
    """A fact cited to a document: the triple (its object also as text, with what kind of term it
    is), the subgraph and chunk it came from, the span in the chunk and the extractor."""

    document: str
    subgraph: str
    chunk: str
    chunk_index: int
    s: object
    p: object
    o: object
    object_text: str
    object_is_iri: bool
    object_datatype: Optional[str] = None
    object_language: Optional[str] = None
    extractor: Optional[str] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None


@dataclass
class SectionTitle:
    section: str
    ancestor: str
    title: str
    level: Optional[int] = None


@dataclass
class ImageContent:
    image: str
    sha256: str
    mime_type: Optional[str] = None


@dataclass
class WebFetchState:
    url: str
    document: str
    etag: Optional[str] = None
    last_modified: Optional[str] = None
    fetched_at: Optional[str] = None


@dataclass
class EntityCount:
    kind: str
    count: int


def typed_rows(rows: list[dict], kind: type[Row]) -> list[Row]:
    """Query rows as the dataclass ``kind`` (a key it has no field for left out)."""
    names = {f.name for f in fields(kind)}
    return [kind(**{k: v for k, v in row.items() if k in names}) for row in rows]


__all__ = ["AnchorRow", "ChunkRow", "DecodeRun", "DetachedSubgraph", "DocumentFailure", "DocumentInfo", "DocumentState",
           "DocumentSummary", "ElementRow", "EntityCount", "FactRow", "FactSource", "ImageContent", "PageInfo",
           "RenderingRun", "SectionTitle", "SegmentRow", "TableCellRow", "TextElement", "WebFetchState", "typed_rows"]
