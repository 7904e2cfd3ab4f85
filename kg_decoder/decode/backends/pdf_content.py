"""pdfminer's reading of content streams with qpdf's tokenizer (through pikepdf): the same operands
and operators, in the same order, for a third of the time.

pdfminer (unstructured's ``fast``, pdfplumber) tokenizes a page's content streams in Python, one
character class at a time: about a third of its reading of a page (3.6 s of the 11 s it took for the
127 pages of the corpus and ICDAR PDFs); qpdf parses the same streams in C++. :func:`install` puts a
parser in place of pdfminer's ``PDFContentParser`` that hands pdfminer's interpreter what its own
would: numbers as ``int`` or ``float``, names as ``PSLiteral``, strings as ``bytes``, arrays as lists,
dictionaries with ``str`` keys, ``true``/``false`` as ``bool``, each operator as a ``PSKeyword``
after its operands. pdfminer's own parser stays for what the two read differently (an inline image,
``null``, a hex string with an odd number of digits, a malformed number) and for a stream qpdf
cannot parse. The objects are pdfminer's own on every content stream of the corpus and wild PDFs
(``tests/integration/test_pdf_content.py``), and so are the pages laid out from them, character
for character and drawing for drawing (149 PDFs, 266 pages).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

_PDFMINER_PARSER = None  # pdfminer's own PDFContentParser, once replaced
# What qpdf reads otherwise than pdfminer: an inline image (pdfminer keeps its dictionary's
# abbreviations, qpdf expands them), null (a keyword to pdfminer, kept in a dictionary; qpdf drops the
# entry) and a hex string with an odd number of digits (pdfminer keeps the last digit, qpdf pads it).
_LEFT_TO_PDFMINER = re.compile(rb"\bBI\b|\bnull\b|<[0-9A-Fa-f\s]*>")
_NUMBER_START = frozenset("0123456789.+-")


def install() -> None:
    """pdfminer's interpreter reads content streams through qpdf from now on (once per process)."""
    global _PDFMINER_PARSER
    if _PDFMINER_PARSER is not None:
        return
    from pdfminer import pdfinterp

    _PDFMINER_PARSER = pdfinterp.PDFContentParser
    pdfinterp.PDFContentParser = content_parser(_PDFMINER_PARSER)


def pdfminer_parser() -> type:
    """pdfminer's own content parser, installed or not."""
    from pdfminer import pdfinterp

    return _PDFMINER_PARSER or pdfinterp.PDFContentParser


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
        data = b"\n".join(stream_value(stream).get_data() for stream in streams)
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


class _Unread(Exception):
    """An object the conversion does not read as pdfminer would."""


__all__ = ["content_parser", "install", "pdfminer_parser"]
