"""Chunk documents already in the store: TextDocuments in, cited chunks out.

Reads each page/section text from the library and its elements from the graph, cuts the text
with :mod:`kg_decoder.cite.chunker`, gives every chunk its citation anchors (each page it
touches, the union box of its elements there, and whether the page's second reading bore those
boxes out when the document was decoded) and writes the run in one transaction,
replacing an earlier chunking of the same document.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional, Union

from ..graph.library import sha256_hex
from ..graph.quads import as_nquads
from ..graph.run_mapping import Anchoring, ChunkRecord, anchoring_quads, chunk_quads, chunking_activity_iri
from ..graph.rows import ChunkRow, DetachedSubgraph, PageInfo, TextElement
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import (Anchor, BBox, Chunk, ChunkAnchor, ChunkOptions, ChunkResult, ChunkStatus, ChunkView,
                     ProgressCallback, Verification, options_from, report, software_versions)
from ..model.errors import UnknownEntity
from .chunker import Heading, chunk_text
from .quotes import FoldedText, find_quote

BUILD_CHUNKS = "kg_decoder.cite.chunks:build_chunks"


@dataclass
class ChunkText:
    """One page, section or picture's OCR text to chunk."""

    segment: str
    kind: str
    page_number: Optional[int]
    text: str


@dataclass
class ChunkInputs:
    """What chunking one document needs from the store (read by the store's owner)."""

    document: str
    decode_activity: str
    options: ChunkOptions
    versions: dict[str, str]
    started: datetime
    texts: list[ChunkText]
    elements: list[TextElement]
    pages: list[PageInfo]


@dataclass
class BuiltChunks:
    nquads: bytes
    quad_count: int
    blobs: dict[str, bytes]
    chunks: int


@with_store(read_only=False)
def chunk_document(document: str, *, store: Union[KgStore, StorePath], options: Optional[ChunkOptions] = None,
                   progress: Optional[ProgressCallback] = None, in_worker: bool = False,
                   **option_values) -> ChunkResult:
    """Chunk a decoded document (by IRI) in ``store``; ``options`` is a :class:`ChunkOptions`
    (its fields may also be given as keywords).

    Transactional: the chunks, their anchors and the run are written in one transaction. The
    same settings over the same decode leave the store untouched ("unchanged"); other settings
    replace the earlier chunks. ``in_worker`` runs the cutting and mapping in the worker
    process, so this process only reads the inputs and commits (what the web server does).

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"One sentence. Another one.", store=store)
    ...     chunked = chunk_document(decoded.document, store=store, chunk_size=64)
    ...     (chunked.status, chunked.chunks)
    ('chunked', 1)
    """
    settings = options_from(ChunkOptions, options, option_values)
    decode_activity = _decode_activity(store, document)
    versions = software_versions()
    wanted = chunking_activity_iri(decode_activity, settings, versions)
    held = store.chunking_runs(document)
    if held == [wanted]:
        return ChunkResult(document, ChunkStatus.UNCHANGED, len({c.chunk for c in store.document_chunks(document)}))
    texts = [ChunkText(segment=s.segment, kind=s.kind, page_number=s.page_number, text=store.text(s.sha256, s.segment))
             for s in store.text_segments(document)]
    inputs = ChunkInputs(document=document, decode_activity=decode_activity, options=settings, versions=versions,
                         started=datetime.now(timezone.utc), texts=texts,
                         elements=store.document_text_elements(document), pages=store.document_pages(document))
    if in_worker:
        from ..decode.worker import shared_worker

        built = shared_worker().call(BUILD_CHUNKS, inputs, progress=progress,
                                     crash="the worker crashed while chunking")
    else:
        built = build_chunks(inputs, progress)
    report(progress, "write quads", 0, built.quad_count, f"write {built.quad_count} quads of chunks")
    store.write_chunks(document, built.nquads, built.blobs, replace=bool(held))
    report(progress, "write quads", built.quad_count, built.quad_count, f"wrote {built.quad_count} quads of chunks")
    anchor_detached_facts(store, document)
    return ChunkResult(document, ChunkStatus.CHUNKED, built.chunks, built.quad_count)


def anchor_detached_facts(store: KgStore, document: str) -> int:
    """Anchor again the facts a later decode or chunking of ``document`` detached from their chunks:
    each in the chunk that holds the words it was grounded to (the chunk of the same IRI at the same
    span where the chunking made it again, else the first chunk whose text holds them); a fact no
    chunk holds stays detached (``audit-facts-without-chunk`` lists it). Returns how many were anchored."""
    detached = store.detached_subgraphs(document)
    if not detached:
        return 0
    chunks = store.document_chunks(document)
    texts = {chunk.chunk: store.text(chunk.sha256, chunk.chunk) for chunk in chunks}
    folded: dict[str, FoldedText] = {}  # each chunk's text folded once, for every fact looked for in it
    anchorings = [_anchoring(row, document, chunks, texts, folded) for row in detached]
    store.anchor_detached(document, anchoring_quads(anchorings))
    return sum(item.detached_from is None for item in anchorings)


def _anchoring(row: DetachedSubgraph, document: str, chunks: list[ChunkRow], texts: dict[str, str],
               folded: dict[str, FoldedText]) -> Anchoring:
    span = None if row.char_offset is None or row.char_length is None else \
        (row.char_offset, row.char_offset + row.char_length)
    if row.text:
        same = texts.get(row.chunk)
        if same is not None and span is not None and same[span[0]:span[1]] == row.text:
            return Anchoring(row.subgraph, row.chunk, span)
        for chunk in chunks:
            if chunk.chunk not in folded:
                folded[chunk.chunk] = FoldedText(texts[chunk.chunk])
            found = find_quote(texts[chunk.chunk], row.text, folded[chunk.chunk])
            if found:
                return Anchoring(row.subgraph, chunk.chunk, found[0])
    return Anchoring(row.subgraph, document, span, detached_from=row.chunk)


def build_chunks(inputs: ChunkInputs, progress: Optional[ProgressCallback] = None) -> BuiltChunks:
    """Cut the texts into chunks with their anchors and map them to quads (pure: no store)."""
    segments, blobs, hashes = _chunk_segments(inputs, progress)
    record = ChunkRecord(document=inputs.document, decode_activity=inputs.decode_activity, options=inputs.options,
                         segments=segments, chunk_sha256=hashes, started=inputs.started,
                         ended=datetime.now(timezone.utc), versions=inputs.versions)
    quads = chunk_quads(record)
    return BuiltChunks(nquads=as_nquads(quads), quad_count=len(quads), blobs=blobs,
                       chunks=sum(len(chunks) for _, chunks, _ in segments))


@with_store(read_only=True)
def document_chunks(document: str, *, store: Union[KgStore, StorePath]) -> list[ChunkView]:
    """The chunks the store holds for a document, in order, with their text and anchors.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"One sentence. Another one.", store=store)
    ...     _ = chunk_document(decoded.document, store=store)
    ...     [view.text for view in document_chunks(decoded.document, store=store)]
    ['One sentence. Another one.']
    """
    if not store.has_document(document):
        raise UnknownEntity(f"no document {str(document):.200} in the store")
    views = {row.chunk: ChunkView(
        iri=row.chunk, document=document, segment=row.segment, index=row.chunk_index,
        char_offset=row.char_offset, char_length=row.char_length, prefix_length=row.prefix_length,
        tokens=row.token_count, text=store.text(row.sha256, row.chunk),
        heading_path=row.heading_path) for row in store.document_chunks(document)}
    for row in store.document_chunk_anchors(document):
        views[row.chunk].anchors.append(ChunkAnchor(page_number=row.page_number, page=row.page, bbox=row.bbox,
                                                    page_width=row.page_width, page_height=row.page_height,
                                                    coordinate_system=row.coordinate_system,
                                                    verification=Verification(row.verification or "unverified")))
    return sorted(views.values(), key=lambda view: view.index)


def _decode_activity(store: KgStore, document: str) -> str:
    if not store.has_document(document):
        raise UnknownEntity(f"no decoded document {str(document):.200} in the store")
    activities = [state.activity for state in store.document_states(document) if state.activity]
    if not activities:
        raise UnknownEntity(f"no decoded document {document} in the store")
    return activities[0]


def _chunk_segments(inputs: ChunkInputs, progress: Optional[ProgressCallback] = None):
    settings = inputs.options
    elements_by_segment: dict[str, list[TextElement]] = {}
    for element in inputs.elements:
        elements_by_segment.setdefault(element.segment, []).append(element)
    pages = {page.page_number: page for page in inputs.pages}
    segments, blobs, hashes = [], {}, []
    earlier_headings: list[Heading] = []
    texts = inputs.texts
    for number, item in enumerate(texts, start=1):
        report(progress, "chunk", number - 1, len(texts), f"chunk {item.kind} {number} of {len(texts)}")
        text = item.text
        elements = elements_by_segment.get(item.segment, [])
        tables = [(e.char_offset, e.char_offset + e.char_length) for e in elements if e.category == "Table"]
        headings = [Heading(e.char_offset, e.heading_depth or 0,
                            text[e.char_offset:e.char_offset + e.char_length].strip()[:200])
                    for e in elements if e.category == "Title"]
        if item.kind == "image":  # a picture's words stand apart from the headings of the text around it
            chunks = chunk_text(text, settings, tables, [])
        else:
            chunks = chunk_text(text, settings, tables, [Heading(-1, h.depth, h.title) for h in earlier_headings]
                                + headings)
            earlier_headings = _open_headings(earlier_headings + headings)
        anchors = [_anchors(chunk, elements, pages, item.page_number) for chunk in chunks]
        segment_hashes = []
        for chunk in chunks:
            data = chunk.text.encode("utf-8")
            key = sha256_hex(data)
            blobs[key] = data
            segment_hashes.append(key)
        segments.append((item.segment, chunks, anchors))
        hashes.append(segment_hashes)
    report(progress, "chunk", len(texts), len(texts), f"{sum(len(c) for _, c, _ in segments)} chunks")
    return segments, blobs, hashes


def _open_headings(headings: list[Heading]) -> list[Heading]:
    """The headings still in force after these: the last of each depth, deeper ones closed."""
    stack: list[Heading] = []
    for heading in headings:
        stack = [h for h in stack if h.depth < heading.depth] + [heading]
    return stack


def _anchors(chunk: Chunk, elements: list[TextElement], pages: dict[int, PageInfo],
             segment_page: Optional[int]) -> list[Anchor]:
    """Each page the chunk's body touches, with the union box of its elements on that page and how far
    a second reading of the page bore their boxes out when they were decoded; where the boxes come
    from the document's rendering, each page of the rendering they are on."""
    boxes: dict[int, Optional[BBox]] = {}
    rendered: dict[int, tuple[Optional[BBox], TextElement]] = {}
    checks: dict[tuple[bool, int], list[Optional[str]]] = {}
    for element in elements:
        start, end = element.char_offset, element.char_offset + element.char_length
        if end <= chunk.start or start >= chunk.end:
            continue
        if element.rendered_page_number is not None:
            number = element.rendered_page_number
            rendered[number] = (_union(rendered.get(number, (None,))[0], element.bbox), element)
        else:
            number = element.page_number if element.page_number is not None else segment_page
            if number is None:
                continue
            boxes[number] = _union(boxes.get(number), element.bbox)
        checks.setdefault((element.rendered_page_number is not None, number), []).append(_checked(element))
    if not boxes and not rendered and segment_page is not None:
        boxes[segment_page] = None
    anchors = []
    for number in sorted(boxes):
        page = pages.get(number)
        verification = _verification(checks.get((False, number), [])) if boxes[number] else Verification.UNVERIFIED
        anchors.append(Anchor(page_number=number, page_iri=page.page if page else None, bbox=boxes[number],
                              page_width=page.page_width if page else None,
                              page_height=page.page_height if page else None,
                              coordinate_system=page.coordinate_system if page else None, verification=verification))
    for number in sorted(rendered):
        box, element = rendered[number]
        same = pages.get(number) if element.page_number == number else None  # a slide is its rendered page
        anchors.append(Anchor(page_number=number, page_iri=same.page if same else None, bbox=box,
                              page_width=element.page_width, page_height=element.page_height,
                              coordinate_system=element.coordinate_system,
                              verification=_verification(checks[(True, number)])))
    return anchors


def _checked(element: TextElement) -> Optional[str]:
    """How an element's box was checked when it was decoded (a word OCR read is its own reading's)."""
    if element.bbox is None:
        return None
    return Verification.VERIFIED if element.category == "OcrWord" else element.verification


def _verification(checks: list[Optional[str]]) -> Verification:
    """An anchor's box, the union of boxes checked so: verified when all were, ``element`` when the page
    did not bear one out, else unverified (no reading could check one)."""
    if checks and all(check == Verification.VERIFIED for check in checks):
        return Verification.VERIFIED
    if Verification.ELEMENT in checks:
        return Verification.ELEMENT
    return Verification.UNVERIFIED


def _union(first: Optional[BBox], second: Optional[BBox]) -> Optional[BBox]:
    if first is None or second is None:
        return first or second
    return (min(first[0], second[0]), min(first[1], second[1]), max(first[2], second[2]), max(first[3], second[3]))


__all__ = ["ChunkResult", "ChunkView", "chunk_document", "document_chunks"]
