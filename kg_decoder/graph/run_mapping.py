"""The RDF mapping of the runs that follow a decode, and of where a document came from: a chunking run
with its chunks and anchors, facts with the spans they cite, a failed decode, a document's place in
the document it is embedded in, a web fetch."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from pyoxigraph import DefaultGraph, NamedNode, Quad, Triple

from ..model import HEADING_SEPARATOR, RENDERED_PDF_POINTS, TOKENIZER, Anchor, Chunk, ChunkOptions, DecodeOptions
from .identifiers import derived_iri
from .quads import (QuadWriter, activity_iri, bool_literal, describe_agent, describe_box, double_literal, int_literal,
                    text_literal, time_literal)
from .vocabulary import RDF_TYPE, dcterms, prov, tg


@dataclass
class ChunkRecord:
    """One chunking run over a document: per text-carrying segment, its chunks and their anchors."""

    document: str
    decode_activity: str
    options: ChunkOptions
    segments: list[tuple[str, list[Chunk], list[list[Anchor]]]]
    chunk_sha256: list[list[str]]
    started: datetime
    ended: datetime
    versions: dict[str, str]

    @property
    def activity_iri(self) -> str:
        return chunking_activity_iri(self.decode_activity, self.options, self.versions)

    def chunk_iri(self, segment_iri: str, position: int) -> str:
        return derived_iri("chunk", segment_iri, self.options.settings_key(), position)


# What a chunking run writes, as a number: a run written in another form is not the one wanted, so
# chunking again replaces it. 2: each chunk names the next of its text (tg:nextChunk).
CHUNK_GRAPH_FORM = 2


def chunking_activity_iri(decode_activity: str, options: ChunkOptions, versions: dict[str, str]) -> str:
    """The chunking run over one decode with these settings by these software versions."""
    return derived_iri("activity", "chunking", decode_activity, options.settings_key(), *sorted(versions.items()),
                       ("chunk graph form", CHUNK_GRAPH_FORM))


def chunk_quads(record: ChunkRecord) -> list[Quad]:
    """The chunking activity, every chunk with its offsets and token count, and its citation anchors."""
    out = QuadWriter()
    activity = NamedNode(record.activity_iri)
    options = record.options
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("Chunking"))
    out.add(activity, prov("used"), NamedNode(record.document))
    out.add(activity, prov("wasInformedBy"), NamedNode(record.decode_activity))
    out.add(activity, prov("wasAssociatedWith"), describe_agent(out, record.versions))
    out.add(activity, prov("startedAtTime"), time_literal(record.started))
    out.add(activity, prov("endedAtTime"), time_literal(record.ended))
    out.add(activity, tg("tokenizer"), text_literal(TOKENIZER))
    out.add(activity, tg("chunkSize"), int_literal(options.chunk_size))
    out.add(activity, tg("chunkOverlap"), int_literal(options.overlap))
    out.add(activity, tg("minChunkTokens"), int_literal(options.min_chunk_tokens))
    out.add(activity, tg("boundaryWindow"), int_literal(options.window))
    out.add(activity, tg("headingPrefix"), bool_literal(options.heading_prefix))
    index = 0
    for (segment_iri, chunks, anchors), hashes in zip(record.segments, record.chunk_sha256):
        segment = NamedNode(segment_iri)
        for position, (chunk, chunk_anchors, sha256) in enumerate(zip(chunks, anchors, hashes)):
            iri = record.chunk_iri(segment_iri, position)
            node = NamedNode(iri)
            out.add(node, RDF_TYPE, tg("Chunk"))
            out.add(node, prov("wasDerivedFrom"), segment)
            out.add(node, prov("wasGeneratedBy"), activity)
            out.add(node, tg("chunkIndex"), int_literal(index))
            out.add(node, tg("charOffset"), int_literal(chunk.start))
            out.add(node, tg("charLength"), int_literal(chunk.end - chunk.start))
            out.add(node, tg("prefixLength"), int_literal(len(chunk.prefix)))
            out.add(node, tg("tokenCount"), int_literal(chunk.tokens))
            out.add(node, tg("sha256"), text_literal(sha256))
            if position + 1 < len(chunks):
                out.add(node, tg("nextChunk"), NamedNode(record.chunk_iri(segment_iri, position + 1)))
            if chunk.heading_path:
                out.add(node, tg("headingPath"), text_literal(HEADING_SEPARATOR.join(chunk.heading_path)))
            for anchor in chunk_anchors:
                _describe_anchor(out, iri, anchor, activity)
            index += 1
    return out.quads


def _describe_anchor(out: QuadWriter, chunk_iri: str, anchor: Anchor, activity: NamedNode) -> None:
    # A chunk can have two anchors on one page number: its elements' own boxes there and the boxes a
    # rendering gave others (a slide's chart data and its drawn labels): two nodes, never one with two boxes.
    rendered = [RENDERED_PDF_POINTS] if anchor.coordinate_system == RENDERED_PDF_POINTS else []
    node = NamedNode(derived_iri("anchor", chunk_iri, anchor.page_number, *rendered))
    out.add(node, RDF_TYPE, tg("CitationAnchor"))
    out.add(node, prov("wasDerivedFrom"), NamedNode(chunk_iri))
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("pageNumber"), int_literal(anchor.page_number))
    if anchor.page_iri is not None:
        out.add(node, tg("page"), NamedNode(anchor.page_iri))
    if anchor.bbox is not None:
        describe_box(out, node, anchor.bbox, anchor.page_width, anchor.page_height, anchor.coordinate_system)
    out.add(node, tg("verification"), text_literal(str(anchor.verification)))


# ---------------------------------------------------------------- facts


@dataclass
class SpanGroup:
    """Triples that share one span of a chunk's text (``span`` None: the extractor gave none)."""

    span: Optional[tuple[int, int]]
    quote: Optional[str]
    triples: list[Triple]


@dataclass
class FactRecord:
    """One call of an extractor's facts for one chunk."""

    chunk: str
    groups: list[SpanGroup]
    extractor: Optional[str]
    started: datetime
    ended: datetime
    versions: dict[str, str]

    def subgraph_iri(self, group: SpanGroup) -> str:
        triples = sorted(str(t) for t in group.triples)
        return derived_iri("subgraph", self.chunk, group.span, *triples)

    @property
    def activity_iri(self) -> str:
        return derived_iri("activity", "extraction", *sorted(self.subgraph_iri(g) for g in self.groups))


def fact_quads(record: FactRecord) -> list[Quad]:
    """The facts in the default graph; their subgraphs and the extraction activity in the source graph."""
    out = QuadWriter()
    activity = NamedNode(record.activity_iri)
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("FactExtraction"))
    out.add(activity, prov("used"), NamedNode(record.chunk))
    out.add(activity, prov("startedAtTime"), time_literal(record.started))
    out.add(activity, prov("endedAtTime"), time_literal(record.ended))
    out.add(activity, prov("wasAssociatedWith"), describe_agent(out, record.versions))
    out.add_optional(activity, tg("extractor"), record.extractor, text_literal)
    for group in record.groups:
        node = NamedNode(record.subgraph_iri(group))
        out.add(node, RDF_TYPE, tg("Subgraph"))
        out.add(node, prov("wasDerivedFrom"), NamedNode(record.chunk))
        out.add(node, prov("wasGeneratedBy"), activity)
        if group.span is not None:
            out.add(node, tg("charOffset"), int_literal(group.span[0]))
            out.add(node, tg("charLength"), int_literal(group.span[1] - group.span[0]))
            out.add_optional(node, tg("text"), group.quote, text_literal)
        for triple in group.triples:
            out.add(node, tg("contains"), triple)
            out.quads.append(Quad(triple.subject, triple.predicate, triple.object, DefaultGraph()))
    return out.quads


@dataclass
class GroundedGroup:
    """Facts of one line (or of lines that agree) with the grounding of their evidence: ``chunk`` the
    chunk whose text was read (None: none held it), ``source`` what the subgraph derives from (the chunk,
    else the document the line named, else nothing), ``span`` in the chunk's text (None: unsupported),
    ``text`` the chunk's words at the span, ``evidence`` the quote as the extractor wrote it."""

    chunk: Optional[str]
    source: Optional[str]
    span: Optional[tuple[int, int]]
    text: Optional[str]
    triples: list[Triple]
    grounding: str
    score: Optional[float] = None
    evidence: Optional[str] = None

    @property
    def iri(self) -> str:
        triples = sorted(str(t) for t in self.triples)
        return derived_iri("subgraph", self.source or "", self.span, *triples, self.grounding, self.evidence or "")


@dataclass
class GroundedFactsRecord:
    """One batch of grounded facts (one transaction): their groups and the extraction run. ``used``: the
    chunks an extract step read, those that gave no fact too (so a resumed run skips them), and
    ``extractor_version`` the extractor's version (``kg-decoder extract``)."""

    groups: list[GroundedGroup]
    extractor: Optional[str]
    started: datetime
    ended: datetime
    versions: dict[str, str]
    extractor_version: Optional[str] = None
    used: list[str] = field(default_factory=list)

    @property
    def activity_iri(self) -> str:
        if self.extractor_version is None and not self.used:  # facts add FILE.jsonl: as it always was
            return derived_iri("activity", "extraction", *sorted(g.iri for g in self.groups))
        return derived_iri("activity", "extraction", self.extractor or "", self.extractor_version or "",
                           *sorted(self.used), *sorted(g.iri for g in self.groups))


def grounded_fact_quads(record: GroundedFactsRecord) -> list[Quad]:
    """The facts in the default graph; their subgraphs (each with ``tg:grounding``, a fuzzy match's
    ``tg:groundingScore``, the extractor's ``tg:evidence``) and the extraction run in the source graph."""
    out = QuadWriter()
    activity = NamedNode(record.activity_iri)
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("FactExtraction"))
    for chunk in sorted({g.chunk for g in record.groups if g.chunk is not None} | set(record.used)):
        out.add(activity, prov("used"), NamedNode(chunk))
    out.add(activity, prov("startedAtTime"), time_literal(record.started))
    out.add(activity, prov("endedAtTime"), time_literal(record.ended))
    out.add(activity, prov("wasAssociatedWith"), describe_agent(out, record.versions))
    out.add_optional(activity, tg("extractor"), record.extractor, text_literal)
    out.add_optional(activity, tg("extractorVersion"), record.extractor_version, text_literal)
    for group in record.groups:
        node = NamedNode(group.iri)
        out.add(node, RDF_TYPE, tg("Subgraph"))
        if group.source is not None:
            out.add(node, prov("wasDerivedFrom"), NamedNode(group.source))
        out.add(node, prov("wasGeneratedBy"), activity)
        if group.span is not None:
            out.add(node, tg("charOffset"), int_literal(group.span[0]))
            out.add(node, tg("charLength"), int_literal(group.span[1] - group.span[0]))
            out.add_optional(node, tg("text"), group.text, text_literal)
        out.add(node, tg("grounding"), text_literal(group.grounding))
        out.add_optional(node, tg("groundingScore"), group.score, double_literal)
        out.add_optional(node, tg("evidence"), group.evidence, text_literal)
        for triple in group.triples:
            out.add(node, tg("contains"), triple)
            out.quads.append(Quad(triple.subject, triple.predicate, triple.object, DefaultGraph()))
    return out.quads


@dataclass
class Anchoring:
    """Where a fact subgraph detached from its chunk is now: ``source`` the chunk that holds its words
    with its ``span`` there, or (``detached_from`` set) the document it stays detached under."""

    subgraph: str
    source: str
    span: Optional[tuple[int, int]] = None
    detached_from: Optional[str] = None


def anchoring_quads(anchorings: list[Anchoring]) -> list[Quad]:
    out = QuadWriter()
    for item in anchorings:
        node = NamedNode(item.subgraph)
        out.add(node, prov("wasDerivedFrom"), NamedNode(item.source))
        if item.detached_from is not None:
            out.add(node, tg("detachedFrom"), NamedNode(item.detached_from))
        if item.span is not None:
            out.add(node, tg("charOffset"), int_literal(item.span[0]))
            out.add(node, tg("charLength"), int_literal(item.span[1] - item.span[0]))
    return out.quads


# ---------------------------------------------------------------- failed decodes


@dataclass
class FailureRecord:
    """A decode that ended in a typed error: recorded (when asked) so an audit can list it."""

    sha256: str
    byte_size: int
    file_name: Optional[str]
    options: DecodeOptions
    code: str
    message: str
    started: datetime
    ended: datetime
    versions: dict[str, str]
    # The decoding of the document this one was embedded in, if it was.
    informed_by: Optional[str] = None

    @property
    def iri(self) -> str:
        return derived_iri("failure", self.sha256)


def failure_quads(record: FailureRecord, document: str) -> list[Quad]:
    """A tg:FailedDecoding run: what was tried on which bytes, and the error. No document entity."""
    out = QuadWriter()
    node = NamedNode(record.iri)
    out.add(node, RDF_TYPE, prov("Activity"))
    out.add(node, RDF_TYPE, tg("FailedDecoding"))
    out.add(node, tg("attemptedDocument"), NamedNode(document))
    out.add(node, tg("sha256"), text_literal(record.sha256))
    out.add(node, tg("byteSize"), int_literal(record.byte_size))
    out.add_optional(node, tg("fileName"), record.file_name, text_literal)
    out.add(node, tg("requestedStrategy"), text_literal(record.options.strategy))
    out.add(node, tg("settingsKey"), text_literal(record.options.settings_key()))
    out.add(node, tg("errorCode"), text_literal(record.code))
    out.add(node, tg("errorMessage"), text_literal(record.message))
    out.add(node, prov("startedAtTime"), time_literal(record.started))
    out.add(node, prov("endedAtTime"), time_literal(record.ended))
    out.add(node, prov("wasAssociatedWith"), describe_agent(out, record.versions))
    out.add_optional(node, prov("wasInformedBy"), record.informed_by, NamedNode)
    return out.quads


@dataclass(frozen=True)
class EmbeddingLink:
    """Where an embedded file sits: its parent document, the parent's page and element if known, its path there."""

    parent: str
    page: Optional[str]
    path: str
    element: Optional[str] = None


def embedding_quads(document: str, link: EmbeddingLink) -> list[Quad]:
    """A child document in its parent: tg:embeddedIn (a kind of prov:wasDerivedFrom), page and path.

    Not prov:wasDerivedFrom itself: everything derived from a document is found through that
    property, and a parent's pages and chunks do not include its attachments'.
    """
    out = QuadWriter()
    node = NamedNode(document)
    out.add(node, tg("embeddedIn"), NamedNode(link.parent))
    out.add_optional(node, tg("embeddedOn"), link.page, NamedNode)
    out.add_optional(node, tg("embeddedAt"), link.element, NamedNode)
    out.add(node, tg("embeddedPath"), text_literal(link.path))
    return out.quads


@dataclass(frozen=True)
class WebFetch:
    """How a document came from the web: its URL, when, the HTTP answer, and the page that linked to it."""

    url: str
    fetched: datetime
    status: int
    etag: Optional[str] = None
    last_modified: Optional[str] = None
    linked_from: Optional[str] = None  # the document IRI of the linking page


def fetch_quads(document: str, fetch: WebFetch) -> list[Quad]:
    """dcterms:source and the fetch (time, status, validators); tg:linkedFrom (a kind of prov:wasDerivedFrom)."""
    out = QuadWriter()
    node = NamedNode(document)
    out.add(node, dcterms("source"), NamedNode(fetch.url))
    out.add(node, tg("fetchedAt"), time_literal(fetch.fetched))
    out.add(node, tg("httpStatus"), int_literal(fetch.status))
    out.add_optional(node, tg("etag"), fetch.etag, text_literal)
    out.add_optional(node, tg("lastModified"), fetch.last_modified, text_literal)
    out.add_optional(node, tg("linkedFrom"), fetch.linked_from, NamedNode)
    return out.quads


def other_name_quads(document: str, file_name: str) -> list[Quad]:
    """tg:otherFileName: a name the same bytes came under after the document's first (tg:fileName)."""
    out = QuadWriter()
    out.add(NamedNode(document), tg("otherFileName"), text_literal(file_name))
    return out.quads


def origin_quads(document: str, origin) -> list[Quad]:
    """Where a document came from: an :class:`EmbeddingLink` or a :class:`WebFetch`."""
    return embedding_quads(document, origin) if isinstance(origin, EmbeddingLink) else fetch_quads(document, origin)


__all__ = ["ChunkRecord", "EmbeddingLink", "FactRecord", "FailureRecord", "GroundedFactsRecord", "GroundedGroup",
           "SpanGroup", "WebFetch", "chunk_quads", "chunking_activity_iri", "embedding_quads", "fact_quads", "failure_quads",
           "fetch_quads", "grounded_fact_quads", "origin_quads", "other_name_quads"]
