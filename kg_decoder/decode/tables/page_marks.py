"""A PDF page as the table finder reads it: its words, its ruling lines and its slanted strokes, in the
displayed page's coordinates (PDF points, origin at the top-left corner, ``/Rotate`` applied); words
gathered into text lines, and lines cut into pieces at wide gaps.

Two readings, both PDFium's: :func:`marks_of_page` (words with their text, the decode's own words of
the page; every ruling line and stroke its paths draw, segment by segment; what cells are built from)
and :func:`marks_from_pdfium` (about 4 ms a page of prose: words without their text, rules from path
objects' bounds; enough for the pre-signal that decides whether a page is worth a closer look).
:func:`marks_of_page` reads what pdfplumber's words and edges gave the finder before (its rules and
strokes the same, its words pdfminer's height: ``tests/integration/test_pdf_tables.py``) without
interpreting the page again, at about a tenth of the cost.
"""

from __future__ import annotations

import ctypes
from collections import Counter
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ...model import BBox
from ..pdf.geometry import PageGeometry
from ..pdf.characters import FontHeights, glyph_turn, letters_of
from ..pdf.pdfium_chars import LOOSE, read_characters
from .page_paths import Rule, drawn_marks, path_objects

PIECE_GAP = 0.5  # words closer than this many times their height belong to one piece of a line
LINE_OVERLAP = 0.5  # vertical overlap (share of the smaller word) that puts two words on one line
# List markers (not "-": a dash is often the value of an empty cell).
BULLETS = {"•", "◦", "▪", "■", "●", "○", "‣", "∙", "\uf0b7", "\uf0a7"}


@dataclass(frozen=True)
class Word:
    """A word of the text layer (no spaces inside); its box on the displayed page."""

    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float  # the type size (the box's height where the reader knows none)
    upright: bool = True

    @property
    def height(self) -> float:
        return self.bottom - self.top

    @property
    def box(self) -> BBox:
        return (self.x0, self.top, self.x1, self.bottom)


@dataclass
class PageMarks:
    """What a page holds that tells a table: its words, its ruling lines and its slanted strokes."""

    width: float
    height: float
    words: list[Word]
    horizontal_rules: list[Rule]
    vertical_rules: list[Rule]
    slanted: list[BBox] = field(default_factory=list)  # boxes of slanted lines and curves (a chart's)


def marks_from_pdfium(page) -> PageMarks:
    """Words without their text (runs of character boxes split at spaces) and rules from thin path
    objects and rectangles' sides of a pypdfium2 page: about 4 ms a page of prose, enough for the
    pre-signal that decides whether a page is worth a closer look (:func:`marks_of_page` for cells)."""
    import pypdfium2.raw as pdfium_c

    geometry = PageGeometry.of(page)
    width, height = geometry.size
    words = _character_words(page, geometry)
    horizontal, vertical = [], []
    bounds = [ctypes.c_float() for _ in range(4)]  # left, bottom, right, top
    for path, _, (a, b, c, d, e, f) in path_objects(page, pdfium_c):
        if not pdfium_c.FPDFPageObj_GetBounds(path, *bounds):
            continue
        low_x, low_y, high_x, high_y = (bound.value for bound in bounds)
        corners = [(a * x + c * y + e, b * x + d * y + f) for x in (low_x, high_x)
                   for y in (low_y, high_y)]  # in a form: its space, onto the page's
        xs, ys = [x for x, _ in corners], [y for _, y in corners]
        x0, top, x1, bottom = geometry.box((min(xs), min(ys), max(xs), max(ys)))
        path_width, path_height = x1 - x0, bottom - top
        if path_height <= 2.5 and path_width > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif path_width <= 2.5 and path_height > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
        elif path_width * path_height < 0.5 * width * height:  # a rectangle: its sides
            horizontal += [Rule(top, x0, x1), Rule(bottom, x0, x1)]
            vertical += [Rule(x0, top, bottom), Rule(x1, top, bottom)]
    return PageMarks(width, height, words, merge_collinear(horizontal), merge_collinear(vertical))


def _character_words(page, geometry: PageGeometry, with_text: bool = False) -> list[Word]:
    """Runs of a page's character boxes (PDFium's loose ones), split at spaces and where a character
    does not follow the one before on its line; their letters where ``with_text`` (else "")."""
    from pypdfium2 import PdfiumError

    # Every box at once (a foreign call a box cost 4 µs), each with its own code: the page's text
    # (get_text_range) leaves out a character PDFium reads as U+0000, and its indices then drift from
    # PDFium's (a word's last letter taken for the space after it, its gap widened).
    characters = read_characters(page.get_textpage())
    codes = characters.codes
    spaces = np.zeros(len(codes), bool)
    for code in np.unique(codes).tolist():
        if chr(code).isspace():
            spaces |= codes == code
    counted = ~spaces & _across_the_page(characters, spaces, geometry.rotation)
    if not np.all(characters.flags[counted] & LOOSE):
        raise PdfiumError("Failed to get charbox.")  # as pypdfium2's get_charbox: the page is not looked at
    boxes = _displayed_boxes(geometry, characters.numbers[:, 4:8])
    drawn = counted & (boxes[:, 2] > boxes[:, 0]) & (boxes[:, 3] > boxes[:, 1])
    # A run of characters ends at a space or a character across the page, and where a character does
    # not follow the one before on its line (a blank, with no area, is passed over).
    indices = np.flatnonzero(drawn)
    x0, top, x1, bottom = boxes[indices].T
    char_height = bottom - top
    gap = x0[1:] - x1[:-1]
    ends_before = np.cumsum(~counted)[indices]  # the spaces and characters across the page before each
    follows = (ends_before[1:] == ends_before[:-1]) & (np.abs(top[1:] - top[:-1]) < 0.5 * char_height[1:]) \
        & (gap >= -0.5 * char_height[1:]) & (gap <= 0.2 * char_height[1:])
    starts = np.flatnonzero(np.concatenate([[True], ~follows])) if len(indices) else np.zeros(0, np.int64)
    runs = np.stack([x0[starts], np.minimum.reduceat(top, starts),
                     np.maximum.reduceat(x1, starts), np.maximum.reduceat(bottom, starts)], axis=1).tolist() \
        if len(starts) else []
    if not with_text:
        return [Word("", x0, top, x1, bottom, bottom - top) for x0, top, x1, bottom in runs]
    letters = letters_of(codes[indices])
    ends = starts.tolist()[1:] + [len(indices)]
    # As high as the type is large, up from the box's bottom (its descent), as pdfminer's: the loose box
    # spans the font's own ascent and descent (a symbol font's bullet, 2.5 times its size, would reach
    # into the lines above it).
    sizes = FontHeights(page.get_textpage(), {})
    upright = _main_turn(characters, spaces, geometry.rotation) == 0
    words = []
    for start, end, (x0, top, x1, bottom) in zip(starts.tolist(), ends, runs):
        text = letters[start:end]
        if text.strip():
            index = int(indices[start])
            size = sizes.size(index, int(characters.objects[index]) or None)
            words.append(Word(text, x0, bottom - size if upright and size > 0 else top, x1, bottom,
                              size or bottom - top, upright))
    # The characters across the page (a chart's turned axis labels: a sign it is no table), runs of them
    # as PDFium reads them one after the other, as words not upright.
    across = np.flatnonzero(~spaces & ~counted & ((characters.flags & LOOSE) != 0) & (boxes[:, 2] > boxes[:, 0])
                            & (boxes[:, 3] > boxes[:, 1]))
    if len(across):
        starts = np.flatnonzero(np.concatenate([[True], across[1:] != across[:-1] + 1]))
        letters = letters_of(codes[across])
        ends = starts.tolist()[1:] + [len(across)]
        low = np.minimum.reduceat(boxes[across, :2], starts, axis=0).tolist()
        high = np.maximum.reduceat(boxes[across, 2:], starts, axis=0).tolist()
        for start, end, (x0, top), (x1, bottom) in zip(starts.tolist(), ends, low, high):
            if letters[start:end].strip():
                words.append(Word(letters[start:end], x0, top, x1, bottom, bottom - top, not upright))
    return words


def marks_of_page(page, lines: Optional[Sequence] = None) -> PageMarks:
    """The marks of a pypdfium2 page the table finder builds cells from: its words with their text and
    every ruling line and slanted stroke its paths draw (:func:`drawn_marks`). The words are
    ``lines``' own (``text_layer.PdfLines.lines`` of the page, the decode's reading: a page is read
    once), or, where those lines carry none (a page turned by /Rotate, read glyph by glyph), runs of
    characters as :func:`marks_from_pdfium` finds them, with their letters."""
    geometry = PageGeometry.of(page)
    width, height = geometry.size
    words = _line_words(lines) if lines is not None else None
    if words is None:
        words = _character_words(page, geometry, with_text=True)
    horizontal, vertical, slanted = drawn_marks(page, geometry)
    return PageMarks(width, height, words, merge_collinear(horizontal), merge_collinear(vertical), slanted)


def _line_words(lines: Sequence) -> Optional[list[Word]]:
    """The words of a page's lines (each with its box on the displayed page), None when a line with
    text carries no words (read one glyph at a time)."""
    words = []
    for line in lines:
        if not line.words:
            if line.text.strip():
                return None
            continue
        upright = line.turn == 0
        sizes = line.word_sizes or (line.size,) * len(line.words)
        for (text, (x0, top, x1, bottom)), size in zip(line.words, sizes):
            if text.strip():
                if upright and size > 0:  # as high as its type, up from its descent: pdfminer's height
                    top = bottom - size
                words.append(Word(text, x0, top, x1, bottom, size or bottom - top, upright))
    return words


def _displayed_boxes(geometry: PageGeometry, rects: "np.ndarray") -> "np.ndarray":
    """:meth:`PageGeometry.box` of each user-space rectangle (a row of x0, y0, x1, y1): on an upright
    page at once, with the same operations on the same doubles; else one by one."""
    ordered = (rects[:, 0] <= rects[:, 2]) & (rects[:, 1] <= rects[:, 3])
    if geometry.rotation or not np.all(ordered):
        return np.array([geometry.box(rect) for rect in rects.tolist()], dtype=np.float64).reshape(-1, 4)
    area = geometry.visible
    height = area[3] - area[1]
    return np.stack([rects[:, 0] - area[0], height - (rects[:, 3] - area[1]),
                     rects[:, 2] - area[0], height - (rects[:, 1] - area[1])], axis=1)


def _across_the_page(characters, spaces: "np.ndarray", rotation: int) -> "np.ndarray":
    """Which characters run the way most of the page's text runs on the displayed page: a margin stamp
    turned across it (arXiv's, a journal's) sits beside every line of the body, and its letters are
    no column of a table."""
    turns = _turns(characters, rotation)
    return turns == _main_turn(characters, spaces, rotation, turns)


def _turns(characters, rotation: int) -> "np.ndarray":
    """Each character's turn on the displayed page (``glyph_turn``)."""
    angles = characters.numbers[:, 10]
    distinct, which = np.unique(angles, return_inverse=True)  # a page's glyphs share few angles
    return np.array([glyph_turn(angle, rotation) for angle in distinct.tolist()], dtype=np.int64)[which]


def _main_turn(characters, spaces: "np.ndarray", rotation: int, turns: Optional["np.ndarray"] = None) -> int:
    """The turn most of the page's characters (spaces aside) show on the displayed page."""
    turns = _turns(characters, rotation) if turns is None else turns
    counted = Counter(turns[~spaces].tolist())
    return counted.most_common(1)[0][0] if counted else 0


def merge_collinear(rules: Sequence[Rule], position_tolerance: float = 1.0, gap_tolerance: float = 2.0) -> list[Rule]:
    """Rule pieces on one line that touch, joined: cell borders drawn cell by cell become one rule.

    >>> merge_collinear([Rule(10, 0, 50), Rule(10.5, 51, 90), Rule(30, 0, 90)])
    [Rule(position=10.0, start=0.0, end=90.0), Rule(position=30.0, start=0.0, end=90.0)]
    """
    merged: list[list[float]] = []
    for position, start, end in sorted(rules, key=lambda rule: (round(rule[0] / position_tolerance), rule[1])):
        for rule in merged[-8:]:
            if abs(rule[0] - position) <= position_tolerance and start <= rule[2] + gap_tolerance \
                    and end >= rule[1] - gap_tolerance:
                rule[1], rule[2] = min(rule[1], start), max(rule[2], end)
                break
        else:
            merged.append([position, start, end])
    return [Rule(float(position), float(start), float(end)) for position, start, end in merged]


# ----------------------------------------------------------------------------- boxes

def box_area(box: BBox) -> float:
    return max(0.0, box[2] - box[0]) * max(0.0, box[3] - box[1])


def box_overlap(a: BBox, b: BBox) -> float:
    """The area two boxes share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def box_union(a: BBox, b: BBox) -> BBox:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def words_box(words: Sequence[Word]) -> BBox:
    """The box around some words (at least one)."""
    return (min(w.x0 for w in words), min(w.top for w in words), max(w.x1 for w in words),
            max(w.bottom for w in words))


def words_in(box: BBox, words: Sequence[Word], min_share: float = 0.5) -> list[Word]:
    """The words with at least ``min_share`` of their area inside ``box``."""
    left, top, right, bottom = box
    # a word wholly on one side of the box shares no area with it: passed over before its share is worked out
    return [w for w in words if (min_share <= 0 or (w.x1 > left and w.x0 < right and w.bottom > top and w.top < bottom))
            and box_overlap(box, w.box) / (box_area(w.box) or 1e-6) >= min_share]


def snap_box(box: BBox, words: Sequence[Word]) -> BBox | None:
    """The box around the words inside ``box``; None when it holds none."""
    inside = words_in(box, words)
    return words_box(inside) if inside else None


# ----------------------------------------------------------------------------- lines and their pieces

def text_lines(words: Sequence[Word], overlap: float = LINE_OVERLAP) -> list[list[Word]]:
    """Words grouped into lines, top to bottom, each left to right: a word joins the line whose first
    word it overlaps most vertically (at least ``overlap`` of the smaller height)."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: (w.top, w.x0)):
        best, best_overlap = None, 0.0
        for line in lines[-4:]:
            first = line[0]
            shared = (min(first.bottom, word.bottom) - max(first.top, word.top)) / max(1e-6, min(first.height,
                                                                                                  word.height))
            if shared >= overlap and shared > best_overlap:
                best, best_overlap = line, shared
        if best is None:
            lines.append([word])
        else:
            best.append(word)
    for line in lines:
        line.sort(key=lambda w: w.x0)
    lines.sort(key=lambda line: min(w.top for w in line))
    return lines


@dataclass
class LinePiece:
    """Words of one text line close enough to be one piece of text (a cell's, once columns are known)."""

    words: list[Word]

    @property
    def x0(self) -> float:
        return min(w.x0 for w in self.words)

    @property
    def x1(self) -> float:
        return max(w.x1 for w in self.words)


def line_pieces(line: Sequence[Word], gap: float, vertical_rules: Sequence[Rule] = ()) -> list[LinePiece]:
    """A text line cut where two words stand further apart than ``gap`` times their height, or where a
    vertical rule passes between them (a bullet stays with the word after it)."""
    pieces: list[LinePiece] = []
    for word in line:
        if pieces:
            previous = pieces[-1].words[-1]
            height = max(1.0, min(previous.height, word.height))
            middle = (word.top + word.bottom) / 2
            ruled = any(previous.x1 - 0.5 <= x <= word.x0 + 0.5 and top - 1 <= middle <= bottom + 1
                        for x, top, bottom in vertical_rules)
            bullet = len(pieces[-1].words) == 1 and previous.text in BULLETS and word.x0 - previous.x1 <= 4 * height
            if (word.x0 - previous.x1 <= gap * height or bullet) and not ruled:
                pieces[-1].words.append(word)
                continue
        pieces.append(LinePiece([word]))
    return pieces


def distinct(values: Sequence[float], tolerance: float) -> list[float]:
    """The values sorted, each within ``tolerance`` of the one kept before it left out.

    >>> distinct([3.0, 1.0, 1.5, 7.0], 1.0)
    [1.0, 3.0, 7.0]
    """
    kept: list[float] = []
    for value in sorted(values):
        if not kept or value - kept[-1] > tolerance:
            kept.append(value)
    return kept


_NUMBER_MARKS = str.maketrans("", "", ",.%()-–$€ ")


def reads_as_number(text: str) -> bool:
    """Whether a text reads as a number: digits make up most of it once separators, signs and units go.

    >>> reads_as_number("(1,204.5)"), reads_as_number("12 %"), reads_as_number("A1"), reads_as_number("-")
    (True, True, False, False)
    """
    bare = text.translate(_NUMBER_MARKS)
    return bool(bare) and sum(ch.isdigit() for ch in bare) >= 0.6 * len(bare)


def cell_text(words: Sequence[Word]) -> str:
    """The words of a cell as text: line by line, top to bottom."""
    return " ".join(" ".join(w.text for w in line) for line in text_lines(words))


__all__ = ["LinePiece", "PageMarks", "Rule", "Word", "cell_text", "distinct", "line_pieces",
           "drawn_marks", "marks_from_pdfium", "marks_of_page", "reads_as_number", "text_lines", "words_in"]
