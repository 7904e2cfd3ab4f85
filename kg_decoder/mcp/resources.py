"""The store's documents and chunks as MCP resources: each one's text with its IRI, page and boxes, so a
client can attach a source to a conversation."""

from __future__ import annotations

import json

from ..model.errors import UnknownEntity
from ..serve import document_iri
from .tools import MAX_TEXT_CHARACTERS, McpSettings, document_resource_uri


def document_text(settings: McpSettings, uuid: str) -> str:
    """A document's resource: its IRI, then each page or section with its IRI, page and text."""
    store = settings.store
    iri = document_iri(store, f"urn:document:{uuid}")
    [summary] = store.document_summaries(iri)
    record = {"document": iri, "file_name": summary.file_name, "title": summary.title, "format": summary.format,
              "segments": []}
    used = 0
    for segment in store.document_segments(iri):
        text = store.text(segment.sha256, segment.segment)
        if used + len(text) > MAX_TEXT_CHARACTERS:
            record["truncated"] = True
            break
        used += len(text)
        record["segments"].append({"segment": segment.segment, "kind": segment.kind,
                                   "page_number": segment.page_number, "text": text})
    return json.dumps(record, ensure_ascii=False)


def chunk_text(settings: McpSettings, uuid: str) -> str:
    """A chunk's resource: its IRI, document, page or section, text, and its anchors' boxes on the pages."""
    store = settings.store
    iri = f"urn:chunk:{uuid}"
    info = store.chunk_info(iri)
    if info is None:
        raise UnknownEntity(f"no chunk {iri[:200]} in the store")
    anchors = [{"page_number": row.page_number, "page": row.page, "bbox": list(row.bbox) if row.bbox else None,
                "page_width": row.page_width, "page_height": row.page_height,
                "coordinate_system": row.coordinate_system, "verification": row.verification or "unverified"}
               for row in store.document_chunk_anchors(info.document) if row.chunk == iri]
    text = store.text(info.sha256, iri)[:MAX_TEXT_CHARACTERS]
    return json.dumps({"chunk": iri, "document": info.document, "segment": info.segment,
                       "index": info.chunk_index, "anchors": anchors, "text": text}, ensure_ascii=False)


def listed_resources(settings: McpSettings, most: int = 1000) -> list[tuple[str, str, str]]:
    """(URI, name, description) of the documents and their chunks, at most ``most`` in all."""
    store = settings.store
    listed = []
    for summary in store.document_summaries():
        if len(listed) >= most:
            break
        name = summary.file_name or summary.document
        listed.append((document_resource_uri(summary.document), name,
                       f"{summary.format} document {summary.title or name}: its text by page or section"))
        for row in store.document_chunks(summary.document):
            if len(listed) >= most:
                break
            listed.append((document_resource_uri(row.chunk), f"{name} chunk {row.chunk_index}",
                           f"chunk {row.chunk_index} of {name}: its text and boxes on the pages"))
    return listed


# ---------------------------------------------------------------- SPARQL and audits


__all__ = ["chunk_text", "document_text", "listed_resources"]
