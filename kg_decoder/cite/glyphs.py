"""Boxes of exact characters on a PDF page, from the PDF's own text layer (PDFium).

Knows nothing of RDF. Given an element's text and its box on the page, it aligns
the element's characters with the PDF's characters inside that box and returns,
for a range of the element's text, one box per line on the displayed page (origin
at its top-left, the coordinate system of every kg-decoder box). A line's box spans
its characters' advances and the font's height, as a PDF viewer's selection does;
the glyphs' tight outlines only decide which characters lie inside an element.
"""

from __future__ import annotations

import bisect
import difflib
import unicodedata
from collections import OrderedDict
from threading import Lock
from typing import Optional

from ..decode.backends.pdf_fonts import declared_heights
from ..decode.backends.pdf_geometry import middle_within
from ..decode.backends.pdf_text_layer import PageText
from ..decode.backends.pdf_text_layer import page_text as _page_text
from .quotes import find_quote

BBox = tuple[float, float, float, float]

_TOLERANCE = 2.0  # points: element boxes from pdfminer and PDFium glyph boxes differ slightly
_CACHE_SIZE = 16


class _PageCache:
    """The text layers of recently traced pages, keyed by (document sha256, page number)."""

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[str, int], PageText] = OrderedDict()
        self._lock = Lock()

    def get(self, key: tuple[str, int]) -> Optional[PageText]:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
                return self._pages[key]
        return None

    def put(self, key: tuple[str, int], page: PageText) -> None:
        with self._lock:
            self._pages[key] = page
            while len(self._pages) > _CACHE_SIZE:
                self._pages.popitem(last=False)


_CACHE = _PageCache()


def page_characters(data: bytes, page_number: int, key: Optional[str] = None) -> PageText:
    """A page's text layer: its characters with their boxes, its text line by line (empty for a page
    without one). An encrypted or unreadable PDF, or a page number out of range, gives nothing.
    """
    if key is not None:
        cached = _CACHE.get((key, page_number))
        if cached is not None:
            return cached
    page = _read_page(data, page_number, key)
    if key is not None:
        _CACHE.put((key, page_number), page)
    return page


def _read_page(data: bytes, page_number: int, key: Optional[str]) -> PageText:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return PageText.empty()
    try:
        if not 1 <= page_number <= len(pdf):
            return PageText.empty()
        return _page_text(pdf[page_number - 1], declared_heights(data, page_number, key))
    finally:
        pdf.close()


def span_line_boxes(page: PageText, region: BBox, text: str, start: int, end: int,
                    key: Optional[tuple] = None) -> list[BBox]:
    """Boxes, one per line, of ``text[start:end]`` where ``text`` is what sits in ``region`` on the page.

    Characters are matched ignoring whitespace (and compatibility forms, so a ligature
    glyph matches its letters); characters the PDF does not have are skipped. ``key``
    (document, page) lets the alignment of an element be reused by later traces.
    """
    if start >= end:
        return []
    aligned = aligned_characters(page, region, text, key)
    return line_boxes(page, [index for position in range(start, min(end, len(aligned)))
                             for index in aligned[position]])


def line_boxes(page: PageText, indices: list[int]) -> list[BBox]:
    """The boxes, one per line, of the page's characters at ``indices`` (in reading order)."""
    boxes: list[tuple[BBox, bool]] = []
    for index in indices:
        char = page.chars[index]
        if not boxes or boxes[-1][0] != char.line_box:
            boxes.append((char.line_box, char.turn in (90, 270)))
    return _lines(boxes)


def quotes_in_layer(page: PageText, quote: str) -> list[list[int]]:
    """Each place ``quote`` occurs in the page's text as PDFium reads it, or row by row across the page
    (the orders a viewer's selection copies, which may differ from the stored reading order in
    tables and columns): the indices of the characters it covers, once for each place."""
    found: dict[tuple[int, ...], None] = {}
    for reading in (page.stream, page.rows):
        order = sorted(range(len(page.chars)), key=lambda index: reading.positions[index])
        placed = [reading.positions[index] for index in order]
        for start, end in find_quote(reading.text, quote):
            covered = order[bisect.bisect_left(placed, start):bisect.bisect_left(placed, end)]
            if covered:
                found.setdefault(tuple(covered), None)
    return [list(indices) for indices in found]


_ALIGNED: OrderedDict = OrderedDict()
_ALIGNED_SIZE = 512


def aligned_characters(page: PageText, region: BBox, text: str, key: Optional[tuple]) -> list[list[int]]:
    """For each character of ``text``, the indices of the page's characters it matched (often none for spaces)."""
    cache_key = (key, region, text) if key is not None else None
    if cache_key is not None:
        with _CACHE._lock:
            if cache_key in _ALIGNED:
                _ALIGNED.move_to_end(cache_key)
                return _ALIGNED[cache_key]
    inside = [index for index, char in enumerate(page.chars) if middle_within(char.box, region, _TOLERANCE)]
    wanted = [(i, letter) for i, ch in enumerate(text) for letter in _fold(ch) if not letter.isspace()]
    pdf_letters = [(index, letter) for index in inside
                   for letter in _fold(page.chars[index].char) if not letter.isspace()]
    aligned: list[list[int]] = [[] for _ in text]
    left_string = "".join(letter for _, letter in wanted)
    right_string = "".join(letter for _, letter in pdf_letters)
    for a, b in sorted(_letter_pairs(left_string, right_string)):
        index = pdf_letters[b][0]
        target = aligned[wanted[a][0]]
        if not target or target[-1] != index:
            target.append(index)
    if cache_key is not None:
        with _CACHE._lock:
            _ALIGNED[cache_key] = aligned
            while len(_ALIGNED) > _ALIGNED_SIZE:
                _ALIGNED.popitem(last=False)
    return aligned


_MIN_MOVE = 4  # letters: a shorter run found elsewhere on the page is more likely chance than a moved block
_MAX_MOVES = 64
_TAKEN = "\uffff"  # a letter already paired; PDFium never reports it as text


def _letter_pairs(left: str, right: str) -> list[tuple[int, int]]:
    """Which letter of ``left`` (the stored text) is which letter of ``right`` (the page's, in PDFium's
    order): the longest common subsequence, then blocks the two orders put in different places
    (pdfminer and PDFium may order a page's blocks differently), longest first."""
    if left == right:  # the usual case: same letters, same order
        return list(zip(range(len(left)), range(len(right))))
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    pairs = [(block.a + k, block.b + k) for block in matcher.get_matching_blocks() for k in range(block.size)]
    paired_left = {a for a, _ in pairs}
    remaining = list(right)
    for _, b in pairs:
        remaining[b] = _TAKEN
    for _ in range(_MAX_MOVES):
        runs = [run for run in _unpaired_runs(len(left), paired_left) if run[1] - run[0] >= _MIN_MOVE]
        if not runs:
            break
        start, end = max(runs, key=lambda run: run[1] - run[0])
        rest = "".join(remaining)
        block = difflib.SequenceMatcher(None, left[start:end], rest, autojunk=False).find_longest_match(
            0, end - start, 0, len(rest))
        if block.size < _MIN_MOVE:
            paired_left.update(range(start, end))  # nothing of it elsewhere: do not try it again
            continue
        for k in range(block.size):
            pairs.append((start + block.a + k, block.b + k))
            paired_left.add(start + block.a + k)
            remaining[block.b + k] = _TAKEN
    return pairs


def _unpaired_runs(length: int, paired: set[int]) -> list[tuple[int, int]]:
    runs, start = [], None
    for index in range(length + 1):
        if index < length and index not in paired:
            start = index if start is None else start
        elif start is not None:
            runs.append((start, index))
            start = None
    return runs


def _fold(char: str) -> str:
    return unicodedata.normalize("NFKC", char).casefold()


def _lines(boxes: list[tuple[BBox, bool]]) -> list[BBox]:
    """Group glyph boxes (in reading order; each with whether its glyph is turned sideways, so its
    line runs down the page) into lines and return each line's union box."""
    lines: list[list[float]] = []
    for box, sideways in boxes:
        if lines:
            line = lines[-1]
            low, high = (0, 2) if sideways else (1, 3)  # the edges across the line, which its glyphs share
            overlap = min(box[high], line[high]) - max(box[low], line[low])
            height = min(box[high] - box[low], line[high] - line[low]) or 1.0
            if overlap >= 0.5 * height:
                line[:] = [min(line[0], box[0]), min(line[1], box[1]), max(line[2], box[2]), max(line[3], box[3])]
                continue
        lines.append(list(box))
    return [tuple(round(v, 3) for v in line) for line in lines]
