"""Pages read by OCR (tesseract): a PDF page without a text layer, drawn by PDFium as it displays,
and the frames of an image file. One element per paragraph tesseract finds, with its box on the page
and its confidence (the mean of its words'); a ruled table becomes one Table element read cell by
cell (``tables/scanned.py``) in place of the paragraphs there; each page records the mean confidence
of all its words, so an audit can list the pages to check by eye.

Resolution, by measurement on the corpus scan (``loremipsum-flat.pdf``, a 200 dpi scan of body
text): tesseract's mean word confidence is 0.925 at 72 dpi (PDFium scale 1) and 0.948-0.949 from
scale 1.5 to 3; small print in a scanned table read cell by cell came out exact at scale 3. Pages
are drawn at scale 3 (216 dpi), less for a page so large that would pass ``MAX_PAGE_PIXELS``.
"""

from __future__ import annotations

import re
import statistics
from typing import Optional

from ...model import BBox, Element, Problem, Verification
from ..image_text import MAX_ENLARGE, TARGET_LONG_SIDE, read_words
from .regions import replacing
from ..tables.scanned import ruled_tables

PDF_SCALE = 3.0
MAX_PAGE_PIXELS = 40_000_000
_TITLE_HEIGHT = 1.25  # a one-line paragraph this much taller than the page's usual line is a title
_TITLE_WORDS = 12
_LIST_MARK = re.compile(r"^([•◦▪‣·*–-]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s")


def pdf_page_scale(width: float, height: float) -> float:
    """Pixels per point to draw a PDF page of this size (points) at for OCR.

    >>> pdf_page_scale(612, 792), round(pdf_page_scale(2384, 3370), 3)  # a letter page, an A0 poster
    (3.0, 2.231)
    """
    if not width or not height or width * height <= 0:  # a page that states no size: PDFium draws its default
        return PDF_SCALE
    return min(PDF_SCALE, (MAX_PAGE_PIXELS / (width * height)) ** 0.5)


def image_scale(width: int, height: int) -> float:
    """How much to enlarge an image file's frame before OCR (small ones read better larger)."""
    return min(MAX_ENLARGE, max(1.0, TARGET_LONG_SIDE / max(width, height)))


def ocr_page(picture, scale: float, languages: str, page_number: int,
             problems: Optional[list[Problem]] = None) -> tuple[list[Element], Optional[float]]:
    """The paragraphs tesseract reads in ``picture`` (a page drawn ``scale`` pixels per page unit),
    as elements with boxes in page units, and the page's mean word confidence (None: no words). A
    ruled table that cannot be read leaves the paragraphs as they are (a problem says so)."""
    from PIL import ImageOps

    grey = ImageOps.grayscale(picture)
    words = read_words(grey, languages, scale)
    if not words:
        return [], None
    paragraphs: dict[tuple[int, int], list] = {}
    for word in words:
        paragraphs.setdefault(word[0][:2], []).append(word)
    line_boxes: dict[tuple, list[BBox]] = {}
    for key, _, box, _ in words:
        line_boxes.setdefault(key, []).append(box)
    height = {key: _union(boxes)[3] - _union(boxes)[1] for key, boxes in line_boxes.items()}
    usual = statistics.median(height.values())
    elements = []
    for members in paragraphs.values():
        lines: dict[tuple, list[str]] = {}
        for key, text, _, _ in members:
            lines.setdefault(key, []).append(text)
        text = " ".join(" ".join(line) for line in lines.values())
        box = _union([word[2] for word in members])
        confidence = round(sum(word[3] for word in members) / len(members), 4)
        category = _category(text, len(lines), max(height[key] for key in lines), usual)
        # The words OCR read are this page's reading: the paragraph's box is theirs.
        elements.append(Element(0, category, text, page_number=page_number, bbox=box, confidence=confidence,
                                verification=Verification.VERIFIED))
    page_confidence = round(sum(word[3] for word in words) / len(words), 4)
    try:
        tables = ruled_tables(grey, scale, languages, page_number)
    except Exception as exc:  # OpenCV or tesseract on an odd grid: the page keeps its paragraphs
        if problems is not None:
            problems.append(Problem.of("tables-not-read", "tables not read", exc, page_number, "Table"))
        tables = []
    for table in tables:  # read cell by cell inside its grid: the grid's box holds what OCR read there
        table.verification = Verification.VERIFIED
    return replacing(elements, tables), page_confidence


def _category(text: str, lines: int, height: float, usual: float) -> str:
    """Title, ListItem or NarrativeText, from what a paragraph looks like.

    >>> _category("Annual Report 2023", 1, 30.0, 12.0), _category("• first point", 1, 12.0, 12.0)
    ('Title', 'ListItem')
    """
    if _LIST_MARK.match(text):
        return "ListItem"
    if lines == 1 and len(text.split()) <= _TITLE_WORDS and not text.endswith((".", ",", ";")) \
            and height >= _TITLE_HEIGHT * usual:
        return "Title"
    return "NarrativeText"


def _union(boxes: list[BBox]) -> BBox:
    return (round(min(b[0] for b in boxes), 3), round(min(b[1] for b in boxes), 3),
            round(max(b[2] for b in boxes), 3), round(max(b[3] for b in boxes), 3))


__all__ = ["image_scale", "ocr_page", "pdf_page_scale"]
