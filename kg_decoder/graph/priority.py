"""Reads before writes in one process: commits and the storage engine's own threads at low priority.

The web server answers queries on the threads of its pool while uploads are committed.
A commit (Oxigraph parsing and inserting N-Quads, RocksDB flushing and compacting) runs
outside the GIL but on the same CPUs, and at equal priority a query thread waits for its
turn behind it. Here the commits run on one thread of their own and RocksDB's background
threads are niced: both still progress (a niced thread keeps a small share; it is not
starved), and a waking query thread preempts them. Linux only; elsewhere a no-op.
"""

from __future__ import annotations

import os
import queue
import threading
from concurrent.futures import Future
from typing import Callable, TypeVar

T = TypeVar("T")
LOW_PRIORITY = 19  # the nicest nice


def lower_thread(native_id: int) -> None:
    """Give one thread (a Linux thread id) the lowest priority; an unprivileged process may always do this."""
    try:
        os.setpriority(os.PRIO_PROCESS, native_id, LOW_PRIORITY)
    except (AttributeError, OSError):
        pass


def make_idle(pid: int) -> None:
    """Run a process (the decoding worker) only on CPU time nothing else wants: SCHED_IDLE, which any
    waking thread preempts at once (a positive nice value still takes its share of slices)."""
    try:
        os.sched_setscheduler(pid, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):  # not Linux
        try:
            os.setpriority(os.PRIO_PROCESS, pid, 10)
        except (AttributeError, OSError):
            pass


def lower_storage_threads() -> int:
    """Nice RocksDB's background threads (flush, compaction) of this process; how many there were."""
    lowered = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/comm") as comm:
                name = comm.read().strip()
        except OSError:
            continue
        if name.startswith("rocksdb"):
            lower_thread(int(task))
            lowered += 1
    return lowered


class BackgroundCommitter:
    """One low-priority thread that runs the commits handed to it, one at a time, in order."""

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        threading.Thread(target=self._run, name="kg-store-commits", daemon=True).start()

    def run(self, commit: Callable[[], T]) -> T:
        """Run ``commit`` on the commit thread; its result, or its exception, here."""
        done: Future = Future()
        self._jobs.put((commit, done))
        return done.result()

    def _run(self) -> None:
        lower_thread(threading.get_native_id())
        while True:
            commit, done = self._jobs.get()
            try:
                done.set_result(commit())
            except BaseException as exc:  # handed to the caller, who raises it
                done.set_exception(exc)
