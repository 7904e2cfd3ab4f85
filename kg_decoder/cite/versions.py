"""Sources and their versions as the store holds them: a source's versions, the diff of two documents,
what each later version says of a fact, and pruning old versions. Recording a new version, and the
verdicts it gives the facts, is a stage of its own above this one (:mod:`kg_decoder.versions`).

A source is a path (absolute), a crawled URL or an id the caller gives.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Optional, Union

from ..decode import pipeline
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..graph.version_mapping import source_iri
from ..graph.version_reads import SourceVersionRow
from ..model import DiffCounts, DiffSide, Verdict, VerdictStep, VersionDiff, VersionInfo
from ..model.errors import InvalidOption, UnknownEntity
from .diff import align, count


@dataclass
class VersionText:
    """A document's text elements in reading order, and its pages' and sections' texts."""

    document: str
    sides: list[DiffSide]
    texts: dict[str, str]
    pages: dict[str, Optional[int]]
    by_segment: dict[str, list[DiffSide]]

    @classmethod
    def read(cls, store: KgStore, document: str, boxes: bool = False) -> "VersionText":
        """A document's version as the store holds it; its elements' boxes too when ``boxes`` (a diff
        shows them; facts' verdicts need none)."""
        texts, pages = {}, {}
        for segment in store.text_segments(document):
            if segment.kind != "image":
                texts[segment.segment] = store.text(segment.sha256, segment.segment)
                pages[segment.segment] = segment.page_number
        sides = []
        for row in store.versions.version_elements(document, boxes):
            text = texts.get(row.segment)
            if text is None:
                continue
            sides.append(DiffSide(element=row.element, text=text[row.char_offset:row.char_offset + row.char_length],
                                  page_number=row.page_number if row.page_number is not None
                                  else pages.get(row.segment),
                                  bbox=row.bbox, segment=row.segment, char_offset=row.char_offset))
        by_segment: dict[str, list[DiffSide]] = {}
        for side in sorted(sides, key=lambda s: s.char_offset):
            by_segment.setdefault(side.segment, []).append(side)
        return cls(document, sides, texts, pages, by_segment)

    def element_at(self, segment: str, start: int, end: int) -> Optional[DiffSide]:
        """The element that holds most of ``start..end`` of a segment's text."""
        sides = self.by_segment.get(segment, [])
        position = bisect.bisect_right(sides, start, key=_char_offset) - 1
        best, best_overlap = None, 0
        for side in sides[max(position, 0):position + 4]:
            overlap = min(end, side.char_offset + len(side.text)) - max(start, side.char_offset)
            if overlap > best_overlap:
                best, best_overlap = side, overlap
        return best

    def page_at(self, segment: str, start: int, end: int) -> Optional[int]:
        side = self.element_at(segment, start, end)
        return side.page_number if side is not None else self.pages.get(segment)


def _char_offset(side: DiffSide) -> int:
    return side.char_offset


# ---------------------------------------------------------------- reading versions


def _counts(row: SourceVersionRow) -> Optional[DiffCounts]:
    if row.kept is None:
        return None
    return DiffCounts(row.kept, row.moved or 0, row.changed or 0, row.removed or 0, row.added or 0)


def version_info(row: SourceVersionRow, rows: list[SourceVersionRow]) -> VersionInfo:
    facts = {name: getattr(row, "facts_" + name) for name in ("current", "moved", "changed", "removed")
             if getattr(row, "facts_" + name) is not None}
    return VersionInfo(source=row.source_id, version=row.version, number=row.number, document=row.document,
                       generated=str(row.generated), latest=bool(row.latest), previous=row.previous,
                       counts=_counts(row), facts=facts)


def source_rows(store: KgStore, source: str, read_files: bool = True) -> list[SourceVersionRow]:
    """A source's versions by its id, its IRI, or (with ``read_files``, a path on this machine) its file."""
    candidates = [source] if source.startswith("urn:source:") else [source_iri(source)]
    if read_files and not source.startswith("urn:") and "://" not in source:
        candidates.append(source_iri(pipeline.path_source_id(source)))
    for iri in candidates:
        rows = store.versions.source_versions(iri)
        if rows:
            return rows
    raise UnknownEntity(f"no source {source!r:.200} in the store (a path, URL or --source-id that was decoded)")


@with_store(read_only=True)
def source_versions(source: str, *, store: Union[KgStore, StorePath], read_files: bool = True) -> list[VersionInfo]:
    """Every version of a source (its path, URL, id or IRI), oldest first. Reads only. A web server
    passes ``read_files=False``: a request never makes it resolve a path of its own machine.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     _ = kg_decoder.decode(b"Revenue was 12 M.", store=store, source_id="report")
    ...     _ = kg_decoder.decode(b"Revenue was 14 M.", store=store, source_id="report")
    ...     [(v.number, v.latest, v.counts and v.counts.changed) for v in source_versions("report", store=store)]
    [(1, False, None), (2, True, 1)]
    """
    rows = source_rows(store, source, read_files)
    return [version_info(row, rows) for row in rows]


def _document_of(store: KgStore, name: str) -> str:
    """A document by its IRI, or a version's document by the version's IRI."""
    if name.startswith("urn:version:"):
        for source in store.versions.all_sources():
            for row in store.versions.source_versions(source.source):
                if row.version == name:
                    return row.document
        raise UnknownEntity(f"no version {name:.200} in the store")
    if not store.has_document(name):
        raise UnknownEntity(f"no document {name:.200} in the store")
    return name


@with_store(read_only=True)
def diff_documents(old: str, new: str, *, store: Union[KgStore, StorePath]) -> VersionDiff:
    """The element-by-element diff of two documents (or versions, by IRI): kept, moved, changed (with
    the character edits), removed and added elements, with pages and boxes on both sides. Reads only."""
    old_document, new_document = _document_of(store, old), _document_of(store, new)
    entries = align(VersionText.read(store, old_document, boxes=True).sides,
                    VersionText.read(store, new_document, boxes=True).sides)
    return VersionDiff(old=old_document, new=new_document, counts=count(entries), entries=entries)


@with_store(read_only=True)
def verdict_chain(subgraph: str, *, store: Union[KgStore, StorePath]) -> list[VerdictStep]:
    """What each later version of its source says of a fact subgraph, oldest first (by source, when its
    document was a version of several). Reads only."""
    return verdict_steps(store, subgraph)


def verdict_steps(store: KgStore, subgraph: str) -> list[VerdictStep]:
    return [VerdictStep(source=row.source_id, version=row.number, generated=str(row.generated), document=row.document,
                        verdict=Verdict(row.verdict), page_number=row.page_number,
                        previous_page_number=row.previous_page_number, text=row.text,
                        previous_text=row.previous_text, segment=row.segment, start=row.char_offset,
                        end=None if row.char_offset is None else row.char_offset + row.char_length)
            for row in store.versions.fact_verdicts(subgraph)]


@with_store(read_only=False)
def prune_versions(keep: int, source: Optional[str] = None, *, store: Union[KgStore, StorePath]) -> list[VersionInfo]:
    """Remove all but the ``keep`` latest versions of a source (or of every source), with the documents
    only they were, in one transaction; return the versions removed. The library's bytes stay until
    ``gc``. Fact subgraphs and the verdicts of kept versions stay (a kept verdict's fact is still traceable
    to its text in the kept versions)."""
    if not isinstance(keep, int) or isinstance(keep, bool) or keep < 1:
        raise InvalidOption("keep at least one version (--keep N, N >= 1)")
    groups = [source_rows(store, source)] if source is not None else \
        [store.versions.source_versions(row.source) for row in store.versions.all_sources()]
    removed: list[SourceVersionRow] = []
    kept_documents = set()
    for rows in groups:
        removed.extend(rows[:-keep])
        kept_documents.update(row.document for row in rows[-keep:])
    if not removed:
        return []
    still_cited = set(kept_documents)
    for row in removed:  # a document another source's version is stays
        still_cited.update(v.document for v in store.versions.document_versions(row.document) if v.version not in
                           {r.version for r in removed})
    documents = sorted({row.document for row in removed} - still_cited)
    store.remove_versions([row.version for row in removed], documents)
    return [version_info(row, []) for row in removed]


__all__ = ["VersionText", "diff_documents", "prune_versions", "source_rows", "source_versions", "verdict_chain",
           "verdict_steps", "version_info"]
