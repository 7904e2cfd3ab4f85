"""The store's one writer, shared by a web server's requests and its background jobs.

One request that writes for minutes must not stop the server: a bulk write takes the lock once a
batch and lets the others in between (:func:`kg_decoder.add_fact_lines` with ``lock=``), and the
requests waiting for the lock are bounded. A request waits at most ``wait`` seconds, and only while
fewer than ``waiters`` other requests wait (past that, ``503 busy`` at once: waiting writers would
hold every server thread, and static files and cheap queries would find none); a request whose
client went away stops waiting and is not applied. Background jobs (async uploads and fact posts)
wait on threads of their own, outside the bound: their queue is bounded where they are accepted.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from ..model.errors import RequestCancelled, ServerBusy

_POLL_SECONDS = 0.2  # how often a waiting request looks whether its client is still there


class WriteLock:
    """The store's writer: held by one request or job at a time; at most ``waiters`` requests wait
    for it, each at most ``wait`` seconds and only while its client is there."""

    def __init__(self, waiters: int = 2, wait: float = 60.0) -> None:
        self._lock = threading.Lock()
        self._count = threading.Lock()
        self._waiting = 0
        self.waiters = waiters
        self.wait = wait

    @property
    def waiting(self) -> int:
        return self._waiting

    def locked(self) -> bool:
        return self._lock.locked()

    @contextmanager
    def request(self, cancelled: Optional[Callable[[], bool]] = None) -> Iterator[None]:
        """Held for a request: ServerBusy when too many requests wait already or the wait runs past
        ``wait`` seconds; RequestCancelled when the client leaves while it waits."""
        if self._lock.acquire(blocking=False):
            try:
                yield
            finally:
                self._lock.release()
            return
        with self._count:
            if self._waiting >= self.waiters:
                raise ServerBusy(f"{self._waiting} writes are waiting for the store already; try again later")
            self._waiting += 1
        try:
            deadline = time.monotonic() + self.wait
            while not self._lock.acquire(timeout=min(_POLL_SECONDS, max(0.0, deadline - time.monotonic()))):
                if cancelled is not None and cancelled():
                    raise RequestCancelled("the client went away while its write waited for the store")
                if time.monotonic() >= deadline:
                    raise ServerBusy(f"the store was busy with another write for {self.wait:g} s; try again later")
        finally:
            with self._count:
                self._waiting -= 1
        try:
            if cancelled is not None and cancelled():  # gone while it waited: not applied
                raise RequestCancelled("the client went away while its write waited for the store")
            yield
        finally:
            self._lock.release()

    def __enter__(self) -> "WriteLock":
        """Held for a background job (or a caller that may wait): no bound, no deadline."""
        self._lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()


__all__ = ["WriteLock"]
