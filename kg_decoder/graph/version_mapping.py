"""The RDF mapping of sources and their versions: a tg:Source, its tg:Version entities, the
tg:Revision activity that made each new version (with its diff's counts) and the verdicts it gave
the facts carried to it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from pyoxigraph import NamedNode, Quad

from ..model import DiffCounts, FactVerdictRecord, Verdict
from .identifiers import derived_iri
from .quads import QuadWriter, describe_agent, int_literal, text_literal, time_literal
from .vocabulary import RDF_TYPE, prov, tg


def source_iri(source_id: str) -> str:
    """A source is named by its id (an absolute path, a URL, the caller's id)."""
    return derived_iri("source", source_id)


def version_iri(source_id: str, number: int) -> str:
    """The ``number``-th version of a source (not of its bytes: a source may go back to earlier bytes)."""
    return derived_iri("version", source_id, number)


def verdict_iri(subgraph: str, version: str) -> str:
    return derived_iri("verdict", subgraph, version)


@dataclass
class VersionRecord:
    """A new version of a source, and, from its second on, the revision that made it."""

    source_id: str
    number: int
    document: str
    generated: datetime
    versions: dict[str, str]
    previous: Optional[str] = None  # the previous version's IRI
    counts: Optional[DiffCounts] = None
    verdicts: list[FactVerdictRecord] = field(default_factory=list)
    started: Optional[datetime] = None

    @property
    def source(self) -> str:
        return source_iri(self.source_id)

    @property
    def iri(self) -> str:
        return version_iri(self.source_id, self.number)

    @property
    def revision_iri(self) -> str:
        return derived_iri("revision", self.previous, self.iri)

    def fact_counts(self) -> dict[str, int]:
        """How many facts this version found current, moved, changed and removed (a fact an earlier
        version removed is counted by that one)."""
        tally = {name: 0 for name in ("current", "moved", "changed", "removed")}
        for verdict in self.verdicts:
            if not (verdict.verdict == Verdict.REMOVED and verdict.removed_before):
                tally[str(verdict.verdict)] += 1
        return tally


def latest_version_quads(source: str, version: str) -> list[Quad]:
    """A source's latest version named again (after the one that was latest went with its document)."""
    out = QuadWriter()
    out.add(NamedNode(source), tg("latestVersion"), NamedNode(version))
    return out.quads


def version_quads(record: VersionRecord) -> list[Quad]:
    """The source (its id and latest version), the version, and its revision with counts and verdicts.

    The caller removes the source's earlier ``tg:latestVersion`` in the same transaction."""
    out = QuadWriter()
    source, version = NamedNode(record.source), NamedNode(record.iri)
    out.add(source, RDF_TYPE, tg("Source"))
    out.add(source, RDF_TYPE, prov("Entity"))
    out.add(source, tg("sourceId"), text_literal(record.source_id))
    out.add(source, tg("latestVersion"), version)
    out.add(version, RDF_TYPE, tg("Version"))
    out.add(version, RDF_TYPE, prov("Entity"))
    out.add(version, prov("specializationOf"), source)
    out.add(version, tg("versionNumber"), int_literal(record.number))
    out.add(version, tg("versionDocument"), NamedNode(record.document))
    out.add(version, prov("generatedAtTime"), time_literal(record.generated))
    if record.previous is None:
        return out.quads
    revision = NamedNode(record.revision_iri)
    out.add(version, prov("wasRevisionOf"), NamedNode(record.previous))
    out.add(version, prov("wasGeneratedBy"), revision)
    out.add(revision, RDF_TYPE, prov("Activity"))
    out.add(revision, RDF_TYPE, tg("Revision"))
    out.add(revision, prov("used"), NamedNode(record.previous))
    out.add(revision, prov("startedAtTime"), time_literal(record.started or record.generated))
    out.add(revision, prov("endedAtTime"), time_literal(record.generated))
    out.add(revision, prov("wasAssociatedWith"), describe_agent(out, record.versions))
    counts = record.counts or DiffCounts()
    for name in ("kept", "moved", "changed", "removed", "added"):
        out.add(revision, tg("elements" + name.title()), int_literal(getattr(counts, name)))
    for verdict in record.verdicts:
        _describe_verdict(out, verdict, version, revision)
    for name, count in record.fact_counts().items():
        out.add(revision, tg("facts" + name.title()), int_literal(count))
    return out.quads


def _describe_verdict(out: QuadWriter, verdict: FactVerdictRecord, version: NamedNode, revision: NamedNode) -> None:
    node = NamedNode(verdict_iri(verdict.subgraph, version.value))
    out.add(node, RDF_TYPE, tg("FactVerdict"))
    out.add(node, prov("wasDerivedFrom"), NamedNode(verdict.subgraph))
    out.add(node, prov("wasGeneratedBy"), revision)
    out.add(node, tg("factSubgraph"), NamedNode(verdict.subgraph))
    out.add(node, tg("inVersion"), version)
    out.add(node, tg("verdict"), text_literal(str(verdict.verdict)))
    out.add(node, tg("previousText"), text_literal(verdict.previous_text))
    out.add_optional(node, prov("wasRevisionOf"), verdict.previous_verdict, NamedNode)
    out.add_optional(node, tg("previousPageNumber"), verdict.previous_page_number, int_literal)
    if verdict.segment is None:
        return
    out.add(node, tg("segment"), NamedNode(verdict.segment))
    out.add(node, tg("charOffset"), int_literal(verdict.start))
    out.add(node, tg("charLength"), int_literal(verdict.end - verdict.start))
    out.add_optional(node, tg("pageNumber"), verdict.page_number, int_literal)
    out.add_optional(node, tg("text"), verdict.text, text_literal)


__all__ = ["VersionRecord", "source_iri", "verdict_iri", "version_iri", "version_quads"]
