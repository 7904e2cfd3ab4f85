"""The embedded store's graph: Oxigraph (RocksDB) in a folder, or in memory. The folder::

    kg-store/
      oxigraph/   the RDF store (RocksDB); one process may hold it for writing
      library/    content-addressed bytes (see library.py)
      snapshots/  checkpoints the web server's workers read (see snapshots.py)
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path
from typing import BinaryIO, Iterable, Optional

from pyoxigraph import NamedNode, Quad, RdfFormat, Store

from ..model.errors import MalformedQuery, MalformedUpdate, QueryError, StoreError, StoreLocked, UnknownStore
from .backend import StorePath
from .queries import query_file
from .snapshots import (READER_SNAPSHOTS, drop_all_snapshots, drop_orphan_reader_snapshots, drop_snapshot,
                        take_snapshot)

# A write of this many quads into a store on disk is ingested as RocksDB files Oxigraph's bulk loader
# builds beside the store, not inserted key by key in a transaction: 146 000 quads (an 872-page DOCX)
# 1.4-1.6 against 3.6-4.1 s; 60 documents of 26 000 quads in a row, 14 against 72 s (a transaction
# slows as the store grows). Below about 15 000 quads the files' own cost (ten of them a write) loses.
# Reads right after meet more files until compaction merges them: a point query 0.4 against 0.1 ms,
# the same 20 seconds later.
_INGESTED_FROM_QUADS = 20_000


class EmbeddedGraph:
    """The graph of an embedded store: Oxigraph on disk at ``path``, or in memory when ``path`` is None
    (a part of :class:`~kg_decoder.graph.store.KgStore`, which :mod:`~kg_decoder.graph.opening` composes
    with its library)."""

    undo_is_safe = True  # a failed commit surely wrote nothing
    keeps_own_index = False  # the text index is the store's own, in its folder

    def __init__(self, path: StorePath = None, read_only: bool = False, snapshot: Optional[str] = None,
                 library: Optional[str] = None, library_options: Optional[dict] = None) -> None:
        if path is not None and not isinstance(path, (str, os.PathLike)):
            raise StoreError(f"a store is a folder path (or None for one in memory), not a {type(path).__name__}")
        self.path = Path(path) if path is not None else None
        self.location = str(self.path) if self.path is not None else "in memory"
        self.read_only = read_only
        self._library_arguments = (library, library_options)  # as readers in other processes open it
        self._snapshots_taken = 0
        self._lent_snapshot: Optional[Path] = None
        if self.path is None:
            self.oxigraph = Store()
            return
        graph_path = Path(snapshot) if snapshot is not None and read_only else self.path / "oxigraph"
        try:
            if read_only:
                if not graph_path.is_dir():
                    raise UnknownStore(f"there is no store at {self.path}")
                self.oxigraph = _read_only_graph(str(graph_path))
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                self.oxigraph = Store(str(graph_path))
                _drop_cut_off_loads(graph_path)
        except (OSError, ValueError, RuntimeError) as exc:  # ValueError: a NUL in the path
            if "lock" in str(exc).lower():
                raise StoreLocked(
                    f"the store at {self.path} is in use by another process (a running kg-decoder serve?): "
                    f"stop it, or send the files to it with kg-decoder decode --server URL --token TOKEN"
                ) from None
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from None

    def __len__(self) -> int:
        return len(self.oxigraph)

    # ------------------------------------------------------------ readers in other processes

    def reader_location(self) -> Optional[tuple]:
        if self.path is None:
            return None
        library, options = self._library_arguments
        return ("embedded", str(self.path), library, options, None)

    def readers_location(self, generation: int) -> tuple:
        """A snapshot of the store as committed now (see :mod:`~kg_decoder.graph.snapshots`): readers
        never open the folder this process writes. (Opened read-only, it writes nothing: the folder.)
        The caller holds the store's commit lock."""
        if self.read_only:
            return self.reader_location()
        if not self._snapshots_taken:
            drop_all_snapshots(self.path)  # left by a server of this store that stopped
        self._snapshots_taken += 1
        snapshot = take_snapshot(self.oxigraph, self.path, f"{generation}-{self._snapshots_taken}")
        return self.reader_location()[:-1] + (str(snapshot),)

    def reader_snapshot(self, generation: int) -> tuple:
        """Opened read-only, a snapshot of its own (its name: this process and a count) where the folder
        lets one be written: another process may be writing the folder, whose compactions a second
        reader opening it later would not survive (see :mod:`~kg_decoder.graph.snapshots`)."""
        if not self.read_only:
            return self.readers_location(generation)
        if not self._snapshots_taken:
            drop_orphan_reader_snapshots(self.path)
        self._snapshots_taken += 1
        try:
            snapshot = take_snapshot(self.oxigraph, self.path, f"{os.getpid()}-{self._snapshots_taken}",
                                     folder=READER_SNAPSHOTS)
        except StoreError:  # a folder this user may only read: its readers open it as it is
            return self.reader_location()
        return self.reader_location()[:-1] + (str(snapshot),)

    def release_reader(self, location: tuple) -> None:
        if location[-1] is not None:
            drop_snapshot(location[-1])

    @contextlib.contextmanager
    def lend_writer(self):
        """Let another process write the store meanwhile: this writer is closed, reads go to a snapshot
        taken now, and the writer is opened again afterwards, with what the other process committed.
        The caller holds the store's commit lock. StoreError in memory or opened read-only."""
        if self.path is None or self.read_only or self.oxigraph is None:
            raise StoreError(f"the store at {self.location} cannot be written by another process")
        graph_path = str(self.path / "oxigraph")
        if self._lent_snapshot is not None:  # the last lend's: its reads are long done
            drop_snapshot(self._lent_snapshot)
        self._snapshots_taken += 1
        self._lent_snapshot = take_snapshot(self.oxigraph, self.path, f"lent-{self._snapshots_taken}")
        self.oxigraph = _read_only_graph(str(self._lent_snapshot))  # the writer's last reference goes
        try:
            yield
        finally:
            self.oxigraph = None
            self.oxigraph = _writable_graph(graph_path)

    # ------------------------------------------------------------ queries and writes

    def evaluate(self, query: str, options: dict, streamed: bool = False):
        options.pop("timeout", None)  # cannot be interrupted here: isolate the caller instead (serve/workers.py)
        try:  # Oxigraph's results are evaluated as they are consumed
            return self.oxigraph.query(query, **options)
        except SyntaxError as exc:
            raise MalformedQuery(f"the query does not parse: {exc}") from None
        except ValueError as exc:  # an IRI of a graph that is not one
            raise QueryError(str(exc)) from None

    def load(self, nquads: bytes, mapped: bool = False) -> None:
        """A large write of quads kg-decoder ``mapped`` goes through the bulk loader: as atomic as a
        transaction (Oxigraph >= 0.5 builds every file first and ingests them all at commit in one
        RocksDB ``IngestExternalFiles``, which records all or none; a load that fails or is cut off
        leaves at most its unused files, removed at the next open for writing) in half the time. Only
        mapped quads: on four CPUs or more the loader parses slices side by side, each naming blank
        nodes apart, and a mapping writes none."""
        try:
            if mapped and self.path is not None and nquads.count(b"\n") >= _INGESTED_FROM_QUADS:
                self.oxigraph.bulk_load(nquads, format=RdfFormat.N_QUADS)
            else:
                self.oxigraph.load(nquads, format=RdfFormat.N_QUADS)
        except SyntaxError as exc:
            raise MalformedUpdate(f"the N-Quads do not parse: {str(exc)[:200]}") from None

    def update(self, update: str, repeatable: bool = True) -> None:
        try:
            self.oxigraph.update(update)
        except SyntaxError as exc:
            raise MalformedUpdate(f"the update does not parse: {exc}") from None

    def quads(self, graph: Optional[NamedNode] = None) -> Iterable[Quad]:
        return self.oxigraph.quads_for_pattern(None, None, None, graph)

    def dump_nquads(self, output: BinaryIO) -> int:
        self.oxigraph.dump(output, format=RdfFormat.N_QUADS)
        return len(self.oxigraph)

    def cited_blobs_now(self) -> Optional[set[str]]:
        """Opened read-only beside a writer: the library hashes the writer has committed up to now.
        None where this graph's own reads are current."""
        if not (self.read_only and self.path is not None):
            return None
        graph = _read_only_graph(str(self.path / "oxigraph"))
        return {row["sha256"].value for row in graph.query(query_file("library_references").text)}

    def flush(self) -> None:
        if self.path is not None and not self.read_only and self.oxigraph is not None:
            self.oxigraph.flush()

    def close(self) -> None:
        """Flush and release the graph (Oxigraph frees its lock when the last reference goes)."""
        if getattr(self, "oxigraph", None) is None:
            return
        self.flush()
        self.oxigraph = None


def _read_only_graph(path: str, attempts: int = 10) -> Store:
    """The store at ``path`` as its writer has committed it up to now (a snapshot), opened beside the
    writer; tried again while the writer's compaction removes a file the opening reads."""
    for attempt in range(attempts):
        try:
            return Store.read_only(path)
        except (OSError, RuntimeError) as exc:
            if attempt == attempts - 1:
                raise StoreError(f"cannot read the store at {path} while it is written: {exc}") from None
            time.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")


def _drop_cut_off_loads(graph_path: Path) -> None:
    """The files of a bulk load that failed or was cut off (Oxigraph builds them as ``bulk-*.sst`` beside
    the store's own, which RocksDB never names so; ingesting copies them): never part of the store, and
    no other load is under way while this process alone holds the store for writing."""
    for leftover in graph_path.glob("bulk-*.sst"):
        leftover.unlink(missing_ok=True)


def _writable_graph(path: str, wait: float = 30.0) -> Store:
    """The store at ``path`` opened for writing, waiting up to ``wait`` seconds for another process
    (the one it was lent to) to release it."""
    deadline = time.monotonic() + wait
    while True:
        try:
            graph = Store(path)
            _drop_cut_off_loads(Path(path))
            return graph
        except (OSError, RuntimeError) as exc:
            if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                raise StoreError(f"cannot open the store at {path} for writing again: {exc}") from None
            time.sleep(0.05)


__all__ = ["EmbeddedGraph"]
