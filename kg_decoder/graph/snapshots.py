"""Snapshots of an embedded store for readers in other processes (the web server's workers).

pyoxigraph's ``Store.read_only`` opened on a folder that another process writes is not safe: the
writer's compactions delete table files the reader opens only later, and its queries then spin
in the storage iterator instead of failing (measured with pyoxigraph 0.5.13: one read-only
open in three, right after a flush, made a one-quad ASK run for ever). A RocksDB checkpoint is
the supported way: ``Store.backup`` writes, in milliseconds, a folder of hard links to the
store's immutable tables and a copy of its small metadata, as committed at that moment. Nobody
writes a snapshot, so a reader's view cannot move under it; the writer's compactions only
remove their own links. A snapshot is removed once no reader has it open.

    kg-store/snapshots/<generation>/   one snapshot (hard links into kg-store/oxigraph/)
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pyoxigraph import Store

from ..model.errors import StoreError

SNAPSHOTS = "snapshots"
# Snapshots a process that opened the store read-only takes for its own workers (``kg-decoder audit``
# beside a server that writes the store): apart from the writer's, which it drops when it starts.
READER_SNAPSHOTS = "reader-snapshots"


def take_snapshot(graph: Store, store_folder: Path, name: str, folder: str = SNAPSHOTS) -> Path:
    """The store as committed now, in ``<store_folder>/<folder>/<name>`` (which must not exist yet).

    >>> import tempfile
    >>> from pyoxigraph import Store
    >>> folder = Path(tempfile.mkdtemp())
    >>> snapshot = take_snapshot(Store(str(folder / "oxigraph")), folder, "1")
    >>> len(Store.read_only(str(snapshot)))
    0
    """
    target = store_folder / folder / name
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        graph.backup(str(target))
    except (OSError, RuntimeError) as exc:
        raise StoreError(f"cannot take a snapshot of the store at {store_folder}: {exc}") from None
    return target


def drop_snapshot(snapshot: str | Path) -> None:
    """Remove a snapshot (no reader may have it open any more); only a folder inside a snapshots folder."""
    path = Path(snapshot)
    if path.parent.name in (SNAPSHOTS, READER_SNAPSHOTS):
        shutil.rmtree(path, ignore_errors=True)


def drop_all_snapshots(store_folder: Path) -> None:
    """Remove the snapshots a process that served the store before left behind."""
    shutil.rmtree(store_folder / SNAPSHOTS, ignore_errors=True)


def drop_orphan_reader_snapshots(store_folder: Path) -> None:
    """Remove the reader snapshots of processes that are gone (killed before they dropped their own)."""
    for snapshot in (store_folder / READER_SNAPSHOTS).glob("*-*"):
        pid = snapshot.name.split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(snapshot, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True

