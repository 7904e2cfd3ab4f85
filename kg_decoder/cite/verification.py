"""A box on the words is returned only once a second reading of the page agrees with it.

The first reading is the stored text (the partitioner's) aligned with the page's characters; the
second is the page's characters themselves, as its format's backend reads them (a PDF's text layer
through PDFium, the rendering of an Office document): the characters whose middles lie inside the
boxes, line by line, must spell the quoted text, folded as quotes are matched (compatibility forms
and ligatures, case, typographic quotes, hyphens, whitespace). Where they do not, the page is read
again as it is laid out (the quote, with the stored text around it, looked for in the drawing's order
and row by row), and that answer is checked the same way. Neither agreeing, the caller falls back to
the element's box and says so.
"""

from __future__ import annotations

import bisect
import re
import weakref
from typing import Optional

from ..model import BBox, PageText, folded_letters, middle_within
from .glyphs import line_boxes, paired_characters, quotes_in_layer, span_line_boxes

# Glyphs a reader could not map to a character: they stand for any letter.
_UNKNOWN = {"\ufffd", "\ufffe", "\uffff"}
# Characters of stored text around a quote looked for with it, widest first: enough to tell apart two
# places that hold the same words, none at last (the quote alone, inside its element's box).
_CONTEXT = (48, 24, 10, 0)
# The quote alone, found once on the page but not in its element's box (a box the partitioner got
# wrong), is taken when it is this long: shorter words recur by chance.
_UNIQUE_LETTERS = 6
_INSIDE_SHARE = 0.8  # of a found place's characters that must lie in the element's box to count as in it
_SLACK = 2.0  # page units the element's box is grown by when a found place is tested against it


def spells(page: PageText, lines: list[BBox], expected: str) -> bool:
    """Whether the page's characters inside ``lines`` (one box per line, in reading order) spell
    ``expected``: each line read in the drawing's order or along its baseline, lines one after another.

    >>> from kg_decoder.model import PageChar, Reading
    >>> chars = [PageChar(c, (10.0 * k, 0, 10.0 * k + 8, 10), (10.0 * k, 0, 10.0 * k + 10, 10))
    ...          for k, c in enumerate("no yes")]
    >>> page = PageText(chars, Reading("no yes", list(range(6))), Reading("no yes", list(range(6))))
    >>> spells(page, [(30, 0, 60, 10)], "yes"), spells(page, [(0, 0, 20, 10)], "yes")
    (True, False)
    """
    wanted = folded_letters(expected)
    if not wanted or not lines:
        return False
    position = 0
    taken: set[int] = set()
    ys, middles = _middles(page)
    for line in lines:
        left, top, right, bottom = line
        inside = sorted(index for y, x, index in middles[bisect.bisect_left(ys, top):bisect.bisect_right(ys, bottom)]
                        if left <= x <= right and index not in taken)
        taken.update(inside)
        along = sorted(inside, key=lambda i: _along(page.chars[i]))
        for order in (inside, along):
            read = _pattern(folded_letters("".join(page.chars[i].char for i in order))).match(wanted, position)
            if read is not None:
                position = read.end()
                break
        else:
            return False
    return position == len(wanted)


_MIDDLES: "weakref.WeakKeyDictionary[PageText, tuple]" = weakref.WeakKeyDictionary()


def _middles(page: PageText) -> tuple[list[float], list[tuple[float, float, int]]]:
    """The middles of the page's glyphs, (y, x, index) from the top down, and their ys (once per page)."""
    held = _MIDDLES.get(page)
    if held is None:
        middles = sorted(((char.box[1] + char.box[3]) / 2, (char.box[0] + char.box[2]) / 2, index)
                         for index, char in enumerate(page.chars))
        held = _MIDDLES[page] = ([y for y, _, _ in middles], middles)
    return held


def _along(char) -> float:
    """Where a character stands along its line, in the direction it is read."""
    left, top, right, bottom = char.box
    return {90: top, 180: -right, 270: -bottom}.get(char.turn, left)


def _pattern(read: str) -> re.Pattern:
    """What a line's characters match: themselves, a glyph mapped to no character any one to three
    letters (a ligature)."""
    return re.compile("".join(".{1,3}" if char in _UNKNOWN else re.escape(char) for char in read))


def checked_lines(page: PageText, region: BBox, text: str, start: int, end: int,
                  key: Optional[tuple] = None) -> Optional[list[BBox]]:
    """Boxes, one per line, of ``text[start:end]`` where ``text`` is what the page holds in ``region``,
    each checked by the page's own reading; None when neither the alignment with the stored text nor a
    second look through the page as it is laid out gives boxes that spell it."""
    expected = text[start:end]
    lines = span_line_boxes(page, region, text, start, end, key)
    if lines and spells(page, lines, expected):
        return lines
    lines = laid_out_lines(page, region, text, start, end)
    if lines and spells(page, lines, expected):
        return lines
    return None


def laid_out_lines(page: PageText, region: BBox, text: str, start: int, end: int,
                   context_only: bool = False) -> Optional[list[BBox]]:
    """``text[start:end]`` looked for in the page as it is laid out, with as much of the stored text
    around it as the page holds in one run: the one place that holds it (of those inside the element's
    box, where any is), as boxes of its lines; None when no one place does. ``context_only``: never the
    quote alone, but with the text on one side where the other runs off the page (where nothing else
    tells which of the page's places is the element's)."""
    windows = [(width, width) for width in _CONTEXT] if not context_only else \
        [(width, width) for width in _CONTEXT if width] + [(0, width) for width in _CONTEXT if width] + \
        [(width, 0) for width in _CONTEXT if width]
    for before, after in windows:
        low, high = max(0, start - before), min(len(text), end + after)
        places = quotes_in_layer(page, text[low:high])
        inside = [place for place in places if _inside(page, place, region)]
        if inside or (before == after == 0 and len(folded_letters(text[low:high])) < _UNIQUE_LETTERS):
            places = inside
        if len(places) == 1:
            indices = _part(page, places[0], text[low:high], start - low, end - low)
            return line_boxes(page, indices) if indices else None
        if len(places) > 1:
            return None  # the same words in more than one place: nothing tells which is meant
    return None


def _inside(page: PageText, place: list[int], region: BBox) -> bool:
    within = sum(middle_within(page.chars[i].box, region, _SLACK) for i in place)
    return within >= _INSIDE_SHARE * len(place)


def _part(page: PageText, place: list[int], found: str, start: int, end: int) -> list[int]:
    """The page's characters of ``found[start:end]``, where ``place`` (in reading order) holds ``found``."""
    aligned, _, _ = paired_characters(page, place, found)
    return [index for indices in aligned[start:end] for index in indices]


__all__ = ["checked_lines", "laid_out_lines", "spells"]
