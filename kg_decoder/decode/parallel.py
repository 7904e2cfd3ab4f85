"""Documents decoded several at a time on one machine: each in a worker process of its own (its own
time limit, its own crash), the results handed back in input order.

The CPU work (partitioning, OCR, tables, mapping) is in the worker processes; this process's
threads only read files, wait and commit, so N workers keep N CPUs busy. Commits stay one
document per transaction (the store takes one at a time), and each document's quads do not
depend on which worker decoded it or when: ``--workers 2`` writes what ``--workers 1`` does.
"""

from __future__ import annotations

import os
import queue
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Iterable, Iterator, Optional, TypeVar, Union

from ..model.errors import KgDecoderError, WorkerUnavailable
from .worker import PartitionWorker

READ_AHEAD = 8
Item = TypeVar("Item")
Outcome = TypeVar("Outcome")


def available_cpus() -> int:
    """The CPUs this process may run on (its affinity, not the machine's count)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class WorkerPool:
    """``size`` partition workers, started at once (they warm up side by side), stopped on exit.

    >>> with WorkerPool(1) as pool:
    ...     len(pool.workers)
    1
    """

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        # Each worker's libraries keep to its share of the CPUs (a single worker: all of them).
        share = max(1, available_cpus() // size)
        self.workers = [PartitionWorker(threads=share) for _ in range(size)]
        self._idle: queue.Queue[PartitionWorker] = queue.Queue()
        for worker in self.workers:
            self._idle.put(worker)
        self.closed = False

    def __enter__(self) -> "WorkerPool":
        try:
            for worker in self.workers:
                worker.start()
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.closed = True
        for worker in self.workers:
            worker.close()

    def run(self, job: Callable[[Item, PartitionWorker], Outcome], item: Item) -> Outcome:
        """``job(item, worker)`` with a worker no other job holds meanwhile."""
        worker = self._idle.get()
        if self.closed:  # the batch was stopped: a queued job does not start the workers again
            self._idle.put(worker)
            raise WorkerUnavailable("the batch was stopped")
        try:
            return job(item, worker)
        finally:
            self._idle.put(worker)


def in_input_order(items: Iterable[Item], job: Callable[[Item, Optional[PartitionWorker]], Outcome],
                   pool: Optional[WorkerPool]) -> Iterator[tuple[Item, Union[Outcome, KgDecoderError]]]:
    """``(item, job(item, worker))`` for each item, in the order of ``items``, as many jobs at once
    as ``pool`` has workers (no pool: one after the other here, the worker None: jobs that need none).

    A job's typed error is its outcome (that item failed, the others go on); any other
    exception is a bug and is raised here. Up to :data:`READ_AHEAD` items per worker are in
    flight, so that a long document holding the head of the line does not leave the other
    workers idle (their results wait, in memory, for its turn).
    """
    def guarded(item):
        try:
            return pool.run(job, item) if pool is not None else job(item, None)
        except KgDecoderError as error:
            return error

    if pool is None:
        for item in items:
            yield item, guarded(item)
        return
    workers = len(pool.workers)

    threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="decode")
    pending: deque[tuple[Item, Future]] = deque()
    try:
        for item in items:
            pending.append((item, threads.submit(guarded, item)))
            if len(pending) >= READ_AHEAD * workers:
                done, future = pending.popleft()
                yield done, future.result()
        while pending:
            done, future = pending.popleft()
            yield done, future.result()
    finally:  # stopped early (Ctrl-C, the caller's error): the queued jobs never start
        threads.shutdown(wait=True, cancel_futures=True)


__all__ = ["WorkerPool", "available_cpus", "in_input_order"]
