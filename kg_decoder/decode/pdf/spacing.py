"""Where a line of a PDF's text layer parts its words, and which glyphs it draws twice: the rules
pdfminer's layout (unstructured's ``fast``, through ``patches.pdfminer.install_line_reading``) and
PDFium's lines follow.

**Scripts written without spaces between letters** (Hangul, Han, Kana). Korean word processors export a
justified line glyph by glyph, the line's spare room spread between all its glyphs, so a word's
syllables stand apart by a fraction of an em; a reader that starts a word wherever two glyphs stand
further apart than a fixed share of their size (pdfminer: 0.185 of it; PDFium alike) reads
``커 피전문점``. Between two characters one of which is such a letter (``다.`` too), a gap parts
words only when it is clearly wider than the line's own gaps between letters: by :data:`WORD_GAP` of an em, or by :data:`COLUMN_GAP` when the line
writes its word breaks as space glyphs (then a wider gap is a tab stop or a column, not a word break).
A line with fewer than :data:`LEAST_GAPS` such gaps has nothing to compare with: the reader's own
judgement stands.

**A glyph drawn twice** a hair apart (fake bold, a stamp or margin code written twice, overlapping
text objects) is one glyph to a reader: the same character within :data:`SAME_PLACE` of an em of it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Sequence

if TYPE_CHECKING:
    import numpy as np

WORD_GAP = 0.2  # ems wider than the line's gaps between letters: a word break
COLUMN_GAP = 0.5  # the same where the line writes its word breaks as space glyphs
LEAST_GAPS = 3
SAME_PLACE = 0.1  # ems: the same character this close to itself is drawn twice

_SPACELESS = ((0x1100, 0x11FF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x3400, 0x4DBF), (0x4E00, 0x9FFF),
              (0xA960, 0xA97F), (0xAC00, 0xD7AF), (0xD7B0, 0xD7FF), (0xF900, 0xFAFF), (0x31F0, 0x31FF))


def spaceless(char: str) -> bool:
    """Whether a character is a letter of a script written without spaces between its letters (Hangul
    syllables and jamo, Han ideographs, Kana).

    >>> [spaceless(c) for c in "커漢カa1 "]
    [True, True, True, False, False, False]
    """
    if len(char) != 1:
        return False
    code = ord(char)
    return any(low <= code <= high for low, high in _SPACELESS)


def spaceless_codes(codes: "np.ndarray") -> "np.ndarray":
    """:func:`spaceless` of each character code of an array, at once."""
    import numpy as np

    found = np.zeros(len(codes), bool)
    for low, high in _SPACELESS:
        found |= (codes >= low) & (codes <= high)
    return found


def word_breaks(gaps: Sequence[float], ems: Sequence[float], written_spaces: bool) -> Optional[list[bool]]:
    """For the gaps (in points) between neighbouring characters of one line, one of each pair a
    spaceless letter, each with the pair's em (type size, points), whether each parts two words;
    None when the line has too few such gaps to tell (the reader's own judgement stands). ``written_spaces``: the line draws space
    glyphs between its words.

    >>> word_breaks([2.2, 2.2, 5.3, 2.2, 2.2], [11] * 5, False)  # justified, words parted by room
    [False, False, True, False, False]
    >>> word_breaks([2.2, 2.2, 2.2, 9.0], [11] * 4, True)  # word breaks written: a tab stop only
    [False, False, False, True]
    >>> word_breaks([0.0, 4.0], [11, 11], False) is None
    True
    """
    if len(gaps) < LEAST_GAPS:
        return None
    ordered = sorted(gaps)
    typical = ordered[(len(ordered) - 1) // 4]  # the lower quartile: letters stand closer than words
    share = COLUMN_GAP if written_spaces else WORD_GAP
    return [gap - typical > share * em for gap, em in zip(gaps, ems)]


def drawn_twice(text: str, other: str, size: float, dx: float, dy: float) -> bool:
    """Whether a glyph is one drawn again a hair from another: the same (non-blank) character, its
    origin within :data:`SAME_PLACE` of an em (``size``, points) of the other's.

    >>> drawn_twice("K", "K", 8.0, 0.3, 0.0), drawn_twice("l", "l", 10.0, 2.2, 0.0), drawn_twice("K", "S", 8, 0, 0)
    (True, False, False)
    """
    return text == other and not text.isspace() and size > 0 and \
        abs(dx) <= SAME_PLACE * size and abs(dy) <= SAME_PLACE * size


__all__ = ["COLUMN_GAP", "LEAST_GAPS", "SAME_PLACE", "WORD_GAP", "drawn_twice", "spaceless", "spaceless_codes",
           "word_breaks"]
