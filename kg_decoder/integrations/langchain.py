"""LangChain: a store's chunks as ``Document``s (:class:`KgDecoderLoader`), a retriever over
:func:`kg_decoder.search` (:class:`KgDecoderRetriever`), and the trace of such a document or of a quote
in an answer back to verified boxes. ``pip install 'kg-decoder[langchain]'`` (langchain-core).

    >>> import kg_decoder
    >>> from kg_decoder.integrations.langchain import KgDecoderLoader, trace_document
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme sells anvils.", store=store)
    ...     _ = kg_decoder.chunk_document(decoded.document, store=store)
    ...     [document] = KgDecoderLoader(store).load()
    ...     (document.page_content, document.metadata["chunk_iri"] == trace_document(document, store)[0].chunks[0])
    ('Acme sells anvils.', True)
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, Optional, Sequence

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.document_loaders import BaseLoader
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from ..model import TraceSource
from .chunks import StoreLike, boxes_of, chunk_records, search_records, trace_chunk, trace_quote


def _document(record) -> Document:
    return Document(page_content=record.text, metadata=dict(record.metadata), id=record.metadata["chunk_iri"])


class KgDecoderLoader(BaseLoader):
    """The chunks of ``documents`` (IRIs or names; default: every document of the store), one
    ``Document`` each: ``page_content`` the chunk's text, ``metadata`` with ``source``, ``page``
    (0-based, as PyPDFLoader), ``page_number`` (1-based), ``chunk_iri``, ``document_iri`` and ``boxes``.
    ``store`` is a KgStore or a store's location (opened read-only for each load)."""

    def __init__(self, store: StoreLike, documents: Optional[Sequence[str]] = None) -> None:
        self.store = store
        self.documents = list(documents) if documents else None

    def lazy_load(self) -> Iterator[Document]:
        for record in chunk_records(self.documents, store=self.store):
            yield _document(record)


class KgDecoderRetriever(BaseRetriever):
    """The chunks that hold the query's words as written (kg-decoder's quote search through its text
    index: a lexical retriever, no model), at most ``k``, as the loader gives them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    store: Any
    k: int = 4

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [_document(record) for record in search_records(query, store=self.store, limit=self.k)]


def trace_document(document: Document, store: StoreLike) -> list[TraceSource]:
    """Where a loaded or retrieved ``Document`` comes from: its words on their pages, with boxes."""
    return trace_chunk(document, store=store)


def trace_answer_quote(quote: str, store: StoreLike, documents: Iterable[Document] = (),
                       limit: int = 1) -> list[TraceSource]:
    """Where a quote in an answer comes from: in the documents the answer was given first, then in every
    document of the store; each place with its boxes (``boxes_of`` makes them JSON)."""
    return trace_quote(quote, documents, store=store, limit=limit)


__all__ = ["KgDecoderLoader", "KgDecoderRetriever", "boxes_of", "trace_answer_quote", "trace_document"]
