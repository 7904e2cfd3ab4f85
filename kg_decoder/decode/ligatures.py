"""Ligature characters stored as their letters.

A PDF's font often draws "fi" as one glyph its ToUnicode maps to U+FB01 (``ﬁ``); every other reader
(a viewer's copy, pdftotext, a search engine) gives the two letters, and so does a person quoting the
text. The stored text holds the letters: a decoded document's elements are folded once, where every
format's partition ends (before the texts are assembled, so every offset is counted in the folded
text). Folded are the ligatures Unicode keeps only for compatibility: the alphabetic presentation
forms (``ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ``, Armenian and Hebrew ones), the Latin digraphs (``Ĳ ĳ``, ``Ǆ ǅ ǆ``, ``Ǉ ǈ ǉ``,
``Ǌ ǋ ǌ``, ``Ǳ ǲ ǳ``) and Arabic's lam-alef forms; letters such as ``æ`` or ``œ`` are letters of their
own and stay. A box stays where it was (its glyphs are the same); a word OCR read keeps its place in
its picture's text, counted again.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Optional

from ..model import Element, ImageText, Partitioned

_CODES = [*range(0x0132, 0x0134), *range(0x01C4, 0x01CD), *range(0x01F1, 0x01F4), *range(0xFB00, 0xFB07),
          *range(0xFB13, 0xFB18), 0xFB4F, *range(0xFEF5, 0xFEFD)]
_LETTERS = {chr(code): unicodedata.normalize("NFKC", chr(code)) for code in _CODES}
_TABLE = str.maketrans(_LETTERS)
_ANY = re.compile("[" + "".join(_LETTERS) + "]")


def unligated(text: Optional[str]) -> Optional[str]:
    """``text`` with its compatibility ligatures as their letters.

    >>> unligated("uni\\ufb01ed e\\ufb00ort \\ufb02ow \\u0133s"), unligated(None), unligated("cœur")
    ('unified effort flow ijs', None, 'cœur')
    """
    if not text or not _ANY.search(text):
        return text
    return text.translate(_TABLE)


def unligate(partitioned: Partitioned) -> None:
    """Fold the ligatures of a partitioned document in place: every element's text, markup, page name,
    properties and OCR reading, and the document's title."""
    partitioned.title = unligated(partitioned.title)
    for page in partitioned.pages:
        page.name = unligated(page.name)
    for element in partitioned.elements:
        _unligate_element(element)


def _unligate_element(element: Element) -> None:
    element.text = unligated(element.text)
    element.html = unligated(element.html)
    element.page_name = unligated(element.page_name)
    if element.properties:
        element.properties = {key: unligated(value) if isinstance(value, str) else value
                              for key, value in element.properties.items()}
    if element.image_text is not None:
        element.image_text = _image_text(element.image_text)


def _image_text(reading: ImageText) -> ImageText:
    """A picture's OCR reading folded, each word's start counted in the folded text.

    >>> from kg_decoder.model import OcrWord
    >>> words = [OcrWord("of\\ufb01ce", 0, (0, 0, 1, 1), 0.9), OcrWord("hours", 6, (2, 0, 3, 1), 0.9)]
    >>> folded = _image_text(ImageText("of\\ufb01ce hours", "eng", 0.9, words, "tesseract"))
    >>> folded.text, [(w.text, w.start) for w in folded.words]
    ('office hours', [('office', 0), ('hours', 7)])
    """
    if not _ANY.search(reading.text) and not any(_ANY.search(word.text) for word in reading.words):
        return reading
    moved = [0]  # where each character of the reading begins in the folded reading
    for char in reading.text:
        moved.append(moved[-1] + len(_LETTERS.get(char, char)))
    words = [replace(word, text=unligated(word.text), start=moved[min(word.start, len(reading.text))])
             for word in reading.words]
    return replace(reading, text=unligated(reading.text), words=words)


__all__ = ["unligate", "unligated"]
