"""What a caller may choose: one frozen options object per kind of work, checked when made.

Every public function takes its options object (``options=DecodeOptions(...)``) or, as sugar,
the same fields as keywords; :func:`options_from` merges the two one way everywhere.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Optional, TypeVar

from .errors import InvalidOption
from .versions import software_versions

STRATEGIES = ("auto", "fast", "ocr_only", "hi_res")
IMAGE_OCR_MODES = ("auto", "on", "off")
PDF_READERS = ("pdfium", "unstructured")  # who reads a PDF page's text layer into elements
SECTION_STRATEGIES = ("whole-document", "heading", "element-type", "count", "size", "structure")
TOKENIZER = "cl100k_base"

Options = TypeVar("Options")


def options_from(kind: type[Options], given: Optional[Options], keywords: dict) -> Options:
    """``given`` (or the defaults) with ``keywords`` laid over it; an unknown keyword is InvalidOption.

    >>> options_from(ChunkOptions, None, {"chunk_size": 64}).chunk_size
    64
    >>> options_from(ChunkOptions, None, {"size": 64})
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidOption: ChunkOptions has no option 'size'
    """
    if given is not None and not isinstance(given, kind):
        raise InvalidOption(f"options must be a {kind.__name__}, not {type(given).__name__}")
    known = {field.name for field in fields(kind)}
    for name in keywords:
        if name not in known:
            raise InvalidOption(f"{kind.__name__} has no option {name!r}")
    try:
        return replace(given, **keywords) if given is not None else kind(**keywords)
    except TypeError as exc:
        raise InvalidOption(str(exc)) from None


def _require(condition: bool, message: str) -> None:
    if not condition:
        raise InvalidOption(message)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


@dataclass(frozen=True)
class DecodeOptions:
    """What a caller may choose about one decode.

    >>> DecodeOptions(section_strategy="heading").section_strategy
    'heading'
    >>> DecodeOptions(strategy="best")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidOption: strategy must be one of auto, fast, ocr_only, hi_res, not 'best'
    """

    strategy: str = "auto"
    ocr_languages: str = "eng"
    section_strategy: str = "whole-document"
    section_element_count: int = 20
    section_max_size: int = 4000
    section_within_pages: bool = False
    password: Optional[str] = None
    mime_type: Optional[str] = None
    max_bytes: int = 200 * 1024 * 1024
    timeout_seconds: Optional[float] = 600.0
    # An image over either limit is recorded with its metadata and a skip reason, not stored.
    max_image_bytes: int = 50 * 1024 * 1024
    max_image_pixels: int = 100_000_000
    # The character set of a text-based document (HTML, XML, text, Markdown, CSV, TSV) when the
    # caller knows it (an HTTP header, a meta tag); None: the partitioner detects it.
    encoding: Optional[str] = None
    # Embedded files (attachments, OLE packages) become child documents down to this depth (0: none),
    # all of them together within this many bytes. Not part of a decode's settings: the parent's own
    # graph does not change with them.
    embedded_depth: int = 3
    max_embedded_bytes: int = 100 * 1024 * 1024
    # Place the elements of formats that state no positions (DOCX, ODT, RTF, DOC, slides' text) on
    # their document rendered by LibreOffice: a page and a box each, marked as rendered.
    rendered_positions: bool = True
    # Read the words in the document's pictures with OCR: "auto" skips pictures too small to hold
    # a word and plain ones (a rule, a fill), "on" reads every picture, "off" none.
    image_ocr: str = "auto"
    # Find tables on PDF pages with a text layer (a layout model and the text layer's rows and columns).
    pdf_tables: bool = True
    # Who reads a PDF page's text layer into elements: PDFium's characters in typed blocks
    # ("pdfium", decode/pdf/blocks.py) or unstructured's ``fast`` (pdfminer's layout).
    pdf_reader: str = "pdfium"
    # A picture's OCR text whose words' mean confidence is below this is stored and audited but is no
    # text document: not chunked, not handed to extractors (page OCR is not affected).
    min_image_text_confidence: float = 0.6

    def __post_init__(self):
        _require(self.strategy in STRATEGIES,
                 f"strategy must be one of {', '.join(STRATEGIES)}, not {self.strategy!r}")
        _require(self.section_strategy in SECTION_STRATEGIES,
                 f"section strategy must be one of {', '.join(SECTION_STRATEGIES)}, not {self.section_strategy!r}")
        for name in ("section_element_count", "section_max_size", "max_bytes", "max_image_bytes",
                     "max_image_pixels", "embedded_depth", "max_embedded_bytes"):
            _require(_is_int(getattr(self, name)), f"{name.replace('_', ' ')} must be an integer")
        _require(isinstance(self.section_within_pages, bool), "section within pages must be true or false")
        _require(isinstance(self.rendered_positions, bool), "rendered positions must be true or false")
        _require(isinstance(self.pdf_tables, bool), "PDF tables must be true or false")
        _require(_is_number(self.min_image_text_confidence) and 0 <= self.min_image_text_confidence <= 1,
                 "minimum image text confidence must be a number from 0 to 1")
        _require(self.pdf_reader in PDF_READERS,
                 f"PDF reader must be one of {', '.join(PDF_READERS)}, not {self.pdf_reader!r}")
        _require(self.image_ocr in IMAGE_OCR_MODES,
                 f"image OCR must be one of {', '.join(IMAGE_OCR_MODES)}, not {self.image_ocr!r}")
        for name in ("password", "mime_type", "encoding"):
            _require(getattr(self, name) is None or isinstance(getattr(self, name), str),
                     f"{name.replace('_', ' ')} must be text")
        _require(self.section_element_count >= 1, "section element count must be at least 1")
        _require(self.section_max_size >= 1, "section max size must be at least 1")
        _require(isinstance(self.ocr_languages, str) and bool(self.ocr_languages)
                 and all(part.isidentifier() for part in self.ocr_languages.split("+")),
                 f"OCR languages must look like 'eng' or 'eng+heb', not {self.ocr_languages!r}")
        _require(self.max_bytes >= 1, "max bytes must be positive")
        _require(self.timeout_seconds is None or (_is_number(self.timeout_seconds) and self.timeout_seconds > 0),
                 "timeout must be positive")
        _require(self.max_image_bytes >= 1 and self.max_image_pixels >= 1, "image limits must be positive")
        _require(self.embedded_depth >= 0 and self.max_embedded_bytes >= 0,
                 "embedded file limits must not be negative")
        if self.encoding is not None:
            import codecs

            try:
                codecs.lookup(self.encoding)
            except LookupError:
                raise InvalidOption(f"unknown character set {self.encoding!r}") from None

    def settings_key(self) -> str:
        """The settings that change what a decode produces, as a stable string (for IRIs)."""
        return "|".join(
            [
                f"strategy={self.strategy}",
                f"ocr={self.ocr_languages}",
                f"sections={self.section_strategy}",
                f"count={self.section_element_count}",
                f"size={self.section_max_size}",
                f"within-pages={self.section_within_pages}",
                f"image-limits={self.max_image_bytes},{self.max_image_pixels}",
            ]
            + ([f"encoding={self.encoding.lower()}"] if self.encoding else [])
            + ([f"mime={self.mime_type}"] if self.mime_type else [])
            + ([] if self.rendered_positions else ["rendered-positions=off"])
            + ([] if self.image_ocr == "auto" else [f"image-ocr={self.image_ocr}"])
            + ([] if self.pdf_tables else ["pdf-tables=off"])
            + ([] if self.pdf_reader == "unstructured" else [f"pdf-reader={self.pdf_reader}"])
            + ([] if self.min_image_text_confidence == 0.6 else
               [f"min-image-text-confidence={self.min_image_text_confidence:g}"])
        )


@dataclass(frozen=True)
class ChunkOptions:
    """How to chunk.

    >>> ChunkOptions(chunk_size=256, overlap=32).settings_key()
    'tokenizer=cl100k_base|size=256|overlap=32|min=16|window=64|headings=False'
    >>> ChunkOptions(chunk_size=10, overlap=10)
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidOption: overlap must be smaller than the chunk size (10 tokens)
    """

    chunk_size: int = 512
    overlap: int = 0
    min_chunk_tokens: int = 16
    # How far back from the hard limit (in tokens) a boundary is looked for; default: a quarter of the size.
    boundary_window: Optional[int] = None
    heading_prefix: bool = False

    def __post_init__(self):
        _require(all(_is_int(v) for v in (self.chunk_size, self.overlap, self.min_chunk_tokens))
                 and (self.boundary_window is None or _is_int(self.boundary_window)),
                 "chunk sizes must be integers")
        _require(isinstance(self.heading_prefix, bool), "heading prefix must be true or false")
        _require(self.chunk_size >= 8, "chunk size must be at least 8 tokens")
        _require(0 <= self.overlap < self.chunk_size,
                 f"overlap must be smaller than the chunk size ({self.chunk_size} tokens)")
        _require(0 <= self.min_chunk_tokens < self.chunk_size, "minimum chunk length must be below the chunk size")
        _require(self.boundary_window is None or self.boundary_window >= 1, "boundary window must be at least 1 token")

    @property
    def window(self) -> int:
        return self.boundary_window or max(1, self.chunk_size // 4)

    def settings_key(self) -> str:
        return (f"tokenizer={TOKENIZER}|size={self.chunk_size}|overlap={self.overlap}|min={self.min_chunk_tokens}"
                f"|window={self.window}|headings={self.heading_prefix}")


@dataclass(frozen=True)
class CrawlOptions:
    """The limits of one crawl (the decode options are separate).

    >>> CrawlOptions(max_pages=0)
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidOption: max pages must be at least 1
    """

    max_pages: int = 50
    delay_seconds: float = 1.0
    max_crawl_delay: float = 30.0
    page_timeout: float = 30.0
    max_page_bytes: int = 20 * 1024 * 1024
    retries: int = 3
    backoff_seconds: float = 1.0
    max_backoff: float = 60.0
    max_redirects: int = 10
    user_agent: str = ""

    def __post_init__(self):
        _require(all(_is_int(v) for v in (self.max_pages, self.max_page_bytes, self.retries, self.max_redirects))
                 and all(_is_number(v) for v in (self.delay_seconds, self.max_crawl_delay, self.page_timeout,
                                                 self.backoff_seconds, self.max_backoff))
                 and isinstance(self.user_agent, str), "crawl limits must be numbers")
        _require(self.max_pages >= 1, "max pages must be at least 1")
        _require(min(self.delay_seconds, self.max_crawl_delay, self.backoff_seconds, self.max_backoff) >= 0,
                 "delays must not be negative")
        _require(self.page_timeout > 0 and self.max_page_bytes >= 1 and self.retries >= 0 and self.max_redirects >= 0,
                 "page time and size limits must be positive, retries and redirects not negative")

    @property
    def agent(self) -> str:
        return self.user_agent or f"kg-decoder/{software_versions()['kg-decoder']}"
