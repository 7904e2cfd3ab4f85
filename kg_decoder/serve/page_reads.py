"""The reads behind the web pages whose cost grows with the store or with a document: the store at a
glance, the documents list, the dashboard and an audit's rows, a document's page (its elements,
chunks and facts), two versions' diff.

Any client may ask for these, so the server runs them in its workers under a request's limits
(:func:`~kg_decoder.serve.bounded.bounded_read`), and each gives at most a page of rows with a count
of what it left out: a store of a million documents or a document of 10^5 facts costs a request its
time limit at worst, never the server's threads or memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional

from ..cite.chunks import document_chunks
from ..cite.versions import diff_documents
from ..graph.store import KgStore
from ..model import Rows
from ..model.revisions import VersionDiff
from .dashboard import audit_rows, dashboard
from .version_views import DiffView, SourceVersionsView, diff_view, document_source_versions
from .views import DocumentView, document_view, fact_view, store_overview

PAGE_ROWS = 1000  # the most rows a page lists; the rest are counted and reached by SPARQL or ?offset=


@dataclass
class Listed:
    """A page of a longer list: its ``items`` from ``offset``, and how many there are in all."""

    items: list
    total: int
    offset: int = 0
    limit: int = PAGE_ROWS

    @property
    def left_out(self) -> int:
        """How many come after this page."""
        return max(0, self.total - self.offset - len(self.items))

    @property
    def previous_offset(self) -> int:
        return max(0, self.offset - self.limit)

    @property
    def next_offset(self) -> int:
        return self.offset + len(self.items)


def _page(items: list, offset: int = 0, limit: int = PAGE_ROWS) -> Listed:
    return Listed(items=items[offset:offset + limit], total=len(items), offset=offset, limit=limit)


def documents_page(store: KgStore, wanted_format: Optional[str] = None, offset: int = 0,
                   limit: int = PAGE_ROWS) -> Listed:
    """The documents (of one format), by file name, from ``offset``."""
    documents = store.document_summaries()
    if wanted_format:
        documents = [document for document in documents if document.format == wanted_format]
    listed = _page(documents, offset, limit)
    versions = store.versions.version_numbers() if listed.items else {}
    for document in listed.items:  # two decodes of one file name apart: which version is which
        document.versions = versions.get(document.document)
        # counted for the page's documents only (each count reads that document's chunks)
        document.chunks = store.document_chunk_count(document.document)
        document.facts = store.document_fact_count(document.document)
    return listed


@dataclass
class AuditPage:
    """A shipped audit's rows (at most :data:`PAGE_ROWS`) and which of their IRIs are documents."""

    rows: Rows
    total: int
    held: set[str] = field(default_factory=set)  # a failed file's IRI names no document page


def audit_page(store: KgStore, name: str) -> AuditPage:
    table = audit_rows(store, name)
    shown = Rows(columns=table.columns, rows=table.rows[:PAGE_ROWS])
    named = {value for row in shown.rows for value in row if isinstance(value, str) and value.startswith("urn:")}
    return AuditPage(rows=shown, total=len(table.rows), held={iri for iri in named if store.has_document(iri)})


@dataclass
class DocumentPage:
    """What a document's page shows: the document, a page of its chunks and of its facts, and the
    versions of the sources it is a version of."""

    document: DocumentView
    chunks: Listed
    facts: Listed
    sources: list[SourceVersionsView] = field(default_factory=list)


def document_page(store: KgStore, iri: str) -> DocumentPage:
    # The first page of facts, read without sorting every fact (queries/document_facts_first.rq: its
    # LIMIT is PAGE_ROWS), then sorted as document_facts sorts them; and their count.
    first = sorted(store.document_facts_first(iri)[:PAGE_ROWS],
                   key=lambda row: (row.chunk_index, row.subgraph, str(row.s), str(row.p), str(row.o)))
    facts = Listed(items=[fact_view(row) for row in first], total=store.document_fact_count(iri))
    return DocumentPage(document=document_view(store, iri), chunks=_page(document_chunks(iri, store=store)),
                        facts=facts, sources=document_source_versions(store, iri))


def diff(store: KgStore, old: str, new: str) -> VersionDiff:
    return diff_documents(old, new, store=store)


def diff_page(store: KgStore, old: str, new: str) -> DiffView:
    """The diff with the pages it changed and their boxes, for the side-by-side view."""
    return diff_view(store, diff_documents(old, new, store=store))


READS: dict[str, Callable] = {read.__name__: read for read in (
    store_overview, documents_page, dashboard, audit_page, document_page, document_view, diff, diff_page)}

__all__ = ["PAGE_ROWS", "READS", "AuditPage", "DocumentPage", "Listed", "audit_page", "diff", "diff_page",
           "document_page", "documents_page"]
