"""The data model every stage shares: options, the records a decode works on, results, errors.

Plain dataclasses and enums; no RDF, no store, no I/O. Every other stage imports from here.
"""

from .document import (HEADING_SEPARATOR, NO_TEXT_FOUND, PDF_POINTS, PIXELS, PROBLEM_CODES, RENDERED_PDF_POINTS, Anchor,
                       BBox, Cell, Chunk, Element, ElementSpan, ImageText, Matrix, OcrWord, Page, Partitioned, Problem,
                       Rendering, Segment)
from .errors import (CorruptDocument, CpuLimit, DecodeError, DecodeTimeout, DocumentTooLarge, EmptyDocument,
                     EncryptedDocument, ExtractorFailed, ExtractorOutputTooLarge, ExtractorTimeout,
                     ExtractorUnavailable, FetchFailed, Forbidden, InvalidFact, InvalidOption, InvalidSpan, KgDecoderError,
                     LimitExceeded, LoadNotAllowed, MalformedQuery, MalformedUpdate, MemoryLimit, ModelUnavailable,
                     NotAcceptable, NotFound, ProvenanceError, QueryError, QueryTimeout, QueryTooComplex, RequestError,
                     ServerBusy, ServiceNotAllowed, StoreError, StoreLocked, TimeLimit, TooManyRows, UnknownEntity,
                     UnknownStore, UnreadableFile, UnsafeDocument, UnsupportedFormat, WorkCrashed, WorkerUnavailable)
from .options import (IMAGE_OCR_MODES, PDF_READERS, SECTION_STRATEGIES, STRATEGIES, TOKENIZER, ChunkOptions,
                      CrawlOptions, DecodeOptions, options_from)
from .page_text import PageChar, PageText, Reading, folded_letters, middle_within
from .progress import Progress, ProgressCallback, report
from .results import (Audit, ChunkAnchor, ChunkResult, ChunkStatus, ChunkView, CrawledPage, CrawlResult, CrawlStatus,
                      DecodeResult, DecodeStatus, ElementOffset, EmbeddedResult, ExtractFailure, ExtractResult,
                      FactLineOutcome, FactLinesResult, FactsResult, FactsStatus, Grounding, ImageInfo, JsonResult,
                      PartitionSource, Rows, TextDocument, ValidationReport, Verification, Violation, to_jsonable)
from .traces import (Box, DocumentRef, QuotePiece, SearchHit, SearchResults, TracedCell, TracedElement, TraceSource,
                     cell_label)
from .revisions import (DiffCounts, DiffEntry, DiffOp, DiffSide, FactVerdictRecord, Verdict, VerdictStep,
                        VersionDiff, VersionInfo)
from .versions import software_versions
