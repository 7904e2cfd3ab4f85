"""Where a text holds a quote with small edits (a number, a word): what makes a fact's verdict "changed"
rather than "removed" when its source's next version edits the quote."""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Optional

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, LCSseq

from ..cite.diff import folded

# A quote "changed", not removed, is found with small edits. A quote of a word or two (or of a script
# written without spaces): at least this alike in its letters (2 x common / both lengths).
CHANGED_AT_LEAST = 0.6
# A quote of several words: at most one word in four (to the nearest; numbers aside) left out and as
# many put in, and at least this alike in its letters. The words decide: in a document of many facts a
# deleted paragraph's phrase is often as alike in its letters to a neighbour's ("ingresos por la via
# de", "ingresos por concepto de"), and a long word replaced in a short quote leaves little alike in
# letters ("signed by the Director-General", "signed by the CEO": 0.596).
_WORDED = 3
_WORDS_PER_EDIT = 4
CHANGED_WORDS_AT_LEAST = 0.45
_WORD_EDGE = re.compile(r"\w")
_DIGIT = re.compile(r"\d")
_TOKEN = re.compile(r"<[^<>]*>|([^\s<>]+)")  # words; a table's text is its markup, whose tags part words
_PUNCTUATION = ".,;:!?()[]{}\"'«»“”‘’"


def approximate(text: str, quote: str) -> Optional[tuple[int, int, float]]:
    """Where ``text`` holds ``quote`` with small edits (a number, a word): (start, end, how alike), or None.

    >>> text = "Acme had a revenue of 14.5 M in 2024."
    >>> start, end, _ = approximate(text, "revenue of 12 M in 2023")
    >>> text[start:end]
    'revenue of 14.5 M in 2024'
    >>> approximate(text, "the board met twice") is None
    True
    """
    quote = folded(quote)
    if not quote or not text:
        return None
    offset, end = 0, len(text)
    # A long text: a quote of a word or two only around where it fits best (in C++); the words of a
    # longer one are looked for in the whole text (a cheap look, :func:`_by_words`).
    if len(text) > 4 * len(quote) + 64 and len(_words(quote)) < _WORDED:
        best_fit = fuzz.partial_ratio_alignment(quote, text)
        offset, end = _to_word_edges(text, max(0, best_fit.dest_start - len(quote)),
                                     min(len(text), best_fit.dest_end + len(quote)))
    found = _approximate_in(text[offset:end], quote)
    return None if found is None else (found[0] + offset, found[1] + offset, found[2])


def _approximate_in(text: str, quote: str) -> Optional[tuple[int, int, float]]:
    quote_words = _words(quote)
    worded = len(quote_words) >= _WORDED
    least = CHANGED_WORDS_AT_LEAST if worded else CHANGED_AT_LEAST
    # No stretch of the text can be more alike than its longest common subsequence with the quote allows
    # (2 L / (len(quote) + L)): such a text is left before any matching (a window's folded text is a
    # subsequence of the whole's).
    common = LCSseq.similarity(quote, folded(text))
    if 2 * common < least * (len(quote) + common):
        return None
    return _by_words(text, quote, quote_words) if worded else _by_letters(text, quote)


def _by_letters(text: str, quote: str) -> Optional[tuple[int, int, float]]:
    """The stretch of ``text`` most alike to ``quote`` in its letters, if alike enough."""
    blocks = [b for b in SequenceMatcher(None, text, quote, autojunk=False).get_matching_blocks() if b.size >= 3]
    best = None
    # The matching blocks may land in several places: take the run of them that explains most of the quote.
    for first in range(len(blocks)):
        for last in range(first, min(len(blocks), first + 40)):
            start = max(blocks[first].a - blocks[first].b, 0)
            end = min(blocks[last].a + blocks[last].size + (len(quote) - blocks[last].b - blocks[last].size), len(text))
            if end <= start:
                continue
            start, end = _to_word_edges(text, start, end)
            ratio = Indel.normalized_similarity(quote, folded(text[start:end]))  # in C++: many runs are tried
            if best is None or ratio > best[0]:
                best = (ratio, start, end)
    if best is None or best[0] < CHANGED_AT_LEAST:
        return None
    return best[1], best[2], best[0]


def _by_words(text: str, quote: str, quote_words: list[str]) -> Optional[tuple[int, int, float]]:
    """Of the runs of words of ``text`` that are ``quote`` with few words edited (:func:`_few_words_differ`),
    the one that keeps most of its words."""
    spans = [m.span(1) for m in _TOKEN.finditer(text) if m.group(1)]
    words = [_word(text[s:e]) for s, e in spans]
    allowed = _allowed_edits(quote_words)
    # How many of the text's first words are words of the quote: a run that holds too few of them is
    # passed over before any counting of edits.
    theirs = set(quote_words)
    shared = [0]
    for word in words:
        shared.append(shared[-1] + (word in theirs))
    best = None
    for first in range(len(words)):
        for length in range(max(1, len(quote_words) - allowed), len(quote_words) + allowed + 1):
            if first + length > len(words):
                break
            if shared[first + length] - shared[first] < len(quote_words) - allowed:
                continue
            edits = Indel.distance(quote_words, words[first:first + length])
            if not _few_words_differ(quote_words, words[first:first + length], edits):
                continue
            start, end = spans[first][0], spans[first + length - 1][1]
            while start < end and text[start] in _PUNCTUATION:
                start += 1
            while end > start and text[end - 1] in _PUNCTUATION:
                end -= 1
            ratio = Indel.normalized_similarity(quote, folded(text[start:end]))
            # The fewest of the quote's words left out, then as many words as the quote (a word replaced
            # rather than dropped), then the most alike in letters.
            kept = (len(quote_words) + length - edits) // 2
            rank = (-kept, abs(length - len(quote_words)), -ratio)
            if ratio >= CHANGED_WORDS_AT_LEAST and (best is None or rank < best[0]):
                best = (rank, start, end)
    return None if best is None else (best[1], best[2], -best[0][2])


def _word(token: str) -> str:
    """A word as its edits are counted: case and the punctuation around it aside, and every word with
    a digit the same word (a figure that changed is a small edit)."""
    word = token.casefold().strip(_PUNCTUATION) or token
    return "#" if _DIGIT.search(word) else word


def _words(text: str) -> list[str]:
    return [_word(token) for token in _TOKEN.findall(text) if token]


def _allowed_edits(quote: list[str]) -> int:
    """One word in four, to the nearest, at least one."""
    return max(1, (len(quote) + _WORDS_PER_EDIT // 2) // _WORDS_PER_EDIT)


def _few_words_differ(quote: list[str], found: list[str], edits: int) -> bool:
    """Whether ``found`` is ``quote`` with small edits (``edits``: words left out plus words put in): at
    most one word in four of the quote (to the nearest, at least one) left out, and as many put in.

    >>> quote = _words("e o seu Presidente")
    >>> _few_words_differ(quote, _words("e o seu Tesoureiro"), 2)
    True
    >>> quote, found = _words("ingresos por la via de"), _words("ingresos por concepto de")
    >>> _few_words_differ(quote, found, 3)
    False
    """
    kept = (len(quote) + len(found) - edits) // 2  # the words both have, in order
    allowed = _allowed_edits(quote)
    return len(quote) - kept <= allowed and len(found) - kept <= allowed


def _to_word_edges(text: str, start: int, end: int) -> tuple[int, int]:
    while start > 0 and _WORD_EDGE.match(text[start - 1]) and _WORD_EDGE.match(text[start]):
        start -= 1
    while end < len(text) and _WORD_EDGE.match(text[end]) and _WORD_EDGE.match(text[end - 1]):
        end += 1
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


__all__ = ["CHANGED_AT_LEAST", "CHANGED_WORDS_AT_LEAST", "approximate"]
