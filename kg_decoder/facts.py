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

import json
import os
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Iterable, Optional, Sequence, Union

from pyoxigraph import BlankNode, Literal, NamedNode, RdfFormat, Triple, parse

from .versions import software_versions
from .errors import InvalidFact, InvalidSpan, UnknownEntity
from .rdf_mapping import FactRecord, SpanGroup, fact_quads
from .store import KgStore, open_store

Term = Union[NamedNode, Literal]
TripleLike = Union[Triple, Sequence[Any]]
SpanLike = Union[None, str, Sequence[int], dict]

_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*$")
_FILE_FORMATS = {".ttl": RdfFormat.TURTLE, ".nt": RdfFormat.N_TRIPLES, ".jsonl": "jsonl", ".ndjson": "jsonl"}


@dataclass
class FactsResult:
    chunk: str
    status: str  # "added" or "unchanged"
    facts: int
    subgraphs: list[str]


def add_facts(chunk: str, triples: Iterable[TripleLike], spans: Optional[Sequence[SpanLike]] = None, *,
              store: Union[KgStore, str, os.PathLike], extractor: Optional[str] = None) -> FactsResult:
    """Store ``triples`` extracted from ``chunk`` (an IRI), each tied to its span where ``spans`` gives one.

    A triple is a pyoxigraph ``Triple`` or ``(s, p, o)`` with terms or strings (s and
    p IRIs; o an IRI written ``<...>``, else a plain literal). A span is ``None``,
    ``(start, end)`` in the chunk's text, ``{"start": .., "end": ..}``, or a quote
    (``"..."`` or ``{"quote": ..}``) that must occur exactly once in the chunk
    (runs of whitespace match any whitespace). Raises UnknownEntity, InvalidFact or
    InvalidSpan, and then stores nothing.
    """
    if not isinstance(store, KgStore):
        store = open_store(store)
    facts = [to_triple(item, number) for number, item in enumerate(triples, start=1)]
    if not facts:
        raise InvalidFact("no triples given")
    if spans is not None and len(spans) != len(facts):
        raise InvalidSpan(f"{len(spans)} spans for {len(facts)} triples: give one span (or None) per triple")
    started = datetime.now(timezone.utc)
    rows = store.select("chunk_info", chunk=chunk)
    if not rows:
        raise UnknownEntity(f"no chunk {chunk} in the store")
    text = store.library.get(rows[0]["sha256"]).decode("utf-8")
    groups: dict[Optional[tuple[int, int]], list[Triple]] = {}
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
    if all(store.select("entity_types", entity=iri) for iri in subgraphs):
        return FactsResult(chunk, "unchanged", len(facts), subgraphs)
    store.write(fact_quads(record), {})
    return FactsResult(chunk, "added", len(facts), subgraphs)


def read_facts(path: Union[str, os.PathLike], data: Optional[bytes] = None,
               format: Optional[str] = None) -> tuple[list[Triple], Optional[list[SpanLike]]]:
    """Triples (and spans, for JSON lines) from a Turtle, N-Triples or JSON lines file.

    A JSON line is ``{"s": .., "p": .., "o": .., "start": .., "end": ..}`` or with
    ``"quote"``; ``o`` may also be a SPARQL JSON term (``{"type": "literal", ...}``).
    """
    name = os.fspath(path)
    kind = format or _FILE_FORMATS.get(os.path.splitext(name)[1].lower())
    if kind is None:
        raise InvalidFact(f"cannot tell the format of {name}: use .ttl, .nt or .jsonl")
    if data is None:
        try:
            with open(name, "rb") as stream:
                data = stream.read()
        except OSError as exc:
            raise InvalidFact(f"cannot read {name}: {exc.strerror or exc}") from None
    if kind in ("jsonl", "json"):
        return _read_json_lines(data)
    rdf_format = {"ttl": RdfFormat.TURTLE, "turtle": RdfFormat.TURTLE, "nt": RdfFormat.N_TRIPLES}.get(kind, kind)
    try:
        quads = list(parse(input=data, format=rdf_format))
    except (SyntaxError, ValueError) as exc:
        raise InvalidFact(f"{name} does not parse: {str(exc).splitlines()[0]}") from None
    triples = [to_triple(Triple(q.subject, q.predicate, q.object), n) for n, q in enumerate(quads, start=1)]
    return triples, None


def _read_json_lines(data: bytes) -> tuple[list[Triple], list[SpanLike]]:
    triples, spans = [], []
    try:
        lines = data.decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise InvalidFact("the JSON lines file is not UTF-8") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InvalidFact(f"line {number} is not JSON: {exc}") from None
        if not isinstance(item, dict) or not {"s", "p", "o"} <= item.keys():
            raise InvalidFact(f"line {number} needs the keys s, p and o")
        triples.append(to_triple((item["s"], item["p"], item["o"]), number))
        if "quote" in item:
            spans.append({"quote": item["quote"]})
        elif "start" in item or "end" in item:
            spans.append({"start": item.get("start"), "end": item.get("end")})
        else:
            spans.append(None)
    return triples, spans


def to_triple(item: TripleLike, number: int = 1) -> Triple:
    """A checked triple from a Triple or an (s, p, o) of terms or strings.

    >>> to_triple(("http://ex.org/a", "http://ex.org/knows", "<http://ex.org/b>")).object
    <NamedNode value=http://ex.org/b>
    >>> to_triple(("http://ex.org/a", "knows", "b"))
    Traceback (most recent call last):
    ...
    kg_decoder.errors.InvalidFact: triple 1: the predicate 'knows' is not an absolute IRI
    """
    if isinstance(item, Triple):
        subject, predicate, obj = item.subject, item.predicate, item.object
    else:
        try:
            subject, predicate, obj = item
        except (TypeError, ValueError):
            raise InvalidFact(f"triple {number}: expected (subject, predicate, object), got {item!r:.80}") from None
    subject = _iri(subject, "subject", number)
    predicate = _iri(predicate, "predicate", number)
    obj = _object(obj, number)
    return Triple(subject, predicate, obj)


def _iri(value: Any, role: str, number: int) -> NamedNode:
    if isinstance(value, NamedNode):
        return value
    if isinstance(value, BlankNode):
        raise InvalidFact(f"triple {number}: the {role} is a blank node; facts need IRIs to be traced")
    if isinstance(value, str):
        text = value[1:-1] if value.startswith("<") and value.endswith(">") else value
        if _IRI.match(text):
            return NamedNode(text)
    raise InvalidFact(f"triple {number}: the {role} {value!r:.80} is not an absolute IRI")


def _object(value: Any, number: int) -> Term:
    if isinstance(value, (NamedNode, Literal)):
        return value
    if isinstance(value, BlankNode):
        raise InvalidFact(f"triple {number}: the object is a blank node; facts need IRIs or literals")
    if isinstance(value, str):
        if value.startswith("<") and value.endswith(">"):
            return _iri(value, "object", number)
        return Literal(value)
    if isinstance(value, bool) or not isinstance(value, (dict, int, float)):
        raise InvalidFact(f"triple {number}: the object {value!r:.80} is not an IRI or a literal")
    if isinstance(value, (int, float)):
        return Literal(value)
    kind, text = value.get("type"), value.get("value")
    if not isinstance(text, str):
        raise InvalidFact(f"triple {number}: the object term has no string value")
    if kind == "uri":
        return _iri(text, "object", number)
    if kind in ("literal", "typed-literal"):
        try:
            if value.get("xml:lang"):
                return Literal(text, language=value["xml:lang"])
            if value.get("datatype"):
                return Literal(text, datatype=_iri(value["datatype"], "datatype", number))
        except ValueError as exc:
            raise InvalidFact(f"triple {number}: {exc}") from None
        return Literal(text)
    raise InvalidFact(f"triple {number}: an object term must be of type uri or literal, not {kind!r}")


def resolve_span(text: str, span: SpanLike, number: int = 1) -> Optional[tuple[int, int]]:
    """``(start, end)`` in ``text`` for a span or quote; None for no span.

    >>> resolve_span("The cat sat on the mat.", {"quote": "sat  on"})
    (8, 14)
    >>> resolve_span("a b a", "a")
    Traceback (most recent call last):
    ...
    kg_decoder.errors.InvalidSpan: fact 1: the quote 'a' occurs 2 times in the chunk; give start and end
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


def quote_pattern(quote: str) -> re.Pattern:
    """A quote as a pattern in which any run of whitespace matches any run of whitespace.

    >>> quote_pattern("a  b").fullmatch("a\\n b") is not None
    True
    """
    return re.compile(r"\s+".join(re.escape(word) for word in quote.split()))


def _find_quote(text: str, quote: Any, number: int) -> tuple[int, int]:
    if not isinstance(quote, str) or not quote.strip():
        raise InvalidSpan(f"fact {number}: a quote must be non-empty text")
    matches = [(m.start(), m.end()) for m in quote_pattern(quote).finditer(text)]
    if not matches:
        raise InvalidSpan(f"fact {number}: the quote {quote!r:.60} does not occur in the chunk")
    if len(matches) > 1:
        raise InvalidSpan(f"fact {number}: the quote {quote!r:.60} occurs {len(matches)} times in the chunk; "
                          f"give start and end")
    return matches[0]


__all__ = ["FactsResult", "add_facts", "read_facts", "resolve_span", "to_triple"]
