"""Typed reads of sources, versions and fact verdicts: the part ``store.versions`` of a
:class:`~kg_decoder.graph.store.KgStore`."""

from __future__ import annotations

from dataclasses import dataclass
from operator import attrgetter
from typing import Callable, Optional

from .rows import Row, typed_rows


@dataclass
class SourceVersionRow:
    """``source_versions``: one version of a source, with the counts of the revision that made it."""

    source: str
    source_id: str
    version: str
    number: int
    document: str
    generated: object
    latest: bool = False
    previous: Optional[str] = None
    revision: Optional[str] = None
    kept: Optional[int] = None
    moved: Optional[int] = None
    changed: Optional[int] = None
    removed: Optional[int] = None
    added: Optional[int] = None
    facts_current: Optional[int] = None
    facts_moved: Optional[int] = None
    facts_changed: Optional[int] = None
    facts_removed: Optional[int] = None


@dataclass
class VersionElementRow:
    """``version_elements``: a text element's place, as a version's diff reads it."""

    segment: str
    element: str
    index: int
    char_offset: int
    char_length: int
    page_number: Optional[int] = None
    left: Optional[float] = None
    top: Optional[float] = None
    right: Optional[float] = None
    bottom: Optional[float] = None

    @property
    def bbox(self) -> Optional[tuple[float, float, float, float]]:
        return None if self.left is None else (self.left, self.top, self.right, self.bottom)


@dataclass
class SourceRow:
    """``all_sources``: a source and its latest version."""

    source: str
    source_id: str
    latest_version: str
    number: int
    document: str


@dataclass
class DocumentVersionRow:
    """``document_versions``: a version whose bytes a document is."""

    document: str
    version: str
    source: str
    source_id: str
    number: int
    generated: object


@dataclass
class FactSpanRow:
    """``document_fact_spans``: a fact subgraph on a chunk of a document, and where the chunk sits."""

    document: str
    subgraph: str
    chunk: str
    segment: str
    chunk_offset: int
    chunk_length: int
    prefix_length: Optional[int] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    text: Optional[str] = None


@dataclass
class VersionVerdictRow:
    """``version_verdicts``: the verdict a version gave one fact, and where it found the fact's text."""

    version: str
    verdict_entity: str
    subgraph: str
    verdict: str
    segment: Optional[str] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    page_number: Optional[int] = None
    text: Optional[str] = None
    previous_text: Optional[str] = None
    previous_page_number: Optional[int] = None


@dataclass
class FactVerdictRow:
    """``fact_verdicts``: one version's verdict on a fact subgraph."""

    subgraph: str
    verdict_entity: str
    verdict: str
    version: str
    source_id: str
    number: int
    generated: object
    document: str
    segment: Optional[str] = None
    char_offset: Optional[int] = None
    char_length: Optional[int] = None
    page_number: Optional[int] = None
    previous_page_number: Optional[int] = None
    text: Optional[str] = None
    previous_text: Optional[str] = None


class VersionReads:
    """Reads of sources and versions, over the rows of the store's shipped queries (``rows_of(name,
    **bindings)``: snake_case keys, Python values)."""

    def __init__(self, rows_of: Callable[..., list[dict]]) -> None:
        self._rows = rows_of

    def _read(self, name: str, kind: type[Row], **bindings) -> list[Row]:
        return typed_rows(self._rows(name, **bindings), kind)

    def source_versions(self, source: str) -> list[SourceVersionRow]:
        """A source's versions (by the source's IRI), oldest first."""
        return self._read("source_versions", SourceVersionRow, source=source)

    def all_sources(self) -> list[SourceRow]:
        return self._read("all_sources", SourceRow)

    def version_numbers(self) -> dict[str, str]:
        """Each document that is a version: the numbers it is, "(latest)" after its source's latest
        (``{"urn:document:…": "1, 3 (latest)"}``)."""
        numbers: dict[str, list[str]] = {}
        for row in self._rows("version_numbers"):
            numbers.setdefault(row["document"], []).append(f"{row['number']}{' (latest)' if row['latest'] else ''}")
        return {document: ", ".join(found) for document, found in numbers.items()}

    def document_versions(self, document: str) -> list[DocumentVersionRow]:
        return self._read("document_versions", DocumentVersionRow, document=document)

    def version_elements(self, document: str, boxes: bool = False) -> list[VersionElementRow]:
        """A document's text elements in reading order, with their places only (a version's diff), and
        their boxes when ``boxes``."""
        rows = self._read("version_elements", VersionElementRow, document=document)
        if boxes:
            found = {row["element"]: row for row in self._rows("version_element_boxes", document=document)}
            for row in rows:
                box = found.get(row.element)
                if box is not None:
                    row.left, row.top, row.right, row.bottom = box["left"], box["top"], box["right"], box["bottom"]
        return rows

    def document_fact_spans(self, document: str) -> list[FactSpanRow]:
        """The fact subgraphs cited to a document's chunks, with the chunk's place in its page or section."""
        return sorted(self._read("document_fact_spans", FactSpanRow, document=document),
                      key=attrgetter("subgraph"))

    def version_verdicts(self, version: str) -> list[VersionVerdictRow]:
        return self._read("version_verdicts", VersionVerdictRow, version=version)

    def fact_verdicts(self, subgraph: str) -> list[FactVerdictRow]:
        """What each later version of its source says of a fact subgraph, oldest first."""
        return self._read("fact_verdicts", FactVerdictRow, subgraph=subgraph)


__all__ = ["DocumentVersionRow", "FactSpanRow", "FactVerdictRow", "SourceRow", "SourceVersionRow", "VersionElementRow",
           "VersionReads", "VersionVerdictRow"]
