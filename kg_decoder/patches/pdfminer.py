"""pdfminer's internals kg-decoder replaces or wraps: its reading of a page at less cost to the same
objects, the glyphs simple fonts map to nothing, and its text lines (each glyph once, Hangul words
not split).

Pinned: ``pdfminer.six>=20231228`` (pyproject.toml; unstructured 0.27 needs the same), no upper
bound: ``UPSTREAM`` records what each patch was written against (20260107), and
``tests/unit/test_patches.py`` says which one a new release changed. :func:`install_all` puts the
first two in place (once per process), before unstructured's ``partition_pdf`` runs pdfminer.

**Content streams through qpdf** (:func:`install_content_reading`). pdfminer (unstructured's ``fast``,
and the words of a page with a glyph PDFium maps to nothing: ``decode.pdf.pdfminer_words``) tokenizes a page's content streams in Python, one character class at a time: about a
third of its reading of a page (3.6 s of the 11 s it took for the 127 pages of the corpus and ICDAR
PDFs); qpdf parses the same streams in C++. A parser is put in place of pdfminer's
``PDFContentParser`` (:func:`content_parser`) that hands pdfminer's interpreter what its own would:
numbers as ``int`` or ``float``, names as ``PSLiteral``, strings as ``bytes``, arrays as lists,
dictionaries with ``str`` keys, ``true``/``false`` as ``bool``, each operator as a ``PSKeyword`` after
its operands. pdfminer's own parser stays for what the two read differently (an inline image,
``null``, a hex string with an odd number of digits, a malformed number) and for a stream qpdf
cannot parse. The objects are pdfminer's own on every content stream of the corpus, ICDAR and wild
PDFs (``tests/integration/test_pdf_content.py``).

It also lays out a string's characters (``LTChar``) in one loop instead of a few calls each
(:func:`horizontal_strings`). With both, pdfminer read those 127 pages in 7.6 s instead of 10.5 s,
and laid out the same pages, character for character and drawing for drawing, on the 149 PDFs of
the corpus, ICDAR and wild sets (266 pages; only the order of text boxes pdfminer itself ranks by
their objects' addresses changes from run to run, with either reading).

**Glyphs a font maps to nothing** (:func:`install_type1_fallbacks`). Two faults seen in real PDFs
(pdfTeX output, and tools that re-encode its fonts) make pdfminer, and so unstructured's ``fast``,
read ``difficulties`` as ``di`` + an unknown glyph + ``culties``, while poppler, PDFium and viewers
read the ligature:

- a ``/ToUnicode`` map sends the glyph to U+0000: the font's encoding (``/Differences``
  naming it ``/ffi``) is used instead;
- the declared encoding (``/MacRomanEncoding``) leaves the code undefined: the encoding inside
  the embedded Type 1 font program (``dup 14 /ffi put``) fills the gap. The declared encoding
  still wins for every code it defines.

**Text lines** (:func:`install_line_reading`, installed by the PDF backend with the rules of
``decode.pdf.spacing``): a character drawn twice a hair apart (fake bold, a margin code written twice)
is laid out once, and a justified Korean line set glyph by glyph is not read ``커 피전문점``: between
a Hangul (Han, Kana) letter and its neighbour, pdfminer's space stays only where the gap is clearly
wider than the line's own gaps between letters.
"""

from __future__ import annotations

import re
from decimal import Decimal
from io import BytesIO
from typing import Any, Callable, Optional

from . import Upstream, remember

_INSTALLED: list[str] = []  # the patches installed in this process
_NOTHING = {"", "\x00", "\ufffd", "\ufffe"}
_PDFMINER: dict = {}  # pdfminer's own content parser and string rendering, once replaced
# What qpdf reads otherwise than pdfminer: an inline image (pdfminer keeps its dictionary's
# abbreviations, qpdf expands them), null (a keyword to pdfminer, kept in a dictionary; qpdf drops the
# entry) and a hex string with an odd number of digits (pdfminer keeps the last digit, qpdf pads it).
_LEFT_TO_PDFMINER = re.compile(rb"\bBI\b|\bnull\b|<[0-9A-Fa-f\s]*>")
_NUMBER_START = frozenset("0123456789.+-")


def install_all() -> None:
    """Every pdfminer patch in place (once per process): fonts' fallbacks, content through qpdf."""
    install_type1_fallbacks()
    install_content_reading()


# -- Content streams through qpdf, characters in one loop -------------------------------------------------
# Replaces ``pdfminer.pdfinterp.PDFContentParser`` (the name ``PDFPageInterpreter.execute`` builds its
# parser from) and ``pdfminer.converter.PDFLayoutAnalyzer.render_string_horizontal`` (which makes each
# character with ``render_char`` and ``LTChar.__init__``, whose arithmetic the loop repeats).

def install_content_reading() -> None:
    """pdfminer reads content streams through qpdf, and lays out characters in one loop, from now on
    (once per process)."""
    if _PDFMINER:
        return
    from pdfminer import pdfinterp
    from pdfminer.converter import PDFLayoutAnalyzer

    _PDFMINER.update(pdfminer_own())
    remember("pdfminer.pdfinterp:PDFContentParser", _PDFMINER["parser"])
    remember("pdfminer.converter:PDFLayoutAnalyzer.render_string_horizontal", _PDFMINER["render"])
    pdfinterp.PDFContentParser = content_parser(_PDFMINER["parser"])
    PDFLayoutAnalyzer.render_string_horizontal = horizontal_strings(_PDFMINER["render"])


def pdfminer_own() -> dict:
    """pdfminer's own content parser (``parser``) and layout device's ``render_string_horizontal``
    (``render``), installed or not."""
    from pdfminer import pdfinterp
    from pdfminer.converter import PDFLayoutAnalyzer

    return dict(_PDFMINER) or {"parser": pdfinterp.PDFContentParser,
                               "render": PDFLayoutAnalyzer.render_string_horizontal}


def content_parser(pdfminer_parser: type) -> type:
    """A content parser reading through qpdf, with ``pdfminer_parser`` for what it leaves to pdfminer."""
    import pikepdf
    from pdfminer.psexceptions import PSEOF
    from pdfminer.psparser import KWD, LIT
    from pdfminer.pdftypes import stream_value

    name_type, string_type = pikepdf.ObjectType.name_, pikepdf.ObjectType.string
    array_type, dictionary_type = pikepdf.ObjectType.array, pikepdf.ObjectType.dictionary
    keywords: dict[str, Any] = {}  # operator → pdfminer's keyword (KWD interns them too; this skips encoding)

    def converted(value):
        kind = type(value)
        if kind is int or kind is bool:
            return value
        if kind is Decimal:
            return float(value)
        code = value._type_code
        if code == name_type:
            return LIT(str(value)[1:])
        if code == string_type:
            return bytes(value)
        if code == array_type:
            return [converted(item) for item in value]
        if code == dictionary_type:
            return {key[1:]: converted(item) for key, item in value.items()}
        raise _Unread  # an operator inside an array, a null: pdfminer's own reading

    class QpdfContentParser:
        """pdfminer's ``PDFContentParser`` in what the interpreter asks of it: ``nextobject()``
        until ``PSEOF``; the constructor raises ``PSEOF`` for no streams at all, as pdfminer's does."""

        def __init__(self, streams) -> None:
            if not streams:
                raise PSEOF("no content stream")
            self._objects = _read(streams)
            self._fallback = pdfminer_parser(streams) if self._objects is None else None
            self._next = 0

        def nextobject(self):
            if self._fallback is not None:
                return self._fallback.nextobject()
            if self._next >= len(self._objects):
                raise PSEOF("end of the content")
            item = self._objects[self._next]
            self._next += 1
            return 0, item

    def _read(streams) -> Any:
        """The stream's objects in pdfminer's order, or None where pdfminer's parser should read it."""
        try:
            data = b"\n".join(stream_value(stream).get_data() for stream in streams)
        except Exception:  # noqa: BLE001 — a stream pdfminer cannot decode: its parser meets that where it would
            return None
        for match in _LEFT_TO_PDFMINER.finditer(data):
            found = match.group()
            if found[0] != 60 or len(re.sub(rb"\s", b"", found)) % 2:  # 60: "<"
                return None
        document = pikepdf.new()
        try:
            instructions = pikepdf.parse_content_stream(pikepdf.Stream(document, data))
            objects: list = []
            add = objects.append
            for operands, operator in instructions:
                for operand in operands:
                    add(converted(operand))
                name = str(operator)
                keyword = keywords.get(name)
                if keyword is None:
                    if name[0] in _NUMBER_START:  # a malformed number ("1.2.3"), which qpdf reads as an operator
                        raise _Unread
                    keyword = keywords[name] = KWD(name.encode("latin-1"))
                add(keyword)
            return objects
        except (_Unread, pikepdf.PdfError, ValueError, UnicodeError):
            return None
        finally:
            document.close()

    return QpdfContentParser


def horizontal_strings(pdfminer_render):
    """pdfminer's ``render_string_horizontal`` for a layout device (``PDFLayoutAnalyzer``): its
    characters (``LTChar``) made in one loop, with the same arithmetic in the same order, so the same
    floats, as ``render_char`` and ``LTChar.__init__`` make them one call at a time (a fifth of
    pdfminer's reading of a page); each font's text and width of a code kept once read. A device
    with its own ``render_char`` or ``handle_undefined_char`` (pdfplumber's) keeps pdfminer's."""
    from pdfminer.converter import PDFLayoutAnalyzer
    from pdfminer.layout import LTChar
    from pdfminer.pdffont import PDFUnicodeNotDefined

    render_char, undefined = PDFLayoutAnalyzer.render_char, PDFLayoutAnalyzer.handle_undefined_char
    new_char = LTChar.__new__

    def render_string_horizontal(self, seq, matrix, pos, font, fontsize, scaling, charspace, wordspace, rise,
                                 dxscale, ncs, graphicstate):
        device = type(self)
        if device.render_char is not render_char or device.handle_undefined_char is not undefined:
            return pdfminer_render(self, seq, matrix, pos, font, fontsize, scaling, charspace, wordspace, rise,
                                   dxscale, ncs, graphicstate)
        glyphs = font.__dict__.get("_kg_glyphs")
        if glyphs is None:
            glyphs = font.__dict__["_kg_glyphs"] = {}
        (x, y) = pos
        (a, b, c, d, e, f) = matrix
        fontname = font.fontname
        descent = font.get_descent() * fontsize
        bottom, top = descent + rise, descent + rise + fontsize
        upright = a * d * scaling > 0 and b * c <= 0
        add = self.cur_item.add
        needcharspace = False
        for obj in seq:
            if isinstance(obj, (int, float)):
                x -= obj * dxscale
                needcharspace = True
            elif isinstance(obj, bytes):
                for cid in font.decode(obj):
                    if needcharspace:
                        x += charspace
                    glyph = glyphs.get(cid)
                    if glyph is None:
                        try:
                            text = font.to_unichr(cid)
                            assert isinstance(text, str), str(type(text))
                        except PDFUnicodeNotDefined:
                            text = self.handle_undefined_char(font, cid)
                        glyph = glyphs[cid] = (text, font.char_width(cid))
                    text, textwidth = glyph
                    # render_char's LTChar: utils.translate_matrix, then LTChar.__init__ (horizontal),
                    # its utils.apply_matrix_rect and LTComponent.set_bbox
                    e1, f1 = x * a + y * c + e, x * b + y * d + f
                    adv = textwidth * fontsize * scaling
                    left1, bottom1 = a * 0 + c * bottom + e1, b * 0 + d * bottom + f1
                    right1, bottom2 = a * adv + c * bottom + e1, b * adv + d * bottom + f1
                    right2, top1 = a * adv + c * top + e1, b * adv + d * top + f1
                    left2, top2 = a * 0 + c * top + e1, b * 0 + d * top + f1
                    x0, y0 = min(left1, left2, right1, right2), min(bottom1, bottom2, top1, top2)
                    x1, y1 = max(left1, left2, right1, right2), max(bottom1, bottom2, top1, top2)
                    if x1 < x0:
                        (x0, x1) = (x1, x0)
                    if y1 < y0:
                        (y0, y1) = (y1, y0)
                    item = new_char(LTChar)
                    item._text, item.matrix, item.fontname = text, (a, b, c, d, e1, f1), fontname
                    item.ncs, item.graphicstate, item.adv, item.upright = ncs, graphicstate, adv, upright
                    item.x0, item.y0, item.x1, item.y1 = x0, y0, x1, y1
                    item.width, item.height, item.bbox = x1 - x0, y1 - y0, (x0, y0, x1, y1)
                    item.size = item.height
                    add(item)
                    x += adv
                    if cid == 32 and wordspace:
                        x += wordspace
                    needcharspace = True
            else:
                pdfminer_render(self, [obj], matrix, (x, y), font, fontsize, scaling, charspace, wordspace, rise,
                                dxscale, ncs, graphicstate)  # pdfminer's warning of an object it cannot render
        return (x, y)

    return render_string_horizontal


class _Unread(Exception):
    """An object the conversion does not read as pdfminer would."""


# -- Glyphs a simple font maps to nothing -----------------------------------------------------------------
# Wraps ``pdfminer.pdffont.PDFType1Font.__init__`` (a slot for the font program's own encoding, read
# when a code first needs it) and ``PDFSimpleFont.to_unichr`` (a code the ``/ToUnicode`` map sends to
# nothing, or the declared encoding leaves out, read from the font's encoding or its program's).

def install_type1_fallbacks() -> None:
    """Teach pdfminer's simple fonts both fallbacks (once per process)."""
    if "type1_fallbacks" in _INSTALLED:
        return
    from pdfminer.pdffont import PDFSimpleFont, PDFType1Font, PDFUnicodeNotDefined

    original_init = PDFType1Font.__init__
    original_to_unichr = PDFSimpleFont.to_unichr

    def init_with_builtin_fallback(self, rsrcmgr, spec) -> None:
        original_init(self, rsrcmgr, spec)
        # The font program's own encoding, read when a code first needs it (None: not read yet): most
        # fonts never do, and reading it runs pdfminer's PostScript parser over the program's header.
        self.kg_builtin_encoding = None if "Encoding" in spec else {}

    def builtin(font) -> dict[int, str]:
        if getattr(font, "kg_builtin_encoding", {}) is None:
            font.kg_builtin_encoding = _builtin_encoding(font.descriptor)
        return getattr(font, "kg_builtin_encoding", {})

    def to_unichr_past_null_mappings(self, cid: int) -> str:
        try:
            char = original_to_unichr(self, cid)
        except PDFUnicodeNotDefined:
            char = None
        if char is None or char in _NOTHING:
            # The declared encoding wins for every code it defines; the font program's fills the rest.
            fallback = self.cid2unicode[cid] if cid in self.cid2unicode else builtin(self).get(cid)
            if fallback is not None and (char is None or fallback not in _NOTHING):
                return fallback
            if char is None:
                raise PDFUnicodeNotDefined(None, cid)
        return char

    remember("pdfminer.pdffont:PDFType1Font.__init__", original_init)
    remember("pdfminer.pdffont:PDFSimpleFont.to_unichr", original_to_unichr)
    PDFType1Font.__init__ = init_with_builtin_fallback
    PDFSimpleFont.to_unichr = to_unichr_past_null_mappings
    _INSTALLED.append("type1_fallbacks")


def _builtin_encoding(descriptor) -> dict[int, str]:
    """The encoding inside an embedded Type 1 font program; empty when there is none or it cannot be read."""
    from pdfminer.pdffont import Type1FontHeaderParser
    from pdfminer.pdftypes import int_value, resolve1, stream_value

    try:
        font_file = resolve1(descriptor.get("FontFile")) if descriptor else None
        if font_file is None:
            return {}
        stream = stream_value(font_file)
        header = stream.get_data()[:int_value(resolve1(stream.get("Length1")))]
        return dict(Type1FontHeaderParser(BytesIO(header)).get_encoding())
    except Exception:  # a damaged font program: pdfminer's own reading stands
        return {}


# -- Lines: each glyph once, words parted where the script parts them -----------------------------------
# Wraps ``pdfminer.layout.LTLayoutContainer.group_objects``, which makes a page's (or a figure's) text
# lines out of its characters in drawing order: ``LTTextLineHorizontal.add`` puts a space
# (``LTAnno(" ")``) between two characters wherever they stand further apart than ``word_margin`` of
# their size, and a character drawn twice is laid out twice.

def install_line_reading(drawn_twice: Callable[[str, str, float, float, float], bool],
                         spaceless: Callable[[str], bool],
                         word_breaks: Callable[[list, list, bool], Optional[list]]) -> None:
    """pdfminer's text lines, from now on (once per process): a character ``drawn_twice`` (same text,
    its size, the offsets of its origin from the other's) is laid out once; between two characters
    of a horizontal line one of which is a ``spaceless`` letter (``다.`` and ``커피 Coffee`` too), the
    space pdfminer puts in stays only where ``word_breaks`` (the gaps between the line's such pairs,
    their ems, whether the line draws space glyphs) says a word ends (None: pdfminer's spaces stand)."""
    if "line_reading" in _INSTALLED:
        return
    from pdfminer.layout import LTLayoutContainer

    original = LTLayoutContainer.group_objects

    def group_objects(self, laparams, objs):
        for line in original(self, laparams, _drawn_once(objs, drawn_twice)):
            _spaced(line, spaceless, word_breaks)
            yield line

    remember("pdfminer.layout:LTLayoutContainer.group_objects", original)
    LTLayoutContainer.group_objects = group_objects
    _INSTALLED.append("line_reading")


_CELL = 4.0  # points: a character is looked for as drawn twice in its cell of this size and the next ones


def _drawn_once(objs, drawn_twice) -> list:
    """The objects, each character drawn again at (about) the same place as the same character left out."""
    from pdfminer.layout import LTChar

    seen: dict[tuple[str, int, int], list] = {}
    kept = []
    for obj in objs:
        if isinstance(obj, LTChar):
            text, cell_x, cell_y = obj.get_text(), int(obj.x0 // _CELL), int(obj.y0 // _CELL)
            if any(drawn_twice(text, other.get_text(), max(obj.size, other.size), obj.x0 - other.x0, obj.y0 - other.y0)
                   for x in (cell_x - 1, cell_x, cell_x + 1) for y in (cell_y - 1, cell_y, cell_y + 1)
                   for other in seen.get((text, x, y), ())):
                continue
            seen.setdefault((text, cell_x, cell_y), []).append(obj)
        kept.append(obj)
    return kept


def _spaced(line, spaceless, word_breaks) -> None:
    """Drop the spaces pdfminer put between two characters of a horizontal line, one a spaceless
    letter, where ``word_breaks`` says no word ends."""
    from pdfminer.layout import LTAnno, LTChar, LTTextLineHorizontal

    if not isinstance(line, LTTextLineHorizontal):
        return
    objs = line._objs
    pairs = []  # (index of the left letter, index of the right one) with nothing but pdfminer's spaces between
    written = False
    left = None
    for index, obj in enumerate(objs):
        if isinstance(obj, LTChar):
            text = obj.get_text()
            written = written or text.isspace()
            if left is not None and (spaceless(text) or spaceless(objs[left].get_text())) and not text.isspace():
                pairs.append((left, index))
            left = index
        elif not (isinstance(obj, LTAnno) and obj.get_text() == " "):
            left = None
    if not pairs:
        return
    breaks = word_breaks([objs[b].x0 - objs[a].x1 for a, b in pairs],
                         [max(objs[a].size, objs[b].size) for a, b in pairs], written)
    if breaks is None:
        return
    dropped = {index for (a, b), parts in zip(pairs, breaks) if not parts for index in range(a + 1, b)}
    if dropped:
        line._objs = [obj for index, obj in enumerate(objs) if index not in dropped]


# What each patch was written against (``python -m kg_decoder.patches`` prints them as they are now).
UPSTREAM = (
    Upstream("install_content_reading", "pdfminer.pdfinterp:PDFContentParser",
             '(streams: collections.abc.Sequence[object]) -> None',
             "b02ad84cffe74a33658cc07d025bcb85539e817f8ce5c7a89e67faca9c4cccf9"),
    Upstream("install_content_reading", "pdfminer.pdfinterp:PDFPageInterpreter.execute",
             '(self, streams: collections.abc.Sequence[object]) -> None',
             "20909827cdb83ad1c49936ad6bb640181ac2bff993267df92d946e5dfb3ae2bc"),
    Upstream("install_content_reading", "pdfminer.converter:PDFLayoutAnalyzer.render_string_horizontal",
             "(self, seq: collections.abc.Iterable[int | float | bytes], matrix: tuple[float, float, float, float, float, float], pos: tuple[float, float], font: pdfminer.pdffont.PDFFont, fontsize: float, scaling: float, charspace: float, wordspace: float, rise: float, dxscale: float, ncs: pdfminer.pdfcolor.PDFColorSpace, graphicstate: 'PDFGraphicState') -> tuple[float, float]",
             "c52ab08b8417e394166478ba1b3bf4d90da3516a14da548d2a3ac35f72d832c6"),
    Upstream("install_content_reading", "pdfminer.converter:PDFLayoutAnalyzer.render_char",
             '(self, matrix: tuple[float, float, float, float, float, float], font: pdfminer.pdffont.PDFFont, fontsize: float, scaling: float, rise: float, cid: int, ncs: pdfminer.pdfcolor.PDFColorSpace, graphicstate: pdfminer.pdfinterp.PDFGraphicState) -> float',
             "46aa7d7858ff406a298ea16259f855a9c120e98abb55b4ce1cd9de302cf4d8c8"),
    Upstream("install_content_reading", "pdfminer.layout:LTChar.__init__",
             '(self, matrix: tuple[float, float, float, float, float, float], font: pdfminer.pdffont.PDFFont, fontsize: float, scaling: float, rise: float, text: str, textwidth: float, textdisp: float | tuple[float | None, float], ncs: pdfminer.pdfcolor.PDFColorSpace, graphicstate: pdfminer.pdfinterp.PDFGraphicState) -> None',
             "95698f8d55dba6ca08c5d7427b8e8c3fa46f50bd08b6189e8cd01b6a21f32e5e"),
    Upstream("install_type1_fallbacks", "pdfminer.pdffont:PDFType1Font.__init__",
             "(self, rsrcmgr: 'PDFResourceManager', spec: collections.abc.Mapping[str, typing.Any]) -> None",
             "9f9f8e3de523e5fd8f7d294d2337fca22e58072bb3ec7438289b223ca445c92a"),
    Upstream("install_type1_fallbacks", "pdfminer.pdffont:PDFSimpleFont.to_unichr",
             '(self, cid: int) -> str',
             "ace7a46772fd1d68984cd4eeeb23ae77c22813fff58bfd353746dfabb4e518f4"),
    Upstream("install_type1_fallbacks", "pdfminer.pdffont:Type1FontHeaderParser.get_encoding",
             '(self) -> dict[int, str]',
             "80e71068ea8592f9b692795234cd875d7feef920cf6cfc5b5b1d736cf4c421d7"),
    Upstream("install_line_reading", "pdfminer.layout:LTLayoutContainer.group_objects",
             '(self, laparams: pdfminer.layout.LAParams, objs: collections.abc.Iterable[pdfminer.layout.LTComponent]) -> collections.abc.Iterator[pdfminer.layout.LTTextLine]',
             "083e7ddd50bd3ff1a93472effbced086cadb548f690c7fb14dff1a3831ec728d"),
    Upstream("install_line_reading", "pdfminer.layout:LTTextLineHorizontal.add",
             '(self, obj: pdfminer.layout.LTComponent) -> None',
             "69eb65ca44acc8286eaffc07040654c74bad55dcdec422a02c92260ef92740fd"),
)

__all__ = ["UPSTREAM", "content_parser", "horizontal_strings", "install_all", "install_content_reading",
           "install_line_reading", "install_type1_fallbacks", "pdfminer_own"]
