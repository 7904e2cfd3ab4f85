"""The data model every stage shares: plain dataclasses, no RDF, no I/O.

Coordinates: a bounding box is ``(left, top, right, bottom)`` in the page's
coordinate system, origin at the top-left corner. PDF pages use PDF points
(1/72 inch); image pages use pixels. ``Page.coordinate_system`` names it.
Character offsets count Unicode code points (Python ``str`` indices).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .errors import DecodeError, InvalidOption

PDF_POINTS = "pdf-points-top-left"
PIXELS = "pixels-top-left"

STRATEGIES = ("auto", "fast", "ocr_only", "hi_res")
SECTION_STRATEGIES = ("whole-document", "heading", "element-type", "count", "size", "structure")

BBox = tuple[float, float, float, float]


@dataclass(frozen=True)
class DecodeOptions:
    """What a caller may choose about one decode.

    >>> DecodeOptions(section_strategy="heading").section_strategy
    'heading'
    >>> DecodeOptions(strategy="best")
    Traceback (most recent call last):
    ...
    kg_decoder.errors.InvalidOption: strategy must be one of auto, fast, ocr_only, hi_res, not 'best'
    """

    strategy: str = "auto"
    ocr_languages: str = "eng"
    section_strategy: str = "whole-document"
    section_element_count: int = 20
    section_max_size: int = 4000
    section_within_pages: bool = False
    password: Optional[str] = None
    mime_type: Optional[str] = None
    max_bytes: int = 200 * 1024 * 1024
    timeout_seconds: Optional[float] = 600.0
    # An image over either limit is recorded with its metadata and a skip reason, not stored.
    max_image_bytes: int = 50 * 1024 * 1024
    max_image_pixels: int = 100_000_000
    # The character set of a text-based document (HTML, XML, text, Markdown, CSV, TSV) when the
    # caller knows it (an HTTP header, a meta tag); None: the partitioner detects it.
    encoding: Optional[str] = None
    # Embedded files (attachments, OLE packages) become child documents down to this depth (0: none),
    # all of them together within this many bytes. Not part of a decode's settings: the parent's own
    # graph does not change with them.
    embedded_depth: int = 3
    max_embedded_bytes: int = 100 * 1024 * 1024

    def __post_init__(self):
        if self.strategy not in STRATEGIES:
            raise InvalidOption(f"strategy must be one of {', '.join(STRATEGIES)}, not {self.strategy!r}")
        if self.section_strategy not in SECTION_STRATEGIES:
            raise InvalidOption(
                f"section strategy must be one of {', '.join(SECTION_STRATEGIES)}, not {self.section_strategy!r}"
            )
        if self.section_element_count < 1:
            raise InvalidOption("section element count must be at least 1")
        if self.section_max_size < 1:
            raise InvalidOption("section max size must be at least 1")
        if not self.ocr_languages or not all(part.isidentifier() for part in self.ocr_languages.split("+")):
            raise InvalidOption(f"OCR languages must look like 'eng' or 'eng+heb', not {self.ocr_languages!r}")
        if self.max_bytes < 1:
            raise InvalidOption("max bytes must be positive")
        if self.timeout_seconds is not None and self.timeout_seconds <= 0:
            raise InvalidOption("timeout must be positive")
        if self.max_image_bytes < 1 or self.max_image_pixels < 1:
            raise InvalidOption("image limits must be positive")
        if self.embedded_depth < 0 or self.max_embedded_bytes < 0:
            raise InvalidOption("embedded file limits must not be negative")
        if self.encoding is not None:
            import codecs

            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise InvalidOption(f"unknown character set {self.encoding!r}") from None

    def settings_key(self) -> str:
        """The settings that change what a decode produces, as a stable string (for IRIs)."""
        return "|".join(
            [
                f"strategy={self.strategy}",
                f"ocr={self.ocr_languages}",
                f"sections={self.section_strategy}",
                f"count={self.section_element_count}",
                f"size={self.section_max_size}",
                f"within-pages={self.section_within_pages}",
                f"image-limits={self.max_image_bytes},{self.max_image_pixels}",
            ]
            + ([f"encoding={self.encoding.lower()}"] if self.encoding else [])
        )


@dataclass
class Element:
    """One element from the partitioner, in document order."""

    index: int
    category: str
    text: str
    html: Optional[str] = None
    element_id: Optional[str] = None
    parent_id: Optional[str] = None
    depth: Optional[int] = None
    page_number: Optional[int] = None
    page_name: Optional[str] = None
    bbox: Optional[BBox] = None
    # Where an image element points to (a remote URL or a file in the package); never fetched.
    image_url: Optional[str] = None
    image_mime: Optional[str] = None
    # A spreadsheet table's top-left cell in its sheet, 0-based (row, column): gives cells their A1 address.
    table_origin: Optional[tuple[int, int]] = None
    # An image's own bytes (None: only a URL, or unreadable), its pixel size, the cell it is anchored to.
    image_data: Optional[bytes] = None
    image_width: Optional[int] = None
    image_height: Optional[int] = None
    anchor_cell: Optional[str] = None
    # Where a JSON element sits in its document (RFC 6901 JSON Pointer; JSON lines: "/<line>/...").
    json_pointer: Optional[str] = None

    @property
    def is_image(self) -> bool:
        return self.category == "Image"

    @property
    def is_table(self) -> bool:
        return self.category == "Table"


@dataclass
class Page:
    """A page of a page-based format: a PDF page, a slide, a sheet, an image frame."""

    number: int
    width: Optional[float] = None
    height: Optional[float] = None
    coordinate_system: Optional[str] = None
    name: Optional[str] = None
    strategy: Optional[str] = None


@dataclass
class Partitioned:
    """What partitioning one document gives: elements plus what is known of its pages."""

    format: str
    elements: list[Element]
    pages: list[Page] = field(default_factory=list)
    strategy: Optional[str] = None


@dataclass
class ElementSpan:
    """Where an element's assembled text sits in its segment's text."""

    element: int
    offset: int
    length: int


@dataclass
class Segment:
    """A page or a section: the unit whose text goes downstream (a TextDocument).

    ``parent`` is the index of the segment this one derives from (the page a section
    sits in, or the enclosing section of a nested heading section), else None.
    ``elements`` lists text-bearing element indices; ``images`` lists image element
    indices that sit in this segment (kept out of the text).
    """

    index: int
    kind: str  # "page" or "section"
    elements: list[int] = field(default_factory=list)
    images: list[int] = field(default_factory=list)
    page_number: Optional[int] = None
    parent: Optional[int] = None
    level: Optional[int] = None
    title: Optional[str] = None
    text: str = ""
    spans: list[ElementSpan] = field(default_factory=list)
    char_offset: int = 0
    # Length in the document text of this segment together with its nested sections.
    extent_length: int = 0
    carries_text: bool = True
    json_pointer: Optional[str] = None


@dataclass
class TextDocument:
    """A page or section text as handed downstream (``--emit jsonl``)."""

    iri: str
    document: str
    kind: str
    page_number: Optional[int]
    text: str
    char_offset: int
    char_length: int
    element_offsets: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "iri": self.iri,
            "document": self.document,
            "kind": self.kind,
            "page_number": self.page_number,
            "char_offset": self.char_offset,
            "char_length": self.char_length,
            "text": self.text,
            "elements": self.element_offsets,
        }


@dataclass
class Anchor:
    """Where a chunk can be cited on one page: the page and the union box of its elements there."""

    page_number: int
    page_iri: Optional[str] = None
    bbox: Optional[BBox] = None
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = None


@dataclass
class DecodeResult:
    """What one decode did. ``status`` is "decoded", or "unchanged" when the store already held it."""

    document: str
    file_name: Optional[str]
    format: str
    mime_type: str
    status: str
    strategy: Optional[str]
    pages: int
    sections: int
    elements: int
    tables: int
    images: int
    quads: int = 0
    text_documents: list[TextDocument] = field(default_factory=list)
    # "partitioned", or "parse cache" when an earlier partitioning was reused; None when unchanged.
    partition_source: Optional[str] = None
    # Files embedded in this document (attachments, OLE packages...), each decoded as a child document.
    embedded: list["EmbeddedResult"] = field(default_factory=list)

    def documents(self) -> list[str]:
        """This document and every embedded document decoded with it, parents first."""
        return [self.document] + [e.result.document for top in self.embedded for e in top.walk() if e.result]


@dataclass
class EmbeddedResult:
    """One file found inside a document: its child document's result, or why it was not decoded."""

    path: str
    name: Optional[str]
    depth: int
    result: Optional[DecodeResult] = None
    error: Optional[DecodeError] = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return f"failed: {type(self.error).__name__}: {self.error.message}"
        return self.result.status

    def walk(self):
        """This file and, depth first, every file embedded in it."""
        yield self
        for inner in self.result.embedded if self.result else []:
            yield from inner.walk()
