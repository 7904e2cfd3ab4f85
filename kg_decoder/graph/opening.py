"""Opening a store by where it is: a folder (embedded), memory, a SPARQL server's URL or a TOML file
describing one; a store for a reader in another process; a store for the span of one call."""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Optional, Union

from ..model.errors import StoreLocked, UnknownStore
from .backend import StorePath
from .embedded_store import EmbeddedGraph
from .library import MemoryLibrary, open_library
from .remote_store import RemoteGraph, StoreConfig, is_remote_location, read_store_config
from .store import KgStore


def open_store(location: Union[StorePath, StoreConfig] = "kg-store", read_only: bool = False,
               library: Optional[str] = None, library_options: Optional[dict] = None,
               create: bool = True) -> KgStore:
    """Open (or create) a store: a folder (the embedded store), ``None`` for one in memory, an
    ``http(s)://`` URL of a SPARQL server, a ``.toml`` file describing one, or a
    :class:`~kg_decoder.graph.remote_store.StoreConfig`.

    ``library`` puts the library elsewhere than ``<folder>/library``: a folder or any fsspec
    URL (``s3://bucket/prefix``, with ``library_options`` such as ``endpoint_url``); a remote
    store needs one. Raises StoreLocked when another process holds an embedded store for
    writing; ``read_only`` opens it all the same, as it is at that moment (RocksDB's read-only
    mode takes no lock). Not transactional itself: each write method of the store is one
    transaction. A folder that holds no store raises UnknownStore when read, or written with
    ``create=False``, and is left as it was.

    >>> import tempfile
    >>> with open_store(tempfile.mkdtemp()) as store:
    ...     store.document_summaries()
    []
    """
    if isinstance(location, StoreConfig) or is_remote_location(location):
        config = location if isinstance(location, StoreConfig) else read_store_config(str(location))
        if library is not None:
            config = config.with_library(library, library_options)
        return remote_store(config, read_only=read_only)
    if not create and location is not None and isinstance(location, (str, os.PathLike)) \
            and not (Path(location) / "oxigraph").is_dir():
        raise UnknownStore(f"there is no store at {location}")
    return embedded_store(location, read_only=read_only, library=library, library_options=library_options)


def embedded_store(path: StorePath, read_only: bool = False, library: Optional[str] = None,
                   library_options: Optional[dict] = None, snapshot: Optional[str] = None) -> KgStore:
    """An Oxigraph store in the folder ``path`` (or in memory) with its library: ``<folder>/library``
    unless ``library`` names another; ``snapshot`` (read-only): a snapshot of the folder's graph."""
    graph = EmbeddedGraph(path, read_only=read_only, snapshot=snapshot, library=library,
                          library_options=library_options)
    if library is None:
        library = None if graph.path is None else graph.path / "library"
    return KgStore(graph, MemoryLibrary() if library is None else open_library(library, library_options))


def remote_store(config: StoreConfig, read_only: bool = False) -> KgStore:
    """A store whose graph is on a SPARQL server and whose library is where ``config`` says."""
    graph = RemoteGraph(config, read_only=read_only)
    try:
        return KgStore(graph, open_library(config.library, config.library_options))
    except BaseException:
        graph.close()
        raise


def open_reader(location: tuple) -> KgStore:
    """A store opened read-only (in another process) from what :meth:`KgStore.share_with_readers`
    told: an embedded store's snapshot, or the same remote store."""
    kind, *details = location
    if kind == "embedded":
        path, library, library_options, snapshot = details
        return embedded_store(path, read_only=True, library=library, library_options=library_options, snapshot=snapshot)
    return remote_store(details[0], read_only=True)


def open_for_reading(location: Union[StorePath, StoreConfig], library: Optional[str] = None,
                     library_options: Optional[dict] = None, on_locked=None) -> KgStore:
    """A store to read: it must exist (UnknownStore, and nothing created, for a location that holds
    none). An embedded store is opened as its own writer would open it, so it reads what is committed;
    only while another process holds it (a running ``kg-decoder serve``) is it opened read-only, as it
    is at that moment (``on_locked`` is told first)."""
    try:
        return open_store(location, library=library, library_options=library_options, create=False)
    except StoreLocked:
        if on_locked is not None:
            on_locked()
        return open_store(location, read_only=True, library=library, library_options=library_options)


def with_store(read_only: bool, create: bool = False):
    """For a public function's keyword ``store``: a KgStore is used as given (and left open); a location
    is opened for the call (:func:`open_for_reading` for a function that only reads) and closed after
    it. The location must hold a store (UnknownStore, and nothing created, for a mistyped one) unless
    ``create`` (decoding and crawling start a store)."""

    def wrap(function):
        @functools.wraps(function)
        def call(*args, store, **kwargs):
            if isinstance(store, KgStore):
                return function(*args, store=store, **kwargs)
            opened = open_for_reading(store) if read_only else open_store(store, create=create)
            with opened:
                return function(*args, store=opened, **kwargs)

        return call

    return wrap


__all__ = ["embedded_store", "open_for_reading", "open_reader", "open_store", "remote_store", "with_store"]
