"""Sources and their versions: a new version recorded when a source's bytes change, its diff with the
version before, and every fact cited to the version before carried to it with a verdict.

A source is a path (absolute), a crawled URL or an id the caller gives. The decode pipeline calls
:func:`record_version` after each top-level decode that names a source: the same document as the
source's latest version changes nothing; other bytes make version n+1, which ``prov:wasRevisionOf``
version n, with a ``tg:Revision`` (the diff's counts) and the verdicts it gives the facts, in one
transaction. The document itself was committed before (content-addressed, as any decode): a
process killed between the two leaves the source at its old version, and the next decode of the
same bytes records the version.
"""

from __future__ import annotations

import bisect
import re
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from difflib import SequenceMatcher
from typing import Optional, Union

from rapidfuzz import fuzz
from rapidfuzz.distance import Indel, LCSseq

from ..decode import pipeline
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..graph.version_mapping import VersionRecord, source_iri, version_quads
from ..graph.version_reads import SourceVersionRow
from ..model import (DiffCounts, DiffEntry, DiffOp, DiffSide, FactVerdictRecord, Verdict, VerdictStep, VersionDiff,
                     VersionInfo, software_versions)
from ..model.errors import InvalidOption, UnknownEntity
from .diff import align, count, folded
from .quotes import FoldedText, find_quote

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
_source_locks: dict[str, threading.Lock] = {}
_source_locks_lock = threading.Lock()


# ---------------------------------------------------------------- recording a version


def record_version(store: KgStore, source_id: str, document: str) -> VersionInfo:
    """Make ``document`` the latest version of ``source_id`` unless it is already (one transaction)."""
    if not isinstance(source_id, str) or not source_id.strip() or len(source_id) > 4096:
        raise InvalidOption("a source id is non-empty text of at most 4096 characters")
    with _source_locks_lock:
        lock = _source_locks.setdefault(source_id, threading.Lock())
    with lock:  # versions of one source one after the other (parallel decodes)
        rows = store.source_versions(source_iri(source_id))
        latest = next((row for row in rows if row.latest), None)
        if latest is not None and latest.document == document:
            return _info(latest, rows)
        started = datetime.now(timezone.utc)
        record = VersionRecord(source_id=source_id, number=max((row.number for row in rows), default=0) + 1,
                               document=document, generated=started, versions=software_versions(), started=started)
        if latest is not None:
            record.previous = latest.version
            old, new = _Version.read(store, latest.document), _Version.read(store, document)
            entries = align(old.sides, new.sides, with_edits=False)  # the verdicts need no character edits
            record.counts = count(entries)
            record.verdicts = carry_facts(store, latest, old, new, entries)
        record.generated = datetime.now(timezone.utc)
        store.write_version(record.source, version_quads(record))
        return _info_of_record(record)


pipeline.on_new_version(record_version)


@dataclass
class _Version:
    """A document's text elements in reading order, and its pages' and sections' texts."""

    document: str
    sides: list[DiffSide]
    texts: dict[str, str]
    pages: dict[str, Optional[int]]
    by_segment: dict[str, list[DiffSide]]

    @classmethod
    def read(cls, store: KgStore, document: str, boxes: bool = False) -> "_Version":
        """A document's version as the store holds it; its elements' boxes too when ``boxes`` (a diff
        shows them; facts' verdicts need none)."""
        texts, pages = {}, {}
        for segment in store.text_segments(document):
            if segment.kind != "image":
                texts[segment.segment] = store.text(segment.sha256, segment.segment)
                pages[segment.segment] = segment.page_number
        sides = []
        for row in store.version_elements(document, boxes):
            text = texts.get(row.segment)
            if text is None:
                continue
            sides.append(DiffSide(element=row.element, text=text[row.char_offset:row.char_offset + row.char_length],
                                  page_number=row.page_number if row.page_number is not None
                                  else pages.get(row.segment),
                                  bbox=row.bbox, segment=row.segment, char_offset=row.char_offset))
        by_segment: dict[str, list[DiffSide]] = {}
        for side in sorted(sides, key=lambda s: s.char_offset):
            by_segment.setdefault(side.segment, []).append(side)
        return cls(document, sides, texts, pages, by_segment)

    def element_at(self, segment: str, start: int, end: int) -> Optional[DiffSide]:
        """The element that holds most of ``start..end`` of a segment's text."""
        sides = self.by_segment.get(segment, [])
        position = bisect.bisect_right(sides, start, key=_char_offset) - 1
        best, best_overlap = None, 0
        for side in sides[max(position, 0):position + 4]:
            overlap = min(end, side.char_offset + len(side.text)) - max(start, side.char_offset)
            if overlap > best_overlap:
                best, best_overlap = side, overlap
        return best

    def page_at(self, segment: str, start: int, end: int) -> Optional[int]:
        side = self.element_at(segment, start, end)
        return side.page_number if side is not None else self.pages.get(segment)


def _char_offset(side: DiffSide) -> int:
    return side.char_offset


@dataclass
class _Fact:
    """A fact as the previous version holds it: its subgraph, where its text is, and that text."""

    subgraph: str
    segment: Optional[str]  # None: the previous version holds it no more (removed)
    start: int
    end: int
    text: str
    page_number: Optional[int]
    verdict_entity: Optional[str] = None


def _live_facts(store: KgStore, previous: SourceVersionRow, old: _Version) -> list[_Fact]:
    """The facts the previous version holds (those its verdicts carried to it, those an extractor
    cited to its own chunks) and those it judged removed, to be looked for again (a document edited
    back: its facts hold again). A removed fact has no place in the previous version (``segment``
    None): its text and page are the last that held it."""
    facts: dict[str, _Fact] = {}
    gave_verdict = set()
    for row in store.version_verdicts(previous.version):
        gave_verdict.add(row.subgraph)
        if row.verdict == Verdict.REMOVED and row.previous_text:
            facts[row.subgraph] = _Fact(row.subgraph, None, 0, 0, row.previous_text, row.previous_page_number,
                                        verdict_entity=row.verdict_entity)
            continue
        if row.verdict == Verdict.REMOVED or row.segment is None or row.segment not in old.texts:
            continue
        start, end = row.char_offset, row.char_offset + row.char_length
        text = old.texts[row.segment][start:end]
        if row.text and len(row.text) > len(text):  # found running on into the next element: its whole text
            text = row.text
        facts[row.subgraph] = _Fact(row.subgraph, row.segment, start, end, text, row.page_number,
                                    verdict_entity=row.verdict_entity)
    for row in store.document_fact_spans(previous.document):
        if row.subgraph in gave_verdict or row.subgraph in facts or row.segment not in old.texts:
            continue
        prefix = row.prefix_length or 0
        if row.char_offset is None or row.char_length is None:
            start, end = row.chunk_offset, row.chunk_offset + row.chunk_length
        else:
            start = row.chunk_offset + min(max(row.char_offset - prefix, 0), row.chunk_length)
            end = row.chunk_offset + min(max(row.char_offset + row.char_length - prefix, 0), row.chunk_length)
        text = old.texts[row.segment]
        if end <= start:  # a span in the text the chunk repeats for context: where that text comes from
            quote = row.text or ""
            found = text.rfind(quote, 0, row.chunk_offset + row.chunk_length) if quote else -1
            if found < 0:
                continue
            start, end = found, found + len(quote)
        facts[row.subgraph] = _Fact(row.subgraph, row.segment, start, end, text[start:end],
                                    old.page_at(row.segment, start, end))
    return list(facts.values())


# ---------------------------------------------------------------- verdicts


def carry_facts(store: KgStore, previous: SourceVersionRow, old: _Version, new: _Version,
                entries: list[DiffEntry]) -> list[FactVerdictRecord]:
    """A verdict for every fact the previous version holds, found again in the new version's text."""
    places = _Places(old, new, entries)
    folded_texts = {segment: FoldedText(text) for segment, text in new.texts.items()}
    return [_verdict(fact, old, new, places, folded_texts) for fact in _live_facts(store, previous, old)]


class _Places:
    """Where an old element's place is in the new version: its aligned element, and the run of new
    elements between the nearest elements before and after it that kept their order."""

    def __init__(self, old: _Version, new: _Version, entries: list[DiffEntry]) -> None:
        self.by_old = {entry.old.element: entry for entry in entries if entry.old is not None}
        self.old_index = {side.element: i for i, side in enumerate(old.sides)}
        self.new_index = {side.element: i for i, side in enumerate(new.sides)}
        self.new = new
        anchored = sorted((self.old_index[e.old.element], self.new_index[e.new.element]) for e in entries
                          if e.op in (DiffOp.KEPT, DiffOp.CHANGED))
        self.anchor_old = [i for i, _ in anchored]
        self.anchor_new = [j for _, j in anchored]

    def window(self, element: str) -> tuple[int, int]:
        """New indices strictly between which the old element's place lies."""
        i = self.old_index[element]
        position = bisect.bisect_left(self.anchor_old, i)
        before = self.anchor_new[position - 1] if position > 0 else -1
        after_position = position + 1 if position < len(self.anchor_old) and self.anchor_old[position] == i \
            else position
        after = self.anchor_new[after_position] if after_position < len(self.anchor_new) else len(self.new.sides)
        return before, after

    def new_element_index(self, segment: str, start: int, end: int) -> int:
        """The index of the new element that holds most of a span, -1 for none."""
        side = self.new.element_at(segment, start, end)
        return -1 if side is None else self.new_index[side.element]


def _verdict(fact: _Fact, old: _Version, new: _Version, places: _Places,
             folded_texts: dict[str, FoldedText]) -> FactVerdictRecord:
    record = FactVerdictRecord(subgraph=fact.subgraph, verdict=Verdict.REMOVED, previous_text=fact.text,
                               previous_page_number=fact.page_number, previous_verdict=fact.verdict_entity,
                               removed_before=fact.segment is None)
    if fact.segment is None:  # removed before: it holds again only where its text is, word for word
        for segment, text in new.texts.items():
            for start, end in find_quote(text, fact.text, folded_texts[segment]) if fact.text.strip() else []:
                page = new.page_at(segment, start, end)
                return _found(record, Verdict.CURRENT if page == fact.page_number else Verdict.MOVED, new, segment,
                              start, end, page)
        return record
    element = old.element_at(fact.segment, fact.start, fact.end)
    entry = places.by_old.get(element.element) if element is not None else None
    target = entry.new if entry is not None and entry.op is not DiffOp.REMOVED else None
    window = places.window(element.element) if element is not None else None
    matches = [(segment, start, end) for segment, text in new.texts.items()
               for start, end in find_quote(text, fact.text, folded_texts[segment])] if fact.text.strip() else []
    if matches:
        inside = [m for m in matches if target is not None and _within(m, target)]
        in_place = [m for m in matches if window is not None and window[0] < places.new_element_index(*m) < window[1]]
        segment, start, end = (inside or in_place or matches)[0]
        page = new.page_at(segment, start, end)
        # Same place: in the element it was aligned with (not moved), or, where the elements were cut
        # otherwise (a PDF's lines flowed anew), among the new elements between its old neighbours.
        same_place = ((bool(inside) and entry.op is not DiffOp.MOVED) or (not inside and bool(in_place))) \
            and page == fact.page_number
        return _found(record, Verdict.CURRENT if same_place else Verdict.MOVED, new, segment, start, end, page)
    # In the element it was aligned with, else among the new elements between its old neighbours (a
    # PDF's text cut into elements otherwise).
    around = [new.sides[k] for k in range(window[0] + 1, min(window[1], window[0] + 7))] if window is not None else []
    best = None
    for candidates in ([target] if target is not None else [], [side for side in around if side is not target]):
        for side in candidates:
            found = approximate(side.text, fact.text)
            if found is not None and (best is None or found[2] > best[2]):
                best = (side, found, found[2])
        if best is not None:
            break
    if best is not None:
        side, (start, end, _) = best[0], best[1]
        start, end = side.char_offset + start, side.char_offset + end
        return _found(record, Verdict.CHANGED, new, side.segment, start, end, new.page_at(side.segment, start, end))
    if window is not None:
        return _across_two_elements(record, fact, new, window)
    return record


_ACROSS = 8  # neighbouring pairs of new elements around a fact's place looked at for a quote they share


def _across_two_elements(record: FactVerdictRecord, fact: _Fact, new: _Version,
                         window: tuple[int, int]) -> FactVerdictRecord:
    """The fact's text where it runs from one new element into the next (a paragraph cut at a page
    break, its text reflowed by an edit before it: the quote now begins at one page's foot), as written
    (current or moved) or with small edits (changed), among the elements around its place, the
    neighbours that kept their order included. Its span is the part in the element holding most of it;
    the text found, the whole (what the next version looks for)."""
    sides = new.sides
    low, high = max(window[0], 0), min(window[1], len(sides) - 1)
    # A wide window: the pairs next to either neighbour that kept its place (where the text went)
    pairs = sorted(set(range(low, min(high, low + _ACROSS // 2))) | set(range(max(low, high - _ACROSS // 2), high)))
    best = None
    for k in pairs:
        joined, parts = _joined(new, sides[k], sides[k + 1])
        exact = find_quote(joined, fact.text)
        found = (exact[0][0], exact[0][1], 2.0) if exact else approximate(joined, fact.text)
        if found is not None and (best is None or found[2] > best[0][2]):
            best = (found, joined, parts)
    if best is None:
        return record
    (start, end, score), joined, parts = best
    (segment, low_offset, high_offset), _ = max(
        (((segment, offset + max(start - at, 0), offset + min(end, at + length) - at), min(end, at + length) - max(start, at))
         for segment, offset, at, length in parts), key=lambda pair: pair[1])
    page = new.page_at(segment, low_offset, high_offset)
    verdict = Verdict.CHANGED if score <= 1.0 else Verdict.CURRENT if page == fact.page_number else Verdict.MOVED
    _found(record, verdict, new, segment, low_offset, high_offset, page)
    record.text = joined[start:end]
    return record


def _joined(new: _Version, first: DiffSide, second: DiffSide) -> tuple[str, list[tuple[str, int, int, int]]]:
    """Two neighbouring elements' text as one, and its parts: (segment, offset in it, offset in the
    joined text, length). Of one segment: the segment's text from the first to the end of the second."""
    if first.segment == second.segment and first.char_offset <= second.char_offset:
        end = second.char_offset + len(second.text)
        return new.texts[first.segment][first.char_offset:end], [(first.segment, first.char_offset, 0,
                                                                  end - first.char_offset)]
    joined = first.text + "\n" + second.text
    return joined, [(first.segment, first.char_offset, 0, len(first.text)),
                    (second.segment, second.char_offset, len(first.text) + 1, len(second.text))]


def _within(match: tuple[str, int, int], side: DiffSide) -> bool:
    segment, start, end = match
    return segment == side.segment and side.char_offset <= start and end <= side.char_offset + len(side.text)


def _found(record: FactVerdictRecord, verdict: Verdict, new: _Version, segment: str, start: int, end: int,
           page: Optional[int]) -> FactVerdictRecord:
    record.verdict = verdict
    record.segment, record.start, record.end = segment, start, end
    record.text = new.texts[segment][start:end]
    record.page_number = page
    return record


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


# ---------------------------------------------------------------- reading versions


def _counts(row: SourceVersionRow) -> Optional[DiffCounts]:
    if row.kept is None:
        return None
    return DiffCounts(row.kept, row.moved or 0, row.changed or 0, row.removed or 0, row.added or 0)


def _info(row: SourceVersionRow, rows: list[SourceVersionRow]) -> VersionInfo:
    facts = {name: getattr(row, "facts_" + name) for name in ("current", "moved", "changed", "removed")
             if getattr(row, "facts_" + name) is not None}
    return VersionInfo(source=row.source_id, version=row.version, number=row.number, document=row.document,
                       generated=str(row.generated), latest=bool(row.latest), previous=row.previous,
                       counts=_counts(row), facts=facts)


def _info_of_record(record: VersionRecord) -> VersionInfo:
    facts = record.fact_counts() if record.previous is not None else {}
    return VersionInfo(source=record.source_id, version=record.iri, number=record.number, document=record.document,
                       generated=record.generated.isoformat(), latest=True, previous=record.previous,
                       counts=record.counts, facts=facts, new=True)


def source_rows(store: KgStore, source: str, read_files: bool = True) -> list[SourceVersionRow]:
    """A source's versions by its id, its IRI, or (with ``read_files``, a path on this machine) its file."""
    candidates = [source] if source.startswith("urn:source:") else [source_iri(source)]
    if read_files and not source.startswith("urn:") and "://" not in source:
        candidates.append(source_iri(pipeline.path_source_id(source)))
    for iri in candidates:
        rows = store.source_versions(iri)
        if rows:
            return rows
    raise UnknownEntity(f"no source {source!r:.200} in the store (a path, URL or --source-id that was decoded)")


@with_store(read_only=True)
def source_versions(source: str, *, store: Union[KgStore, StorePath], read_files: bool = True) -> list[VersionInfo]:
    """Every version of a source (its path, URL, id or IRI), oldest first. Reads only. A web server
    passes ``read_files=False``: a request never makes it resolve a path of its own machine.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     _ = kg_decoder.decode(b"Revenue was 12 M.", store=store, source_id="report")
    ...     _ = kg_decoder.decode(b"Revenue was 14 M.", store=store, source_id="report")
    ...     [(v.number, v.latest, v.counts and v.counts.changed) for v in source_versions("report", store=store)]
    [(1, False, None), (2, True, 1)]
    """
    rows = source_rows(store, source, read_files)
    return [_info(row, rows) for row in rows]


def _document_of(store: KgStore, name: str) -> str:
    """A document by its IRI, or a version's document by the version's IRI."""
    if name.startswith("urn:version:"):
        for source in store.all_sources():
            for row in store.source_versions(source.source):
                if row.version == name:
                    return row.document
        raise UnknownEntity(f"no version {name:.200} in the store")
    if not store.has_document(name):
        raise UnknownEntity(f"no document {name:.200} in the store")
    return name


@with_store(read_only=True)
def diff_documents(old: str, new: str, *, store: Union[KgStore, StorePath]) -> VersionDiff:
    """The element-by-element diff of two documents (or versions, by IRI): kept, moved, changed (with
    the character edits), removed and added elements, with pages and boxes on both sides. Reads only."""
    old_document, new_document = _document_of(store, old), _document_of(store, new)
    entries = align(_Version.read(store, old_document, boxes=True).sides,
                    _Version.read(store, new_document, boxes=True).sides)
    return VersionDiff(old=old_document, new=new_document, counts=count(entries), entries=entries)


@with_store(read_only=True)
def verdict_chain(subgraph: str, *, store: Union[KgStore, StorePath]) -> list[VerdictStep]:
    """What each later version of its source says of a fact subgraph, oldest first (by source, when its
    document was a version of several). Reads only."""
    return verdict_steps(store, subgraph)


def verdict_steps(store: KgStore, subgraph: str) -> list[VerdictStep]:
    return [VerdictStep(source=row.source_id, version=row.number, generated=str(row.generated), document=row.document,
                        verdict=Verdict(row.verdict), page_number=row.page_number,
                        previous_page_number=row.previous_page_number, text=row.text,
                        previous_text=row.previous_text, segment=row.segment, start=row.char_offset,
                        end=None if row.char_offset is None else row.char_offset + row.char_length)
            for row in store.fact_verdicts(subgraph)]


@with_store(read_only=False)
def prune_versions(keep: int, source: Optional[str] = None, *, store: Union[KgStore, StorePath]) -> list[VersionInfo]:
    """Remove all but the ``keep`` latest versions of a source (or of every source), with the documents
    only they were, in one transaction; return the versions removed. The library's bytes stay until
    ``gc``. Fact subgraphs and the verdicts of kept versions stay (a kept verdict's fact is still traceable
    to its text in the kept versions)."""
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
        raise InvalidOption("keep at least one version (--keep N, N >= 1)")
    groups = [source_rows(store, source)] if source is not None else \
        [store.source_versions(row.source) for row in store.all_sources()]
    removed: list[SourceVersionRow] = []
    kept_documents = set()
    for rows in groups:
        removed.extend(rows[:-keep])
        kept_documents.update(row.document for row in rows[-keep:])
    if not removed:
        return []
    still_cited = set(kept_documents)
    for row in removed:  # a document another source's version is stays
        still_cited.update(v.document for v in store.document_versions(row.document) if v.version not in
                           {r.version for r in removed})
    documents = sorted({row.document for row in removed} - still_cited)
    store.remove_versions([row.version for row in removed], documents)
    return [_info(row, []) for row in removed]


__all__ = ["approximate", "carry_facts", "diff_documents", "prune_versions", "record_version",
           "source_versions", "verdict_chain", "verdict_steps"]
