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
from dataclasses import replace
from typing import Optional

from ...model import BBox, Element, Page, Problem, ProgressCallback, Verification, report
from ..image_text import MAX_ENLARGE, TARGET_LONG_SIDE, read_words
from .regions import replacing
from ..tables.scanned import ruled_tables
from .text_plausibility import plausibility
from ..backends.unstructured_glue import require_ocr_languages

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



def ocr_pages(pdf, pages: list[Page], languages: str, problems: list[Problem],
               progress: Optional[ProgressCallback] = None) -> list[Element]:
    """OCR the given pages one by one, each drawn as it displays (see ``page_ocr``); each page records
    its mean word confidence. A page OCR fails on is a problem (its text stays empty); the other
    pages are read all the same."""
    found: list[Element] = []
    for done, page in enumerate(pages):
        report(progress, "ocr", done, len(pages), f"OCR page {page.number} ({done + 1} of {len(pages)})")
        try:
            scale = pdf_page_scale(page.width, page.height)
            picture = pdf[page.number - 1].render(scale=scale).to_pil()
            elements, page.confidence = ocr_page(picture, scale, languages, page.number, problems)
        except Exception as error:  # tesseract or PDFium failing on one page must not cost the others
            problems.append(Problem.of("page-ocr-failed", "OCR failed", error, page.number))
            continue
        found += elements
    report(progress, "ocr", len(pages), len(pages), f"OCR of {len(pages)} pages done")
    return found


def can_ocr(languages: list[str]) -> bool:
    """Whether tesseract is here with every language asked for (a doubted text layer is read again only
    then: the layer is kept otherwise, doubted)."""
    try:
        require_ocr_languages(languages)
    except Exception:
        return False
    return True


# OCR replaces a doubted text layer when its words are this much more plausible than the layer's.
BETTER_BY = 0.15


def read_doubted_layers(pdf, pages: list[Page], languages: str, problems: list[Problem],
                         progress: Optional[ProgressCallback] = None) -> tuple[set[int], list[Element]]:
    """OCR the pages whose text layer reads implausible (``Page.plausibility``, see ``text_plausibility``);
    where OCR's words are plausible by ``BETTER_BY`` more, OCR's reading replaces the layer (the page is
    read ``ocr_only`` and records OCR's confidence). The numbers of the pages replaced, and their
    elements. OCR failing on a page keeps its layer, doubted, as OCR reading no better does."""
    replaced: set[int] = set()
    found: list[Element] = []
    for done, page in enumerate(pages):
        report(progress, "ocr", done, len(pages),
               f"OCR page {page.number}: its text layer reads implausible ({done + 1} of {len(pages)})")
        try:
            scale = pdf_page_scale(page.width, page.height)
            picture = pdf[page.number - 1].render(scale=scale).to_pil()
            elements, confidence = ocr_page(picture, scale, languages, page.number, problems)
        except Exception:  # noqa: BLE001 — the page keeps its layer, doubted (the audit lists it)
            continue
        read, _ = plausibility(" ".join(element.text for element in elements))
        if read is None or read < (page.plausibility or 0.0) + BETTER_BY:
            continue
        replaced.add(page.number)
        page.strategy, page.confidence = "ocr_only", confidence
        found += elements
    return replaced, found


def doubted_elements(elements: list[Element], pages: list[Page]) -> list[Element]:
    """The elements, those of the given pages (whose text layer is kept though doubted) no surer of their
    text than its plausibility, which the page records as its confidence."""
    doubt = {page.number: page.plausibility for page in pages if page.plausibility is not None}
    for page in pages:
        page.confidence = doubt.get(page.number)
    return [replace(element, confidence=min(doubt[element.page_number], 1.0 if element.confidence is None
                                            else element.confidence))
            if element.page_number in doubt and not element.is_image else element for element in elements]

__all__ = ["BETTER_BY", "can_ocr", "doubted_elements", "image_scale", "ocr_page", "ocr_pages", "pdf_page_scale",
           "read_doubted_layers"]
