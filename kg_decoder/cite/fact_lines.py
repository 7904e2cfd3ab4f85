"""Facts in bulk: lines of an extractor's output, each grounded in the text it names, stored in batches.

A line is a JSON object with ``s``, ``p``, ``o`` (as :func:`kg_decoder.graph.terms.to_triple` reads
them) and where to look for its evidence: ``chunk`` (an IRI), or only ``document`` (an IRI, or a name
:func:`kg_decoder.cite.documents.document_named` reads), or neither (the text index finds the chunk
that holds the quote). The evidence is ``quote`` (or ``start``/``end`` in a named chunk's text); a line
without either is grounded from its subject's and object's labels (``subject_label``/``object_label``,
else the IRIs' last parts and the literal's text). Each line gets a verdict
(:mod:`kg_decoder.cite.grounding`): ``exact``, ``normalised``, ``fuzzy``, ``inferred`` or
``unsupported``; an unsupported fact is stored too, with its verdict and evidence and no span. A line
that cannot be read (not JSON, a bad term, an unknown chunk or document, nothing to ground it in) is
refused with its line number and reason; the others still go in. Each batch of lines is one
transaction.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from contextlib import nullcontext
from datetime import datetime, timezone
from typing import Any, Callable, ContextManager, Iterable, Optional, Union

from ..graph.opening import with_store
from ..graph.run_mapping import GroundedFactsRecord, GroundedGroup, grounded_fact_quads
from ..graph.store import KgStore, StorePath
from ..graph.terms import to_triple
from ..model import FactLineOutcome, FactLinesResult, Grounding, KgDecoderError, ProgressCallback, report, \
    software_versions
from ..model.errors import InvalidFact, RequestCancelled, RequestError, TimeLimit
from .documents import document_named
from .grounding import FUZZY_AT_LEAST, Grounded, GroundingText, ground, ground_in_one, infer, label_of, quote_words
from .places import MAX_QUOTE_CHARACTERS, ranked_places

BATCH_LINES = 2000  # lines a transaction: 10^4 facts in five
MAX_LINES = 1_000_000
_CACHED_CHUNKS = 512
_FUZZY_LOOKUPS = 3  # the quote's rarest-looking words the text index is asked for, a fuzzy quote with no place
_FUZZY_TEXTS = 16  # texts read for each
_FIND_SECONDS = 5.0  # the text index's search for a line that names no chunk nor document
_RANK = {Grounding.EXACT: 0, Grounding.NORMALISED: 1, Grounding.INFERRED: 2, Grounding.FUZZY: 3,
         Grounding.UNSUPPORTED: 4}

FactLines = Union[str, os.PathLike, bytes, Iterable[Any]]


@with_store(read_only=False)
def add_fact_lines(lines: FactLines, *, store: Union[KgStore, StorePath], extractor: Optional[str] = None,
                   batch_lines: int = BATCH_LINES, progress: Optional[ProgressCallback] = None,
                   read_files: bool = True, at_least: float = FUZZY_AT_LEAST,
                   lock: Optional[Callable[[], ContextManager]] = None,
                   cancelled: Optional[Callable[[], bool]] = None) -> FactLinesResult:
    """Ground and store facts in bulk: ``lines`` is the path of a JSON lines file, its bytes, or the
    lines themselves (dicts, or JSON texts). Each batch of ``batch_lines`` lines is one transaction
    (a batch the store already holds, the same lines added again, is left as it is). ``progress``
    hears ("facts", lines done, lines). ``read_files``: a ``document`` may name a file on this machine
    (a web server passes False). InvalidFact only when the file as a whole cannot be read.

    ``lock()`` gives what is held while a batch is written (a server's write lock): only the write,
    so that other writers get the store between batches while the next batch is grounded (grounding
    reads the store as it is). ``cancelled()`` true between batches stops with RequestCancelled (the
    batches written stay; the same lines added again skip them).

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme had a revenue of 12 M in 2023. It sells anvils.", store=store)
    ...     _ = kg_decoder.chunk_document(decoded.document, store=store)
    ...     result = add_fact_lines([
    ...         {"s": "http://ex.org/acme", "p": "http://ex.org/revenue", "o": "12 M", "quote": "revenue of 12 M"},
    ...         {"s": "http://ex.org/acme", "p": "http://ex.org/sells", "o": "anvils", "document": decoded.document,
    ...          "quote": "Acme sells anvils to coyotes"},
    ...         {"s": "http://ex.org/acme", "p": "knows"}], store=store)
    >>> result.counts["exact"], result.counts["unsupported"], [(r.line, r.reason) for r in result.refused]
    (1, 1, [(3, 'needs the keys s, p and o')])
    """
    items = _read_lines(lines)
    if not isinstance(batch_lines, int) or isinstance(batch_lines, bool) or batch_lines < 1:
        raise InvalidFact("batch_lines must be a whole number of lines, at least 1")
    loader = FactLoader(store, read_files, at_least)
    outcomes: list[FactLineOutcome] = []
    batches = unchanged = 0
    versions = software_versions()
    report(progress, "facts", 0, len(items), f"{len(items)} lines")
    for first in range(0, len(items), batch_lines):
        if cancelled is not None and cancelled():
            raise RequestCancelled(f"stopped after {first} of {len(items)} lines: the client went away")
        started = datetime.now(timezone.utc)
        batch_outcomes, groups = ground_lines(loader, items[first:first + batch_lines])
        outcomes += batch_outcomes
        if groups:
            record = GroundedFactsRecord(groups=list(groups.values()), extractor=extractor, started=started,
                                         ended=datetime.now(timezone.utc), versions=versions)
            batches += 1
            quads = grounded_fact_quads(record)
            with (lock() if lock is not None else nullcontext()):
                if store.entity_kinds(record.activity_iri):
                    unchanged += 1
                else:
                    store.write_quads(quads)
        done = min(first + batch_lines, len(items))
        report(progress, "facts", done, len(items), f"{done} of {len(items)} lines")
    counts = {str(g): 0 for g in Grounding}
    for outcome in outcomes:
        if outcome.grounding is not None:
            counts[str(outcome.grounding)] += 1
    refused = [o for o in outcomes if o.grounding is None]
    return FactLinesResult(lines=len(items), stored=len(outcomes) - len(refused), counts=counts, refused=refused,
                           outcomes=outcomes, batches=batches, unchanged=unchanged)


def ground_lines(loader: "FactLoader", items: Iterable[tuple[int, Any]]
                 ) -> tuple[list[FactLineOutcome], dict[str, GroundedGroup]]:
    """Each (line number, line) grounded: the outcomes in order, and the subgraphs to write (lines that
    agree on their source, span, grounding and evidence share one)."""
    groups: dict[str, GroundedGroup] = {}
    outcomes = []
    for number, item in items:
        outcome, group = loader.line(number, item)
        if group is not None:
            held = groups.setdefault(group.iri, group)
            if group.triples[0] not in held.triples:
                held.triples.append(group.triples[0])
            outcome.subgraph = held.iri
        outcomes.append(outcome)
    return outcomes, groups


def _read_lines(lines: FactLines) -> list[tuple[int, Any]]:
    """(line number, the line's object or the reason it is not one), blank lines left out."""
    if isinstance(lines, (str, os.PathLike)):
        name = os.fspath(lines)
        try:
            with open(name, "rb") as stream:
                lines = stream.read()
        except (OSError, ValueError) as exc:
            raise InvalidFact(f"cannot read {name[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    if isinstance(lines, bytes):
        try:
            lines = lines.decode("utf-8").split("\n")  # not splitlines(): JSON strings may hold U+2028
        except UnicodeDecodeError:
            raise InvalidFact("the JSON lines are not UTF-8") from None
    elif isinstance(lines, dict) or not hasattr(lines, "__iter__"):
        raise InvalidFact("give the fact lines as a file, its bytes, or a list of objects")
    items = []
    for number, line in enumerate(lines, start=1):
        if number > MAX_LINES:
            raise InvalidFact(f"more than {MAX_LINES} lines: split the file")
        if isinstance(line, str):
            if not line.strip():
                continue
            try:
                line = json.loads(line)
            except (ValueError, RecursionError) as exc:
                items.append((number, f"not JSON: {str(exc)[:80]}"))
                continue
        items.append((number, line if isinstance(line, dict) else _Refusal("a line is a JSON object")))
    return items


class _Refusal(str):
    """The reason a line was refused before it was looked at."""


class FactLoader:
    """What grounding many lines reads once: chunks and their texts, documents' chunks."""

    def __init__(self, store: KgStore, read_files: bool, at_least: float) -> None:
        self.store = store
        self.read_files = read_files
        self.at_least = at_least
        self._chunks: OrderedDict[str, Any] = OrderedDict()
        self._documents: dict[str, list[str]] = {}
        self._names: dict[str, str] = {}
        self._segment_chunks: dict[str, list] = {}

    def line(self, number: int, item: Any) -> tuple[FactLineOutcome, Optional[GroundedGroup]]:
        if isinstance(item, str):
            return FactLineOutcome(line=number, reason=str(item)), None
        try:
            return self._line(number, item)
        except KgDecoderError as exc:
            reason = str(exc)
            prefix = f"triple {number}: "
            return FactLineOutcome(line=number, reason=reason[len(prefix):] if reason.startswith(prefix) else reason), None

    def _line(self, number: int, item: dict) -> tuple[FactLineOutcome, Optional[GroundedGroup]]:
        if not {"s", "p", "o"} <= item.keys():
            raise InvalidFact("needs the keys s, p and o")
        triple = to_triple((item["s"], item["p"], item["o"]), number)
        quote = item.get("quote", item.get("evidence"))
        if quote is not None and (not isinstance(quote, str) or not quote.strip()):
            raise InvalidFact("a quote must be non-empty text")
        if quote is not None and len(quote) > MAX_QUOTE_CHARACTERS:
            raise InvalidFact(f"a quote may be {MAX_QUOTE_CHARACTERS} characters long, not {len(quote)}")
        chunk, document = item.get("chunk"), item.get("document")
        for key, value in (("chunk", chunk), ("document", document)):
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise InvalidFact(f"{key} must be an IRI (text)")
        labels = None
        if quote is None:
            labels = (_label(item, "subject_label", "s_label", triple.subject.value),
                      _label(item, "object_label", "o_label", triple.object.value))
        if chunk is not None:
            text = self._chunk_text(chunk)
            if "start" in item or "end" in item:
                grounded = self._offsets(text, item, quote)
            else:
                grounded = ground(text, quote, self.at_least) if quote is not None else infer(text, *labels)
            return self._placed(number, triple, chunk, chunk, grounded, text, quote)
        if "start" in item or "end" in item:
            raise InvalidFact("start and end are offsets in a chunk's text: name the chunk")
        if document is not None:
            iri = self._document(document)
            candidates = self._document_chunks(iri)
            if not candidates:
                raise InvalidFact(f"the document {iri:.200} has no chunks: chunk it first")
            texts = [self._chunk_text(candidate) for candidate in candidates]
            if quote is not None:  # the chunks whose words could hold it, best first (not every chunk)
                index, grounded = ground_in_one(texts, quote, self.at_least)
                index = 0 if index is None else index
            else:
                index, grounded = 0, None
                for k, text in enumerate(texts):
                    found = infer(text, *labels)
                    if grounded is None or _better(found, grounded):
                        index, grounded = k, found
            candidate, text = candidates[index], texts[index]
            if grounded.grounding == Grounding.UNSUPPORTED:
                return self._placed(number, triple, None, iri, grounded, None, quote)
            return self._placed(number, triple, candidate, candidate, grounded, text, quote)
        if quote is None:
            raise InvalidFact("no quote, chunk or document: nothing to ground it in")
        found = self._find(quote)
        if found is None:
            return self._placed(number, triple, None, None, Grounded(Grounding.UNSUPPORTED, score=0.0), None, quote)
        candidate, grounded, text = found
        if grounded.grounding == Grounding.UNSUPPORTED:
            return self._placed(number, triple, None, None, grounded, None, quote)
        return self._placed(number, triple, candidate, candidate, grounded, text, quote)

    def _placed(self, number: int, triple, chunk: Optional[str], source: Optional[str], grounded: Grounded,
                text: Optional[GroundingText], quote: Optional[str]) -> tuple[FactLineOutcome, GroundedGroup]:
        span = None if grounded.start is None else (grounded.start, grounded.end)
        words = text.text[span[0]:span[1]] if span is not None and text is not None else None
        score = grounded.score
        group = GroundedGroup(chunk=chunk, source=source, span=span, text=words, triples=[triple],
                              grounding=str(grounded.grounding), score=score, evidence=quote)
        reason = None
        if grounded.grounding == Grounding.UNSUPPORTED:
            reason = ("labels not in one sentence" if quote is None else
                      f"quote not found (best {score:.2f} < {self.at_least:g})" if score else "quote not found")
        outcome = FactLineOutcome(line=number, grounding=grounded.grounding, chunk=chunk, start=grounded.start,
                                  end=grounded.end, score=score, reason=reason)
        return outcome, group

    def _offsets(self, text: GroundingText, item: dict, quote: Optional[str]) -> Grounded:
        start, end = item.get("start"), item.get("end")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise InvalidFact("start and end must be integers")
        if not 0 <= start < end <= len(text.text):
            raise InvalidFact(f"the span {start}..{end} is not inside the chunk (0..{len(text.text)})")
        if quote is not None:  # both given: the quote must be what the offsets hold
            found = ground(GroundingText(text.text[start:end]), quote, self.at_least)
            if found.grounding == Grounding.UNSUPPORTED:
                return found
            return Grounded(found.grounding, start + found.start, start + found.end, found.score)
        return Grounded(Grounding.EXACT, start, end, 1.0)

    # ------------------------------------------------------------ reads, kept

    def _chunk_text(self, chunk: str) -> GroundingText:
        held = self._chunks.get(chunk)
        if held is None:
            info = self.store.chunk_info(chunk)
            if info is None:
                raise InvalidFact(f"no chunk {chunk:.200} in the store")
            held = GroundingText(self.store.text(info.sha256, chunk))
            held.info = info
            self._chunks[chunk] = held
            if len(self._chunks) > _CACHED_CHUNKS:
                self._chunks.popitem(last=False)
        else:
            self._chunks.move_to_end(chunk)
        return held

    def _document(self, name: str) -> str:
        if name not in self._names:
            self._names[name] = document_named(name, self.store, read_files=self.read_files)
        return self._names[name]

    def _document_chunks(self, document: str) -> list[str]:
        if document not in self._documents:
            self._documents[document] = [row.chunk for row in self.store.document_chunks(document)]
        return self._documents[document]

    def _chunks_of(self, segment: str) -> list:
        if segment not in self._segment_chunks:
            self._segment_chunks[segment] = self.store.segment_chunks(segment)
        return self._segment_chunks[segment]

    def _find(self, quote: str) -> Optional[tuple[str, Grounded, GroundingText]]:
        """The chunk that holds ``quote`` in the store, through the text index: where it is found as it
        is (the first place, ranked as written first), else the best fuzzy match in the chunks of the
        texts that hold the quote's rarest-looking words; None where the index names none."""
        try:
            ranked = ranked_places(self.store, quote, seconds=_FIND_SECONDS, wanted=1)
        except (RequestError, TimeLimit):
            ranked = None
        if ranked is not None:
            for place in ranked.places:
                for row in self._chunks_of(place.text.segment):
                    if row.char_offset <= place.start and place.end <= row.char_offset + row.char_length:
                        text = self._chunk_text(row.chunk)
                        grounded = ground(text, quote, self.at_least)
                        if grounded.grounding != Grounding.UNSUPPORTED:
                            return row.chunk, grounded, text
        best = None
        segments: list[str] = []
        for word in sorted(set(quote_words(quote)), key=lambda w: (-len(w), w))[:_FUZZY_LOOKUPS]:
            if len(word) < 4:
                break
            try:
                found = self.store.text_index.search(word, 0, _FUZZY_TEXTS)
            except (RequestError, TimeLimit):
                found = None
            for text in (found[0] if found else []):
                if text.segment not in segments:
                    segments.append(text.segment)
        for segment in segments:
            for row in self._chunks_of(segment):
                text = self._chunk_text(row.chunk)
                grounded = ground(text, quote, self.at_least)
                if best is None or _better(grounded, best[1]):
                    best = (row.chunk, grounded, text)
        return best


def _better(found: Grounded, than: Grounded) -> bool:
    return (_RANK[found.grounding], -(found.score or 0.0)) < (_RANK[than.grounding], -(than.score or 0.0))


def _label(item: dict, key: str, short: str, value: str) -> Optional[str]:
    given = item.get(key, item.get(short))
    if given is not None:
        if not isinstance(given, str):
            raise InvalidFact(f"{key} must be text")
        return given
    return label_of(value)


__all__ = ["BATCH_LINES", "FactLines", "FactLoader", "add_fact_lines", "ground_lines"]
