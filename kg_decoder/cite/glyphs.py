"""Boxes of exact characters on a page, from the characters its format's backend reads there (a PDF's
own text layer through PDFium, the rendering of an Office document).

Knows nothing of RDF nor of any format. Given an element's text and its box on the page, it aligns
the element's characters with the page's characters inside that box and returns, for a range of
the element's text, one box per line on the displayed page (origin at its top-left, the coordinate
system of every kg-decoder box). A line's box spans its characters' advances and the font's height,
as a PDF viewer's selection does; the glyphs' tight outlines only decide which characters lie inside
an element.
"""

from __future__ import annotations

import bisect
import difflib
import unicodedata
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock
from typing import Optional

from ..decode.backends import page_text
from ..model import PageText, Reading, middle_within
from .quotes import FoldedText, find_quote

BBox = tuple[float, float, float, float]

_TOLERANCE = 2.0  # points: element boxes from pdfminer and PDFium glyph boxes differ slightly
_CACHE_SIZE = 16


@dataclass(frozen=True)
class DrawnDocument:
    """A document whose pages a trace reads: its bytes and format, and its rendering for a format whose
    elements were placed on one. ``key`` names it in the caches (its sha256; another for a rendering)."""

    key: str
    data: bytes
    format_name: str
    rendered: Optional[bytes] = None


class _PageCache:
    """The readings of recently traced pages, keyed by (document key, page number)."""

    def __init__(self) -> None:
        self._pages: OrderedDict[tuple[str, int], Optional[PageText]] = OrderedDict()
        self._lock = Lock()

    def get(self, key: tuple[str, int]) -> tuple[bool, Optional[PageText]]:
        with self._lock:
            if key in self._pages:
                self._pages.move_to_end(key)
                return True, self._pages[key]
        return False, None

    def put(self, key: tuple[str, int], page: Optional[PageText]) -> None:
        with self._lock:
            self._pages[key] = page
            while len(self._pages) > _CACHE_SIZE:
                self._pages.popitem(last=False)


_CACHE = _PageCache()


def page_characters(document: DrawnDocument, page_number: int) -> Optional[PageText]:
    """The characters a page of the document shows, as its format's backend reads them; None when
    nothing can be read there (a scan, a format without pages, a page number out of range)."""
    held, page = _CACHE.get((document.key, page_number))
    if not held:
        page = page_text(document.data, document.format_name, page_number, document.rendered)
        _CACHE.put((document.key, page_number), page)
    return page


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
    """Each place ``quote`` occurs in the page's text in the drawing's own order, or row by row across
    the page (the orders a viewer's selection copies, which may differ from the stored reading order
    in tables and columns): the indices of the characters it covers, once for each place."""
    found: dict[tuple[int, ...], None] = {}
    for reading, folded, order, placed in _readings(page):
        for start, end in find_quote(reading.text, quote, folded):
            covered = order[bisect.bisect_left(placed, start):bisect.bisect_left(placed, end)]
            if covered:
                found.setdefault(tuple(covered), None)
    return [list(indices) for indices in found]


_READINGS: "weakref.WeakKeyDictionary[PageText, list]" = weakref.WeakKeyDictionary()


def _readings(page: PageText) -> list[tuple[Reading, FoldedText, list[int], list[int]]]:
    """The page's two readings, each folded for quote matching, with its characters in its order and
    their positions in it (worked out once per page)."""
    with _CACHE._lock:
        held = _READINGS.get(page)
    if held is None:
        held = []
        for reading in (page.stream, page.rows):
            order = sorted(range(len(page.chars)), key=reading.positions.__getitem__)
            held.append((reading, FoldedText(reading.text), order, [reading.positions[i] for i in order]))
        with _CACHE._lock:
            _READINGS[page] = held
    return held


_ALIGNED: OrderedDict = OrderedDict()
_ALIGNED_SIZE = 512


def aligned_characters(page: PageText, region: BBox, text: str, key: Optional[tuple]) -> list[list[int]]:
    """For each character of ``text``, the indices of the page's characters it matched (often none for spaces).

    The characters inside ``region`` are read in the drawing's order and row by row: the stored text
    (pdfminer's reading) follows one or the other, or neither where text was drawn out of its reading
    order (a page drawn in pieces, one element holding it all); the order that pairs more letters wins.
    """
    cache_key = (key, region, text) if key is not None else None
    if cache_key is not None:
        with _CACHE._lock:
            if cache_key in _ALIGNED:
                _ALIGNED.move_to_end(cache_key)
                return _ALIGNED[cache_key]
    inside = [index for index, char in enumerate(page.chars) if middle_within(char.box, region, _TOLERANCE)]
    aligned, pairs, same = paired_characters(page, inside, text)
    if not same:  # the letters are not the stored text's in the drawing's order: row by row, then?
        by_rows, row_pairs, same = paired_characters(page, sorted(inside, key=page.rows.positions.__getitem__), text)
        if same or row_pairs > pairs:
            aligned = by_rows
    if cache_key is not None:
        with _CACHE._lock:
            _ALIGNED[cache_key] = aligned
            while len(_ALIGNED) > _ALIGNED_SIZE:
                _ALIGNED.popitem(last=False)
    return aligned


def paired_characters(page: PageText, order: list[int], text: str) -> tuple[list[list[int]], int, bool]:
    """For each character of ``text``, the indices of the page's characters it pairs with, the page's
    characters ``order`` read in that order; how many letters were paired, and whether the two read
    the same letters in the same order."""
    wanted = [(i, letter) for i, ch in enumerate(text) for letter in _fold(ch) if not letter.isspace()]
    drawn = [(index, letter) for index in order for letter in _fold(page.chars[index].char) if not letter.isspace()]
    left, right = "".join(letter for _, letter in wanted), "".join(letter for _, letter in drawn)
    pairs = _letter_pairs(left, right)
    aligned: list[list[int]] = [[] for _ in text]
    for a, b in sorted(pairs):
        index = drawn[b][0]
        target = aligned[wanted[a][0]]
        if not target or target[-1] != index:
            target.append(index)
    return aligned, len(pairs), left == right


_MIN_MOVE = 4  # letters: a shorter run found elsewhere on the page is more likely chance than a moved block
_MAX_MOVES = 64
_SHIFT = 3  # letters: a short run is a pair only where both texts put it about as far from its neighbours
_TAKEN = "\uffff"  # a letter already paired; PDFium never reports it as text


def _letter_pairs(left: str, right: str) -> list[tuple[int, int]]:
    """Which letter of ``left`` (the stored text) is which letter of ``right`` (the page's): the longest
    common subsequence without the short runs it pairs by chance across text the two put in different
    places, then blocks the two orders put in different places, longest first."""
    if left == right:
        return list(zip(range(len(left)), range(len(right))))
    matcher = difflib.SequenceMatcher(None, left, right, autojunk=False)
    pairs = [(block.a + k, block.b + k) for block in _kept_blocks(matcher.get_matching_blocks(), left, right)
             for k in range(block.size)]
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


def _kept_blocks(blocks, left: str, right: str) -> list:
    """The matching blocks of a longest common subsequence, less the short ones that stand between their
    neighbours at distances the two texts do not share: a letter or two of a sentence paired with the
    same letters far away, in text drawn elsewhere (the box would land on other words)."""
    blocks = [block for block in blocks if block.size]
    kept = []
    for k, block in enumerate(blocks):
        if block.size < _MIN_MOVE:
            before = kept[-1] if kept else None
            after = next((b for b in blocks[k + 1:] if b.size >= _MIN_MOVE), None)
            gap_before = (block.a - (before.a + before.size if before else 0),
                          block.b - (before.b + before.size if before else 0))
            gap_after = ((after.a if after else len(left)) - block.a - block.size,
                         (after.b if after else len(right)) - block.b - block.size)
            if abs(gap_before[0] - gap_before[1]) > _SHIFT and abs(gap_after[0] - gap_after[1]) > _SHIFT:
                continue
        kept.append(block)
    return kept


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
