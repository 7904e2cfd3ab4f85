"""A whole store moved between backends: ``kg-decoder export`` and ``import``.

An export is a folder::

    graph.nq      every quad (provenance graph, facts, chunks), N-Quads
    library/      every blob, in the local library's layout (sha256/<2 hex>/<sha256>)

so an embedded store moves to a SPARQL server and an S3 library (or back) with two commands,
and ``graph.nq`` loads into any server that reads N-Quads. An import writes the blobs before the
quads that cite them, and the quads in batches of whole lines (each batch one transaction).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model.errors import StoreError
from .library import Library
from .store import KgStore

GRAPH_FILE = "graph.nq"
_BATCH_BYTES = 32 << 20


@dataclass
class Transferred:
    quads: int
    blobs: int


def export_store(store: KgStore, folder: Path) -> Transferred:
    """Write ``store`` into ``folder`` (new, or empty): the quads first, then the blobs, so that
    every blob a quad cites is there even when a decode commits meanwhile (blobs come before
    their quads)."""
    folder = Path(folder)
    try:
        if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
            raise StoreError(f"{folder} is not an empty folder: export into a new or empty one")
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / GRAPH_FILE, "wb") as output:
            quads = store.dump_nquads(output)
        target = Library(folder / "library")
        blobs = 0
        for key in store.library.keys():
            target.put(store.library.get(key), key)
            blobs += 1
    except OSError as exc:
        raise StoreError(f"cannot write the export into {folder}: {exc.strerror or exc}") from None
    return Transferred(quads=quads, blobs=blobs)


def import_store(store: KgStore, folder: Path) -> Transferred:
    """Load an export into ``store``: blobs first, then the quads (already there: nothing changes)."""
    folder = Path(folder)
    graph = folder / GRAPH_FILE
    if not graph.is_file():
        raise StoreError(f"{folder} holds no {GRAPH_FILE}: not a folder kg-decoder export wrote")
    source = Library(folder / "library")
    blobs = quads = 0
    # Held from the first blob to the last quad: a garbage collector meanwhile would see blobs
    # no quad cites yet.
    with store.library.writing():
        try:
            for key in source.keys():
                if key not in store.library:
                    store.library.put(source.get(key), key)
                blobs += 1
            batch: list[bytes] = []
            size = 0
            with open(graph, "rb") as lines:
                for line in lines:
                    if not line.strip():
                        continue
                    batch.append(line)
                    size += len(line)
                    if size >= _BATCH_BYTES:
                        store.load_nquads(b"".join(batch))
                        quads, batch, size = quads + len(batch), [], 0
            if batch:
                store.load_nquads(b"".join(batch))
                quads += len(batch)
        except OSError as exc:
            raise StoreError(f"cannot read the export in {folder}: {exc.strerror or exc}") from None
    return Transferred(quads=quads, blobs=blobs)


__all__ = ["GRAPH_FILE", "Transferred", "export_store", "import_store"]
