"""A store's chunks as framework-neutral records (text and metadata), and the trace of such a record
or of a quote in an answer back to its page and verified boxes. Imports no framework."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from ..cite.chunks import document_chunks
from ..cite.search import search
from ..cite.trace import trace
from ..cite.documents import document_named
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import TraceSource, to_jsonable

# Metadata a framework should neither embed nor hand a model (IRIs and boxes are for the trace).
TRACE_KEYS = ("chunk_iri", "document_iri", "segment_iri", "boxes", "chunk_index", "prefix_length")


@dataclass
class ChunkRecord:
    """One chunk: its text as stored (what an extractor reads: the heading prefix, then the body) and its
    metadata. ``start``/``end`` are the body's offsets in the document's text (None for a picture's
    text, which is not part of it)."""

    text: str
    metadata: dict
    start: Optional[int]
    end: Optional[int]


@with_store(read_only=True)
def chunk_records(documents: Optional[Sequence[str]] = None, *, store: Union[KgStore, StorePath]
                  ) -> list[ChunkRecord]:
    """Every chunk of ``documents`` (IRIs or names; default: every document of the store), in order.

    ``metadata``: ``source`` (the file's name as decoded, else the document IRI), ``page`` (0-based,
    as LangChain's PDF loaders count) and ``page_number`` (1-based, as the store and unstructured
    count) of the chunk's first page, ``chunk_iri``, ``document_iri``, ``segment_iri``, ``chunk_index``,
    ``prefix_length`` and ``boxes`` (each page's box of the chunk: ``page_number``, ``left``, ``top``,
    ``right``, ``bottom``, ``page_width``, ``page_height``, ``coordinate_system``, ``verification``).
    """
    chosen = [document_named(d, store) for d in documents] if documents else sorted(
        {summary.document for summary in store.document_summaries()})
    records = []
    for document in chosen:
        info = store.document_info(document)
        offsets = {row.segment: row.char_offset for row in store.text_segments(document)}
        for view in document_chunks(document, store=store):
            boxes = [{"page_number": a.page_number, **_box(a.bbox), "page_width": a.page_width,
                      "page_height": a.page_height, "coordinate_system": a.coordinate_system,
                      "verification": str(a.verification)} for a in view.anchors]
            pages = sorted({a.page_number for a in view.anchors})
            base = offsets.get(view.segment)
            start = None if base is None else base + view.char_offset
            metadata = {"source": (info.file_name if info is not None and info.file_name else document),
                        "page": pages[0] - 1 if pages else None, "page_number": pages[0] if pages else None,
                        "chunk_iri": view.iri, "document_iri": document, "segment_iri": view.segment,
                        "chunk_index": view.index, "prefix_length": view.prefix_length, "boxes": boxes}
            if view.heading_path:
                metadata["heading_path"] = view.heading_path
            records.append(ChunkRecord(view.text, metadata, start, None if start is None else start + view.char_length))
    return records


@with_store(read_only=True)
def search_records(query: str, *, store: Union[KgStore, StorePath], limit: int = 4) -> list[ChunkRecord]:
    """The chunks that hold ``query`` (:func:`kg_decoder.search`: the quote in every document, ranked),
    one record a chunk, at most ``limit``."""
    found: list[ChunkRecord] = []
    by_document: dict[str, dict[str, ChunkRecord]] = {}
    for hit in search(query, store=store, limit=max(limit * 4, 10)).hits:
        if hit.document not in by_document:
            by_document[hit.document] = {r.metadata["chunk_iri"]: r for r in chunk_records([hit.document], store=store)}
        for row in store.segment_chunks(hit.segment):
            if row.char_offset <= hit.start and hit.end <= row.char_offset + row.char_length:
                record = by_document[hit.document].get(row.chunk)
                if record is not None and all(r.metadata["chunk_iri"] != row.chunk for r in found):
                    found.append(record)
                break
        if len(found) >= limit:
            break
    return found


def metadata_of(item: Any) -> Mapping:
    """The metadata of a LangChain Document, a LlamaIndex node or a dict of either's metadata."""
    metadata = getattr(item, "metadata", item)
    if not isinstance(metadata, Mapping) or "chunk_iri" not in metadata:
        raise ValueError("not a kg-decoder chunk: its metadata has no chunk_iri")
    return metadata


@with_store(read_only=True)
def trace_chunk(item: Any, *, store: Union[KgStore, StorePath]) -> list[TraceSource]:
    """The trace of a chunk handed out as a framework's document (or its metadata): its body's words on
    their pages, with their boxes (verified where a second reading of the page finds them)."""
    metadata = metadata_of(item)
    text = store.text(store.chunk_info(metadata["chunk_iri"]).sha256, metadata["chunk_iri"])
    return trace(span=(metadata["chunk_iri"], int(metadata.get("prefix_length") or 0), len(text)), store=store)


@with_store(read_only=True)
def trace_quote(quote: str, documents: Iterable[Any] = (), *, store: Union[KgStore, StorePath],
                limit: int = 1) -> list[TraceSource]:
    """Where a quote in an answer comes from: looked for first in the documents of the chunks the answer
    was given (a framework's documents, or their metadata), then in every document; its places with
    their boxes (at most ``limit``), empty where no document holds it."""
    for document in dict.fromkeys(metadata_of(item)["document_iri"] for item in documents):
        sources = trace(quote=quote, document=document, store=store, limit=limit)
        if sources:
            return sources
    return trace(quote=quote, store=store, limit=limit)


def boxes_of(sources: Iterable[TraceSource]) -> list[dict]:
    """The boxes of traced places as plain dicts (JSON-ready)."""
    return [to_jsonable(box) for source in sources for box in source.boxes]


def _box(bbox) -> dict:
    keys = ("left", "top", "right", "bottom")
    return dict(zip(keys, bbox)) if bbox is not None else dict.fromkeys(keys)


StoreLike = Union[KgStore, str, os.PathLike]

__all__ = ["ChunkRecord", "StoreLike", "TRACE_KEYS", "boxes_of", "chunk_records", "metadata_of", "search_records",
           "trace_chunk", "trace_quote"]
