"""kg-decoder: decode documents of every common format into a knowledge graph of provenance.

    >>> import kg_decoder
    >>> callable(kg_decoder.decode) and callable(kg_decoder.open_store) and callable(kg_decoder.trace)
    True
"""

from .chunk_pipeline import ChunkResult, ChunkView, chunk_document, document_chunks
from .chunking import ChunkOptions
from .crawler import CrawlOptions, CrawlResult, crawl
from .decoder import DecodeResult, decode
from .errors import (
    CorruptDocument,
    DecodeError,
    DecodeTimeout,
    DocumentTooLarge,
    EmptyDocument,
    EncryptedDocument,
    FetchFailed,
    InvalidFact,
    InvalidOption,
    InvalidSpan,
    KgDecoderError,
    MalformedQuery,
    ModelUnavailable,
    ProvenanceError,
    QueryError,
    ServiceNotAllowed,
    StoreError,
    StoreLocked,
    UnknownEntity,
    UnsafeDocument,
    UnsupportedFormat,
)
from .facts import FactsResult, add_facts, read_facts
from .model import DecodeOptions, TextDocument
from .store import KgStore, open_store
from .trace import Box, TracedElement, TraceSource, trace, web_annotations

__all__ = [
    "KgDecoderError",
    "MalformedQuery",
    "QueryError",
    "ServiceNotAllowed",
    "StoreLocked",
    "Box",
    "ChunkOptions",
    "CrawlOptions",
    "CrawlResult",
    "crawl",
    "FetchFailed",
    "ChunkResult",
    "ChunkView",
    "FactsResult",
    "InvalidFact",
    "InvalidSpan",
    "ProvenanceError",
    "TraceSource",
    "TracedElement",
    "UnknownEntity",
    "add_facts",
    "chunk_document",
    "document_chunks",
    "read_facts",
    "trace",
    "web_annotations",
    "CorruptDocument",
    "DecodeError",
    "DecodeOptions",
    "DecodeResult",
    "DecodeTimeout",
    "DocumentTooLarge",
    "EmptyDocument",
    "EncryptedDocument",
    "InvalidOption",
    "KgStore",
    "ModelUnavailable",
    "StoreError",
    "TextDocument",
    "UnsafeDocument",
    "UnsupportedFormat",
    "decode",
    "open_store",
]
