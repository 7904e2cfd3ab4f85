"""Partitioning in a separate process: a per-document time limit, and isolation from crashes.

A parser that hangs or dies (a native library on hostile bytes) must not take the
caller down, and a decode must stop at its time limit. The worker is started once
(``python -m kg_decoder.worker``, not multiprocessing's spawn, which would re-run
the caller's main script), warms up (imports unstructured, loads the spaCy model)
and serves one document at a time over a socket pair; on a timeout or a crash it
is killed and the next request starts a new one. Its own output (unstructured's
warnings) goes to ``KG_DECODER_WORKER_LOG`` if set, else nowhere.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Optional

from .errors import CorruptDocument, DecodeError, DecodeTimeout
from .model import DecodeOptions, Partitioned

_START_TIMEOUT_SECONDS = 600.0


def _serve(connection) -> None:
    from . import offline

    # Partitioning is batch work: when the caller also answers queries (the web app), those come first.
    os.nice(10)
    offline.prepare()
    from .partition import partition_document, warm_up

    warm_up()
    connection.send("ready")
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        if request is None:
            return
        data, format_name, options = request
        try:
            reply = ("ok", partition_document(data, format_name, options))
        except DecodeError as exc:
            reply = ("error", exc)
        except Exception as exc:  # a parser bug on odd bytes: the document, not the caller, is at fault
            reply = ("error", CorruptDocument(f"the {format_name.upper()} file could not be parsed: "
                                              f"{type(exc).__name__}: {exc}"))
        connection.send(reply)


class PartitionWorker:
    """One partitioning process, reused across documents; thread-safe (one document at a time).

    >>> worker = PartitionWorker()
    >>> worker.close()
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._connection: Optional[Connection] = None
        self._ready = False

    def start(self) -> None:
        """Start the worker now (it warms up in the background while the caller goes on)."""
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        parent_end, child_end = socket.socketpair()
        log_path = os.environ.get("KG_DECODER_WORKER_LOG")
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "kg_decoder.worker", str(child_end.fileno())],
                pass_fds=[child_end.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
            )
        finally:
            child_end.close()
            if log_path:
                log.close()
        self._connection = Connection(parent_end.detach())
        self._ready = False

    def _await_ready(self) -> None:
        if self._ready:
            return
        if not self._connection.poll(_START_TIMEOUT_SECONDS):
            self._kill()
            raise RuntimeError("the partition worker did not start")
        try:
            message = self._connection.recv()
        except EOFError:
            self._kill()
            raise RuntimeError("the partition worker died while starting (is unstructured installed?)") from None
        if message != "ready":
            raise RuntimeError(f"unexpected message from the partition worker: {message!r}")
        self._ready = True

    def partition(self, data: bytes, format_name: str, options: DecodeOptions) -> Partitioned:
        """Partition in the worker; raises the worker's DecodeError, or DecodeTimeout."""
        with self._lock:
            self._start()
            self._await_ready()
            started = time.monotonic()
            self._connection.send((data, format_name, options))
            if not self._connection.poll(options.timeout_seconds):
                self._kill()
                raise DecodeTimeout(
                    f"decoding took longer than the limit of {options.timeout_seconds:g} s "
                    f"(stopped after {time.monotonic() - started:.1f} s)"
                )
            try:
                status, payload = self._connection.recv()
            except EOFError:
                self._kill()
                raise CorruptDocument(f"the {format_name.upper()} parser crashed on this file") from None
        if status == "ok":
            return payload
        raise payload

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.wait(timeout=30)
        if self._connection is not None:
            self._connection.close()
        self._process = self._connection = None
        self._ready = False

    def close(self) -> None:
        """Stop the worker process."""
        with self._lock:
            if self._process is not None and self._process.poll() is None and self._connection is not None:
                try:
                    self._connection.send(None)
                    self._process.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    pass
            self._kill()


_shared: Optional[PartitionWorker] = None
_shared_lock = threading.Lock()


def shared_worker() -> PartitionWorker:
    """The process-wide worker used by ``kg_decoder.decode``."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = PartitionWorker()
            atexit.register(_shared.close)
        return _shared


if __name__ == "__main__":
    _serve(Connection(int(sys.argv[1])))
