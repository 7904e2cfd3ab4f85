"""Grounding a fact's evidence in a chunk's text, with a verdict (:class:`~kg_decoder.model.Grounding`).

An extractor's quote is looked for in the text as written (``exact``, whitespace aside), then folded as
:mod:`kg_decoder.cite.quotes` folds it (``normalised``: ligatures, hyphenation, typographic quotes),
then approximately (``fuzzy``): the run of the text's words most like the quote's, compared as bags of
words, so a change of word order, a dropped or added word or a number written another way (``12,000``,
``12000``, ``twelve thousand``) still finds it. The score is the Dice coefficient of the two bags of
words (``2 |Q ∩ W| / (|Q| + |W|)``) and a fuzzy match needs at least :data:`FUZZY_AT_LEAST` (chosen on
``bench/grounding.py``: see docs/facts.md). A quote of fewer than :data:`FEWEST_FUZZY_WORDS` words is
never matched fuzzily: too few words to tell a paraphrase from chance. A fact without a quote is
``inferred`` where its subject's and object's labels both occur in one sentence of the text. Anything
else is ``unsupported``.

Pure functions of text: no store.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Optional
from urllib.parse import unquote

from ..model import Grounding
from .quotes import FoldedText, as_written, find_quote

FUZZY_AT_LEAST = 0.75
FEWEST_FUZZY_WORDS = 4
MOST_FUZZY_WORDS = 80  # a longer quote is matched as written or folded only: its runs cost quote x text

_TOKEN = re.compile(r"<[^<>]*>|(\d+(?:,\d{3})*(?:\.\d+)?|[^\W\d_]+)")  # a table's markup: its tags part words
_SMALL_NUMBERS = {word: str(value) for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_TENS = {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000, "k": 1_000,
           "m": 1_000_000, "bn": 1_000_000_000}
_PERCENT = {"percent", "pct"}
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n\s*\n|<[^<>]*>")


@dataclass(frozen=True)
class Grounded:
    """Where evidence was found: the verdict, the span in the text (None: unsupported) and its score
    (1.0 for exact and normalised; the Dice coefficient for fuzzy; the best one seen for unsupported)."""

    grounding: Grounding
    start: Optional[int] = None
    end: Optional[int] = None
    score: Optional[float] = None


class GroundingText:
    """A chunk's text made ready to ground many facts in: folded once, its words counted once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.folded = FoldedText(text)
        joined, to_folded, _ = self.folded.joined()
        self._to_folded = to_folded
        words: list[str] = []
        spans: list[tuple[int, int]] = []
        for token in _TOKEN.finditer(joined.casefold()):
            if token.group(1):
                words.append(token.group(1))
                spans.append(token.span(1))
        self.words, self.word_spans = _normalised(words, spans)
        self.bag = Counter(self.words)

    def stored_span(self, first: int, last: int) -> tuple[int, int]:
        """The span of the stored text that holds words ``first`` to ``last`` (inclusive)."""
        start, end = self.word_spans[first][0], self.word_spans[last][1]
        return self.folded.span(self._to_folded[start], self._to_folded[end - 1] + 1)

    def sentences(self) -> list[tuple[int, int]]:
        """The spans of the text's sentences (a full stop, a blank line or a table's tag ends one)."""
        spans, start = [], 0
        for end in _SENTENCE_END.finditer(self.text):
            if self.text[start:end.start()].strip():
                spans.append((start, end.start()))
            start = end.end()
        if self.text[start:].strip():
            spans.append((start, len(self.text)))
        return spans


def ground(text: GroundingText, quote: str, at_least: float = FUZZY_AT_LEAST, fuzzy: bool = True) -> Grounded:
    """The verdict of ``quote`` in ``text`` (``fuzzy`` False: as written or folded only).

    >>> text = GroundingText("Acme's revenue rose to 12,000 dollars in 2023, the board said.")
    >>> ground(text, "revenue rose to 12,000 dollars")
    Grounded(grounding='exact', start=7, end=37, score=1.0)
    >>> ground(text, "revenue  rose to 12,000 dollars").grounding, ground(text, "Acme’s revenue").grounding
    ('exact', 'normalised')
    >>> found = ground(text, "in 2023 revenue rose to twelve thousand dollars")
    >>> found.grounding, text.text[found.start:found.end], found.score
    ('fuzzy', 'revenue rose to 12,000 dollars in 2023', 1.0)
    >>> ground(text, "the company hired two new directors").grounding
    'unsupported'
    >>> [ground(text, q).grounding for q in ("revenue rose to 13,000 dollars in 2023",
    ...                                      "revenue did not rise to 12,000 dollars in 2023")]
    ['unsupported', 'unsupported']
    """
    matches = find_quote(text.text, quote, text.folded)
    if matches:
        written = [m for m in matches if as_written(text.text[m[0]:m[1]], quote)]
        start, end = (written or matches)[0]
        return Grounded(Grounding.EXACT if written else Grounding.NORMALISED, start, end, 1.0)
    found = fuzzy_span(text, quote) if fuzzy else None
    if found is not None and found[2] >= at_least and _same_claim(
            quote, text.text[found[0]:found[1]], text.text[max(0, found[0] - _AROUND):found[1] + _AROUND]):
        return Grounded(Grounding.FUZZY, found[0], found[1], round(found[2], 4))
    return Grounded(Grounding.UNSUPPORTED, score=round(found[2], 4) if found else 0.0)


_NUMERIC = re.compile(r"\d+(?:\.\d+)?")
_RAW_NUMBER = re.compile(r"\d+(?:,\d{3})*(?:\.\d+)?")
_NEGATIONS = frozenset({"not", "no", "never", "none", "nor", "neither", "nothing", "without", "cannot"})
_AROUND = 12  # characters either side of a fuzzy run its numbers may be in (a shorter run leaves an edge out)


def _same_claim(quote: str, run: str, around: str) -> bool:
    """Whether a run of words like the quote's states what the quote states as far as words can tell:
    each number of the quote is in the run or next to it (``around``, which holds the run), as often as
    the quote says it (as written or in another form: 12,000 and twelve thousand alike), and both deny
    or neither does (an odd number of negations: "not no" affirms). A wrong figure or year, or a "not",
    is what an extractor gets wrong, and is no paraphrase.

    >>> _same_claim("revenue rose to 13,000 dollars", "revenue rose to 12,000 dollars", "")
    False
    >>> _same_claim("revenue did not rise in 2023", "revenue rose in 2023", "")
    False
    >>> _same_claim("twelve thousand dollars", "12,000 dollars", ""), _same_claim("in 0.5 M acid", "0.5 M acid", "")
    (True, True)
    >>> _same_claim("none of them are not optimized", "none of them are optimized", "")
    False
    """
    def numbers(text: str) -> Counter:
        written = Counter(raw.replace(",", "") for raw in _RAW_NUMBER.findall(text))
        other_forms = Counter(word for word in quote_words(text) if _NUMERIC.fullmatch(word))
        return written | other_forms  # each number as often as either reading counts it

    if numbers(quote) - numbers(around or run):
        return False

    def denies(text: str) -> bool:
        return sum(word in _NEGATIONS or word.endswith("n't") for word in quote_words(text)) % 2 == 1

    return denies(quote) == denies(run)


def ground_in_one(texts: list[GroundingText], quote: str,
                  at_least: float = FUZZY_AT_LEAST) -> tuple[Optional[int], Grounded]:
    """The best verdict of ``quote`` among several texts (a document's chunks) and the index of the text
    that gives it (None: none does). Found as written or folded in one of them, that one; else the
    fuzzy match is tried only in the texts whose words could score above the best found so far (a bound
    from the words they share with the quote), best bound first.

    >>> texts = [GroundingText("Acme sells anvils."), GroundingText("Revenue rose to 12,000 dollars in 2023.")]
    >>> index, found = ground_in_one(texts, "in 2023 revenue rose to 12,000 dollars")
    >>> index, found.grounding
    (1, 'fuzzy')
    """
    for index, text in enumerate(texts):
        found = ground(text, quote, fuzzy=False)
        if found.grounding != Grounding.UNSUPPORTED:
            return index, found
    words = quote_words(quote)
    wanted = Counter(words)
    size = len(words)
    slack = max(1, round(size / 4))
    bounds = []
    for index, text in enumerate(texts):
        shared = sum((wanted & text.bag).values())
        bounds.append((2 * shared / (size + max(shared, size - slack)) if size else 0.0, index))
    best_index, best = None, Grounded(Grounding.UNSUPPORTED, score=0.0)
    for bound, index in sorted(bounds, reverse=True):
        if bound < at_least or (best_index is not None and bound <= best.score):
            break  # no text left could do better
        found = ground(texts[index], quote, at_least)
        if found.grounding != Grounding.UNSUPPORTED:
            if best_index is None or found.score > best.score:
                best_index, best = index, found
        elif best_index is None and (found.score or 0.0) > best.score:
            best = found
    return best_index, best


def fuzzy_span(text: GroundingText, quote: str) -> Optional[tuple[int, int, float]]:
    """The run of ``text``'s words most like ``quote``'s as bags of words: (start, end, Dice coefficient),
    among runs as long as the quote give or take one word in four; None for a quote of fewer than
    :data:`FEWEST_FUZZY_WORDS` words or more than :data:`MOST_FUZZY_WORDS`, or a text that shares too
    few of its words for any run to come close.

    >>> fuzzy_span(GroundingText("One two three four five six."), "six five four three")[2]
    1.0
    """
    words = quote_words(quote)
    size = len(words)
    if not FEWEST_FUZZY_WORDS <= size <= MOST_FUZZY_WORDS or not text.words:
        return None
    wanted = Counter(words)
    shared = sum((wanted & text.bag).values())
    slack = max(1, round(size / 4))
    # No run can score above 2 s / (size + max(s, size - slack)) where s is what the whole text shares.
    if 2 * shared / (size + max(shared, size - slack)) < 0.5:
        return None
    best: Optional[tuple[float, int, int]] = None
    n = len(text.words)
    for length in range(max(1, size - slack), min(n, size + slack) + 1):
        window = Counter(text.words[:length])
        common = sum((window & wanted).values())
        for first in range(0, n - length + 1):
            if first:
                leaving, entering = text.words[first - 1], text.words[first + length - 1]
                if leaving != entering:
                    if window[leaving] <= wanted[leaving]:
                        common -= 1
                    window[leaving] -= 1
                    window[entering] += 1
                    if window[entering] <= wanted[entering]:
                        common += 1
            score = 2 * common / (size + length)
            if best is None or score > best[0] + 1e-9:
                best = (score, first, first + length - 1)
    if best is None:
        return None
    # The run's edges trimmed of words the quote lacks (a window as long as the quote may take one in).
    score, first, last = best
    while first < last and wanted[text.words[first]] == 0:
        first += 1
    while last > first and wanted[text.words[last]] == 0:
        last -= 1
    start, end = text.stored_span(first, last)
    length = last - first + 1
    window = Counter(text.words[first:last + 1])
    return start, end, 2 * sum((window & wanted).values()) / (size + length)


def quote_words(quote: str) -> list[str]:
    """A quote's words as :class:`GroundingText` counts them (case folded, numbers in one form).

    >>> quote_words("Revenue of 1,200 thousand, up 5 per cent")
    ['revenue', 'of', '1200000', 'up', '5']
    """
    folded, _, _ = FoldedText(quote.strip()).joined()
    words, spans = [], []
    for token in _TOKEN.finditer(folded.casefold()):
        if token.group(1):
            words.append(token.group(1))
            spans.append(token.span(1))
    return _normalised(words, spans)[0]


def _normalised(words: list[str], spans: list[tuple[int, int]]) -> tuple[list[str], list[tuple[int, int]]]:
    """Words with every number in one form (``1,200``, ``1200`` and ``twelve hundred`` alike; a scale
    word after a number multiplies it; ``per cent`` and ``percent`` after a number dropped) and plain
    plurals folded (``facts`` as ``fact``), with the span each covers."""
    out: list[str] = []
    out_spans: list[tuple[int, int]] = []
    k = 0
    while k < len(words):
        word, span = words[k], spans[k]
        value = _number(word)
        if value is not None:
            end = span[1]
            while k + 1 < len(words):
                following = words[k + 1]
                if following in _SCALES:
                    value *= _SCALES[following]
                elif following in _PERCENT or (following == "per" and k + 2 < len(words) and words[k + 2] == "cent"):
                    k += 1 if following != "per" else 2
                    end = spans[k][1]
                    break
                elif following in _TENS or following in _SMALL_NUMBERS and value in _TENS.values():
                    value += float(_number(following) or 0)
                else:
                    break
                k += 1
                end = spans[k][1]
            out.append(_number_text(value))
            out_spans.append((span[0], end))
        else:
            out.append(word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word)
            out_spans.append(span)
        k += 1
    return out, out_spans


def _number(word: str) -> Optional[float]:
    if word[0].isdigit():
        try:
            return float(word.replace(",", ""))
        except ValueError:
            return None
    if word in _SMALL_NUMBERS:
        return float(_SMALL_NUMBERS[word])
    if word in _TENS:
        return float(_TENS[word])
    return None


def _number_text(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:g}"


def infer(text: GroundingText, subject_label: Optional[str], object_label: Optional[str]) -> Grounded:
    """A fact without a quote: ``inferred`` at the first sentence of ``text`` that holds both labels
    (folded, case aside, at word edges), else ``unsupported``.

    >>> text = GroundingText("Acme was founded in Paris. Its chief is Jane Roe.")
    >>> found = infer(text, "Jane Roe", "Acme")
    >>> found.grounding
    'unsupported'
    >>> found = infer(text, "Acme", "Paris")
    >>> found.grounding, text.text[found.start:found.end]
    ('inferred', 'Acme was founded in Paris.')
    """
    labels = [_label_pattern(label) for label in (subject_label, object_label)]
    if any(pattern is None for pattern in labels):
        return Grounded(Grounding.UNSUPPORTED, score=0.0)
    for start, end in text.sentences():
        sentence = _plain(text.text[start:end])
        if all(pattern.search(sentence) for pattern in labels):
            while end > start and text.text[end - 1].isspace():
                end -= 1
            return Grounded(Grounding.INFERRED, start, end, 1.0)
    return Grounded(Grounding.UNSUPPORTED, score=0.0)


def _plain(text: str) -> str:
    return " ".join(FoldedText(text).joined()[0].casefold().split())


def _label_pattern(label: Optional[str]) -> Optional[re.Pattern]:
    if not label or not label.strip():
        return None
    words = _plain(label).split()
    if not words or sum(len(w) for w in words) < 2:
        return None
    return re.compile(r"(?<!\w)" + r"\s+".join(re.escape(w) for w in words) + r"(?!\w)")


def label_of(term: str) -> str:
    """A readable label for an IRI (its last part, words apart) or a literal's text.

    >>> label_of("http://example.org/people/Jane_Roe"), label_of("http://ex.org/ns#chiefExecutive")
    ('Jane Roe', 'chief Executive')
    """
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", term) and " " not in term:
        tail = re.split(r"[/#:]", term.rstrip("/#"))[-1]
        tail = unquote(tail).replace("_", " ").replace("-", " ")
        return re.sub(r"(?<=[a-z])(?=[A-Z])", " ", tail).strip()
    return unicodedata.normalize("NFC", term).strip()


__all__ = ["FEWEST_FUZZY_WORDS", "FUZZY_AT_LEAST", "Grounded", "GroundingText", "fuzzy_span", "ground", "infer",
           "label_of", "quote_words"]
