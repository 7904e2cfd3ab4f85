"""A PDF page's text layer as PDFium reads it, in lines and blocks: the page's text as elements where
unstructured's ``fast`` reads nothing, turned lines read along their baselines, the lines beside a
table, the largest type for a title. Its characters, each with its boxes: ``characters.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, Union

from ...model import Element, PageChar, middle_within
from . import spacing
from .characters import FontHeights, GeneratedSpace, drawn_upright, glyph_turn, letters_of, page_characters
from .fonts import declared_heights
from .page_objects import text_matrices
from .geometry import BBox, PageGeometry
from .pdfium_chars import GENERATED

_LINE_GAP = 0.8  # lines further apart than this many line heights start a new block
_SIZE_RATIO = 1.3  # lines whose heights differ more than this start a new block
_WORD_GAP = 0.12  # a gap wider than this many line heights between two characters of a row is a space
_TITLE_RATIO = 1.2  # a title's type is at least this much larger than the page's body text
_TITLE_WORDS = 40  # a block of more words is a paragraph, not a title
_FAR = 100_000.0  # points: boxes further off than this are put here when glyphs are compared by place
_TURN_TOLERANCE = 2.0  # degrees off a quarter turn a glyph may be and still count as turned by it


def has_turned_text(page) -> bool:
    """Whether a page may hold turned text (a cheap look at its text objects and /Rotate): only such
    pages are read for it."""
    if page.get_rotation():
        return True
    return any(abs(b) > 1e-6 or abs(c) > 1e-6 or a < 0 or d < 0 for a, b, c, d in text_matrices(page, max_depth=1))


class PdfLines:
    """The lines of an open PDF's pages as PDFium breaks them (see :func:`_lines`), each page read once
    however many steps ask for it: turned text, the text beside a table, the lines a first reading
    dropped, the title (these steps often look at the same page: page 1 with a margin stamp is read for
    its turned text and for the title).
    ``data``: the PDF's bytes, for its fonts' heights (``fonts.declared_heights``)."""

    def __init__(self, data: bytes, pdf) -> None:
        self._data, self._pdf = data, pdf
        self._lines: dict[int, list[_Line]] = {}

    @property
    def data(self) -> bytes:
        """The PDF's bytes."""
        return self._data

    def page(self, number: int):
        """The pypdfium2 page (numbers from 1)."""
        return self._pdf[number - 1]

    def lines(self, number: int) -> list["_Line"]:
        if number not in self._lines:
            self._lines[number] = _lines(self.page(number), declared_heights(self._data, number))
        return self._lines[number]

    def elements(self, number: int, lines: list["_Line"], category: str = "NarrativeText", turned: bool = False,
                 boxed_only: bool = False, joined: str = "\n") -> list[Element]:
        """Elements of one page, one per block of ``lines`` (some of its lines, ``joined`` by this), with
        boxes on the displayed page; ``boxed_only``: a block outside the visible page is left out."""
        geometry = PageGeometry.of(self.page(number))
        elements = []
        for text, box in _blocks(lines, turned=turned, joined=joined):
            shown = geometry.clip(box)
            if shown is not None or not boxed_only:
                elements.append(Element(0, category, text, page_number=number,
                                        bbox=tuple(round(v, 3) for v in shown) if shown is not None else None))
        return elements


def turned_text_elements(layer: PdfLines, numbers: list[int]) -> list[Element]:
    """The turned text of the given pages (numbers from 1), one element per block of lines, each line
    read along its own baseline and the lines in the order a reader who turns the page reads them;
    boxes on the displayed page. Upright text is left out."""
    elements: list[Element] = []
    for number in numbers:
        lines = [line for line in layer.lines(number) if line.turn not in (0, None)]
        elements += layer.elements(number, sorted(lines, key=reading_key), turned=True)
    return _numbered(elements)


def lines_outside(layer: PdfLines, number: int, region: BBox, block: BBox) -> list[Element]:
    """What a page holds inside ``region`` but outside ``block``, as elements (one per block of
    lines): the text a first reading joined with a table, before and after it."""
    return layer.elements(number, [line for line in layer.lines(number)
                                   if middle_within(line.box, region) and not middle_within(line.box, block)])


def lines_beside(layer: PdfLines, number: int, boxes: list[BBox], read: Callable[[str], bool]) -> list[Element]:
    """The upright lines of a page that lie mostly outside all of ``boxes`` and whose text ``read`` says
    was not read, as elements (one per block of lines): what a first reading dropped."""
    lines = [line for line in layer.lines(number) if line.turn == 0 and not read(line.text)
             and not any(_mostly_inside(line.box, box) for box in boxes)]
    return layer.elements(number, lines, category="UncategorizedText", boxed_only=True)


def _mostly_inside(box: BBox, region: BBox) -> bool:
    """Whether at least a third of ``box`` lies in ``region`` (a line across columns each read apart)."""
    width = min(box[2], region[2]) - max(box[0], region[0])
    height = min(box[3], region[3]) - max(box[1], region[1])
    area = (box[2] - box[0]) * (box[3] - box[1])
    return width > 0 and height > 0 and (area <= 0 or width * height * 3 >= area)


def largest_text(layer: PdfLines, number: int) -> Optional[str]:
    """The upright block of a page set in the largest type, when that type is clearly larger than the
    page's body text and the block is short (a title, not a paragraph); turned text (a margin stamp)
    never counts. None when nothing stands out."""
    lines = [line for line in layer.lines(number) if line.turn == 0 and line.size > 0
             and any(c.isalpha() for c in line.text)]
    if not lines:
        return None
    weight: dict[float, int] = {}
    for line in lines:
        weight[line.size] = weight.get(line.size, 0) + len(line.text)
    body = max(weight, key=weight.get)
    largest = max(line.size for line in lines)
    if largest < _TITLE_RATIO * body:
        return None
    block: list[_Line] = []
    for line in lines:
        if line.size >= largest / _SIZE_RATIO and (not block or _continues(block[-1], line)):
            block.append(line)
        elif any(member.size == largest for member in block):
            break
        else:
            block = [line] if line.size >= largest / _SIZE_RATIO else []
    if not any(line.size == largest for line in block):
        block = [next(line for line in lines if line.size == largest)]
    text = " ".join(" ".join(line.text for line in block).split())
    return text if len(text.split()) <= _TITLE_WORDS else None


def reading_key(line: "_Line") -> tuple:
    """Lines of one turn in reading order: the first line is where the text's own top is."""
    left, top, right, bottom = line.box
    return (line.turn,) + {90: (-right, top), 180: (-bottom, -right), 270: (left, -bottom)}.get(line.turn, (top, left))


def text_layer_elements(layer: PdfLines, numbers: list[int]) -> list[Element]:
    """The text of the given pages (numbers from 1), one element per block of lines, with each block's
    box on the displayed page."""
    return _numbered([element for number in numbers for element in layer.elements(number, layer.lines(number))])


def _numbered(elements: list[Element]) -> list[Element]:
    for index, element in enumerate(elements):
        element.index = index
    return elements


@dataclass
class _Line:
    text: str
    box: BBox
    turn: Optional[int] = 0  # of its glyphs (None: they are turned in different ways)
    size: float = 0.0  # the largest type size of its glyphs
    words: tuple = field(default=(), compare=False)  # its words with their boxes, where read at once (_lines)
    word_sizes: tuple = field(default=(), compare=False)  # each word's type size (its glyphs' largest)


def _lines(page, heights: dict[str, tuple[float, float]]) -> list[_Line]:
    """The page's lines as PDFium breaks them (and where the glyphs' turn changes), with the spaces it
    reads or puts between words. An upright page's characters are read all at once (the same lines as
    one by one: :func:`_lines_one_by_one`)."""
    import numpy as np

    drawn = drawn_upright(page, heights, unmapped=True)
    if drawn is None:
        return _lines_one_by_one(page, heights)
    fonts, read, indices, rows = drawn
    codes = read.codes
    once = _Once()
    # a ligature's letters (ff, ffi) are characters one after another with the very same box: all kept
    objects = read.objects[indices]
    expanded = np.zeros(len(indices), bool)
    expanded[1:] = ((indices[1:] == indices[:-1] + 1) & (rows[1:, :4] == rows[:-1, :4]).all(axis=1)
                    & (objects[1:] == objects[:-1]))
    keep = expanded | ~_Once.near_its_like(codes[indices], rows[:, 4:6])
    looked_at = np.flatnonzero(~keep)
    keep[looked_at] = [once.first(letter, box) for letter, box
                       in zip(letters_of(codes[indices[looked_at]]), rows[looked_at, 4:8].tolist())]
    indices, rows = indices[keep], rows[keep]
    letters = letters_of(codes[indices])
    # What parts the drawn characters: a line break PDFium reads (or a hyphen ending a line, after
    # it), a change of turn, a space (a word's end within a line).
    spaces = np.zeros(len(codes), bool)
    for code in np.unique(codes).tolist():
        if code not in (0, 0xFFFE, 0xFFFF) and chr(code).isspace():
            spaces |= codes == code
    breaks = np.zeros(len(codes) + 1, np.int64)
    breaks[:-1] += (codes == 0x0A) | (codes == 0x0D)
    breaks[indices[codes[indices] == 0x02] + 1] += 1
    breaks_before = np.cumsum(breaks)[indices]
    angles = read.numbers[indices, 10]
    distinct, which = np.unique(angles, return_inverse=True)
    turns = np.array([glyph_turn(angle, 0) for angle in distinct.tolist()], dtype=np.int64)[which]
    new_line = np.ones(len(indices), bool)
    new_line[1:] = (breaks_before[1:] != breaks_before[:-1]) | (turns[1:] != turns[:-1])
    spaces_before = np.cumsum(spaces)[indices]
    new_word = np.ones(len(indices), bool)
    new_word[1:] = spaces_before[1:] != spaces_before[:-1]
    written_before = np.cumsum(spaces & ((read.flags & GENERATED) == 0))[indices]  # space glyphs the page draws
    sizes = _type_sizes(fonts, indices, read.objects[indices])
    starts = np.flatnonzero(new_line).tolist() + [len(indices)]
    around = rows[:, 4:8]
    spaceless = np.cumsum(spacing.spaceless_codes(codes[indices]))  # how many up to each: a line without any is passed
    for start, end in zip(starts, starts[1:]):  # PDFium's own spaces inside a Hangul word: not word breaks
        if turns[start] == 0 and spaceless[end - 1] != (spaceless[start - 1] if start else 0):
            gaps = around[start + 1:end, 0] - around[start:end - 1, 2]
            written = written_before[start + 1:end] != written_before[start:end - 1]
            joined = _joined(letters[start:end], gaps.tolist(), sizes[start:end], written.tolist())
            new_word[start + 1:end] &= ~np.array(joined, bool)
    word_starts = np.flatnonzero(new_word | new_line).tolist() + [len(indices)]
    word_lows = np.minimum.reduceat(around[:, :2], word_starts[:-1], axis=0).tolist()  # each word's box
    word_highs = np.maximum.reduceat(around[:, 2:], word_starts[:-1], axis=0).tolist()
    word_sizes = np.maximum.reduceat(np.array(sizes, np.float64), word_starts[:-1]).tolist() if sizes else []
    lines: list[_Line] = []
    word = 0
    for start, end in zip(starts, starts[1:]):
        first = word
        words = []
        while word_starts[word] < end:
            words.append((letters[word_starts[word]:word_starts[word + 1]], tuple(word_lows[word] + word_highs[word])))
            word += 1
        low, high = around[start:end, :2].min(axis=0).tolist(), around[start:end, 2:].max(axis=0).tolist()
        lines.append(_Line(" ".join(" ".join(text for text, _ in words).split()), (low[0], low[1], high[0], high[1]),
                           int(turns[start]), max(sizes[start:end]), tuple(words), tuple(word_sizes[first:word])))
    return _joined_along(lines)


class _Once:
    """The characters of a page one after another, each told whether it is the first drawn there: a
    glyph drawn again a hair from the same glyph (fake bold, a margin code written twice) is
    ``spacing.drawn_twice``, measured by its line box (its size: the box's larger side)."""

    _CELL = 4.0  # points: a glyph is looked for among those of its cell and the cells around it

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, int], list[tuple[float, float, float]]] = {}

    @classmethod
    def near_its_like(cls, codes: "np.ndarray", corners: "np.ndarray") -> "np.ndarray":
        """Which characters (``codes``, and their boxes' left and top ``corners``) have the same code in
        their cell or a cell around it: only those can be drawn twice (:meth:`first` looks at no other),
        about one in ten in Latin text; the rest need no look. A box far off the page, or none, is put
        where others may be (at worst a glyph looked at for nothing), never where a like beside it is missed.

        >>> import numpy as np
        >>> corners = np.array([[-500.0, 10], [-499.7, 10], [100, 10], [100.2, 10], [np.nan, 1e12], [1e12, 8]])
        >>> _Once.near_its_like(np.array([75, 75, 75, 83, 75, 66]), corners).tolist()
        [True, True, False, False, False, False]
        """
        import numpy as np

        cells = np.floor_divide(np.clip(np.nan_to_num(corners), -_FAR, _FAR), cls._CELL).astype(np.int64)
        if len(cells):
            cells -= cells.min(axis=0) - 1  # from 1: a neighbour's cell is never past either edge of a key's span
        span = int(cells.max(initial=0)) + 2
        keys = (codes.astype(np.int64) * span + cells[:, 0]) * span + cells[:, 1]
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
        near = np.zeros(len(keys), bool)
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                shifted = ordered + (dx * span + dy)  # sorted: numpy's search goes on from the last key found
                count = np.searchsorted(ordered, shifted, "right") - np.searchsorted(ordered, shifted, "left")
                near |= count > (1 if dx == dy == 0 else 0)  # its own cell holds the character itself
        found = np.empty_like(near)
        found[order] = near
        return found

    def first(self, letter: str, box) -> bool:
        left, top = box[0], box[1]
        size = max(box[2] - box[0], box[3] - box[1])
        x, y = int(left // self._CELL), int(top // self._CELL)
        for cell in ((letter, i, j) for i in (x - 1, x, x + 1) for j in (y - 1, y, y + 1)):
            for other_left, other_top, other_size in self._seen.get(cell, ()):
                if spacing.drawn_twice(letter, letter, max(size, other_size), left - other_left, top - other_top):
                    return False
        self._seen.setdefault((letter, x, y), []).append((left, top, size))
        return True


def _joined(letters: str, gaps: list[float], sizes: list[float], written: list[bool]) -> list[bool]:
    """For each pair of neighbouring characters of an upright line (``gaps`` between their boxes, the
    characters' type ``sizes``, whether the page draws a space glyph between them), whether a space
    PDFium put between them is to go: one of the two a letter of a script without spaces between its
    letters, and the gap no word break by ``spacing.word_breaks``."""
    joined = [False] * len(gaps)
    pairs = [k for k in range(len(gaps)) if spacing.spaceless(letters[k]) or spacing.spaceless(letters[k + 1])]
    if not pairs:
        return joined
    breaks = spacing.word_breaks([gaps[k] for k in pairs], [max(sizes[k], sizes[k + 1]) for k in pairs],
                                 any(written))
    for k, parts in zip(pairs, breaks or ()):
        joined[k] = not parts and not written[k]
    return joined


def _type_sizes(fonts: "FontHeights", indices: "np.ndarray", objects: "np.ndarray") -> list[float]:
    """Each drawn character's type size (:meth:`FontHeights.size`), read once for each text object (at
    its first character); a character without one is read alone."""
    import numpy as np

    if not len(indices):
        return []
    distinct, first, which = np.unique(objects, return_index=True, return_inverse=True)
    sizes = np.array([fonts.size(index, address or None)
                      for index, address in zip(indices[first].tolist(), distinct.tolist())], np.float64)[which]
    for at in np.flatnonzero(objects == 0).tolist():
        sizes[at] = fonts.size(int(indices[at]), None)
    return sizes.tolist()


def _lines_one_by_one(page, heights: dict[str, tuple[float, float]]) -> list[_Line]:
    """The page's lines as PDFium breaks them (and where the glyphs' turn changes), with the spaces it
    reads or puts between words."""
    lines: list[_Line] = []
    text: list[Union[str, PageChar]] = []
    chars: list[PageChar] = []
    written: list[bool] = []  # before each character after the first: a space glyph the page draws

    def close() -> None:
        if chars:
            turns = {char.turn for char in chars}
            if turns == {0}:  # PDFium's own spaces inside a Hangul word: not word breaks
                letters = "".join(char.char for char in chars)
                gaps = [b.line_box[0] - a.line_box[2] for a, b in zip(chars, chars[1:])]
                joined = _joined(letters, gaps, [char.size for char in chars], written)
                pieces, k = [], -1
                for piece in text:
                    if isinstance(piece, PageChar):
                        k += 1
                        pieces.append(piece.char)
                    elif not (k + 1 < len(chars) and k >= 0 and joined[k]):
                        pieces.append(piece)
                text[:] = pieces
            else:
                text[:] = [piece.char if isinstance(piece, PageChar) else piece for piece in text]
            lines.append(_Line(" ".join("".join(text).split()), _union([char.line_box for char in chars]),
                               turns.pop() if len(turns) == 1 else None, max(char.size for char in chars)))
        text.clear()
        chars.clear()
        written.clear()

    drawn_space = False
    once = _Once()
    last = None  # the character just before, if nothing came between (a ligature's letters share a box)
    for char in page_characters(page, heights, unmapped=True, spaces_told=True):
        ligature = last is not None and not isinstance(char, str) and char.box == last.box
        last = None if isinstance(char, str) else char
        if char == "\n":
            close()
        elif isinstance(char, str):
            text.append(char)
            drawn_space = drawn_space or not isinstance(char, GeneratedSpace)
        elif not ligature and not once.first(char.char, char.line_box):
            continue
        else:
            if chars and char.turn != chars[-1].turn:
                close()
            if chars:
                written.append(drawn_space)
            drawn_space = False
            text.append(char)
            chars.append(char)
    close()
    return _joined_along(lines)


_ALONG_GAP = 0.5  # of a line's height: a turned line that goes on this close after another continues it
_ALONG_SPACE = 0.2  # of a line's height: a gap wider than this between the two is a space


def _joined_along(lines: list[_Line]) -> list[_Line]:
    """The lines, a turned line that PDFium broke off where its glyphs are text objects of their own (a
    margin code set glyph by glyph up the margin) joined again: the next line of the same quarter
    turn on the same baseline, beginning where the other ends in its reading direction."""
    joined: list[_Line] = []
    for line in lines:
        before = joined[-1] if joined else None
        if before is not None and before.turn == line.turn and line.turn in (90, 270):
            height = min(before.box[2] - before.box[0], line.box[2] - line.box[0])
            overlap = min(before.box[2], line.box[2]) - max(before.box[0], line.box[0])
            # 270 reads up the page (top-left origin: towards smaller y), 90 down it
            gap = before.box[1] - line.box[3] if line.turn == 270 else line.box[1] - before.box[3]
            if height > 0 and overlap >= 0.8 * height and -0.2 * height <= gap <= _ALONG_GAP * height:
                space = " " if gap > _ALONG_SPACE * height else ""
                joined[-1] = _Line(before.text + space + line.text, _union([before.box, line.box]), line.turn,
                                   max(before.size, line.size))
                continue
        joined.append(line)
    return joined


def _blocks(lines: list[_Line], turned: bool = False, joined: str = "\n") -> list[tuple[str, BBox]]:
    blocks: list[list[_Line]] = []
    for line in lines:
        if blocks and _continues(blocks[-1][-1], line, turned):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return [(joined.join(line.text for line in block), _union([line.box for line in block])) for block in blocks]


def _continues(previous: _Line, line: _Line, turned: bool = False) -> bool:
    """Whether ``line`` goes on the block ``previous`` ends: close after it (below it; for turned text,
    beside it in its reading direction), overlapping it along its baseline, of a like size."""
    if turned and previous.turn != line.turn:
        return False
    sideways = turned and line.turn in (90, 270)
    across = (0, 2) if sideways else (1, 3)  # the edges lines stack along
    along = (1, 3) if sideways else (0, 2)
    height_before = previous.box[across[1]] - previous.box[across[0]]
    height = line.box[across[1]] - line.box[across[0]]
    if min(height, height_before) <= 0 or max(height, height_before) / min(height, height_before) > _SIZE_RATIO:
        return False
    if turned and line.turn in (90, 180):  # these read from the right or bottom edge inwards
        gap = previous.box[across[0]] - line.box[across[1]]
    else:
        gap = line.box[across[0]] - previous.box[across[1]]
    overlap = min(line.box[along[1]], previous.box[along[1]]) - max(line.box[along[0]], previous.box[along[0]])
    return -0.5 * height <= gap <= _LINE_GAP * height and overlap > 0


def _union(boxes: list[BBox]) -> BBox:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


__all__ = ["PdfLines", "has_turned_text", "largest_text", "lines_beside", "lines_outside", "reading_key",
           "text_layer_elements", "turned_text_elements"]
