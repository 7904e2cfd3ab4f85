"""What a page shows, read as characters with their boxes: the second reading a trace checks its boxes
against. Plain dataclasses; the format backends fill them (a PDF's text layer through PDFium, the
rendering of an Office document), the trace reads them.

Boxes are ``(left, top, right, bottom)`` on the displayed page, origin at its top-left corner, in the
page's coordinate system (see :mod:`kg_decoder.model.document`).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .document import BBox

# Folded away when two readings of the same words are compared: whitespace, hyphens (a word broken at
# a line end is one word in one reading and two pieces in the other), soft hyphens, zero-width marks.
_LEFT_OUT = set("-\u00ad\u2010\u2011\u2012\u2013\u2014\u2015\u2212\u200b\u200c\u200d\u2060\ufeff\x02")
_LEFT_OUT_ALONE = re.compile("[" + "".join(map(re.escape, sorted(_LEFT_OUT))) + "]+")
_PLAIN = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
          "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"'}
_QUOTE = re.compile("[" + "".join(_PLAIN) + "]")


@dataclass(frozen=True)
class PageChar:
    """A character drawn on a page. ``box`` is the glyph's outline, tight; ``line_box`` spans its
    advance and the font's height, as a viewer's selection does: what a reader sees as "the box on
    the words"."""

    char: str
    box: BBox
    line_box: BBox
    # How the glyph is turned on the displayed page, clockwise: 0 upright, 90 reading downwards, 270
    # upwards (an arXiv margin stamp), 180 upside down; -1 for any other angle.
    turn: int = 0
    size: float = 0.0  # the type size it is set in, in points (0: unknown)


@dataclass(frozen=True)
class Reading:
    """A page's text read in one order; ``positions[i]`` is where the page's character ``i`` stands in it."""

    text: str
    positions: list[int]


@dataclass(frozen=True, eq=False)
class PageText:
    """A page's characters, read two ways. ``stream`` is the drawing's own order (a PDF's content
    stream, lines broken where the reader breaks them); ``rows`` puts every character on the row it
    sits on across the whole page, left to right, rows top to bottom: the order in which a viewer's
    selection reads a table's row across its cells."""

    chars: list[PageChar]
    stream: Reading
    rows: Reading

    @classmethod
    def empty(cls) -> "PageText":
        return cls([], Reading("", []), Reading("", []))


def middle_within(box: BBox, region: BBox, slack: float = 1.0) -> bool:
    """Whether the middle of ``box`` lies in ``region`` grown by ``slack`` (page units).

    >>> middle_within((10, 10, 20, 20), (0, 0, 15, 15)), middle_within((10, 10, 40, 40), (0, 0, 15, 15))
    (True, False)
    """
    x, y = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
    return region[0] - slack <= x <= region[2] + slack and region[1] - slack <= y <= region[3] + slack


def folded_letters(text: str) -> str:
    """``text`` as two readings of the same words are compared: compatibility forms (ligatures,
    full-width letters), case, typographic quotes, whitespace and hyphens folded away.

    >>> folded_letters("E\ufb03cient \u201cdocu-\\nment\u201d"), folded_letters("efficient \\"document\\"")
    ('efficient"document"', 'efficient"document"')
    """
    # Whitespace goes by str.split (what isspace() says, as \s does), the quotes by a search for the
    # few there are: a page's text three times as fast as with one pattern and str.translate.
    if text.isascii():  # nothing to normalise: the common case, and the fast one
        return _LEFT_OUT_ALONE.sub("", "".join(text.lower().split()))
    plain = _QUOTE.sub(lambda quote: _PLAIN[quote.group()], unicodedata.normalize("NFKC", text))
    return _LEFT_OUT_ALONE.sub("", "".join(plain.casefold().split()))


__all__ = ["PageChar", "PageText", "Reading", "folded_letters", "middle_within"]
