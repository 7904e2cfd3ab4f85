"""What a decode and a chunking work on: elements, pages, segments, tables, chunks. Plain
dataclasses, no RDF, no I/O.

Coordinates: a bounding box is ``(left, top, right, bottom)`` in the page's
coordinate system, origin at the top-left corner. PDF pages use PDF points
(1/72 inch); image pages use pixels. ``Page.coordinate_system`` names it. An
element of a format that states no positions (DOCX, ODT, slides' text...) may be
placed on a rendering of its document (``Element.rendered_page``): its box is then
in the rendered PDF's points (``RENDERED_PDF_POINTS``), a position derived by the
renderer, not one the file states.
Character offsets count Unicode code points (Python ``str`` indices).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

PDF_POINTS = "pdf-points-top-left"
PIXELS = "pixels-top-left"
RENDERED_PDF_POINTS = "rendered-pdf-points-top-left"
HEADING_SEPARATOR = " > "
# The warning of a document decoded with pages or parts but no text (its pictures and pages are kept).
NO_TEXT_FOUND = "no text found"

BBox = tuple[float, float, float, float]


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
    # A picture drawn turned or mirrored on its page: its words' boxes cannot be mapped onto the page upright.
    image_turned: bool = False
    # A spreadsheet table's top-left cell in its sheet, 0-based (row, column): gives cells their A1 address.
    table_origin: Optional[tuple[int, int]] = None
    # A table's cell matrix (filled by the decode from the table's markup).
    table: Optional["Matrix"] = None
    # An image's own bytes (None: only a URL, or unreadable), its pixel size, the cell it is anchored to.
    image_data: Optional[bytes] = None
    image_width: Optional[int] = None
    image_height: Optional[int] = None
    anchor_cell: Optional[str] = None
    # Where a JSON element sits in its document (RFC 6901 JSON Pointer; JSON lines: "/<line>/...").
    json_pointer: Optional[str] = None
    # The page of the document's rendering its ``bbox`` is on, when the box comes from a rendering.
    rendered_page: Optional[int] = None
    # The words OCR read in an image, or why it was not read (None and None: OCR was off).
    image_text: Optional["ImageText"] = None
    image_text_skipped: Optional[str] = None
    # How sure the decoder is of the text (0..1), where it is not simply read from the file (1.0):
    # OCR text, the mean of its words' confidences.
    confidence: Optional[float] = None
    # Each cell's box and confidence (None: the table's) by (row, column) of its matrix: a table found on a
    # page, an Office table placed by its geometry or its rendering.
    cell_places: Optional[dict[tuple[int, int], tuple[BBox, Optional[float]]]] = None
    # Whether a second reading of the page (its text layer, its rendering, the words OCR read) finds the
    # element's text inside ``bbox``: "verified", "element" (it does not), None (nothing could read it).
    verification: Optional[str] = None
    # What an element of a kind of its own says of itself beyond its text, by the local name of its tg:
    # property: a form field's name, type and value, an annotation's or a comment's author and date...
    # (str, bool, int or datetime values).
    properties: Optional[dict] = None

    @property
    def is_image(self) -> bool:
        return self.category == "Image"

    @property
    def is_table(self) -> bool:
        return self.category == "Table"


@dataclass
class OcrWord:
    """A word OCR read in an image: where it starts in the image's text, its box in the image's
    pixels (left, top, right, bottom) and the OCR engine's confidence (0..1)."""

    text: str
    start: int
    box: BBox
    confidence: float


@dataclass
class ImageText:
    """The text OCR read in one image: words joined by spaces, lines by newlines."""

    text: str
    languages: str
    confidence: float  # the mean of its words' confidences
    words: list[OcrWord]
    engine: str  # name and version, e.g. "tesseract 5.3.0"
    pixel_size: tuple[int, int] = (0, 0)  # the picture as read (its bytes' own width and height)

    def page_box(self, word: OcrWord, image_box: BBox) -> BBox:
        """A word's box on the page, for a picture drawn upright into ``image_box`` there.

        >>> text = ImageText("Hi", "eng", 0.9, [OcrWord("Hi", 0, (10, 20, 30, 40), 0.9)], "tesseract", (100, 200))
        >>> text.page_box(text.words[0], (100.0, 200.0, 150.0, 300.0))
        (105.0, 210.0, 115.0, 220.0)
        """
        left, top, right, bottom = image_box
        x_scale, y_scale = (right - left) / self.pixel_size[0], (bottom - top) / self.pixel_size[1]
        return (round(left + word.box[0] * x_scale, 3), round(top + word.box[1] * y_scale, 3),
                round(left + word.box[2] * x_scale, 3), round(top + word.box[3] * y_scale, 3))


@dataclass
class Page:
    """A page of a page-based format: a PDF page, a slide, a sheet, an image frame."""

    number: int
    width: Optional[float] = None
    height: Optional[float] = None
    coordinate_system: Optional[str] = None
    name: Optional[str] = None
    strategy: Optional[str] = None
    # For a page read by OCR: the mean confidence of all its words (0..1); for a page whose text layer is
    # doubted (see ``plausibility``) and kept, that plausibility.
    confidence: Optional[float] = None
    # For a PDF page with a text layer: the share of its letters in words plausible for some language
    # (0..1; None: not measured, or too few letters to judge).
    plausibility: Optional[float] = None


@dataclass
class Rendering:
    """A document drawn as PDF by a renderer (LibreOffice), which placed its elements on pages."""

    renderer: str  # name and version, e.g. "LibreOffice 7.6.4.1"
    page_sizes: list[tuple[float, float]]  # width and height of each rendered page, in PDF points
    pdf: bytes  # what the renderer drew (kept beside the store, so traces align with the same pages)
    placed: int = 0  # elements given a page and a box


# What a decode could not do, by the code its Problem says (stable: audits and clients select by it).
PROBLEM_CODES = {
    "page-ocr-failed": "OCR failed on a page without a text layer: its text is missing",
    "tables-not-read": "tables were not looked for or not put in place on a page: its text is kept as read",
    "turned-text-not-read": "text drawn turned was not read again: it stays as the first reading left it",
    "dropped-lines-not-read": "lines the first reading of a PDF dropped were not looked for",
    "forms-not-read": "a PDF's form fields and annotations were not read",
    "pictures-not-read": "the document's pictures could not be read",
    "picture-ocr-failed": "OCR failed on a picture: its words are missing",
    "parts-not-read": "an Office document's notes, comments, charts or diagrams were not read",
    "not-rendered": "the document could not be rendered: its elements have no page or box",
}


@dataclass
class Problem:
    """Something a decode could not do, which leaves its output partial though the document is decoded:
    a code of PROBLEM_CODES, what happened, and the page and kind of element it concerns where known.

    >>> Problem.of("page-ocr-failed", "OCR failed", ValueError("bad"), page_number=3)
    Problem(code='page-ocr-failed', message='OCR failed: ValueError: bad', page_number=3, element_kind=None)
    """

    code: str
    message: str
    page_number: Optional[int] = None
    element_kind: Optional[str] = None

    @classmethod
    def of(cls, code: str, what: str, error: Optional[BaseException] = None, page_number: Optional[int] = None,
           element_kind: Optional[str] = None) -> "Problem":
        if code not in PROBLEM_CODES:
            raise ValueError(f"unknown problem code {code!r}")
        message = f"{what}: {type(error).__name__}: {error}" if error is not None else what
        return cls(code, message[:300], page_number, element_kind)


@dataclass
class Partitioned:
    """What partitioning one document gives: elements plus what is known of its pages."""

    format: str
    elements: list[Element]
    pages: list[Page] = field(default_factory=list)
    strategy: Optional[str] = None
    # Notes on the document that are no failure (it holds no text).
    warnings: list[str] = field(default_factory=list)
    # What could not be read without failing the document (pictures, a page OCR failed on): a partial decode.
    problems: list["Problem"] = field(default_factory=list)
    rendering: Optional[Rendering] = None
    # Where the elements' page numbers come from, when not from pages the format draws itself.
    page_numbers_from: Optional[str] = None
    # The document's title where the format says it better than its first Title element (a PDF's Info).
    title: Optional[str] = None


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
class Cell:
    """A cell of a table's matrix; ``start``/``end`` delimit its inner markup in the table's
    assembled text (None for a padding cell); ``reference`` is its A1 address in a sheet."""

    row: int
    column: int
    row_span: int
    column_span: int
    text: str
    header: bool
    padding: bool = False
    start: Optional[int] = None
    end: Optional[int] = None
    reference: Optional[str] = None
    # Where the cell is on the table's page (a PDF table's cells), and how sure the decoder is of it.
    bbox: Optional[BBox] = None
    confidence: Optional[float] = None


@dataclass
class Matrix:
    """A table as a rectangular grid: every row has ``columns`` positions, padding cells included."""

    rows: int
    columns: int
    cells: list[Cell]


@dataclass
class Anchor:
    """Where a chunk can be cited on one page: the page and the union box of its elements there, and
    whether a second reading of the page bears the box out ("verified", "element", "unverified")."""

    page_number: int
    page_iri: Optional[str] = None
    bbox: Optional[BBox] = None
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = None
    verification: str = "unverified"


@dataclass
class Chunk:
    """One chunk: ``text`` is ``prefix + segment_text[start:end] + suffix``."""

    start: int
    end: int
    prefix: str
    suffix: str
    text: str
    tokens: int
    heading_path: tuple[str, ...] = ()
