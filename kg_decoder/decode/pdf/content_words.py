"""The words of one PDF page as its content streams spell them through each simple font's encoding, for
the few glyphs PDFium maps to no character (``blocks._unmapped_read``).

Two faults of real PDFs (pdfTeX's output, and tools that re-encode its fonts) leave a ligature without a
character in PDFium's reading while its font still names the glyph: the ``/ToUnicode`` map sends it to
U+0000 though ``/Differences`` names it ``/ffi``, or the declared encoding (``/MacRomanEncoding``)
leaves its code undefined though the embedded Type 1 program's own encoding has ``dup 14 /ffi put``.
Here the page's text-showing operators are parsed by qpdf (pikepdf, the document ``fonts`` already
opened) and each code is read by glyph name: the declared encoding wins for every code it defines,
the font program's fills the rest. Words part where a string holds a space, where a ``TJ`` adjustment
leaves a gap, and where the text is moved; a word goes on across a change of font (pdfTeX draws the
ligature of ``difficulties`` in a font of its own between ``di`` and ``culties``).

No glyph's place is worked out: about a fifth of the time pdfminer took to lay out the same page in a
decode (9 against 50 ms, the one such page of the corpus, ICDAR and wild PDFs: page 4 of the
layout-parser paper); ``pdfminer_words`` stays for what this reading cannot match.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Optional

from .fonts import opened_by_qpdf

_OPERATORS = "BT ET Tf Tj TJ ' \" Td TD Tm T* q Q Do"  # the text shown, its font, and where it moves
_SIMPLE = {"/Type1", "/MMType1", "/TrueType", "/Type3"}  # one byte a code: a composite font's CMap is not read
_GAP = 150  # thousandths of an em: a TJ adjustment wider than this parts words (a word space is 250-350)
_MAX_FORM_DEPTH = 8
_BUILTIN = re.compile(rb"dup\s+(\d+)\s*/([^\s/\[\]{}()<>]+)\s+put")


def page_words(data: bytes, number: int, key: Optional[str] = None) -> Optional[set[str]]:
    """The words of page ``number`` (from 1) of a PDF as its fonts' encodings spell them; None where qpdf
    cannot read the page. ``key`` as ``fonts.parsed`` takes it."""
    with opened_by_qpdf(data, key) as document:
        if document is None:
            return None
        try:
            page = document.pages[number - 1]
            reading = _Reading()
            reading.stream(page, page.obj.get("/Resources"), None, 0)
            return reading.words
        except Exception:  # noqa: BLE001 — damage qpdf does not read through: the glyphs stay as they are
            return None


class _Reading:
    def __init__(self) -> None:
        self.words: set[str] = set()
        self._run: list[str] = []
        self._encodings: dict = {}  # a font's object id -> its codes' characters (None: not a simple font)

    def stream(self, content, resources, font: Optional[dict[int, str]], depth: int) -> None:
        """The words ``content`` (a page, or a form it draws) shows with ``resources``, starting in ``font``
        (the graphics state's: a form that sets none shows its text in its caller's)."""
        import pikepdf

        fonts = _entry(resources, "/Font")
        forms = _entry(resources, "/XObject")
        saved: list = []
        for operands, operator in pikepdf.parse_content_stream(content, _OPERATORS):
            name = str(operator)
            if name == "q":
                saved.append(font)
            elif name == "Q":
                font = saved.pop() if saved else font
            elif name == "Tf":
                font = self._encoding(fonts.get(operands[0]) if fonts is not None and operands else None)
            elif name in ("Tj", "'", '"'):
                if name != "Tj":
                    self._part()
                self._show(font, operands[-1] if operands else None)
            elif name == "TJ":
                for item in (operands[0] if operands and isinstance(operands[0], pikepdf.Array) else ()):
                    if isinstance(item, (int, float, Decimal)):
                        if -float(item) > _GAP:
                            self._part()
                    else:
                        self._show(font, item)
            elif name == "Do":
                self._part()
                form = forms.get(operands[0]) if forms is not None and operands else None
                if form is not None and form.get("/Subtype") == "/Form" and depth < _MAX_FORM_DEPTH:
                    self.stream(form, form.get("/Resources", resources), font, depth + 1)
            else:  # the text moved (or a text object began or ended): a new word
                self._part()
        self._part()

    def _show(self, font: Optional[dict[int, str]], string) -> None:
        import pikepdf

        if font is None or not isinstance(string, pikepdf.String):
            self._part()
            return
        for code in bytes(string):
            char = font.get(code)
            if char is None or char.isspace():
                self._part()
            else:
                self._run.append(char)

    def _part(self) -> None:
        if self._run:
            self.words.add("".join(self._run))
            self._run = []

    def _encoding(self, font) -> Optional[dict[int, str]]:
        if font is None:
            return None
        if not font.is_indirect:  # a font written inline has no identity to keep its codes by
            return _codes(font) if font.get("/Subtype") in _SIMPLE else None
        if font.objgen not in self._encodings:
            self._encodings[font.objgen] = _codes(font) if font.get("/Subtype") in _SIMPLE else None
        return self._encodings[font.objgen]


def _entry(resources, name: str):
    import pikepdf

    found = resources.get(name) if isinstance(resources, pikepdf.Dictionary) else None
    return found if isinstance(found, pikepdf.Dictionary) else None


def _codes(font) -> dict[int, str]:
    """Each code's character by its glyph name: the declared encoding (a named one, or ``/BaseEncoding``,
    with ``/Differences``) where it names the code, the embedded Type 1 program's own encoding for the
    rest; a font that declares none reads its program's, then the standard encoding."""
    import pikepdf
    from pdfminer.encodingdb import EncodingDB, name2unicode

    def named(glyph: str) -> Optional[str]:
        try:
            return name2unicode(glyph)
        except (KeyError, ValueError):
            return None

    declared = font.get("/Encoding")
    builtin = {code: char for code, glyph in _builtin_glyphs(font).items() if (char := named(glyph)) is not None}
    if declared is None:
        if not builtin and _symbolic(font):  # Symbol, ZapfDingbats, a symbolic TrueType: its own codes
            return {}
        return dict(EncodingDB.std2unicode) | builtin
    base, differences = "StandardEncoding", ()
    if isinstance(declared, pikepdf.Name):
        base = str(declared)[1:]
    elif isinstance(declared, pikepdf.Dictionary):
        if isinstance(declared.get("/BaseEncoding"), pikepdf.Name):
            base = str(declared.BaseEncoding)[1:]
        elif builtin:  # no base named: an embedded program's own encoding is the base
            base = ""
        if isinstance(declared.get("/Differences"), pikepdf.Array):
            differences = declared.Differences
    codes = builtin | (dict(EncodingDB.encodings.get(base, EncodingDB.std2unicode)) if base else {})
    code = 0
    for item in differences:
        if isinstance(item, (int, Decimal)):
            code = int(item)
        elif isinstance(item, pikepdf.Name):
            char = named(str(item)[1:])
            if char is not None:
                codes[code] = char
            code += 1
    return codes


def _symbolic(font) -> bool:
    """Whether a font's codes are its own (its descriptor's symbolic flag, or a standard symbol font)."""
    import pikepdf

    if str(font.get("/BaseFont", "")).lstrip("/") in ("Symbol", "ZapfDingbats"):
        return True
    descriptor = font.get("/FontDescriptor")
    flags = descriptor.get("/Flags", 0) if isinstance(descriptor, pikepdf.Dictionary) else 0
    return isinstance(flags, int) and bool(flags & 4)


def _builtin_glyphs(font) -> dict[int, str]:
    """The encoding inside an embedded Type 1 font program (its clear-text part): code -> glyph name."""
    import pikepdf

    descriptor = font.get("/FontDescriptor")
    program = descriptor.get("/FontFile") if isinstance(descriptor, pikepdf.Dictionary) else None
    if not isinstance(program, pikepdf.Stream):
        return {}
    try:
        header = program.read_bytes()[:int(program.get("/Length1", 0)) or None]
    except pikepdf.PdfError:
        return {}
    start = header.find(b"/Encoding")
    if start < 0:
        return {}
    return {int(code): glyph.decode("latin-1") for code, glyph in _BUILTIN.findall(header, start)
            if int(code) < 256}


__all__ = ["page_words"]
