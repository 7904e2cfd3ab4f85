"""Chunk documents already in the store: TextDocuments in, cited chunks out.

Reads each page/section text from the library and its elements from the graph,
cuts the text with :mod:`chunking`, gives every chunk its citation anchors (each
page it touches and the union box of its elements there) and writes the run in
one transaction, replacing an earlier chunking of the same document.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Optional, Union

from pyoxigraph import RdfFormat, serialize

from .chunking import Chunk, ChunkOptions, Heading, chunk_text
from .versions import software_versions
from .errors import UnknownEntity
from .library import sha256_hex
from .model import Anchor, BBox
from .progress import ProgressCallback, report
from .rdf_mapping import ChunkRecord, chunk_quads, chunking_activity_iri
from .store import KgStore, open_store


@dataclass
class ChunkView:
    """A chunk as handed downstream (``--emit jsonl``): its text, where its body sits, its anchors."""

    iri: str
    document: str
    segment: str
    index: int
    char_offset: int
    char_length: int
    prefix_length: int
    tokens: int
    text: str
    heading_path: Optional[str] = None
    anchors: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {
            "iri": self.iri,
            "document": self.document,
            "segment": self.segment,
            "chunk_index": self.index,
            "char_offset": self.char_offset,
            "char_length": self.char_length,
            "prefix_length": self.prefix_length,
            "tokens": self.tokens,
            "heading_path": self.heading_path,
            "anchors": self.anchors,
            "text": self.text,
        }


@dataclass
class ChunkResult:
    document: str
    status: str  # "chunked" or "unchanged"
    chunks: int
    quads: int = 0


@dataclass
class ChunkInputs:
    """What chunking one document needs from the store (read by the store's owner)."""

    document: str
    decode_activity: str
    options: ChunkOptions
    versions: dict[str, str]
    started: datetime
    texts: list[dict]  # the text_documents rows, each with its "text"
    elements: list[dict]  # the document_text_elements rows
    pages: list[dict]  # the document_pages rows


@dataclass
class BuiltChunks:
    nquads: bytes
    quad_count: int
    blobs: dict[str, bytes]
    chunks: int


def chunk_document(document: str, *, store: Union[KgStore, str, os.PathLike],
                   progress: Optional[ProgressCallback] = None, worker=None, **options) -> ChunkResult:
    """Chunk a decoded document (by IRI) in ``store``; options are those of :class:`ChunkOptions`.

    The same settings over the same decode leave the store untouched ("unchanged");
    other settings replace the earlier chunks in one transaction. With a ``worker``
    (:class:`kg_decoder.worker.PartitionWorker`) the cutting and mapping run in it, and
    this process only reads the inputs and commits (what the web server does).
    """
    settings = ChunkOptions(**options)
    if not isinstance(store, KgStore):
        store = open_store(store)
    decode_activity = _decode_activity(store, document)
    versions = software_versions()
    wanted = chunking_activity_iri(decode_activity, settings, versions)
    held = [row["activity"] for row in store.select("chunk_state", document=document)]
    if held == [wanted]:
        return ChunkResult(document, "unchanged", len({row["chunk"] for row in store.select("document_chunks",
                                                                                               document=document)}))
    texts = store.select("text_documents", document=document)
    for row in texts:
        row["text"] = store.library.get(row["sha256"]).decode("utf-8")
    inputs = ChunkInputs(document=document, decode_activity=decode_activity, options=settings, versions=versions,
                         started=datetime.now(timezone.utc), texts=texts,
                         elements=store.select("document_text_elements", document=document),
                         pages=store.select("document_pages", document=document))
    built = worker.build_chunks(inputs, progress) if worker is not None else build_chunks(inputs, progress)
    report(progress, "write quads", 0, built.quad_count, f"write {built.quad_count} quads of chunks")
    store.write_serialized(built.nquads, built.blobs, ("delete_chunks", {"document": document}) if held else None)
    report(progress, "write quads", built.quad_count, built.quad_count, f"wrote {built.quad_count} quads of chunks")
    return ChunkResult(document, "chunked", built.chunks, built.quad_count)


def build_chunks(inputs: ChunkInputs, progress: Optional[ProgressCallback] = None) -> BuiltChunks:
    """Cut the texts into chunks with their anchors and map them to quads (pure: no store)."""
    segments, blobs, hashes = _chunk_segments(inputs, progress)
    record = ChunkRecord(document=inputs.document, decode_activity=inputs.decode_activity, options=inputs.options,
                         segments=segments, chunk_sha256=hashes, started=inputs.started,
                         ended=datetime.now(timezone.utc), versions=inputs.versions)
    quads = chunk_quads(record)
    return BuiltChunks(nquads=serialize(quads, format=RdfFormat.N_QUADS), quad_count=len(quads), blobs=blobs,
                       chunks=sum(len(chunks) for _, chunks, _ in segments))


def document_chunks(document: str, *, store: Union[KgStore, str, os.PathLike]) -> list[ChunkView]:
    """The chunks the store holds for a document, in order, with their text and anchors."""
    if not isinstance(store, KgStore):
        store = open_store(store)
    views = {row["chunk"]: ChunkView(
        iri=row["chunk"], document=document, segment=row["segment"], index=row["chunkIndex"],
        char_offset=row["charOffset"], char_length=row["charLength"], prefix_length=row["prefixLength"],
        tokens=row["tokenCount"], text=store.library.get(row["sha256"]).decode("utf-8"),
        heading_path=row.get("headingPath")) for row in store.select("document_chunks", document=document)}
    for row in store.select("document_chunk_anchors", document=document):
        anchor = {"page_number": row["pageNumber"], "page": row.get("page")}
        if "left" in row:
            anchor["bbox"] = [row["left"], row["top"], row["right"], row["bottom"]]
            anchor.update(page_width=row.get("pageWidth"), page_height=row.get("pageHeight"),
                          coordinate_system=row.get("coordinateSystem"))
        views[row["chunk"]].anchors.append(anchor)
    return sorted(views.values(), key=lambda view: view.index)


def _decode_activity(store: KgStore, document: str) -> str:
    rows = [row for row in store.select("document_state", document=document) if "activity" in row]
    if not rows:
        raise UnknownEntity(f"no decoded document {document} in the store")
    return rows[0]["activity"]


def _chunk_segments(inputs: ChunkInputs, progress: Optional[ProgressCallback] = None):
    settings = inputs.options
    elements_by_segment: dict[str, list[dict]] = {}
    for row in inputs.elements:
        elements_by_segment.setdefault(row["segment"], []).append(row)
    pages = {row["pageNumber"]: row for row in inputs.pages}
    segments, blobs, hashes = [], {}, []
    earlier_headings: list[Heading] = []
    texts = inputs.texts
    for number, row in enumerate(texts, start=1):
        report(progress, "chunk", number - 1, len(texts), f"chunk {row['kind']} {number} of {len(texts)}")
        text = row["text"]
        elements = elements_by_segment.get(row["segment"], [])
        tables = [(e["charOffset"], e["charOffset"] + e["charLength"]) for e in elements if e["category"] == "Table"]
        headings = [Heading(e["charOffset"], e.get("headingDepth", 0), text[e["charOffset"]:e["charOffset"]
                    + e["charLength"]].strip()[:200]) for e in elements if e["category"] == "Title"]
        chunks = chunk_text(text, settings, tables, [Heading(-1, h.depth, h.title) for h in earlier_headings]
                            + headings)
        earlier_headings = _open_headings(earlier_headings + headings)
        anchors = [_anchors(chunk, elements, pages, row.get("pageNumber")) for chunk in chunks]
        segment_hashes = []
        for chunk in chunks:
            data = chunk.text.encode("utf-8")
            key = sha256_hex(data)
            blobs[key] = data
            segment_hashes.append(key)
        segments.append((row["segment"], chunks, anchors))
        hashes.append(segment_hashes)
    report(progress, "chunk", len(texts), len(texts), f"{sum(len(c) for _, c, _ in segments)} chunks")
    return segments, blobs, hashes


def _open_headings(headings: list[Heading]) -> list[Heading]:
    """The headings still in force after these: the last of each depth, deeper ones closed."""
    stack: list[Heading] = []
    for heading in headings:
        stack = [h for h in stack if h.depth < heading.depth] + [heading]
    return stack


def _anchors(chunk: Chunk, elements: list[dict], pages: dict[int, dict], segment_page: Optional[int]) -> list[Anchor]:
    """Each page the chunk's body touches, with the union box of its elements on that page."""
    boxes: dict[int, Optional[BBox]] = {}
    for element in elements:
        start, end = element["charOffset"], element["charOffset"] + element["charLength"]
        if end <= chunk.start or start >= chunk.end:
            continue
        number = element.get("pageNumber", segment_page)
        if number is None:
            continue
        box = (element["left"], element["top"], element["right"], element["bottom"]) if "left" in element else None
        boxes[number] = _union(boxes.get(number), box)
    if not boxes and segment_page is not None:
        boxes[segment_page] = None
    anchors = []
    for number in sorted(boxes):
        page = pages.get(number, {})
        anchors.append(Anchor(page_number=number, page_iri=page.get("page"), bbox=boxes[number],
                              page_width=page.get("pageWidth"), page_height=page.get("pageHeight"),
                              coordinate_system=page.get("coordinateSystem")))
    return anchors


def _union(first: Optional[BBox], second: Optional[BBox]) -> Optional[BBox]:
    if first is None or second is None:
        return first or second
    return (min(first[0], second[0]), min(first[1], second[1]), max(first[2], second[2]), max(first[3], second[3]))


__all__ = ["ChunkResult", "ChunkView", "chunk_document", "document_chunks"]
