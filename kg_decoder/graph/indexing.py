"""Keeping the text index (:mod:`kg_decoder.graph.text_index`) in step with the graph, for
:class:`~kg_decoder.graph.store.KgStore`, a part of it.

Where the index is: ``text-index.sqlite3`` in the store's folder (an embedded store), in the remote
store's cache folder on this machine (each front end keeps its own), or in the temporary folder of a
store in memory. It is written after each document's commit (``write_document``) and forgets a
document removed through :meth:`remove_document`. When a process that may write the index opens it,
it catches up with the graph: every decode that ended after the index's watermark (less
:data:`CATCH_UP_MARGIN`, for decodes that ended before another's but committed after it, and for
clocks of several machines) and that the index does not hold is indexed; a crash between a commit and
the index write is repaired so. Where the graph then holds another number of documents than the index
(documents removed behind its back: a user's own update, a server cleared), every document is compared. A remote store's index catches up again at most every
:data:`REMOTE_REFRESH_SECONDS` when searched, from the decodes other machines committed. An embedded
store opened read-only (a server's worker, a snapshot) reads the index its writer keeps and never
writes it. A document removed by a user's own SPARQL update is also dropped when a search meets it,
and the index audit lists what differs.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import warnings
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from typing import Callable, Iterable, Optional

from pyoxigraph import Literal

from ..model import Audit, Rows
from ..model.errors import BlobMissing, KgDecoderError, StoreError
from .text_index import INDEX_FILE, HeldDecode, IndexedText, TextIndex
from .vocabulary import XSD_DATETIME

CATCH_UP_MARGIN = timedelta(hours=1)
REMOTE_REFRESH_SECONDS = 5.0
_START_OF_TIME = "0001-01-01T00:00:00Z"


INDEX_AUDIT = Audit(name="text-index", title="Text index against the graph", kind="finding",
                    finds="documents the text index lacks, holds from another decode, or holds after their removal "
                          "(kg-decoder reindex rebuilds it)")


class StoreTextIndex:
    """The text index's part of a :class:`~kg_decoder.graph.store.KgStore`: opened on first use, kept in
    step with the store's graph (it reads the store's typed reads, ``work_folder`` and ``text``, and
    the rows of its shipped queries, ``rows_of(name, **bindings)``)."""

    def __init__(self, store, rows_of: Callable[..., list[dict]]) -> None:
        self._store = store
        self._rows = rows_of
        self._index: Optional[TextIndex] = None
        self._caught_up = 0.0
        self._lock = threading.RLock()

    @property
    def _keeps_own(self) -> bool:
        return self._store.graph.keeps_own_index

    @property
    def _writable(self) -> bool:
        return self._keeps_own or not self._store.read_only

    def opened(self) -> Optional[TextIndex]:
        """The index, opened (and caught up with the graph, where this process may write it) on first
        use; None for a store opened read-only whose writer has made none yet."""
        with self._lock:
            if self._index is None:
                path = self._store.work_folder() / INDEX_FILE
                if not self._writable and not path.exists():
                    return None
                self._index = TextIndex(path, read_only=not self._writable)
                if self._writable:
                    self.catch_up()
            elif self._keeps_own and time.monotonic() - self._caught_up > REMOTE_REFRESH_SECONDS:
                self.catch_up()
            return self._index

    def close(self) -> None:
        with self._lock:
            if self._index is not None:
                self._index.close()
                self._index = None

    def catch_up(self) -> int:
        """Index every decode the graph holds that ended after the watermark and the index lacks; how many."""
        index = self._index
        watermark = index.watermark()
        since = _START_OF_TIME
        if watermark is not None:
            since = (_parse_time(watermark) - CATCH_UP_MARGIN).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        def lacks(decode: HeldDecode) -> bool:
            held = index.held(decode.document)
            return held is None or held.activity != decode.activity

        indexed = self._index_documents(decode for decode in self._decodes_since(since) if lacks(decode))
        [counted] = self._rows("decoded_document_count")
        if counted["count"] != index.document_count():  # removed behind its back: compare every document
            indexed += self._reconcile_index()
        self._caught_up = time.monotonic()
        return indexed

    def _reconcile_index(self) -> int:
        """The index made to hold what the graph holds, document by document; how many it indexed."""
        index = self._index
        graph = {decode.document: decode for decode in self._decodes_since(_START_OF_TIME)}
        held = index.held_decodes()
        for document in set(held) - set(graph):
            index.remove(document)
        return self._index_documents(decode for document, decode in graph.items()
                                     if document not in held or held[document].activity != decode.activity)

    def _decodes_since(self, since: str) -> list[HeldDecode]:
        """The graph's decodes that ended after ``since`` (an xsd:dateTime), oldest first."""
        return [HeldDecode(row["document"], row["activity"], row["ended"], row.get("file_name"))
                for row in self._rows("decodes_since", since=Literal(since, datatype=XSD_DATETIME))]

    def _index_documents(self, decodes: Iterable[HeldDecode], batch: int = 200) -> int:
        """The documents' texts as the graph holds them into the index, ``batch`` documents a transaction."""
        indexed, pending = 0, []
        for decode in decodes:
            try:
                texts = self._texts_of(decode.document)
            except BlobMissing:  # the library lost a text's bytes (its audit names them): the others go on
                continue
            pending.append((decode, texts))
            if len(pending) == batch:
                indexed += self._index.put_many(pending)
                pending = []
        return indexed + (self._index.put_many(pending) if pending else 0)

    def _texts_of(self, document: str) -> list[IndexedText]:
        return [IndexedText(document, segment.segment, segment.kind, segment.index,
                            self._store.text(segment.sha256, segment.segment), segment.page_number)
                for segment in self._store.text_segments(document)]

    def _index_document(self, document: str) -> bool:
        """Put the document's texts as the graph holds them into the index (or take it out)."""
        index = self._index
        decodes = self._rows("indexed_decode", document=document)
        if not decodes:
            index.remove(document)
            return False
        decode = decodes[0]
        held = HeldDecode(document, decode["activity"], decode["ended"], decode.get("file_name"))
        return index.put(held, self._texts_of(document))

    def open_before_commit(self) -> None:
        """Before a document's commit: the index opened now on first use, so that catching up with the
        graph does not index the document the commit adds, which :meth:`add_committed` then indexes
        again (a store's first write). A failure here leaves the index closed: :meth:`add_committed`
        opens it again and reports."""
        if self._keeps_own or self._index is not None:
            return
        with self._lock:
            try:
                self.opened()
            except (KgDecoderError, sqlite3.Error, OSError):
                self.close()

    def add_committed(self, document: str) -> None:
        """After a document's commit: its texts into the index. A failure here leaves the graph as
        committed and is repaired when the index is next opened (a warning says so)."""
        if self._keeps_own and self._index is None:
            return  # a remote store's index is a searcher's cache, caught up when it searches: a writer keeps none
        try:
            with self._lock:
                if self.opened() is not None:
                    self._index_document(document)
        except (KgDecoderError, sqlite3.Error, OSError) as exc:
            warnings.warn(f"the text index missed {document}: {exc} (repaired when the store is next opened, "
                          f"or by kg-decoder reindex)", stacklevel=2)

    def drop(self, document: str) -> None:
        with self._lock:
            index = self.opened()
            if index is not None and self._writable:
                index.remove(document)

    def search(self, quote: str, after: int, count: int,
                     seconds: Optional[float] = None) -> Optional[tuple[list[IndexedText], Optional[int]]]:
        """A window of the texts that may hold ``quote`` (see :meth:`TextIndex.candidates`); None without an index."""
        index = self.opened()
        return None if index is None else index.candidates(quote, after, count, seconds)

    def forget_removed(self, document: str) -> None:
        """A document a search met in the index that the graph no longer holds (removed by a user's
        update): out of the index, where this process may write it."""
        if self._writable and self._index is not None and not self._store.has_document(document):
            self._index.remove(document)

    def rebuild(self) -> int:
        """Rebuild the index from the graph; how many documents it holds after."""
        if not self._writable:
            raise StoreError(f"the store at {self._store.location} is open read-only: its text index is its writer's")
        with self._lock:
            index = self.opened()
            index.clear()
            self._index_documents(self._decodes_since(_START_OF_TIME))
            index.optimize()
            return len(index.held_decodes())

    def audit(self) -> Audit:
        """The index against the graph: documents it lacks, holds from another decode, or holds that
        the graph no longer does (none: in step)."""
        index = self.opened()
        held = index.held_decodes() if index is not None else {}
        graph = {decode.document: decode.activity for decode in self._decodes_since(_START_OF_TIME)}
        rows = []
        for document, activity in sorted(graph.items()):
            if document not in held:
                rows.append((document, "not in the index"))
            elif held[document].activity != activity:
                rows.append((document, "another decode in the index"))
        rows += [(document, "in the index, not in the graph") for document in sorted(set(held) - set(graph))]
        return replace(INDEX_AUDIT, table=Rows(columns=["document", "problem"], rows=rows))


def _parse_time(value: str) -> datetime:
    parsed = datetime.fromisoformat(value)
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=timezone.utc)


__all__ = ["CATCH_UP_MARGIN", "INDEX_AUDIT", "StoreTextIndex"]
