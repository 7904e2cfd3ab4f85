"""The coverage audits: every ``queries/audit-*.rq``, run by name, with what its header says.

Each audit file starts with a comment header::

    # Audit: <title>
    # Finds: <what it finds, possibly over several lines>
    # Kind: finding | report

A *finding* audit lists problems (no rows: nothing found); a *report* audit always has
rows (counts, shares) and never counts as a finding.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Callable, Optional, Union

from ..decode.worker import PartitionWorker, WorkerSetup
from ..graph.indexing import INDEX_AUDIT
from ..graph.opening import open_reader, open_store
from ..graph.queries import shipped_queries
from ..graph.store import KgStore, StorePath
from ..model import Audit, Rows
from ..model.errors import InvalidOption, KgDecoderError, QueryError, QueryTimeout, WorkCrashed

AuditCallback = Callable[[Audit], None]
# A worker that runs audits: nothing to warm up beyond this module; an audit stuck in Oxigraph is
# killed with its worker (a query cannot be stopped otherwise), and the next audit starts another.
AUDIT_WORKER = WorkerSetup(warm_up="kg_decoder.quality.audits:warm_up", idle=False,
                           memory_bytes=8 * 2 ** 30, interruptible=True, name="audit worker")
_AUDIT_TASK = "kg_decoder.quality.audits:audit_table"


def audit_definitions() -> list[Audit]:
    """The shipped audits, in name order, with their headers (no rows).

    >>> [a.name for a in audit_definitions()][:2]
    ['audit-boxes-by-format', 'audit-chunk-anchors-not-verified']
    """
    audits = []
    for query in shipped_queries():
        if not query.name.startswith("audit-"):
            continue
        headers = query.headers
        if headers.get("kind") not in ("finding", "report") or not headers.get("audit"):
            raise QueryError(f"{query.name}.rq needs '# Audit:', '# Finds:' and '# Kind: finding|report' header lines")
        audits.append(Audit(name=query.name, title=headers["audit"], finds=headers.get("finds", ""),
                            kind=headers["kind"]))
    return audits


# Audits of the library beside the graph: not SPARQL, the files are not in the graph.
LIBRARY_AUDITS = [
    Audit(name="library-missing-blobs", title="cited bytes missing from the library", kind="finding",
          finds="library hashes the graph cites (an original, a text, a picture) whose bytes the library "
                "does not hold: removed by hand, or a store copied without its library."),
    Audit(name="library-orphan-blobs", title="library bytes no entity cites", kind="finding",
          finds="library blobs no entity of the graph cites: left by a decode killed between writing its "
                "bytes and committing its quads. `kg-decoder gc` removes them."),
]


def run_audits(store: Union[KgStore, StorePath], timeout: Optional[float] = None,
               started: Optional[AuditCallback] = None, ended: Optional[AuditCallback] = None) -> list[Audit]:
    """Run every audit over the store (the SPARQL audits, the library's and the text index's). Reads only.

    With ``timeout``, each SPARQL audit runs in a worker process within that many seconds (and 8 GB
    of memory beyond what the worker maps at rest): one past it is stopped (its worker killed) and
    given ``error`` (as is one that fails), and the others still run. Without, an audit that fails
    raises. (A store in memory cannot be read by another process: its audits run here, unbounded.)
    ``started`` is told of each audit as it starts, ``ended`` once it has its rows (or its error)
    and ``seconds``.
    """
    if not isinstance(store, KgStore):
        with open_store(store, read_only=True) as opened:
            return run_audits(opened, timeout, started, ended)
    if timeout is not None and not (math.isfinite(timeout) and timeout > 0):
        raise InvalidOption(f"an audit's time limit is a number of seconds over 0, not {timeout}")
    runner = _AuditRunner(store, timeout)
    audits: list[Audit] = []
    bounded = timeout is not None  # unbounded (the Python default), an audit's error is raised as before
    try:
        for audit in audit_definitions():
            audits.append(_run(audit, lambda name=audit.name: runner.table(name), started, ended, bounded))
    finally:
        runner.close()
    for audit, hashes in zip(LIBRARY_AUDITS, (store.missing_blobs, store.orphan_blobs)):
        audits.append(_run(replace(audit), lambda hashes=hashes: Rows(columns=["sha256"], rows=[
            (key,) for key in hashes()]), started, ended, bounded))
    audits.append(_run(replace(INDEX_AUDIT), lambda: store.text_index.audit().table, started, ended, bounded))
    return audits


def _run(audit: Audit, rows: Callable[[], Rows], started: Optional[AuditCallback],
         ended: Optional[AuditCallback], bounded: bool) -> Audit:
    if started is not None:
        started(audit)
    began = time.monotonic()
    try:
        audit.table = rows()
    except KgDecoderError as exc:
        if not bounded:
            raise
        audit.error = str(exc)
    audit.seconds = time.monotonic() - began
    if ended is not None:
        ended(audit)
    return audit


class _AuditRunner:
    """Runs shipped audits by name: in a worker process when they are bounded in time, else here."""

    def __init__(self, store: KgStore, timeout: Optional[float]) -> None:
        self.store, self.timeout = store, timeout
        # The store as committed now: a snapshot of a folder this process writes (never the live
        # folder, which a writer's compaction may change under a reader: see graph/snapshots.py).
        self.location = store.reader_snapshot() if timeout is not None else None
        self.worker: Optional[PartitionWorker] = None
        if self.location is not None:
            self.worker = PartitionWorker(setup=AUDIT_WORKER)
            self.worker.start()  # it warms up while the caller prints

    def table(self, name: str) -> Rows:
        if self.worker is None:
            return self.store.table(name)
        return self.worker.call(_AUDIT_TASK, self.location, name, timeout=self.timeout,
                                timed_out=lambda limit: QueryTimeout(f"did not finish in its time limit of {limit:g} s"),
                                crash=f"the process running {name} died", crashed=WorkCrashed,
                                unexpected=QueryError)

    def close(self) -> None:
        if self.worker is not None:
            self.worker.close()
        if self.location is not None:
            self.store.release_reader(self.location)


_opened: dict[str, KgStore] = {}  # in an audit worker: the store it reads, by where it is


def warm_up() -> None:
    """An audit worker needs nothing more than this module's imports."""


def audit_table(location: tuple, name: str) -> Rows:
    """In an audit worker: the rows of the shipped audit ``name`` over the store at ``location``
    (opened read-only once, kept open for the audits after)."""
    key = repr(location)
    if key not in _opened:
        _opened[key] = open_reader(location)
    return _opened[key].table(name)
