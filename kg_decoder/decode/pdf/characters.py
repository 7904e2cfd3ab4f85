"""A PDF page's characters as PDFium reads them, each with its boxes on the displayed page, in the
drawing's order and row by row (``PageText``).

Two boxes per character: ``box`` is the glyph's own outline, tight; ``line_box`` spans the
character's advance and the font's height, as a PDF viewer's selection does; what a reader sees
as "the box on the words".
"""

from __future__ import annotations

import ctypes
import math
from typing import Iterator, Optional, Union

from ...model import PageChar, PageText, Reading
from .fonts import declared_heights
from .geometry import BBox, PageGeometry
from .pdfium_chars import BOX, GENERATED, LOOSE, ORIGIN, read_characters

_WORD_GAP = 0.12  # a gap wider than this many line heights between two characters of a row is a space
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
    for char in page_characters(page, heights, unmapped):
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
    for char in page_characters(page, heights, turned=False):
        if isinstance(char, PageChar):
            yield char


def drawn_boxes(page, heights: dict[str, tuple[float, float]]) -> tuple[str, "np.ndarray"]:
    """What :func:`drawn_characters` gives, as arrays: one letter a character, and a row of eight numbers
    a character (its glyph box, then its line box), computed for all the page's characters at once (a
    long document's rendering draws about a million). The same numbers: the same operations on the
    same doubles, in the same order."""
    import numpy as np

    drawn = drawn_upright(page, heights)
    if drawn is None:  # a rendering's pages are upright: a turned one the general way
        chars = list(drawn_characters(page, heights))
        return "".join(char.char for char in chars), np.array([char.box + char.line_box for char in chars],
                                                               dtype=np.float64).reshape(-1, 8)
    _, read, indices, rows = drawn
    return letters_of(read.codes[indices]), rows


def letters_of(codes: "np.ndarray") -> str:
    """A letter a code (PDFium's line-ending hyphen as ``-``, a glyph without one as U+FFFD), decoded at
    once: the same letters as ``chr`` code by code (lone surrogates too; checked on every code point)
    in a twelfth of the time."""
    import numpy as np

    wide = np.where(codes == 0x02, 0x2D, np.where(codes == 0, 0xFFFD, codes)).astype("<u4")
    try:
        return wide.tobytes().decode("utf-32-le", "surrogatepass")
    except UnicodeDecodeError:  # past Unicode's last code point: chr() says so
        return "".join(map(chr, wide.tolist()))


def drawn_upright(page, heights: dict[str, tuple[float, float]], unmapped: bool = False):
    """The drawn characters of an upright page, as :func:`page_characters` reads them, all at once: the
    fonts' frames (``FontHeights``), PDFium's characters, the indices of the drawn ones and their
    rows of eight numbers (glyph box, line box). None on a turned page or one without a drawn
    character (read one by one). ``unmapped``: glyphs drawn without a character are kept (code 0,
    U+FFFD to ``letters_of``)."""
    import numpy as np

    geometry = PageGeometry.of(page)
    textpage = page.get_textpage()
    read = read_characters(textpage)
    codes, flags, numbers = read.codes, read.flags, read.numbers
    drawn = ((flags & GENERATED) == 0) & ((flags & BOX) != 0) & ((flags & LOOSE) != 0) & ((codes != 0) | unmapped)
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
    fonts = FontHeights(textpage, heights)
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


class GeneratedSpace(str):
    """A space PDFium put between words (no glyph the page draws): equal to ``" "``."""


GENERATED_SPACE = GeneratedSpace(" ")


def page_characters(page, heights: dict[str, tuple[float, float]], unmapped: bool = False,
                turned: bool = True, spaces_told: bool = False) -> Iterator[Union[PageChar, str]]:
    """Each character of the page's text layer: drawn ones with their boxes, else ``" "`` for a space
    (drawn or put in by PDFium between words) and ``"\n"`` for a line break. ``heights`` are the
    ascent and descent the page's fonts declare (see ``fonts.declared_heights``); ``unmapped``:
    glyphs drawn without a character are given as U+FFFD rather than left out; ``turned``: each
    glyph's turn and type size are read too (else left at upright and unknown); ``spaces_told``: a space
    PDFium put in is given as :data:`GENERATED_SPACE` (equal to ``" "``)."""
    geometry = PageGeometry.of(page)
    textpage = page.get_textpage()
    fonts = FontHeights(textpage, heights)
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
            yield GENERATED_SPACE if spaces_told and flag & GENERATED else " "
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


class FontHeights:
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


__all__ = ["FontHeights", "GeneratedSpace", "drawn_boxes", "drawn_characters", "drawn_upright", "glyph_turn",
           "letters_of", "page_characters", "page_text", "read_page"]
