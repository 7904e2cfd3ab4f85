"""Untrusted work of the web server in worker processes that can be killed: a pool of warm workers.

Oxigraph cannot stop a query once it has started, some queries crash its process, and a trace
or a page drawing of hostile bytes may run long or take gigabytes. So the server does none of
that itself: each such request borrows a worker of the pool (:data:`READING`: the process runner
of :mod:`kg_decoder.decode.worker`), which runs the task in :mod:`kg_decoder.serve.worker_tasks`
under the request's limits:

- a wall-clock limit that stops the task (interrupted, so the worker stays warm; killed when it
  does not stop in time, stuck in Oxigraph), and a CPU-time limit the kernel enforces;
- an address-space limit (``RLIMIT_AS``) beyond what the warm worker maps;
- the client going away (waitress tells) stops the task the same way.

A worker that dies costs that one request (a typed error naming the limit) and is replaced at once
by a spare kept warm for that (a worker takes a second or more to start); a new spare starts in
the background. A client that goes away has its task interrupted; one stuck in Oxigraph runs on
to its time limit rather than be killed (a kill would cost a worker's start each time a client
hangs up). The pool also rations itself: at most ``size`` tasks at once (``ServerBusy`` past that, at once
but for the short wait below, so that no request thread waits behind them), at most ``per_client`` of them for one client address
(one client cannot take every worker), and a task still running after ``slow_after`` seconds is
niced, so that new, short tasks pass it on the CPU. The pool's size stays below the server's
threads, so static files and cheap pages always find a thread.

Expensive requests cannot take every worker: ``reserve`` of them (one, where the pool holds more than
one client's share: the pictures a trace page draws two at a time must not find one kept) are kept
for short tasks. A task takes one of the others while one is free; past them, it may take
a reserved worker, but only for :data:`RESERVED_SECONDS` (a task still running then is stopped and
answered ``ServerBusy``), and only for a client that holds no other worker and had no task run long
(that long, on a warm worker) in the last :data:`LONG_RUNNER_SECONDS`; such a client, finding the reserved
workers taken too, waits for one :data:`RESERVED_WAIT_SECONDS` at most (they are free by then: a
task stuck in Oxigraph is killed a second after its limit), two requests a reserved worker at most
(each holds a server thread), any other is answered ``ServerBusy`` at once. Four runaway queries from four
addresses thus take three workers and, for two seconds, the fourth; an ``ASK {}`` or a page read
from anyone else still finds it.

The workers read an embedded store through snapshots (:mod:`kg_decoder.graph.snapshots`), never
the folder the server writes; after each commit the idle workers open the new snapshot in the
background (:meth:`KgStore.share_with_readers`), so a request's task rarely waits for that, and a
snapshot no worker reads any more is removed. A store in memory cannot be opened by another
process: :func:`worker_pool` gives None and the caller runs the work itself, in threads, as before.
"""

from __future__ import annotations

import atexit
import logging
import os
import threading
import time
from collections import Counter
from typing import Callable, Optional

from ..decode.worker import PartitionWorker, WorkerSetup
from ..graph.snapshots import drop_snapshot
from ..graph.store import KgStore
from ..model.errors import KgDecoderError, ServerBusy, WorkCrashed, WorkerUnavailable

TASKS = "kg_decoder.serve.worker_tasks"
DEFAULT_WORKERS = 4
DEFAULT_MEMORY_MB = 1024
DEFAULT_CLIENT_SLOTS = 2
RESERVED_SECONDS = 2.0  # how long a task may hold a reserved worker
RESERVED_WAIT_SECONDS = RESERVED_SECONDS + 2.0  # its task stopped, or its worker killed after a grace
LONG_RUNNER_SECONDS = 30.0  # a client whose task ran long that recently gets no reserved worker
SLOW_AFTER_SECONDS = 1.0
_WAIT_FOR_WORKER_SECONDS = 5.0  # a worker briefly opening the store again, or starting
_log = logging.getLogger(__name__)


def reading_setup(memory_bytes: int) -> WorkerSetup:
    return WorkerSetup(warm_up=f"{TASKS}:warm_up", idle=False, memory_bytes=memory_bytes,
                       interruptible=True, name="server's worker")


class WorkerPool:
    """Up to ``size`` warm workers for untrusted work; see the module's description.

    >>> pool = WorkerPool(size=1)  # its workers start when they are first used, or by start()
    >>> pool.close()
    """

    def __init__(self, size: int = DEFAULT_WORKERS, memory_bytes: int = DEFAULT_MEMORY_MB * 2 ** 20,
                 per_client: int = DEFAULT_CLIENT_SLOTS, slow_after: float = SLOW_AFTER_SECONDS,
                 reserve: Optional[int] = None) -> None:
        if size < 1 or per_client < 1:
            raise ValueError("a pool needs at least one worker and one slot per client")
        self.size, self.per_client, self.slow_after = size, per_client, slow_after
        # A client's share (the two page pictures a trace draws at once) always fits the workers not kept.
        self.reserve = max(0, min(1 if reserve is None else reserve, size - per_client))
        self.setup = reading_setup(memory_bytes)
        self._changed = threading.Condition()
        self._workers: list[PartitionWorker] = []
        self._idle: list[PartitionWorker] = []
        self._spares: list[PartitionWorker] = []  # started, not in the pool: a dead worker's successor
        self._writer: Optional[PartitionWorker] = None  # runs updates only (see write)
        self._held = 0
        self._held_reserved = 0  # of _held, the tasks on a reserved worker
        self._by_client: Counter = Counter()
        self._long_runners: dict[str, float] = {}  # client -> when a task of theirs last ran long
        self._waiting = 0  # requests waiting for a reserved worker (at most twice as many as there are)
        self._stores: dict[str, tuple] = {}  # a store -> where to read it now
        self._issued: dict[str, list[tuple]] = {}  # a store -> the places it was read at, oldest first
        self._opened: dict[int, dict[str, tuple]] = {}  # id(worker) -> store -> where that worker reads it
        self._behind: set[int] = set()  # id() of workers that may not read the stores as they are now
        self._refreshing = False
        self.cpus: Optional[set[int]] = _worker_cpus  # where the workers run (None: where this process does)
        self.closed = False

    def spread(self, cpus: set[int]) -> None:
        """Run every worker, those started from now on too, on these CPUs (``serve`` keeps its own
        threads off the decoding worker's CPU, but a request's worker may use it: the decoder runs at
        idle priority and gives way, where on the server's CPUs alone the workers and the threads
        shared one CPU while the decoder had the other)."""
        with self._changed:
            self.cpus = set(cpus)
            for worker in [*self._workers, *self._spares, *([self._writer] if self._writer else [])]:
                worker.pin(self.cpus)

    def _new_worker(self) -> PartitionWorker:
        worker = PartitionWorker(setup=self.setup)
        if self.cpus:
            worker.pin(self.cpus)
        return worker

    def start(self) -> None:
        """Start every worker now (they warm up side by side in the background): a request then finds
        one warm, instead of waiting seconds for one to start."""
        with self._changed:
            while len(self._workers) < self.size:
                self._add_worker(start=True)
            while len(self._spares) < self.per_client:  # one client may lose that many at once
                spare = self._new_worker()
                spare.start()
                self._spares.append(spare)
                self._behind.add(id(spare))

    # ------------------------------------------------------------ running a task

    def run(self, task: str, store: KgStore, *args, client: str = "", timeout: float, crash: str,
            timed_out: Callable[[float], KgDecoderError], cancelled: Optional[Callable[[], bool]] = None,
            crashed: Callable[[str], KgDecoderError] = WorkCrashed):
        """``task`` (a function of :mod:`~kg_decoder.serve.worker_tasks`) run over ``store`` (as it is
        now, see :func:`worker_pool`) in a worker within ``timeout`` seconds, wall-clock and CPU; its
        value, or its typed error raised here.

        ServerBusy when every worker, or this ``client``'s share of them, is taken; ``timed_out(timeout)``
        past the time limit; RequestCancelled once ``cancelled()``; ``crashed(crash)`` (WorkCrashed)
        when the worker dies of the input; MemoryLimit or CpuLimit when it dies of its limit.
        """
        key = _key(store.reader_location())
        worker, reserved = self._acquire(client)
        was_warm = worker.warm()  # a task that waited for its worker to start did not run long itself
        if reserved and timeout > RESERVED_SECONDS:
            timeout, timed_out = RESERVED_SECONDS, _cut_on_reserve
        with self._changed:
            location = self._stores[key]
            self._opened.setdefault(id(worker), {})[key] = location  # it opens that, and closes the one before
        started = time.monotonic()
        slowed = [False]

        def watch() -> bool:
            if not slowed[0] and time.monotonic() - started > self.slow_after:
                slowed[0] = _lower_priority(worker.pid)
            return cancelled is not None and cancelled()

        try:
            return worker.call(f"{TASKS}:{task}", location, *args, timeout=timeout, cpu_seconds=timeout + 5,
                               crash=crash, cancelled=watch, timed_out=timed_out, unexpected=_bug, crashed=crashed)
        finally:
            if was_warm and time.monotonic() - started >= RESERVED_SECONDS:
                with self._changed:
                    self._ran_long(client)  # forgets the clients that ran long too long ago
                    self._long_runners[client] = time.monotonic()
            self._release(worker, client, retire=slowed[0] and not _restore_priority(worker.pid), reserved=reserved)

    def write(self, task: str, *args, timeout: float, crash: str, timed_out: Callable[[float], KgDecoderError],
              crashed: Callable[[str], KgDecoderError] = WorkCrashed):
        """``task`` run in the pool's one writing worker, which opens the store for writing (while the
        server has lent it its writer) and never reads for a request: no process holds the store both
        ways. Writes come one at a time (the server's write lock); stopped and typed as :meth:`run`'s."""
        with self._changed:
            if self.closed:
                raise WorkerUnavailable("the server is stopping")
            if self._writer is None:
                self._writer = self._new_worker()
            writer = self._writer
        try:
            return writer.call(f"{TASKS}:{task}", *args, timeout=timeout, cpu_seconds=timeout + 5, crash=crash,
                               timed_out=timed_out, unexpected=_bug, crashed=crashed)
        finally:
            if _worn(writer.pid, self.setup.memory_bytes):
                writer.close()

    def _acquire(self, client: str) -> tuple[PartitionWorker, bool]:
        """A worker for ``client``'s task, and whether it is a reserved one (see the module)."""
        deadline = time.monotonic() + _WAIT_FOR_WORKER_SECONDS
        with self._changed:
            if self.closed:
                raise WorkerUnavailable("the server is stopping")
            if self._by_client[client] >= self.per_client:
                raise ServerBusy(f"this client has {self.per_client} requests of this kind running; wait for one "
                                 f"to finish")
            waited = time.monotonic() + RESERVED_WAIT_SECONDS  # a reserved worker is free by then
            while True:
                if self._held - self._held_reserved < self.size - self.reserve:
                    reserved = False
                    break
                if not self.reserve:
                    raise ServerBusy(f"all {self.size} of the server's workers are busy; try again")
                if self._by_client[client] > 0 or self._ran_long(client):
                    raise ServerBusy(f"the server's workers are busy with long requests, and the {self.reserve} kept "
                                     f"for short ones are not for a client whose requests run long; try again")
                if self._held_reserved < self.reserve:
                    reserved = True
                    break
                if self._waiting >= 2 * self.reserve:  # a waiting request holds a server thread
                    raise ServerBusy(f"all {self.size} of the server's workers are busy; try again")
                self._waiting += 1
                try:
                    free = self._changed.wait(max(0.0, waited - time.monotonic()))
                finally:
                    self._waiting -= 1
                if not free and time.monotonic() >= waited:
                    raise ServerBusy(f"all {self.size} of the server's workers are busy; try again")
                if self.closed:
                    raise WorkerUnavailable("the server is stopping")
            self._held += 1
            self._held_reserved += reserved
            self._by_client[client] += 1
            while not self._idle:
                if len(self._workers) < self.size:
                    self._add_worker(start=False)
                    break
                if not self._changed.wait(max(0.0, deadline - time.monotonic())):
                    self._held -= 1
                    self._held_reserved -= reserved
                    self._by_client[client] -= 1
                    raise ServerBusy("the server's workers are busy; try again")
            warm = [candidate for candidate in self._idle if candidate.warm()]
            worker = warm[-1] if warm else self._idle[-1]  # the last used: its caches are warm too
            self._idle.remove(worker)
            if not self._idle and len(self._workers) < self.size:
                self._add_worker(start=True)  # a spare warms up for the next request
            return worker, reserved

    def _ran_long(self, client: str) -> bool:
        """Whether a task of ``client``'s ran long lately (under the lock); forgets the older ones."""
        now = time.monotonic()
        for other, when in list(self._long_runners.items()):
            if now - when > LONG_RUNNER_SECONDS:
                del self._long_runners[other]
        return client in self._long_runners

    def _release(self, worker: PartitionWorker, client: str, retire: bool, reserved: bool = False) -> None:
        if retire or _worn(worker.pid, self.setup.memory_bytes):  # a fresh worker instead (see _worn)
            worker.close()
        with self._changed:
            if worker.pid is None:
                self._opened.pop(id(worker), None)  # the process that read those snapshots is gone
            if worker.pid is None and not self.closed:  # killed, dead or retired: a warm spare takes its place
                warm = [spare for spare in self._spares if spare.warm()]
                if warm:
                    self._spares.remove(warm[0])
                    self._spares.append(worker)
                    self._workers[self._workers.index(worker)] = warm[0]
                    worker, successor = warm[0], worker
                else:
                    successor = worker
                successor.start()  # warms up now, not on the next request
                self._behind.add(id(successor))
            self._held -= 1
            self._held_reserved -= reserved
            self._by_client[client] -= 1
            if self._by_client[client] <= 0:
                del self._by_client[client]
            self._idle.append(worker)
            self._changed.notify_all()  # a task waiting for a worker, or for a reserved one
        self._refresh_soon()

    def _add_worker(self, start: bool) -> None:
        worker = self._new_worker()
        self._workers.append(worker)
        self._idle.append(worker)
        self._behind.add(id(worker))
        if start:
            worker.start()

    # ------------------------------------------------------------ the store changed

    def store_changed(self, location: tuple) -> None:
        """A store was committed (or is served from now): each idle worker, and each spare, opens it
        where ``location`` says, off the request path (a request's task does it itself when it must)."""
        key = _key(location)
        with self._changed:
            self._stores[key] = location
            issued = self._issued.setdefault(key, [])
            if location not in issued:
                issued.append(location)
            self._behind.update(id(worker) for worker in self._workers + self._spares)
            self._drop_unread()
        self._refresh_soon()

    def _drop_unread(self) -> None:
        """Remove the snapshots no worker reads any more (but each store's latest); under the lock."""
        reading = {repr(place) for opened in self._opened.values() for place in opened.values()}
        for key, places in self._issued.items():
            latest = self._stores[key]
            for place in list(places):
                if place != latest and repr(place) not in reading:
                    places.remove(place)
                    if place[0] == "embedded" and place[-1] is not None:
                        drop_snapshot(place[-1])

    def _refresh_soon(self) -> None:
        with self._changed:
            if self._refreshing or not self._behind or not self._stores or self.closed:
                return
            self._refreshing = True
        threading.Thread(target=self._refresh, name="kg-worker-refresh", daemon=True).start()

    def _refresh(self) -> None:
        """Open the stores again in the workers behind, one at a time, each while it is idle and warm;
        ends when none is left (a worker still warming up is waited for)."""
        while True:
            with self._changed:
                behind = [w for w in self._idle + self._spares if id(w) in self._behind]
                ready = [w for w in behind if w.warm()]
                if self.closed or not behind:
                    self._refreshing = False
                    return
                if ready:
                    worker = ready[0]
                    spare = worker in self._spares
                    (self._spares if spare else self._idle).remove(worker)
                    self._behind.discard(id(worker))
                    stores = list(self._stores.values())
            if not ready:
                time.sleep(0.2)
                continue
            try:
                for location in stores:
                    with self._changed:
                        self._opened.setdefault(id(worker), {})[_key(location)] = location
                    worker.call(f"{TASKS}:refresh", location, timeout=60.0, unexpected=_bug)
            except Exception:  # the next task opens the store itself, or starts a new worker
                _log.debug("a worker could not open the store again", exc_info=True)
            with self._changed:
                if worker.pid is None:
                    self._opened.pop(id(worker), None)
                (self._spares if spare else self._idle).append(worker)
                self._drop_unread()
                self._changed.notify()

    def close(self) -> None:
        with self._changed:
            self.closed = True
            workers = self._workers + self._spares + ([self._writer] if self._writer else [])
        for worker in workers:
            worker.close()


def _worn(pid: Optional[int], memory_bytes: Optional[int]) -> bool:
    """Whether a worker has taken more than three quarters of the address space it may take beyond
    what it mapped at rest: a task interrupted in Oxigraph, or one that grew the heap, may leave it
    so, and the next task, however small, would then die of the limit. Such a worker is replaced.

    Asked after every task: its limit by a system call (``prlimit``), not read from
    ``/proc/<pid>/limits`` (a file of 17 lines parsed: 60 of 100 µs a request paid)."""
    if pid is None or not memory_bytes:
        return False
    try:
        import resource  # Unix; prlimit and /proc: Linux

        limit = resource.prlimit(pid, resource.RLIMIT_AS)[0]
        with open(f"/proc/{pid}/statm") as statm:
            mapped = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (ImportError, AttributeError, OSError, IndexError, ValueError):  # OSError: the worker is gone
        return False
    return limit != resource.RLIM_INFINITY and mapped - (limit - memory_bytes) > 0.75 * memory_bytes


def _key(location: tuple) -> str:
    """Which store a location reads (an embedded store's folder, or a remote store), whatever snapshot."""
    return repr(location[:2])


def _cut_on_reserve(seconds: float) -> KgDecoderError:
    return ServerBusy(f"the server's workers are busy with long requests; this one ran past the {seconds:g} s a "
                      f"request may hold a worker kept for short ones: try again later")


def _bug(message: str) -> Exception:
    return RuntimeError(f"a worker task failed: {message}")


def _lower_priority(pid: Optional[int]) -> bool:
    """Nice a worker whose task runs long: new tasks pass it on the CPU. Whether it was niced."""
    return pid is not None and _set_priority(pid, 10)


def _restore_priority(pid: Optional[int]) -> bool:
    """Give a niced worker its priority back; False when this process may not (it then retires it)."""
    return pid is None or _set_priority(pid, 0)


def _set_priority(pid: int, niceness: int) -> bool:
    try:
        os.setpriority(os.PRIO_PROCESS, pid, niceness)
        return True
    except (AttributeError, OSError):
        return False


_pools: dict[tuple, WorkerPool] = {}
_pools_lock = threading.Lock()


_worker_cpus: Optional[set[int]] = None  # where the workers of pools made from now on run (spread_workers)


def spread_workers(cpus: set[int]) -> None:
    """Run the workers of this process's pools, and of those it makes from now on, on ``cpus`` (see
    :meth:`WorkerPool.spread`)."""
    global _worker_cpus
    _worker_cpus = set(cpus)
    with _pools_lock:
        for pool in _pools.values():
            pool.spread(_worker_cpus)


def worker_pool(store: KgStore, size: int = DEFAULT_WORKERS, memory_mb: int = DEFAULT_MEMORY_MB,
                per_client: int = DEFAULT_CLIENT_SLOTS, reserve: Optional[int] = None) -> Optional[WorkerPool]:
    """The process's pool of workers with these settings, told of ``store``'s commits; None for a
    store no other process can open (in memory). Pools are shared by the apps of one process (tests
    start many) and stopped at exit."""
    if store.reader_location() is None:
        return None
    key = (size, memory_mb, per_client, reserve)
    with _pools_lock:
        pool = _pools.get(key)
        if pool is None or pool.closed:
            pool = _pools[key] = WorkerPool(size, memory_mb * 2 ** 20, per_client, reserve=reserve)
            pool.start()
            atexit.register(pool.close)
    store.share_with_readers(pool.store_changed)  # now, and after each commit: the workers open it
    return pool
