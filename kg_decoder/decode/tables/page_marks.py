"""A PDF page as the table finder reads it: its words, its ruling lines and its slanted strokes, in the
displayed page's coordinates (PDF points, origin at the top-left corner, ``/Rotate`` applied); words
gathered into text lines, and lines cut into pieces at wide gaps.

Two readings: :func:`marks_from_pdfplumber` (words with their text, every ruling line; what cells are
built from) and :func:`marks_from_pdfium` (about 4 ms a page of prose: words without their text, rules
from path objects; enough for the pre-signal that decides whether a page is worth a closer look).
:func:`marks_from_layout` gives pdfplumber's marks from the page pdfminer already read for
unstructured's ``fast`` (the characters in the order the page draws them, as pdfplumber's own
reading has them), so a page is not interpreted twice.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple, Sequence

import numpy as np

from ...model import BBox
from ...patches.pdfplumber import set_objects_from_layout
from ..pdf.geometry import PageGeometry
from ..pdf.characters import glyph_turn
from ..pdf.pdfium_chars import LOOSE, read_characters

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


class Rule(NamedTuple):
    """A ruling line: horizontal at y = ``position`` from x = ``start`` to ``end``, or vertical at
    x = ``position`` from y = ``start`` to ``end``."""

    position: float
    start: float
    end: float


@dataclass
class PageMarks:
    """What a page holds that tells a table: its words, its ruling lines and its slanted strokes."""

    width: float
    height: float
    words: list[Word]
    horizontal_rules: list[Rule]
    vertical_rules: list[Rule]
    slanted: list[BBox] = field(default_factory=list)  # boxes of slanted lines and curves (a chart's)


def marks_from_pdfplumber(plumber_page) -> PageMarks:
    """Words and ruling lines of a pdfplumber page."""
    words = [Word(w["text"], float(w["x0"]), float(w["top"]), float(w["x1"]), float(w["bottom"]),
                  float(w.get("size") or (w["bottom"] - w["top"])), bool(w.get("upright", True)))
             for w in plumber_page.extract_words(x_tolerance=1.5, y_tolerance=2, keep_blank_chars=False,
                                                 extra_attrs=["size"])
             if w["text"].strip()]
    horizontal, vertical = [], []
    for edge in plumber_page.edges:  # lines, rectangles' sides and curves' segments
        x0, x1, top, bottom = float(edge["x0"]), float(edge["x1"]), float(edge["top"]), float(edge["bottom"])
        # By their extent, not pdfplumber's orientation: it calls a line "v" unless its ends are exactly level,
        # and a page turned by /Rotate leaves them 1e-13 apart.
        if bottom - top <= 1 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 1 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    for rect in plumber_page.rects:  # thin filled rectangles drawn as rules
        x0, x1, top, bottom = float(rect["x0"]), float(rect["x1"]), float(rect["top"]), float(rect["bottom"])
        if bottom - top <= 2.5 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 2.5 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    slanted = []
    for line in plumber_page.lines:
        if abs(float(line["x1"]) - float(line["x0"])) > 1 and abs(float(line["bottom"]) - float(line["top"])) > 1:
            slanted.append((float(line["x0"]), float(line["top"]), float(line["x1"]), float(line["bottom"])))
    for curve in plumber_page.curves:
        slanted.append((float(curve["x0"]), float(curve["top"]), float(curve["x1"]), float(curve["bottom"])))
    return PageMarks(float(plumber_page.width), float(plumber_page.height), words,
                     merge_collinear(horizontal), merge_collinear(vertical), slanted)


def marks_from_layout(plumber_page, layout) -> PageMarks:
    """:func:`marks_from_pdfplumber` of a page pdfminer has already read (``layout``, an LTPage laid
    out after ``patches.pdfminer.install_drawing_order``), the same marks without interpreting the
    page again: the page's objects are made from the layout as pdfplumber makes them
    (``patches.pdfplumber.set_objects_from_layout``). The pdfplumber page's caches are emptied
    afterwards."""
    set_objects_from_layout(plumber_page, layout)
    try:
        return marks_from_pdfplumber(plumber_page)
    finally:
        plumber_page.close()


def marks_from_pdfium(page) -> PageMarks:
    """Words without their text (runs of character boxes split at spaces) and rules from thin path
    objects and rectangles' sides of a pypdfium2 page."""
    import pypdfium2.raw as pdfium_c
    from pypdfium2 import PdfiumError

    geometry = PageGeometry.of(page)
    width, height = geometry.size
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
    words = [Word("", x0, top, x1, bottom, bottom - top) for x0, top, x1, bottom in runs]
    horizontal, vertical = [], []
    for path in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=3):
        x0, top, x1, bottom = geometry.box(path.get_bounds())
        path_width, path_height = x1 - x0, bottom - top
        if path_height <= 2.5 and path_width > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif path_width <= 2.5 and path_height > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
        elif path_width * path_height < 0.5 * width * height:  # a rectangle: its sides
            horizontal += [Rule(top, x0, x1), Rule(bottom, x0, x1)]
            vertical += [Rule(x0, top, bottom), Rule(x1, top, bottom)]
    return PageMarks(width, height, words, merge_collinear(horizontal), merge_collinear(vertical))


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
    angles = characters.numbers[:, 10]
    distinct, which = np.unique(angles, return_inverse=True)  # a page's glyphs share few angles
    turns = np.array([glyph_turn(angle, rotation) for angle in distinct.tolist()], dtype=np.int64)[which]
    counted = Counter(turns[~spaces].tolist())
    main = counted.most_common(1)[0][0] if counted else 0
    return turns == main


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
    return [w for w in words if box_overlap(box, w.box) / (box_area(w.box) or 1e-6) >= min_share]


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
           "marks_from_layout", "marks_from_pdfium", "marks_from_pdfplumber", "reads_as_number", "text_lines",
           "words_in"]
