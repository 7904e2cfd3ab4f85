"""A new version of a source, recorded when its bytes change: its diff with the version before, and every
fact cited to the version before carried to it with a verdict (current, moved, changed, removed).

:func:`kg_decoder.versions.decode` calls :func:`record_version` after each top-level decode that names a
source: the same document as the source's latest version changes nothing; other bytes make version n+1,
which ``prov:wasRevisionOf`` version n, with a ``tg:Revision`` (the diff's counts) and the verdicts it
gives the facts, in one transaction. The document itself was committed before (content-addressed, as
any decode): a process killed between the two leaves the source at its old version, and the next
decode of the same bytes records the version.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

from ..cite.diff import align, count
from ..cite.quotes import FoldedText, find_quote
from ..cite.versions import VersionText, version_info
from ..graph.store import KgStore
from ..graph.version_mapping import VersionRecord, source_iri, version_quads
from ..graph.version_reads import SourceVersionRow
from ..model import DiffEntry, DiffOp, DiffSide, FactVerdictRecord, Verdict, VersionInfo, software_versions
from ..model.errors import InvalidOption
from .changed_quotes import approximate

_source_locks: dict[str, threading.Lock] = {}
_source_locks_lock = threading.Lock()


def record_version(store: KgStore, source_id: str, document: str) -> VersionInfo:
    """Make ``document`` the latest version of ``source_id`` unless it is already (one transaction)."""
    if not isinstance(source_id, str) or not source_id.strip() or len(source_id) > 4096:
        raise InvalidOption("a source id is non-empty text of at most 4096 characters")
    with _source_locks_lock:
        lock = _source_locks.setdefault(source_id, threading.Lock())
    with lock:  # versions of one source one after the other (parallel decodes)
        rows = store.versions.source_versions(source_iri(source_id))
        latest = next((row for row in rows if row.latest), None)
        if latest is not None and latest.document == document:
            return version_info(latest, rows)
        started = datetime.now(timezone.utc)
        record = VersionRecord(source_id=source_id, number=max((row.number for row in rows), default=0) + 1,
                               document=document, generated=started, versions=software_versions(), started=started)
        if latest is not None:
            record.previous = latest.version
            old, new = VersionText.read(store, latest.document), VersionText.read(store, document)
            entries = align(old.sides, new.sides, with_edits=False)  # the verdicts need no character edits
            record.counts = count(entries)
            record.verdicts = carry_facts(store, latest, old, new, entries)
        record.generated = datetime.now(timezone.utc)
        store.write_version(record.source, version_quads(record))
        return _info_of_record(record)


def _info_of_record(record: VersionRecord) -> VersionInfo:
    facts = record.fact_counts() if record.previous is not None else {}
    return VersionInfo(source=record.source_id, version=record.iri, number=record.number, document=record.document,
                       generated=record.generated.isoformat(), latest=True, previous=record.previous,
                       counts=record.counts, facts=facts, new=True)


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


def _live_facts(store: KgStore, previous: SourceVersionRow, old: VersionText) -> list[_Fact]:
    """The facts the previous version holds (those its verdicts carried to it, those an extractor
    cited to its own chunks) and those it judged removed, to be looked for again (a document edited
    back: its facts hold again). A removed fact has no place in the previous version (``segment``
    None): its text and page are the last that held it."""
    facts: dict[str, _Fact] = {}
    gave_verdict = set()
    for row in store.versions.version_verdicts(previous.version):
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
    for row in store.versions.document_fact_spans(previous.document):
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


def carry_facts(store: KgStore, previous: SourceVersionRow, old: VersionText, new: VersionText,
                entries: list[DiffEntry]) -> list[FactVerdictRecord]:
    """A verdict for every fact the previous version holds, found again in the new version's text."""
    places = _Places(old, new, entries)
    folded_texts = {segment: FoldedText(text) for segment, text in new.texts.items()}
    return [_verdict(fact, old, new, places, folded_texts) for fact in _live_facts(store, previous, old)]


class _Places:
    """Where an old element's place is in the new version: its aligned element, and the run of new
    elements between the nearest elements before and after it that kept their order."""

    def __init__(self, old: VersionText, new: VersionText, entries: list[DiffEntry]) -> None:
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


def _verdict(fact: _Fact, old: VersionText, new: VersionText, places: _Places,
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


def _across_two_elements(record: FactVerdictRecord, fact: _Fact, new: VersionText,
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


def _joined(new: VersionText, first: DiffSide, second: DiffSide) -> tuple[str, list[tuple[str, int, int, int]]]:
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


def _found(record: FactVerdictRecord, verdict: Verdict, new: VersionText, segment: str, start: int, end: int,
           page: Optional[int]) -> FactVerdictRecord:
    record.verdict = verdict
    record.segment, record.start, record.end = segment, start, end
    record.text = new.texts[segment][start:end]
    record.page_number = page
    return record


__all__ = ["carry_facts", "record_version"]
