"""A PDF page's text layer as PDFium reads it: every character with its boxes on the displayed page,
and (where unstructured's ``fast`` reads nothing) the page's text as elements, line by line.

Two boxes per character: ``box`` is the glyph's own outline, tight; ``line_box`` spans the
character's advance and the font's height, as a PDF viewer's selection does; what a reader sees
as "the box on the words".
"""

from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass
from typing import Callable, Iterator, Optional, Union

from ...model import Element, PageChar, PageText, Reading, middle_within
from . import spacing
from .fonts import declared_heights
from .geometry import BBox, PageGeometry
from .pdfium_chars import BOX, GENERATED, LOOSE, ORIGIN, read_characters

_LINE_GAP = 0.8  # lines further apart than this many line heights start a new block
_SIZE_RATIO = 1.3  # lines whose heights differ more than this start a new block
_WORD_GAP = 0.12  # a gap wider than this many line heights between two characters of a row is a space
_TITLE_RATIO = 1.2  # a title's type is at least this much larger than the page's body text
_TITLE_WORDS = 40  # a block of more words is a paragraph, not a title
_TURN_TOLERANCE = 2.0  # degrees off a quarter turn a glyph may be and still count as turned by it


def read_page(data: bytes, page_number: int, key: Optional[str] = None) -> PageText:
    """The text layer of one page (from 1) of a PDF's bytes; empty for a page without one, a page
    number out of range, or a PDF PDFium cannot open. ``key`` (the document's sha256) lets the
    fonts' heights of its next page be read faster."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return PageText.empty()
    try:
        if not 1 <= page_number <= len(pdf):
            return PageText.empty()
        return page_text(pdf[page_number - 1], declared_heights(data, page_number, key), unmapped=True)
    finally:
        pdf.close()


def page_text(page, heights: dict[str, tuple[float, float]], unmapped: bool = False) -> PageText:
    """The text layer of a pypdfium2 page; ``heights``: its fonts' (``fonts.declared_heights``).
    ``unmapped``: glyphs the font maps to no character are kept, as U+FFFD (they still take room in
    a box on the words: a ligature another reader maps to its letters)."""
    chars: list[PageChar] = []
    pieces: list[str] = []
    positions: list[int] = []
    for char in _characters(page, heights, unmapped):
        if isinstance(char, PageChar):
            positions.append(len(pieces))
            chars.append(char)
            pieces.append(char.char)
        else:
            pieces.append(char)
    return PageText(chars, Reading("".join(pieces), positions), _rows(chars))


def drawn_characters(page, heights: dict[str, tuple[float, float]]) -> Iterator[PageChar]:
    """The drawn characters of a pypdfium2 page with their boxes, as :func:`page_text` reads them but
    without their turn and type size (left upright and unknown)."""
    for char in _characters(page, heights, turned=False):
        if isinstance(char, PageChar):
            yield char


def drawn_boxes(page, heights: dict[str, tuple[float, float]]) -> tuple[str, "np.ndarray"]:
    """What :func:`drawn_characters` gives, as arrays: one letter a character, and a row of eight numbers
    a character (its glyph box, then its line box), computed for all the page's characters at once (a
    long document's rendering draws about a million). The same numbers: the same operations on the
    same doubles, in the same order."""
    import numpy as np

    drawn = _drawn_upright(page, heights)
    if drawn is None:  # a rendering's pages are upright: a turned one the general way
        chars = list(drawn_characters(page, heights))
        return "".join(char.char for char in chars), np.array([char.box + char.line_box for char in chars],
                                                               dtype=np.float64).reshape(-1, 8)
    _, read, indices, rows = drawn
    return _letters(read.codes[indices]), rows


def _letters(codes: "np.ndarray") -> str:
    """A letter a code (PDFium's line-ending hyphen as ``-``), decoded at once: the same letters as
    ``chr`` code by code (lone surrogates too; checked on every code point) in a twelfth of the time."""
    import numpy as np

    wide = np.where(codes == 0x02, 0x2D, codes).astype("<u4")
    try:
        return wide.tobytes().decode("utf-32-le", "surrogatepass")
    except UnicodeDecodeError:  # past Unicode's last code point: chr() says so
        return "".join(map(chr, wide.tolist()))


def _drawn_upright(page, heights: dict[str, tuple[float, float]]):
    """The drawn characters of an upright page, as :func:`_characters` reads them, all at once: the
    fonts' frames (``_FontHeights``), PDFium's characters, the indices of the drawn ones and their
    rows of eight numbers (glyph box, line box). None on a turned page or one without a drawn
    character (read one by one)."""
    import numpy as np

    geometry = PageGeometry.of(page)
    textpage = page.get_textpage()
    read = read_characters(textpage)
    codes, flags, numbers = read.codes, read.flags, read.numbers
    drawn = ((flags & GENERATED) == 0) & ((flags & BOX) != 0) & ((flags & LOOSE) != 0) & (codes != 0)
    drawn &= (numbers[:, 1] > numbers[:, 0]) & (numbers[:, 3] > numbers[:, 2])  # blanks draw nothing
    for code in np.unique(codes[drawn]).tolist():  # line breaks, PDFium's noncharacters, spaces
        if code in (0x0A, 0x0D, 0xFFFE, 0xFFFF) or chr(code).isspace():
            drawn &= codes != code
    indices = np.flatnonzero(drawn)
    if geometry.rotation or not len(indices):
        return None
    rows = numbers[indices]
    box = _upright_boxes(geometry, rows[:, 0], rows[:, 2], rows[:, 1], rows[:, 3])
    left, bottom, right, top = rows[:, 4], rows[:, 5], rows[:, 6], rows[:, 7]
    line_box = np.where(((right > left) & (top > bottom))[:, None], _upright_boxes(geometry, left, bottom, right, top),
                        box)
    fonts = _FontHeights(textpage, heights)
    if heights:  # the line's height from its font, where it declares one: a frame a text object
        objects = read.objects[indices]
        usable = np.flatnonzero(((flags[indices] & ORIGIN) != 0) & (right > left) & (objects != 0))
        addresses, first, which = np.unique(objects[usable], return_index=True, return_inverse=True)
        low, high = np.full(len(addresses), np.nan), np.full(len(addresses), np.nan)
        for number, (address, k) in enumerate(zip(addresses.tolist(), usable[first].tolist())):
            frame = fonts.frame(indices[k], address)
            if frame is not None and frame[0] == (1.0, 0.0) and frame[1] == (0.0, 1.0):  # upright, the usual case
                low[number], high[number] = frame[2], frame[3]
            elif frame is not None:  # turned text on an upright page: its characters one by one
                for j in usable[which == number].tolist():
                    loose = (left[j], bottom[j], right[j], top[j])
                    line_box[j] = geometry.box(fonts.line(indices[j], address, loose, (rows[j, 8], rows[j, 9])))
        char_low, char_high = low[which], high[which]
        upright = ~np.isnan(char_low)
        chars = usable[upright]
        baseline = rows[chars, 9]
        line_box[chars] = _upright_boxes(geometry, left[chars], baseline + char_low[upright], right[chars],
                                         baseline + char_high[upright])
    around = np.concatenate([np.minimum(line_box[:, :2], box[:, :2]), np.maximum(line_box[:, 2:], box[:, 2:])], axis=1)
    return fonts, read, indices, np.concatenate([box, around], axis=1)


def _upright_boxes(geometry: PageGeometry, x0, y0, x1, y1) -> "np.ndarray":
    """:meth:`PageGeometry.box` of many user-space rectangles on an upright page, one row each."""
    import numpy as np

    area = geometry.visible
    height = area[3] - area[1]
    across = (x0 - area[0], x1 - area[0])
    down = (height - (y0 - area[1]), height - (y1 - area[1]))
    return np.stack([np.minimum(*across), np.minimum(*down), np.maximum(*across), np.maximum(*down)], axis=1)


def _rows(chars: list[PageChar]) -> Reading:
    """The characters row by row: a character joins the row whose middle its own middle is near."""
    rows: list[tuple[float, float, list[int]]] = []  # middle, height, characters
    for index in sorted(range(len(chars)), key=lambda i: _middle(chars[i].line_box)):
        box = chars[index].line_box
        middle, height = _middle(box), box[3] - box[1]
        if rows and abs(middle - rows[-1][0]) <= 0.4 * min(height, rows[-1][1]):
            rows[-1][2].append(index)
        else:
            rows.append((middle, height, [index]))
    pieces: list[str] = []
    positions = [0] * len(chars)
    for _, _, members in rows:
        members.sort(key=lambda i: chars[i].line_box[0])
        previous = None
        for index in members:
            box = chars[index].line_box
            height = box[3] - box[1] if previous is None else min(box[3] - box[1], previous[3] - previous[1])
            if previous is not None and box[0] - previous[2] > _WORD_GAP * height:
                pieces.append(" ")
            positions[index] = len(pieces)
            pieces.append(chars[index].char)
            previous = box
        pieces.append("\n")
    return Reading("".join(pieces), positions)


def _middle(box: BBox) -> float:
    return (box[1] + box[3]) / 2


class _GeneratedSpace(str):
    """A space PDFium put between words (no glyph the page draws): equal to ``" "``."""


_GENERATED_SPACE = _GeneratedSpace(" ")


def _characters(page, heights: dict[str, tuple[float, float]], unmapped: bool = False,
                turned: bool = True, spaces_told: bool = False) -> Iterator[Union[PageChar, str]]:
    """Each character of the page's text layer: drawn ones with their boxes, else ``" "`` for a space
    (drawn or put in by PDFium between words) and ``"\n"`` for a line break. ``heights`` are the
    ascent and descent the page's fonts declare (see ``fonts.declared_heights``); ``unmapped``:
    glyphs drawn without a character are given as U+FFFD rather than left out; ``turned``: each
    glyph's turn and type size are read too (else left at upright and unknown); ``spaces_told``: a space
    PDFium put in is given as :data:`_GENERATED_SPACE` (equal to ``" "``)."""
    geometry = PageGeometry.of(page)
    textpage = page.get_textpage()
    fonts = _FontHeights(textpage, heights)
    page_turn = geometry.rotation
    read = read_characters(textpage)
    for index, code, flag, numbers, address in zip(range(len(read)), read.codes.tolist(), read.flags.tolist(),
                                                   read.numbers.tolist(), read.objects.tolist()):
        if code in (0x0A, 0x0D):
            yield "\n"
            continue
        hyphen = code == 0x02  # PDFium's code for a hyphen that ends a line (it joins the lines)
        if code in (0xFFFE, 0xFFFF) or not (code or unmapped):
            continue
        if code and chr(code).isspace():
            yield _GENERATED_SPACE if spaces_told and flag & GENERATED else " "
            continue
        if flag & GENERATED:
            continue
        if not flag & BOX or not flag & LOOSE:
            continue  # PDFium has no box for it: it is not drawn
        tight = (numbers[0], numbers[2], numbers[1], numbers[3])
        loose = (numbers[4], numbers[5], numbers[6], numbers[7])
        if tight[2] <= tight[0] or tight[3] <= tight[1]:
            continue  # blanks draw nothing
        box = geometry.box(tight)
        text_object = address or None
        origin = (numbers[8], numbers[9]) if flag & ORIGIN else None
        line = fonts.line(index, text_object, loose, origin) if loose[2] > loose[0] else None
        line_box = geometry.box(line) if line is not None else (
            geometry.box(loose) if loose[2] > loose[0] and loose[3] > loose[1] else box)
        shown = "-" if hyphen else chr(code) if code else "\ufffd"
        if turned:
            yield PageChar(shown, box, _around(line_box, box), glyph_turn(numbers[10], page_turn),
                           fonts.size(index, text_object))
        else:
            yield PageChar(shown, box, _around(line_box, box))
        if hyphen:
            yield "\n"


def glyph_turn(angle: float, page_rotation: int) -> int:
    """A glyph's turn on the displayed page from PDFium's angle (radians, clockwise in user space) and
    the page's /Rotate: one of 0, 90, 180, 270, or -1 for an angle between them.

    >>> glyph_turn(math.radians(270), 0), glyph_turn(0.0, 90), glyph_turn(math.radians(270), 90), glyph_turn(0.5, 0)
    (270, 90, 0, -1)
    """
    if angle < 0:  # PDFium could not say: take the glyph as upright
        return 0
    degrees = (math.degrees(angle) + page_rotation) % 360
    nearest = round(degrees / 90) * 90
    return nearest % 360 if abs(degrees - nearest) <= _TURN_TOLERANCE else -1


def has_turned_text(page) -> bool:
    """Whether a page may hold turned text (a cheap look at its text objects and /Rotate): only such
    pages are read for it."""
    import pypdfium2.raw as pdfium_c

    if page.get_rotation():
        return True
    for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_TEXT,), max_depth=1):
        matrix = obj.get_matrix()
        if abs(matrix.b) > 1e-6 or abs(matrix.c) > 1e-6 or matrix.a < 0 or matrix.d < 0:
            return True
    return False


class PdfLines:
    """The lines of an open PDF's pages as PDFium breaks them (see :func:`_lines`), each page read once
    however many steps ask for it: turned text, the text beside a table, the lines a first reading
    dropped, the title (these steps often look at the same page: page 1 with a margin stamp is read for
    its turned text and for the title).
    ``data``: the PDF's bytes, for its fonts' heights (``fonts.declared_heights``)."""

    def __init__(self, data: bytes, pdf) -> None:
        self._data, self._pdf = data, pdf
        self._lines: dict[int, list[_Line]] = {}

    def page(self, number: int):
        """The pypdfium2 page (numbers from 1)."""
        return self._pdf[number - 1]

    def lines(self, number: int) -> list["_Line"]:
        if number not in self._lines:
            self._lines[number] = _lines(self.page(number), declared_heights(self._data, number))
        return self._lines[number]

    def elements(self, number: int, lines: list["_Line"], category: str = "NarrativeText", turned: bool = False,
                 boxed_only: bool = False) -> list[Element]:
        """Elements of one page, one per block of ``lines`` (some of its lines), with boxes on the
        displayed page; ``boxed_only``: a block outside the visible page is left out."""
        geometry = PageGeometry.of(self.page(number))
        elements = []
        for text, box in _blocks(lines, turned=turned):
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
        elements += layer.elements(number, sorted(lines, key=_reading_key), turned=True)
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


def _reading_key(line: "_Line") -> tuple:
    """Lines of one turn in reading order: the first line is where the text's own top is."""
    left, top, right, bottom = line.box
    return (line.turn,) + {90: (-right, top), 180: (-bottom, -right), 270: (left, -bottom)}.get(line.turn, (top, left))


class _FontHeights:
    """A character's line box in user space: its advance along its baseline, its font's declared
    ascent to descent across it (for text turned any way; PDFium's loose box serves mirrored text
    and fonts with no declared heights)."""

    def __init__(self, textpage, heights: dict[str, tuple[float, float]]) -> None:
        import pypdfium2.raw as pdfium_c

        self._pdfium = pdfium_c
        self._textpage = textpage  # kept open while its raw handle is read
        self._raw = textpage.raw
        self._heights = heights
        self._by_font: dict[int, Optional[tuple[float, float]]] = {}
        self._matrix = pdfium_c.FS_MATRIX()
        self._object: Optional[int] = None  # the text object the frame below is of
        self._frame: Optional[tuple] = None
        self._sized_object: Optional[int] = None  # the text object the size below is of
        self._size = 0.0

    def size(self, index: int, text_object: Optional[int]) -> float:
        """The type size a character is set in: the font size scaled by its text matrix."""
        pdfium_c = self._pdfium
        if text_object is None or text_object != self._sized_object:
            matrix = self._matrix
            scale = math.hypot(matrix.c, matrix.d) if pdfium_c.FPDFText_GetMatrix(self._raw, index, matrix) else 1.0
            self._sized_object, self._size = text_object, round(pdfium_c.FPDFText_GetFontSize(self._raw, index) * scale, 2)
        return self._size

    def line(self, index: int, text_object: Optional[int], loose: tuple[float, float, float, float],
             origin: Optional[tuple[float, float]]):
        """The character's line box in user space (None: its font declares no heights, or PDFium gave
        no ``origin``, the point its glyph is drawn from)."""
        if not self._heights:
            return None
        frame = self.frame(index, text_object)
        if frame is None or origin is None:
            return None
        x, y = origin
        unit, up, low, high = frame
        if unit == (1.0, 0.0) and up == (0.0, 1.0):  # upright text, the usual case
            return (loose[0], y + low, loose[2], y + high)
        # The advance: the loose box's extent along the baseline, from the origin.
        projected = [(corner_x - x) * unit[0] + (corner_y - y) * unit[1]
                     for corner_x in (loose[0], loose[2]) for corner_y in (loose[1], loose[3])]
        corners = [(x + s * unit[0] + t * up[0], y + s * unit[1] + t * up[1])
                   for s in (min(projected), max(projected)) for t in (low, high)]
        xs = [corner[0] for corner in corners]
        ys = [corner[1] for corner in corners]
        return (min(xs), min(ys), max(xs), max(ys))

    def frame(self, index: int, key: Optional[int]) -> Optional[tuple]:
        """The baseline's direction, the glyphs' up, and the descent and ascent in user space, of the
        character's text object (one font, one size, one matrix for all its characters)."""
        pdfium_c = self._pdfium
        if key is not None and key == self._object:
            return self._frame
        self._object, self._frame = key, None
        matrix = self._matrix
        if key is None or not pdfium_c.FPDFText_GetMatrix(self._raw, index, matrix) or \
                matrix.a * matrix.d - matrix.b * matrix.c <= 0:
            return None  # mirrored or flat text
        heights = self._font_heights(pdfium_c.FPDFText_GetTextObject(self._raw, index))
        if heights is None:
            return None
        along, across = math.hypot(matrix.a, matrix.b), math.hypot(matrix.c, matrix.d)
        size = pdfium_c.FPDFText_GetFontSize(self._raw, index) * across
        self._frame = ((matrix.a / along, matrix.b / along), (matrix.c / across, matrix.d / across),
                       heights[1] * size, heights[0] * size)
        return self._frame

    def _font_heights(self, text_object) -> Optional[tuple[float, float]]:
        pdfium_c = self._pdfium
        font = pdfium_c.FPDFTextObj_GetFont(text_object)
        if not font:
            return None
        key = ctypes.cast(font, ctypes.c_void_p).value or 0
        if key not in self._by_font:
            length = pdfium_c.FPDFFont_GetBaseFontName(font, None, 0)
            name = ctypes.create_string_buffer(max(length, 1))
            pdfium_c.FPDFFont_GetBaseFontName(font, name, length)
            self._by_font[key] = self._heights.get(name.value.decode("latin-1"))
        return self._by_font[key]


def _around(outer: BBox, inner: BBox) -> BBox:
    return (min(outer[0], inner[0]), min(outer[1], inner[1]), max(outer[2], inner[2]), max(outer[3], inner[3]))


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


def _lines(page, heights: dict[str, tuple[float, float]]) -> list[_Line]:
    """The page's lines as PDFium breaks them (and where the glyphs' turn changes), with the spaces it
    reads or puts between words. An upright page's characters are read all at once (the same lines as
    one by one: :func:`_lines_one_by_one`)."""
    import numpy as np

    drawn = _drawn_upright(page, heights)
    if drawn is None:
        return _lines_one_by_one(page, heights)
    fonts, read, indices, rows = drawn
    codes = read.codes
    once = _Once()
    keep = [once.first(letter, box) for letter, box in zip(_letters(codes[indices]), rows[:, 4:8].tolist())]
    indices, rows = indices[keep], rows[keep]
    letters = _letters(codes[indices])
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
    for start, end in zip(starts, starts[1:]):  # PDFium's own spaces inside a Hangul word: not word breaks
        if turns[start] == 0:
            gaps = around[start + 1:end, 0] - around[start:end - 1, 2]
            written = written_before[start + 1:end] != written_before[start:end - 1]
            joined = _joined(letters[start:end], gaps.tolist(), sizes[start:end], written.tolist())
            new_word[start + 1:end] &= ~np.array(joined, bool)
    word_starts = np.flatnonzero(new_word | new_line).tolist() + [len(indices)]
    lines: list[_Line] = []
    word = 0
    for start, end in zip(starts, starts[1:]):
        words = []
        while word_starts[word] < end:
            words.append(letters[word_starts[word]:word_starts[word + 1]])
            word += 1
        low, high = around[start:end, :2].min(axis=0).tolist(), around[start:end, 2:].max(axis=0).tolist()
        lines.append(_Line(" ".join(" ".join(words).split()), (low[0], low[1], high[0], high[1]), int(turns[start]),
                           max(sizes[start:end])))
    return _joined_along(lines)


class _Once:
    """The characters of a page one after another, each told whether it is the first drawn there: a
    glyph drawn again a hair from the same glyph (fake bold, a margin code written twice) is
    ``spacing.drawn_twice``, measured by its line box (its size: the box's larger side)."""

    _CELL = 4.0  # points: a glyph is looked for among those of its cell and the cells around it

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int, int], list[tuple[float, float, float]]] = {}

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


def _type_sizes(fonts: "_FontHeights", indices: "np.ndarray", objects: "np.ndarray") -> list[float]:
    """Each drawn character's type size (:meth:`_FontHeights.size`), read once for each text object."""
    sizes: dict[int, float] = {}
    result = []
    for index, address in zip(indices.tolist(), objects.tolist()):
        if not address:
            result.append(fonts.size(index, None))
            continue
        size = sizes.get(address)
        if size is None:
            size = sizes[address] = fonts.size(index, address)
        result.append(size)
    return result


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
    for char in _characters(page, heights, spaces_told=True):
        if char == "\n":
            close()
        elif isinstance(char, str):
            text.append(char)
            drawn_space = drawn_space or not isinstance(char, _GeneratedSpace)
        elif not once.first(char.char, char.line_box):
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


def _blocks(lines: list[_Line], turned: bool = False) -> list[tuple[str, BBox]]:
    blocks: list[list[_Line]] = []
    for line in lines:
        if blocks and _continues(blocks[-1][-1], line, turned):
            blocks[-1].append(line)
        else:
            blocks.append([line])
    return [("\n".join(line.text for line in block), _union([line.box for line in block])) for block in blocks]


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


__all__ = ["PdfLines", "drawn_boxes", "glyph_turn", "has_turned_text", "largest_text", "lines_beside", "lines_outside", "page_text", "read_page",
           "text_layer_elements", "turned_text_elements"]
