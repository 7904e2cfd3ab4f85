"""LlamaIndex: a store's chunks as ``Document``s or ``TextNode``s (:class:`KgDecoderReader`), and the
trace of such a node or of a quote in an answer back to verified boxes.
``pip install 'kg-decoder[llamaindex]'`` (llama-index-core).

    >>> import kg_decoder
    >>> from kg_decoder.integrations.llamaindex import KgDecoderReader
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme sells anvils.", store=store)
    ...     _ = kg_decoder.chunk_document(decoded.document, store=store)
    ...     [node] = KgDecoderReader(store).load_nodes()
    >>> (node.text, node.start_char_idx, node.end_char_idx, node.metadata["page"])
    ('Acme sells anvils.', 0, 18, None)
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Sequence

from llama_index.core.readers.base import BaseReader
from llama_index.core.schema import Document, NodeRelationship, RelatedNodeInfo, TextNode

from ..model import TraceSource
from .chunks import TRACE_KEYS, StoreLike, boxes_of, chunk_records, trace_chunk, trace_quote


class KgDecoderReader(BaseReader):
    """The chunks of ``documents`` (IRIs or names; default: every document of the store).
    ``load_data`` gives one ``Document`` a chunk, ``load_nodes`` one ``TextNode`` a chunk whose source is
    its document (``id_`` the chunk's IRI). Metadata: ``source``, ``file_name``, ``page_label`` (as
    LlamaIndex's PDF reader: the 1-based page as text), ``page`` (0-based) and ``page_number``,
    ``chunk_iri``, ``document_iri`` and ``boxes``; ``start_char_idx``/``end_char_idx`` are the chunk
    body's offsets in the document's text. The trace keys are kept out of the text embedded and handed
    to a model."""

    def __init__(self, store: StoreLike, documents: Optional[Sequence[str]] = None) -> None:
        self.store = store
        self.documents = list(documents) if documents else None

    def _fields(self, documents: Optional[Sequence[str]]) -> list[dict]:
        found = []
        for record in chunk_records(documents or self.documents, store=self.store):
            metadata = dict(record.metadata)
            metadata["file_name"] = metadata["source"]
            if metadata.get("page_number") is not None:
                metadata["page_label"] = str(metadata["page_number"])
            found.append(dict(id_=metadata["chunk_iri"], text=record.text, metadata=metadata,
                              start_char_idx=record.start, end_char_idx=record.end,
                              excluded_embed_metadata_keys=list(TRACE_KEYS),
                              excluded_llm_metadata_keys=list(TRACE_KEYS)))
        return found

    def load_data(self, documents: Optional[Sequence[str]] = None, **_: Any) -> list[Document]:
        return [Document(**fields) for fields in self._fields(documents)]

    def load_nodes(self, documents: Optional[Sequence[str]] = None) -> list[TextNode]:
        nodes = []
        for fields in self._fields(documents):
            node = TextNode(**fields)
            node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=fields["metadata"]["document_iri"])
            nodes.append(node)
        return nodes


def trace_node(node: Any, store: StoreLike) -> list[TraceSource]:
    """Where a loaded or retrieved node (a ``TextNode``, a ``NodeWithScore``'s node, a ``Document``) comes
    from: its words on their pages, with boxes."""
    return trace_chunk(getattr(node, "node", node), store=store)


def trace_answer_quote(quote: str, store: StoreLike, nodes: Iterable[Any] = (), limit: int = 1) -> list[TraceSource]:
    """Where a quote in an answer comes from: in the nodes the answer was given first (a response's
    ``source_nodes``), then in every document of the store; each place with its boxes."""
    return trace_quote(quote, [getattr(n, "node", n) for n in nodes], store=store, limit=limit)


__all__ = ["KgDecoderReader", "boxes_of", "trace_answer_quote", "trace_node"]
