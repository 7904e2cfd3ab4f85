"""What holds a store's graph: the part of :class:`~kg_decoder.graph.store.KgStore` that evaluates
queries and takes writes. Two kinds: :class:`~kg_decoder.graph.embedded_store.EmbeddedGraph`
(Oxigraph in a folder or in memory, the only class that opens Oxigraph) and
:class:`~kg_decoder.graph.remote_store.RemoteGraph` (a SPARQL 1.1 server).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import BinaryIO, Iterable, Optional, Protocol, Union

from pyoxigraph import NamedNode, Quad

StorePath = Union[str, os.PathLike, None]


class GraphBackend(Protocol):
    path: Optional[Path]  # a local folder for caches (the parse cache, renderings), or None
    location: str  # the store as messages name it
    read_only: bool
    undo_is_safe: bool  # whether a failed commit surely wrote nothing (not so when a server's answer is lost)
    keeps_own_index: bool  # whether the text index is this machine's cache of a graph others write

    def __len__(self) -> int: ...

    def evaluate(self, query: str, options: dict, streamed: bool = False):
        """Oxigraph's kind of result for ``query`` (QuerySolutions, QueryBoolean, or triples to
        iterate and ``serialize``); ``options`` as pyoxigraph's ``Store.query`` takes them, and
        ``timeout`` (seconds for the whole answer, where the backend can stop waiting).
        MalformedQuery when it does not parse, QueryError when it fails. ``streamed``: read as it
        is consumed, so a row cap bounds what is read (a user's query); iterating may then raise
        StoreError when the answer is cut off or damaged."""

    def load(self, nquads: bytes, mapped: bool = False) -> None:
        """Add N-Quads in one transaction; ``mapped``: quads a mapping made (no blank nodes)."""

    def update(self, update: str, repeatable: bool = True) -> None:
        """Run a SPARQL Update in one transaction (MalformedUpdate when it does not parse).
        Not ``repeatable``: a user's update, never sent twice (it may add to what it finds)."""

    def quads(self, graph: Optional[NamedNode] = None) -> Iterable[Quad]:
        """Every quad (of one named graph)."""

    def dump_nquads(self, output: BinaryIO) -> int:
        """Every quad as N-Quads to ``output``; how many."""

    def reader_location(self) -> Optional[tuple]:
        """What another process needs to open the store read-only, or None (in memory)."""

    def readers_location(self, generation: int) -> tuple:
        """Where other processes read the store as committed now (the store's commit lock held)."""

    def reader_snapshot(self, generation: int) -> tuple:
        """Where another process reads the store as committed now, for a while."""

    def release_reader(self, location: tuple) -> None:
        """Another process is done reading at ``location``."""

    def cited_blobs_now(self) -> Optional[set[str]]:
        """The library hashes the graph's writer has committed up to now, where this graph's own
        reads may lag behind it (opened read-only beside a writer); None where they are current."""

    def flush(self) -> None: ...

    def close(self) -> None: ...

    # A graph another process may write while this one lends it its writer (the embedded one) also has
    # ``lend_writer()``, a context manager (see KgStore.writer_lent).


__all__ = ["GraphBackend", "StorePath"]
