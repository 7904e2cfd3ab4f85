"""pdfminer's reading of a page at less cost, with the same result: content streams tokenized by
qpdf, and characters laid out in one loop.

pdfminer (unstructured's ``fast``, pdfplumber) tokenizes a page's content streams in Python, one
character class at a time: about a third of its reading of a page (3.6 s of the 11 s it took for the
127 pages of the corpus and ICDAR PDFs); qpdf parses the same streams in C++. :func:`install` puts a
parser in place of pdfminer's ``PDFContentParser`` (:func:`content_parser`) that hands pdfminer's
interpreter what its own would: numbers as ``int`` or ``float``, names as ``PSLiteral``, strings as
``bytes``, arrays as lists, dictionaries with ``str`` keys, ``true``/``false`` as ``bool``, each
operator as a ``PSKeyword`` after its operands. pdfminer's own parser stays for what the two read
differently (an inline image, ``null``, a hex string with an odd number of digits, a malformed
number) and for a stream qpdf cannot parse. The objects are pdfminer's own on every content stream
of the corpus, ICDAR and wild PDFs (``tests/integration/test_pdf_content.py``).

It also lays out a string's characters (``LTChar``) in one loop instead of a few calls each
(:func:`horizontal_strings`). With both, pdfminer read those 127 pages in 7.6 s instead of 10.5 s,
and laid out the same pages, character for character and drawing for drawing, on the 149 PDFs of
the corpus, ICDAR and wild sets (266 pages; only the order of text boxes pdfminer itself ranks by
their objects' addresses changes from run to run, with either reading).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_PDFMINER: dict = {}  # pdfminer's own content parser and string rendering, once replaced
# What qpdf reads otherwise than pdfminer: an inline image (pdfminer keeps its dictionary's
# abbreviations, qpdf expands them), null (a keyword to pdfminer, kept in a dictionary; qpdf drops the
# entry) and a hex string with an odd number of digits (pdfminer keeps the last digit, qpdf pads it).
_LEFT_TO_PDFMINER = re.compile(rb"\bBI\b|\bnull\b|<[0-9A-Fa-f\s]*>")
_NUMBER_START = frozenset("0123456789.+-")


def install() -> None:
    """pdfminer reads content streams through qpdf, and lays out characters in one loop, from now on
    (once per process)."""
    if _PDFMINER:
        return
    from pdfminer import pdfinterp
    from pdfminer.converter import PDFLayoutAnalyzer

    _PDFMINER.update(pdfminer_own())
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


__all__ = ["content_parser", "horizontal_strings", "install", "pdfminer_own"]
