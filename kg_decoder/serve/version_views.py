"""What the web pages show of sources and their versions: a document's place among its source's
versions (with the diff counts of each against the one before), the two sides of a diff drawn on
their page pictures, and a fact's verdict chain from the version it was stated in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import quote, urlencode

from ..cite.versions import source_versions
from ..graph.store import KgStore
from ..model import RENDERED_PDF_POINTS, DiffSide, TraceSource, VersionDiff, VersionInfo
from .views import BoxView


def document_url(document: str) -> str:
    return f"/documents/{quote(document, safe='')}"


def diff_url(old: str, new: str) -> str:
    return "/diff?" + urlencode({"old": old, "new": new})


@dataclass
class VersionRowView:
    """One version in a document's list: the version, whether it is the document shown, and the
    addresses of its document page and of its diff with the version before (None for version 1)."""

    version: VersionInfo
    shown: bool
    document_url: str
    diff_url: Optional[str] = None


@dataclass
class SourceVersionsView:
    """A source the document is a version of, with every version of it, oldest first."""

    source_id: str
    versions: list[VersionRowView]


def document_source_versions(store: KgStore, document: str) -> list[SourceVersionsView]:
    """The sources ``document`` is a version of (usually one; none for bytes decoded without a
    source), each with its versions and their diff counts against the version before."""
    views = []
    for source, source_id in dict.fromkeys((row.source, row.source_id)
                                           for row in store.versions.document_versions(document)):
        rows, previous = [], None
        for version in source_versions(source, store=store, read_files=False):
            rows.append(VersionRowView(version, version.document == document, document_url(version.document),
                                       diff_url(previous, version.document) if previous is not None else None))
            previous = version.document
        views.append(SourceVersionsView(source_id, rows))
    return views


# ---------------------------------------------------------------- a diff on its pages


@dataclass
class DiffPage:
    """A page picture of one side of a diff, with the boxes of the elements that changed on it."""

    url: str
    label: str
    boxes: list[BoxView] = field(default_factory=list)


@dataclass
class DiffView:
    diff: VersionDiff
    old_pages: list[DiffPage]
    new_pages: list[DiffPage]
    old_url: str
    new_url: str


def diff_view(store: KgStore, diff: VersionDiff) -> DiffView:
    """The diff with, side by side, the pages of each version that something changed on: removed,
    changed and moved elements boxed on the old pages, added, changed and moved ones on the new."""
    old = _Pages(store, diff.old)
    new = _Pages(store, diff.new)
    for entry in diff.entries:
        if entry.op == "kept":
            continue
        if entry.old is not None:
            old.box(entry.old, str(entry.op))
        if entry.new is not None:
            new.box(entry.new, str(entry.op))
    return DiffView(diff, old.drawn(), new.drawn(), document_url(diff.old), document_url(diff.new))


class _Pages:
    """The pictures of a document's pages, with the boxes drawn on each so far."""

    def __init__(self, store: KgStore, document: str) -> None:
        self.document = document
        self.places = {row.element: row for row in store.document_text_elements(document)}
        self.page_iris = {row.page_number: row.segment for row in store.document_segments(document)
                          if row.kind == "page" and row.page_number is not None}
        self.pages: dict[str, DiffPage] = {}

    def box(self, side: DiffSide, op: str) -> None:
        row = self.places.get(side.element)
        if row is None or row.bbox is None or not row.page_width or not row.page_height:
            return
        if row.coordinate_system == RENDERED_PDF_POINTS:
            number = row.rendered_page_number
            if number is None:
                return
            url = f"/renderings/{quote(self.document, safe='')}/{number}.png"
            label = f"page {number} as rendered"
        else:
            number = row.page_number or side.page_number
            if number not in self.page_iris:
                return
            url, label = f"/pages/{quote(self.page_iris[number], safe='')}/image.png", f"page {number}"
        page = self.pages.setdefault(url, DiffPage(url, label))
        page.boxes.append(BoxView(left=100 * row.left / row.page_width, top=100 * row.top / row.page_height,
                                  width=100 * (row.right - row.left) / row.page_width,
                                  height=100 * (row.bottom - row.top) / row.page_height, page=number,
                                  source=f"diff-{op}", verification=op))

    def drawn(self) -> list[DiffPage]:
        return sorted(self.pages.values(), key=lambda page: (page.boxes[0].page, page.url))


# ---------------------------------------------------------------- a fact's verdict chain


@dataclass
class ChainStep:
    """A link of a fact's verdict chain as the trace page writes it: what one version says, where."""

    number: int
    generated: str
    verdict: str  # "stated" for the version the fact was cited to, else a Verdict
    document_url: str
    page_number: Optional[int] = None
    previous_page_number: Optional[int] = None
    text: Optional[str] = None
    previous_text: Optional[str] = None
    trace_url: Optional[str] = None  # the span in that version, traced (with its page and box)


@dataclass
class VerdictChainView:
    source_id: str
    steps: list[ChainStep]

    @property
    def latest(self) -> ChainStep:
        return self.steps[-1]


def verdict_chain_views(store: KgStore, source: TraceSource) -> list[VerdictChainView]:
    """A traced fact's verdict chain per source: the version it was stated in (its document's, with
    the page the trace found), then what each later version said of it."""
    if not source.verdicts:
        return []
    stated_in = {}
    for row in store.versions.document_versions(source.document.iri):  # its first version of each source
        stated_in.setdefault(row.source_id, row)
    chains: dict[str, VerdictChainView] = {}
    for step in source.verdicts:
        chain = chains.get(step.source)
        if chain is None:
            chain = chains[step.source] = VerdictChainView(step.source, [])
            origin = stated_in.get(step.source)
            if origin is not None and origin.number < step.version:  # (not the latest, traced after a prune)
                chain.steps.append(ChainStep(origin.number, str(origin.generated), "stated",
                                             document_url(source.document.iri), page_number=source.page_number,
                                             text=source.quote))
        trace = None
        if step.segment is not None and step.start is not None and step.end is not None:
            trace = "/trace?" + urlencode({"segment": step.segment, "start": step.start, "end": step.end})
        chain.steps.append(ChainStep(step.version, step.generated, str(step.verdict), document_url(step.document),
                                     step.page_number, step.previous_page_number, step.text, step.previous_text,
                                     trace))
    return list(chains.values())


__all__ = ["ChainStep", "DiffPage", "DiffView", "SourceVersionsView", "VerdictChainView", "VersionRowView",
           "diff_url", "diff_view", "document_source_versions", "document_url", "verdict_chain_views"]
