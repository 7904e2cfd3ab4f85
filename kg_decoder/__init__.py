"""kg-decoder: decode documents of every common format into a knowledge graph of provenance.

The public API: decode documents (and crawl sites) into a store, chunk them, add the facts an
extractor took from a chunk, trace a fact, span or quote back to its page and box, audit and
validate the store. Every error is a :class:`KgDecoderError` with a stable ``code``.

    >>> import kg_decoder
    >>> callable(kg_decoder.decode) and callable(kg_decoder.open_store) and callable(kg_decoder.trace)
    True
"""

from .cite.annotations import web_annotations
from .cite.chunks import chunk_document, document_chunks
from .cite.extract import extract
from .cite.fact_lines import add_fact_lines
from .cite.facts import add_facts, read_facts
from .cite.images import document_images, export_images
from .cite.search import search
from .cite.trace import trace
from .cite.versions import diff_documents, prune_versions, source_versions, verdict_chain
from .versions import decode
from .graph.remote_store import StoreConfig
from .graph.opening import open_store
from .graph.store import KgStore
from .graph.transfer import export_store, import_store
from .model import (Audit, Box, ChunkAnchor, ChunkOptions, ChunkResult, ChunkStatus, ChunkView, CrawledPage,
                    CrawlOptions, CrawlResult, CrawlStatus, DecodeOptions, DecodeResult, DecodeStatus, DocumentRef,
                    ElementOffset, EmbeddedResult, ExtractFailure, ExtractResult, FactLineOutcome, FactLinesResult, FactsResult, FactsStatus, Grounding,
                    ImageInfo, PartitionSource, Problem, Progress, QuotePiece, Rows, TextDocument, TracedCell, TracedElement, TraceSource, ValidationReport,
                    Verification, Violation, to_jsonable)
from .model.revisions import (DiffCounts, DiffEntry, DiffOp, DiffSide, FactVerdictRecord, Verdict, VerdictStep,
                              VersionDiff, VersionInfo)
from .model.errors import (BlobMissing, CorruptDocument, CpuLimit, DecodeError, DecodeTimeout, DocumentTooLarge, EmptyDocument,
                           EncryptedDocument, ExtractorFailed, ExtractorOutputTooLarge,
                           ExtractorTimeout, ExtractorUnavailable, FetchFailed, Forbidden, InvalidFact, InvalidOption, InvalidSpan,
                           KgDecoderError, LimitExceeded, LoadNotAllowed, MalformedQuery, MalformedUpdate, MemoryLimit,
                           ModelUnavailable, NotAcceptable, NotFound, ProvenanceError, QueryError, QueryTimeout,
                           QueryTooComplex, RequestError, ServerBusy, ServiceNotAllowed, StoreError, StoreLocked,
                           StoreUnsupported, TimeLimit, TooManyRows, UnknownEntity, UnknownStore, UnreadableFile, UnsafeDocument,
                           UnsupportedFormat, WorkCrashed, WorkerUnavailable)
from .quality.audits import audit_definitions, run_audits
from .quality.validation import validate
from .sources.crawl import crawl

__all__ = [
    # functions
    "add_fact_lines", "add_facts", "audit_definitions", "chunk_document", "crawl", "decode", "diff_documents", "document_chunks", "extract",
    "document_images", "prune_versions", "source_versions", "verdict_chain",
    "export_images", "export_store", "import_store", "open_store", "read_facts", "run_audits", "search", "to_jsonable", "trace", "validate", "web_annotations",
    # the store, options and results
    "Audit", "Box", "ChunkAnchor", "ChunkOptions", "ChunkResult", "ChunkStatus", "ChunkView", "CrawlOptions",
    "CrawlResult", "CrawlStatus", "CrawledPage", "DecodeOptions", "DecodeResult", "DecodeStatus", "DocumentRef",
    "ElementOffset", "EmbeddedResult", "ExtractFailure", "ExtractResult", "FactLineOutcome", "FactLinesResult", "FactsResult", "FactsStatus", "Grounding",
    "ImageInfo", "KgStore", "PartitionSource",
    "Problem", "Progress", "QuotePiece", "Rows", "StoreConfig", "TextDocument", "TraceSource", "TracedCell", "TracedElement", "ValidationReport",
    "Verification", "Violation", "DiffCounts", "DiffEntry", "DiffOp", "DiffSide", "FactVerdictRecord", "Verdict",
    "VerdictStep", "VersionDiff", "VersionInfo",
    # errors
    "BlobMissing", "CorruptDocument", "CpuLimit", "DecodeError", "DecodeTimeout", "DocumentTooLarge", "EmptyDocument", "EncryptedDocument",
    "ExtractorFailed", "ExtractorOutputTooLarge", "ExtractorTimeout", "ExtractorUnavailable", "FetchFailed", "Forbidden", "InvalidFact", "InvalidOption", "InvalidSpan", "KgDecoderError", "LimitExceeded",
    "LoadNotAllowed", "MalformedQuery", "MalformedUpdate", "MemoryLimit", "ModelUnavailable", "NotAcceptable", "NotFound",
    "ProvenanceError", "QueryError", "QueryTimeout", "QueryTooComplex", "RequestError", "ServerBusy", "ServiceNotAllowed",
    "StoreError", "StoreLocked", "StoreUnsupported", "TimeLimit", "TooManyRows", "UnknownEntity", "UnknownStore", "UnreadableFile", "UnsafeDocument",
    "UnsupportedFormat", "WorkCrashed", "WorkerUnavailable",
]
