"""What the public functions return: dataclasses all the way down, each with ``to_json()``.

Statuses are string enums, so ``result.status == "decoded"`` and JSON output read as before.
"""

from __future__ import annotations

import enum
from decimal import Decimal
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Optional

from .document import BBox, Problem
from .errors import DecodeError, KgDecoderError


def to_jsonable(value: Any) -> Any:
    """A result as JSON values: dataclasses as objects, enums as their value, errors as {error, message}.

    >>> to_jsonable(DecodeStatus.UNCHANGED)
    'unchanged'
    """
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, Decimal):  # a JSON number (read back as a float by most readers), or its text
        return float(value) if value.is_finite() else str(value)
    if isinstance(value, KgDecoderError):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_jsonable(getattr(value, f.name)) for f in fields(value) if not f.name.startswith("_")}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    return value


class JsonResult:
    """``to_json()`` for a result dataclass."""

    def to_json(self) -> dict:
        return to_jsonable(self)


class Status(enum.StrEnum):
    """A status: compares, prints and serialises as its string."""

    def __repr__(self) -> str:
        return repr(self.value)


class Verification(Status):
    """How far a box on a page was checked. ``verified``: a second reading of the page (its text layer,
    its rendering, the words OCR read) finds the quoted text under it, or the file itself places the text
    there (a form field's widget, an annotation's rectangle); ``element``: the box of the whole
    element or cell that holds the text, because no box on the words could be checked; ``unverified``:
    nothing can read the page to check it (a page without characters to read, a lost rendering)."""

    VERIFIED = "verified"
    ELEMENT = "element"
    UNVERIFIED = "unverified"


class DecodeStatus(Status):
    DECODED = "decoded"
    PARTIAL = "partial"  # decoded, but something could not be read: see the result's problems
    UNCHANGED = "unchanged"  # the store already held this decode


class PartitionSource(Status):
    PARTITIONED = "partitioned"
    PARSE_CACHE = "parse cache"  # an earlier partitioning of the same bytes was reused


class ChunkStatus(Status):
    CHUNKED = "chunked"
    UNCHANGED = "unchanged"


class FactsStatus(Status):
    ADDED = "added"
    UNCHANGED = "unchanged"


class Grounding(Status):
    """How a fact's evidence was found in its chunk's text. ``exact``: the quote as written (whitespace
    aside); ``normalised``: after folding (ligatures, hyphenation, quotes and dashes, whitespace:
    :mod:`kg_decoder.cite.quotes`); ``fuzzy``: approximately (word order, a dropped or added word, a number
    written another way), with a score; ``inferred``: no quote given, the subject's and object's labels
    in one sentence; ``unsupported``: none of these (stored, never given a box)."""

    EXACT = "exact"
    NORMALISED = "normalised"
    FUZZY = "fuzzy"
    INFERRED = "inferred"
    UNSUPPORTED = "unsupported"


class CrawlStatus(Status):
    PENDING = "pending"
    DECODED = "decoded"
    PARTIAL = "partial"  # decoded, but a reading failed: the page's problems say which
    UNCHANGED = "unchanged"
    NOT_MODIFIED = "not modified"  # a 304: the stored document stands
    FAILED = "failed"
    DISALLOWED = "disallowed"  # robots.txt forbids it: never fetched


# ---------------------------------------------------------------- decode


@dataclass
class ElementOffset(JsonResult):
    """Where an element's text sits in its page or section text."""

    element: str
    char_offset: int
    char_length: int


@dataclass
class TextDocument(JsonResult):
    """A page, section or picture's text as handed downstream (``--emit jsonl``).

    ``kind`` is "page", "section" or "image"; an image's text (what OCR read in a picture) is not
    part of the document text: its ``char_offset`` is None, ``derived_from`` is the picture and its
    elements are the words OCR read."""

    iri: str
    document: str
    kind: str
    page_number: Optional[int]
    text: str
    char_offset: Optional[int]
    char_length: int
    element_offsets: list[ElementOffset] = field(default_factory=list)
    derived_from: Optional[str] = None

    def to_json(self) -> dict:
        return {"iri": self.iri, "document": self.document, "kind": self.kind, "page_number": self.page_number,
                "char_offset": self.char_offset, "char_length": self.char_length, "text": self.text,
                "elements": to_jsonable(self.element_offsets)} | (
                    {"derived_from": self.derived_from} if self.derived_from else {})


@dataclass
class DecodeResult(JsonResult):
    """What one decode did."""

    document: str
    file_name: Optional[str]
    format: str
    mime_type: str
    status: DecodeStatus
    strategy: Optional[str]
    pages: int
    sections: int
    elements: int
    tables: int
    images: int
    quads: int = 0
    text_documents: list[TextDocument] = field(default_factory=list)
    # None when unchanged.
    partition_source: Optional[PartitionSource] = None
    # Files embedded in this document (attachments, OLE packages...), each decoded as a child document.
    embedded: list["EmbeddedResult"] = field(default_factory=list)
    # Notes that are no failure, e.g. "no text found" (recorded as tg:warning on the decode activity).
    warnings: list[str] = field(default_factory=list)
    # What could not be read without failing the decode (status partial; tg:Problem on the decode activity).
    problems: list[Problem] = field(default_factory=list)
    # The version of its source this decode is (model.revisions.VersionInfo), when it names a source.
    version: Optional[Any] = None

    def documents(self) -> list[str]:
        """This document and every embedded document decoded with it, parents first."""
        return [self.document] + [e.result.document for top in self.embedded for e in top.walk() if e.result]


@dataclass
class EmbeddedResult(JsonResult):
    """One file found inside a document: its child document's result, or why it was not decoded."""

    path: str
    name: Optional[str]
    depth: int
    result: Optional[DecodeResult] = None
    error: Optional[DecodeError] = None

    @property
    def status(self) -> str:
        if self.error is not None:
            return f"failed: {type(self.error).__name__}: {self.error.message}"
        return self.result.status

    def walk(self):
        """This file and, depth first, every file embedded in it."""
        yield self
        for inner in self.result.embedded if self.result else []:
            yield from inner.walk()


# ---------------------------------------------------------------- chunks and facts


@dataclass(kw_only=True)
class Placed(JsonResult):
    """A box on a page, in the coordinate system and page size it is measured in (each may be missing)."""

    bbox: Optional[BBox] = None
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = None


@dataclass
class ChunkAnchor(Placed):
    """A page a chunk can be cited on, with the union box of its elements there; ``verification`` says
    whether a second reading of the page finds the chunk's text in that box (see :class:`Verification`)."""

    page_number: int
    page: Optional[str] = None
    verification: Verification = Verification.UNVERIFIED


@dataclass
class ChunkView(JsonResult):
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
    anchors: list[ChunkAnchor] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"iri": self.iri, "document": self.document, "segment": self.segment, "chunk_index": self.index,
                "char_offset": self.char_offset, "char_length": self.char_length,
                "prefix_length": self.prefix_length, "tokens": self.tokens, "heading_path": self.heading_path,
                "anchors": to_jsonable(self.anchors), "text": self.text}


@dataclass
class ChunkResult(JsonResult):
    document: str
    status: ChunkStatus
    chunks: int
    quads: int = 0


@dataclass
class FactsResult(JsonResult):
    chunk: str
    status: FactsStatus
    facts: int
    subgraphs: list[str]


@dataclass
class FactLineOutcome(JsonResult):
    """What became of one line of a bulk fact file: its ``grounding`` (None: refused, with ``reason``),
    the chunk it was tied to, the span in the chunk's text and the score of a fuzzy match."""

    line: int
    grounding: Optional[Grounding] = None
    chunk: Optional[str] = None
    subgraph: Optional[str] = None
    start: Optional[int] = None
    end: Optional[int] = None
    score: Optional[float] = None
    reason: Optional[str] = None


@dataclass
class FactLinesResult(JsonResult):
    """The facts of a bulk call: how many lines were read, stored (by grounding) and refused (each with
    its line number and reason), in how many transactions (``batches``; ``unchanged``: batches the store
    already held)."""

    lines: int
    stored: int
    counts: dict[str, int]
    refused: list[FactLineOutcome]
    outcomes: list[FactLineOutcome]
    batches: int
    unchanged: int = 0

    def summary_rows(self) -> list[list[str]]:
        """The summary table: one row per grounding and one for refused lines, with their reasons."""
        reasons: dict[str, dict[str, int]] = {}
        for outcome in self.outcomes:
            if outcome.reason:
                kind = "refused" if outcome.grounding is None else str(outcome.grounding)
                reason = outcome.reason.split(":")[0].split(" (")[0][:60]
                reasons.setdefault(kind, {}).setdefault(reason, 0)
                reasons[kind][reason] += 1
        rows = []
        for kind in [*(str(g) for g in Grounding), "refused"]:
            count = self.counts.get(kind, 0) if kind != "refused" else len(self.refused)
            why = "; ".join(f"{reason} ({n})" for reason, n in sorted(reasons.get(kind, {}).items(),
                                                                          key=lambda item: -item[1])[:3])
            rows.append([kind, str(count), why])
        return rows


@dataclass
class ExtractFailure(JsonResult):
    """A chunk an extractor failed on: the error's ``code`` (``extractor-failed``, ``extractor-timeout``,
    ``extractor-output-too-large``) and message. The chunk is not recorded as extracted."""

    chunk: str
    code: str
    reason: str


@dataclass
class ExtractResult(JsonResult):
    """An extract step: the ``extractor`` and ``version`` recorded on its runs; of the ``chunks`` it was
    given, how many were ``skipped`` (the same extractor and version read them before), ``extracted`` and
    ``failed`` (each with its typed error); the facts' groundings (``counts``) and the lines refused
    (each with its chunk and reason) over ``batches`` transactions."""

    extractor: str
    version: str
    chunks: int
    skipped: int
    extracted: int
    failed: list[ExtractFailure]
    counts: dict[str, int]
    refused: list[FactLineOutcome]
    batches: int

    @property
    def facts(self) -> int:
        return sum(self.counts.values())

    def summary_rows(self) -> list[list[str]]:
        """The summary table: the chunks, then the facts by grounding and the refused lines."""
        rows = [["chunks extracted", str(self.extracted), ""],
                ["chunks skipped", str(self.skipped), "already extracted by this name and version"
                 if self.skipped else ""]]
        failures: dict[str, int] = {}
        for failure in self.failed:
            failures[failure.code] = failures.get(failure.code, 0) + 1
        rows.append(["chunks failed", str(len(self.failed)),
                     "; ".join(f"{code} ({n})" for code, n in sorted(failures.items(), key=lambda i: -i[1]))])
        rows += [[f"facts {kind}", str(self.counts.get(kind, 0)), ""] for kind in (str(g) for g in Grounding)]
        refused: dict[str, int] = {}
        for outcome in self.refused:
            reason = (outcome.reason or "").split(":")[0][:60]
            refused[reason] = refused.get(reason, 0) + 1
        rows.append(["facts refused", str(len(self.refused)),
                     "; ".join(f"{r} ({n})" for r, n in sorted(refused.items(), key=lambda i: -i[1])[:3])])
        return rows


# ---------------------------------------------------------------- images


@dataclass
class ImageInfo(Placed):
    """A stored image of a document, in reading order."""

    iri: str
    index: int
    segment: str
    page_number: Optional[int] = None
    sheet_name: Optional[str] = None
    width: Optional[int] = None
    height: Optional[int] = None
    mime_type: Optional[str] = None
    byte_size: Optional[int] = None
    sha256: Optional[str] = None
    skipped_reason: Optional[str] = None
    alt_text: Optional[str] = None
    source_url: Optional[str] = None
    anchor_cell: Optional[str] = None
    follows: Optional[str] = None
    element_id: Optional[str] = None
    # The text OCR read in it (a text document of its own), how sure OCR was, how many words; or why not read.
    image_text: Optional[str] = None
    ocr_confidence: Optional[float] = None
    ocr_words: Optional[int] = None
    ocr_skipped_reason: Optional[str] = None


# ---------------------------------------------------------------- crawl


@dataclass
class CrawledPage(JsonResult):
    """One URL the crawl reached: what became of it."""

    url: str
    depth: int
    linked_from: Optional[str]
    status: CrawlStatus = CrawlStatus.PENDING
    http_status: Optional[int] = None
    document: Optional[str] = None
    error: Optional[DecodeError] = None
    problems: list[Problem] = field(default_factory=list)


@dataclass
class CrawlResult(JsonResult):
    start_url: str
    pages: list[CrawledPage] = field(default_factory=list)

    @property
    def fetched(self) -> list[CrawledPage]:
        return [p for p in self.pages if p.status != CrawlStatus.DISALLOWED]


# ---------------------------------------------------------------- quality


@dataclass
class Rows(JsonResult):
    """Rows of values under named columns: a user's SELECT, an audit's findings."""

    columns: list[str]
    rows: list[tuple] = field(default_factory=list)

    def records(self) -> list[dict]:
        """Each row as {column: value}, unbound columns left out (for JSON output)."""
        return [{c: v for c, v in zip(self.columns, row) if v is not None} for row in self.rows]

    def __len__(self) -> int:
        return len(self.rows)


@dataclass
class Audit(JsonResult):
    name: str
    title: str
    finds: str
    kind: str  # "finding" or "report"
    table: Rows = field(default_factory=lambda: Rows([]))
    seconds: Optional[float] = None  # how long it ran (None: not run)
    error: Optional[str] = None  # why it gave no rows: past its time limit, or failed

    @property
    def has_findings(self) -> bool:
        return self.kind == "finding" and bool(self.table.rows)

    def to_json(self) -> dict:
        record = {"audit": self.name, "title": self.title, "finds": self.finds, "kind": self.kind,
                  "findings": len(self.table.rows) if self.kind == "finding" else 0, "rows": self.table.records(),
                  "seconds": None if self.seconds is None else round(self.seconds, 3)}
        if self.error is not None:
            record["error"] = self.error
        return record


@dataclass
class Violation(JsonResult):
    focus: str
    path: Optional[str]
    message: str
    severity: str
    value: Optional[str] = None


@dataclass
class ValidationReport(JsonResult):
    conforms: bool
    violations: list[Violation]
    triples: int
