"""Tight boxes of exact characters on a PDF page, from the PDF's own text layer (PDFium).

Knows nothing of RDF. Given an element's text and its box on the page, it aligns
the element's characters with the PDF's characters inside that box and returns,
for a range of the element's text, one box per line in PDF points with the origin
at the top-left of the page (the coordinate system of every kg-decoder box).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock
from typing import Optional

BBox = tuple[float, float, float, float]

_TOLERANCE = 2.0  # points: element boxes from pdfminer and PDFium glyph boxes differ slightly
_CACHE_SIZE = 16


@dataclass(frozen=True)
class PdfChar:
    char: str
    box: BBox  # left, top, right, bottom; top-left origin


class _PageCache:
    """The characters of recently traced pages, keyed by (document sha256, page number)."""

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[str, int], list[PdfChar]] = OrderedDict()
        self._lock = Lock()

    def get(self, key: tuple[str, int]) -> Optional[list[PdfChar]]:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
                return self._pages[key]
        return None

    def put(self, key: tuple[str, int], chars: list[PdfChar]) -> None:
        with self._lock:
            self._pages[key] = chars
            while len(self._pages) > _CACHE_SIZE:
                self._pages.popitem(last=False)


_CACHE = _PageCache()


def page_characters(data: bytes, page_number: int, key: Optional[str] = None) -> list[PdfChar]:
    """Every character of a page's text layer with its glyph box (empty for a page without one).

    An encrypted or unreadable PDF, or a page number out of range, gives no characters.
    """
    if key is not None:
        cached = _CACHE.get((key, page_number))
        if cached is not None:
            return cached
    chars = _read_characters(data, page_number)
    if key is not None:
        _CACHE.put((key, page_number), chars)
    return chars


def _read_characters(data: bytes, page_number: int) -> list[PdfChar]:
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return []
    try:
        if not 1 <= page_number <= len(pdf):
            return []
        page = pdf[page_number - 1]
        left_edge, _, _, top_edge = page.get_bbox()
        textpage = page.get_textpage()
        chars = []
        for index in range(textpage.count_chars()):
            code = pdfium_c.FPDFText_GetUnicode(textpage.raw, index)
            if not code or code in (0xFFFE, 0xFFFF):
                continue
            left, bottom, right, top = textpage.get_charbox(index)
            if right <= left or top <= bottom:
                continue  # generated spaces and line breaks have no glyph
            chars.append(PdfChar(chr(code), (left - left_edge, top_edge - top, right - left_edge, top_edge - bottom)))
        return chars
    finally:
        pdf.close()


def span_line_boxes(chars: list[PdfChar], region: BBox, text: str, start: int, end: int,
                    key: Optional[tuple] = None) -> list[BBox]:
    """Boxes, one per line, of ``text[start:end]`` where ``text`` is what sits in ``region`` on the page.

    Characters are matched ignoring whitespace (and compatibility forms, so a ligature
    glyph matches its letters); characters the PDF does not have are skipped. ``key``
    (document, page) lets the alignment of an element be reused by later traces.
    """
    if start >= end:
        return []
    glyphs = _aligned(chars, region, text, key)
    return _lines([box for index in range(start, min(end, len(glyphs))) for box in glyphs[index]])


_ALIGNED: OrderedDict = OrderedDict()
_ALIGNED_SIZE = 512


def _aligned(chars: list[PdfChar], region: BBox, text: str, key: Optional[tuple]) -> list[list[BBox]]:
    """For each character of ``text``, the glyph boxes it matched on the page (often none for spaces)."""
    cache_key = (key, region, text) if key is not None else None
    if cache_key is not None:
        with _CACHE._lock:
            if cache_key in _ALIGNED:
                _ALIGNED.move_to_end(cache_key)
                return _ALIGNED[cache_key]
    inside = [c for c in chars if _centre_in(c.box, region)]
    wanted = [(i, letter) for i, ch in enumerate(text) for letter in _fold(ch) if not letter.isspace()]
    pdf_letters = [(position, letter) for position, char in enumerate(inside)
                   for letter in _fold(char.char) if not letter.isspace()]
    glyphs: list[list[BBox]] = [[] for _ in text]
    left_string = "".join(letter for _, letter in wanted)
    right_string = "".join(letter for _, letter in pdf_letters)
    if left_string == right_string:  # the usual case: same letters, same order
        pairs = zip(range(len(wanted)), range(len(pdf_letters)))
    else:
        matcher = difflib.SequenceMatcher(None, left_string, right_string, autojunk=False)
        pairs = ((block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size))
    for a, b in pairs:
        box = inside[pdf_letters[b][0]].box
        target = glyphs[wanted[a][0]]
        if not target or target[-1] != box:
            target.append(box)
    if cache_key is not None:
        with _CACHE._lock:
            _ALIGNED[cache_key] = glyphs
            while len(_ALIGNED) > _ALIGNED_SIZE:
                _ALIGNED.popitem(last=False)
    return glyphs


def _fold(char: str) -> str:
    return unicodedata.normalize("NFKC", char).casefold()


def _centre_in(box: BBox, region: BBox) -> bool:
    x = (box[0] + box[2]) / 2
    y = (box[1] + box[3]) / 2
    return (region[0] - _TOLERANCE <= x <= region[2] + _TOLERANCE
            and region[1] - _TOLERANCE <= y <= region[3] + _TOLERANCE)


def _lines(boxes: list[BBox]) -> list[BBox]:
    """Group glyph boxes (in reading order) into lines and return each line's union box."""
    lines: list[list[float]] = []
    for left, top, right, bottom in boxes:
        if lines:
            line = lines[-1]
            overlap = min(bottom, line[3]) - max(top, line[1])
            height = min(bottom - top, line[3] - line[1]) or 1.0
            if overlap >= 0.5 * height:
                line[0], line[1] = min(line[0], left), min(line[1], top)
                line[2], line[3] = max(line[2], right), max(line[3], bottom)
                continue
        lines.append([left, top, right, bottom])
    return [tuple(round(v, 3) for v in line) for line in lines]
