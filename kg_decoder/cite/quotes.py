"""Finding a quote in stored text as an extractor writes it, with exact offsets into the stored text.

Stored text keeps what the document holds (its ligatures aside, stored as their letters: see
:mod:`kg_decoder.decode.ligatures`): full-width forms, soft hyphens, a word hyphenated at a line
end, curly quotes, line breaks and the blank line between two elements. A quote as a person or an extractor writes it has
plain letters, straight quotes, one space. Both sides are folded the same way before matching:

- Unicode compatibility forms (NFKC: ligatures, full-width letters, no-break spaces), each
  base character with its combining marks folded together;
- typographic quotes, apostrophes and dashes to their ASCII forms;
- soft hyphens and zero-width characters dropped;
- any run of whitespace (a line break, the blank line between two elements) to one space;
- a hyphen followed by whitespace between two letters (``docu-`` / ``ment``) may be left out
  by the quote, so a word broken at a line end is found whole (and as written, hyphen kept).

Offsets returned are offsets into the stored text: a match that begins or ends inside a
folded character (``ﬁ`` → ``fi``) covers the whole character.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from functools import lru_cache

_DROPPED = {"\u00ad", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
_PLAIN = str.maketrans({
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'", "\u00b4": "'",
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
    "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
    "\x00": "\ufffd",  # an unknown glyph some extractors write as NUL: not the break marker below
})
_BREAK = "\x00"  # stands for a hyphen and the whitespace after it, between two letters, in folded text

# What folding may change: whitespace but a lone space, and everything but plain ASCII.
_SPECIAL = re.compile(r"\s{2,}|[^\x20-\x7e]")
_LINE_BREAK_HYPHEN = re.compile(r"(?<=[^\W\d_])-(?= [^\W\d_])")


class FoldedText:
    """``text`` folded for matching, with where each folded character comes from."""

    def __init__(self, text: str) -> None:
        self.text = text
        pieces: list[str] = []
        starts: list[int] = []  # for each folded character, where its source character begins in ``text``
        ends: list[int] = []  # ... and where it ends
        position, length = 0, len(text)
        while position < length:
            special = _SPECIAL.search(text, position)
            plain_end = special.start() if special else length
            if special and plain_end > position and unicodedata.combining(text[plain_end]):
                plain_end -= 1  # a combining mark folds together with its base letter
            if plain_end > position and text[position] == " " and pieces and pieces[-1].endswith(" "):
                ends[-1] = position + 1  # a dropped character stood between two spaces
                position += 1
            if plain_end > position:  # plain ASCII stays as it is
                pieces.append(text[position:plain_end])
                starts.extend(range(position, plain_end))
                ends.extend(range(position + 1, plain_end + 1))
            if special is None:
                break
            start, end = plain_end, special.end()
            if text[start].isspace():
                if pieces and pieces[-1].endswith(" "):  # as above
                    ends[-1] = end
                else:
                    pieces.append(" ")
                    starts.append(start)
                    ends.append(end)
            else:
                while end < length and unicodedata.combining(text[end]):
                    end += 1
                piece = text[start:end]
                if piece not in _DROPPED:
                    folded = _fold(piece)
                    pieces.append(folded)
                    starts.extend([start] * len(folded))
                    ends.extend([end] * len(folded))
            position = end
        self.folded = _LINE_BREAK_HYPHEN.sub(_BREAK, "".join(pieces))
        self._starts = starts
        self._ends = ends
        self._joined: tuple[str, list[int], list[int]] | None = None

    def joined(self) -> tuple[str, list[int], list[int]]:
        """The folded text with each word broken at a line end joined (its break mark and the space after
        it left out); for each joined character its index in the folded text; and the joined indices
        a break was left out before, in order."""
        if self._joined is None:
            pieces, to_folded, joins = [], [], []
            position = 0
            for found in re.finditer(_BREAK + " ", self.folded):
                pieces.append(self.folded[position:found.start()])
                to_folded.extend(range(position, found.start()))
                joins.append(len(to_folded))
                position = found.end()
            pieces.append(self.folded[position:])
            to_folded.extend(range(position, len(self.folded)))
            self._joined = ("".join(pieces), to_folded, joins)
        return self._joined

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The stored-text span of the folded characters ``start:end``."""
        return self._starts[start], self._ends[end - 1]


def _fold(piece: str) -> str:
    return unicodedata.normalize("NFKC", piece).translate(_PLAIN)


@lru_cache(maxsize=256)
def quote_pattern(quote: str) -> re.Pattern:
    """The pattern that finds ``quote`` in folded text.

    >>> bool(quote_pattern("a  b").fullmatch(FoldedText("a\\n b").folded))
    True
    """
    folded = _folded_quote(quote)
    parts: list[str] = []
    for position, char in enumerate(folded):
        following = folded[position + 1] if position + 1 < len(folded) else ""
        if char == " ":
            parts.append(" ")
        elif char == "-":
            # "well-known" is found broken as "well-" / "known"; "pre- and" matches a hyphen before a space
            parts.append(f"(?:-|{_BREAK} ?)" if following.isalpha() else f"[-{_BREAK}]")
        else:
            parts.append(re.escape(char))
            if char.isalpha() and following.isalpha():
                parts.append(f"(?:{_BREAK} ?)?")  # "document" is found broken as "docu-" / "ment"
    return re.compile("".join(parts))


def find_quote(text: str, quote: str, folded: FoldedText | None = None) -> list[tuple[int, int]]:
    """Every place ``quote`` occurs in ``text``, as (start, end) offsets into ``text``.

    >>> text = "A uni\\ufb01ed toolkit; docu-\\nment"
    >>> [text[s:e] for s, e in find_quote(text, "unified toolkit")]
    ['uniﬁed toolkit']
    >>> [text[s:e] for s, e in find_quote(text, "document")]
    ['docu-\\nment']
    """
    if not quote or not quote.strip():
        return []
    folded = folded or FoldedText(text)
    plain = _folded_quote(quote)
    if _BREAK not in folded.folded:  # no word broken at a line end: the pattern matches the folded quote only
        return [folded.span(start, end) for start, end in _occurrences(folded.folded, plain)]
    if "-" not in plain and not plain.startswith(" "):  # as the pattern finds it, compiling none (1 ms)
        return [folded.span(start, end) for start, end in _joined_occurrences(folded, plain)]
    return [folded.span(match.start(), match.end()) for match in quote_pattern(quote).finditer(folded.folded)
            if match.end() > match.start()]


@lru_cache(maxsize=1024)
def _folded_quote(quote: str) -> str:
    """What :func:`quote_pattern` matches in folded text without line-break marks (no regex to compile)."""
    return FoldedText(quote.strip()).folded.replace(_BREAK, "-")


def _occurrences(text: str, part: str) -> list[tuple[int, int]]:
    """Where ``part`` occurs in ``text``, left to right without overlapping (as ``re.finditer``)."""
    found, start = [], text.find(part) if part else -1
    while start >= 0:
        found.append((start, start + len(part)))
        start = text.find(part, start + len(part))
    return found


def _joined_occurrences(folded: FoldedText, quote: str) -> list[tuple[int, int]]:
    """Where a folded quote without hyphens occurs in folded text, a word broken at a line end found
    whole where the quote has letters on both sides of the break (as :func:`quote_pattern` finds it),
    left to right without overlapping; spans in the folded text."""
    joined, to_folded, joins = folded.joined()
    found, start = [], joined.find(quote) if quote else -1
    while start >= 0:
        end = start + len(quote)
        inside = joins[bisect.bisect_right(joins, start):bisect.bisect_left(joins, end)]
        if all(quote[k - start - 1].isalpha() and quote[k - start].isalpha() for k in inside):
            found.append((to_folded[start], to_folded[end - 1] + 1))
            start = joined.find(quote, end)
        else:
            start = joined.find(quote, start + 1)
    return found


def holds_words(text: str, quote: str) -> bool:
    """Whether every word of ``quote`` occurs somewhere in ``text``, folded alike and in any case (an
    extractor may misread a small capital) and order: a cheap test of whether a place is worth
    looking at more closely.

    >>> holds_words("Revenue\\n\\nOperating costs\\n\\n12.5\\n7.1 docu-\\nment", "Operating costs 7.1 document")
    True
    """
    folded = FoldedText(text).folded.replace(_BREAK + " ", "").casefold()
    return all(word in folded for word in re.findall(r"\w+", FoldedText(quote).folded.casefold()))


def as_written(found: str, quote: str) -> bool:
    """Whether stored text found for ``quote`` holds it as written, whitespace aside (no folding needed).

    >>> as_written("docu-\\nment", "document"), as_written("two\\n words", "two words")
    (False, True)
    """
    return found.split() == quote.split()


__all__ = ["FoldedText", "as_written", "find_quote", "holds_words", "quote_pattern"]
