"""Facts from downstream extractors, tied to the chunk (and the span in it) they came from.

The triples go to the default graph. Their provenance goes to ``<urn:graph:source>``
with RDF 1.2 triple terms, TrustGraph's model: a ``tg:Subgraph`` that
``tg:contains <<( s p o )>>`` and ``prov:wasDerivedFrom`` the chunk. Triples that
share a span share a subgraph, which records the span (``tg:charOffset`` and
``tg:charLength`` in the chunk's text, and the quoted text). Everything is checked
before anything is written: a bad triple, an unknown chunk or a span that does not
resolve stores nothing.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Iterable, Optional, Sequence, Union

from ..graph.run_mapping import FactRecord, SpanGroup, fact_quads
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..graph.terms import SpanLike, TripleLike, read_facts, to_triple
from ..model import FactsResult, FactsStatus, software_versions
from ..model.errors import InvalidFact, InvalidSpan, UnknownEntity
from .quotes import find_quote


@with_store(read_only=False)
def add_facts(chunk: str, triples: Iterable[TripleLike], spans: Optional[Sequence[SpanLike]] = None, *,
              store: Union[KgStore, StorePath], extractor: Optional[str] = None) -> FactsResult:
    """Store ``triples`` extracted from ``chunk`` (an IRI), each tied to its span where ``spans`` gives one.

    A triple is a pyoxigraph ``Triple`` or ``(s, p, o)`` with terms or strings (s and
    p IRIs; o an IRI written ``<...>``, else a plain literal). A span is ``None``,
    ``(start, end)`` in the chunk's text, ``{"start": .., "end": ..}``, or a quote
    (``"..."`` or ``{"quote": ..}``) that must occur exactly once in the chunk
    (runs of whitespace match any whitespace). Transactional: everything is checked first,
    then the facts and their provenance are written in one transaction. Raises UnknownEntity,
    InvalidFact or InvalidSpan, and then stores nothing.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme had a revenue of 12 M.", store=store)
    ...     _ = kg_decoder.chunk_document(decoded.document, store=store)
    ...     chunk = kg_decoder.document_chunks(decoded.document, store=store)[0]
    ...     added = add_facts(chunk.iri, [("http://ex.org/acme", "http://ex.org/revenue", "12 M")],
    ...                       spans=[{"quote": "revenue of 12 M"}], store=store)
    ...     (added.status, added.facts)
    ('added', 1)
    """
    if not isinstance(chunk, str):
        raise UnknownEntity(f"a chunk is named by its IRI, not a {type(chunk).__name__}")
    if isinstance(triples, (str, bytes)) or not hasattr(triples, "__iter__"):
        raise InvalidFact("give the triples as a list of (subject, predicate, object)")
    facts = [to_triple(item, number) for number, item in enumerate(triples, start=1)]
    if not facts:
        raise InvalidFact("no triples given")
    if spans is not None and (isinstance(spans, (str, bytes)) or not hasattr(spans, "__len__")):
        raise InvalidSpan("give the spans as a list, one per triple")
    if spans is not None and len(spans) != len(facts):
        raise InvalidSpan(f"{len(spans)} spans for {len(facts)} triples: give one span (or None) per triple")
    started = datetime.now(timezone.utc)
    info = store.chunk_info(chunk)
    if info is None:
        raise UnknownEntity(f"no chunk {chunk:.200} in the store")
    text = store.text(info.sha256, chunk)
    groups: dict[Optional[tuple[int, int]], list] = {}
    for number, fact in enumerate(facts):
        span = resolve_span(text, spans[number] if spans is not None else None, number + 1)
        groups.setdefault(span, [])
        if fact not in groups[span]:
            groups[span].append(fact)
    record = FactRecord(chunk=chunk, groups=[SpanGroup(span, text[span[0]:span[1]] if span else None, members)
                                             for span, members in groups.items()],
                        extractor=extractor, started=started, ended=datetime.now(timezone.utc),
                        versions=software_versions())
    subgraphs = [record.subgraph_iri(group) for group in record.groups]
    if all(store.entity_kinds(iri) for iri in subgraphs):
        return FactsResult(chunk, FactsStatus.UNCHANGED, len(facts), subgraphs)
    store.write_quads(fact_quads(record))
    return FactsResult(chunk, FactsStatus.ADDED, len(facts), subgraphs)


def resolve_span(text: str, span: SpanLike, number: int = 1) -> Optional[tuple[int, int]]:
    """``(start, end)`` in ``text`` for a span or quote; None for no span.

    >>> resolve_span("The cat sat on the mat.", {"quote": "sat  on"})
    (8, 14)
    >>> resolve_span("a b a", "a")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidSpan: fact 1: the quote 'a' occurs 2 times in the chunk; give start and end
    """
    if span is None:
        return None
    if isinstance(span, str):
        span = {"quote": span}
    if isinstance(span, dict) and "quote" in span:
        return _find_quote(text, span["quote"], number)
    if isinstance(span, dict):
        start, end = span.get("start"), span.get("end")
    else:
        try:
            start, end = span
        except (TypeError, ValueError):
            raise InvalidSpan(f"fact {number}: a span is (start, end) or a quote, not {span!r:.80}") from None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise InvalidSpan(f"fact {number}: span start and end must be integers")
    if not 0 <= start < end <= len(text):
        raise InvalidSpan(f"fact {number}: the span {start}..{end} is not inside the chunk (0..{len(text)})")
    return start, end


def _find_quote(text: str, quote: Any, number: int) -> tuple[int, int]:
    if not isinstance(quote, str) or not quote.strip():
        raise InvalidSpan(f"fact {number}: a quote must be non-empty text")
    matches = find_quote(text, quote)
    if not matches:
        raise InvalidSpan(f"fact {number}: the quote {quote!r:.60} does not occur in the chunk")
    if len(matches) > 1:
        raise InvalidSpan(f"fact {number}: the quote {quote!r:.60} occurs {len(matches)} times in the chunk; "
                          f"give start and end")
    return matches[0]


__all__ = ["FactsResult", "add_facts", "read_facts", "resolve_span", "to_triple"]
