"""Sources and their versions: what a diff of two versions and a fact's verdict say.

A *source* is what changes (a path, a URL, an id the caller gives); each decode of new bytes of
it is a *version*. A diff aligns two versions' elements on their text; a verdict says whether a
fact cited to one version still holds in the next.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .document import BBox
from .results import JsonResult, Status


class DiffOp(Status):
    KEPT = "kept"  # same text, same place (same page, or same order in a document without pages)
    MOVED = "moved"  # same text, another page or place
    CHANGED = "changed"  # edited (its character edits given)
    REMOVED = "removed"
    ADDED = "added"


class Verdict(Status):
    CURRENT = "current"  # the quote is found unchanged where it was
    MOVED = "moved"  # found unchanged at another place (page)
    CHANGED = "changed"  # found with small edits: the new text is given
    REMOVED = "removed"  # not found: stale since that version


@dataclass
class DiffSide(JsonResult):
    """An element on one side of a diff: its IRI, text, page and box."""

    element: str
    text: str
    page_number: Optional[int] = None
    bbox: Optional[BBox] = None
    segment: Optional[str] = None
    char_offset: int = 0


@dataclass
class DiffEntry(JsonResult):
    """One aligned pair (or a lone element): what happened to it, with the character edits of a change
    as ``(operation, old text, new text)`` (operation ``replace``, ``delete`` or ``insert``)."""

    op: DiffOp
    old: Optional[DiffSide] = None
    new: Optional[DiffSide] = None
    edits: list[tuple[str, str, str]] = field(default_factory=list)


@dataclass
class DiffCounts(JsonResult):
    kept: int = 0
    moved: int = 0
    changed: int = 0
    removed: int = 0
    added: int = 0

    def add(self, op: DiffOp) -> None:
        setattr(self, str(op), getattr(self, str(op)) + 1)


@dataclass
class VersionDiff(JsonResult):
    """The element-by-element diff of two documents (two versions of a source)."""

    old: str
    new: str
    counts: DiffCounts
    entries: list[DiffEntry]


@dataclass
class FactVerdictRecord(JsonResult):
    """What a version says of one fact carried to it from the version before."""

    subgraph: str  # the fact's subgraph as an extractor stored it (on a chunk of an earlier version)
    verdict: Verdict
    previous_text: str
    text: Optional[str] = None  # the text found in this version (None: removed)
    segment: Optional[str] = None
    start: Optional[int] = None
    end: Optional[int] = None
    page_number: Optional[int] = None
    previous_page_number: Optional[int] = None
    previous_verdict: Optional[str] = None  # the verdict entity of the version before, if any
    removed_before: bool = False  # the version before judged it removed too: not a removal of this version's


@dataclass
class VersionInfo(JsonResult):
    """One version of a source."""

    source: str  # the source's id (path, URL or the caller's id)
    version: str  # the version's IRI
    number: int
    document: str
    generated: str
    latest: bool = False
    previous: Optional[str] = None
    counts: Optional[DiffCounts] = None  # what the revision that made it changed (None for version 1)
    facts: dict[str, int] = field(default_factory=dict)  # verdict -> how many facts got it
    new: bool = False  # made by the decode that returned it (bytes already stored may be a new version)


@dataclass
class VerdictStep(JsonResult):
    """A step of a fact's verdict chain: what one version of its source says of it."""

    source: str
    version: int
    generated: str
    document: str
    verdict: Verdict
    page_number: Optional[int] = None
    previous_page_number: Optional[int] = None
    text: Optional[str] = None
    previous_text: Optional[str] = None
    segment: Optional[str] = None
    start: Optional[int] = None
    end: Optional[int] = None


__all__ = ["DiffCounts", "DiffEntry", "DiffOp", "DiffSide", "FactVerdictRecord", "Verdict", "VerdictStep",
           "VersionDiff", "VersionInfo"]
