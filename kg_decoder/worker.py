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
from .priority import make_idle
from .progress import ProgressCallback

_START_TIMEOUT_SECONDS = 600.0


def _tasks() -> dict:
    """What a caller may run in the worker, by name: (function, whether it takes ``progress``)."""
    from .chunk_pipeline import build_chunks
    from .document_build import build_document
    from .partition import partition_document

    return {"partition": (partition_document, False), "build_document": (build_document, True),
            "build_chunks": (build_chunks, True)}


def _serve(connection) -> None:
    from . import offline

    offline.prepare()
    from .partition import warm_up

    warm_up()
    tasks = _tasks()
    connection.send("ready")

    def send_progress(progress) -> None:
        connection.send(("progress", progress))

    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        if request is None:
            return
        name, args = request
        function, takes_progress = tasks[name]
        try:
            value = function(*args, progress=send_progress) if takes_progress else function(*args)
            reply = ("ok", value)
        except DecodeError as exc:
            reply = ("error", exc)
        except Exception as exc:  # a parser bug on odd bytes: the document, not the caller, is at fault
            reply = ("error", CorruptDocument(f"the document could not be processed: {type(exc).__name__}: {exc}"))
        connection.send(reply)


def _relay(progress: Optional[ProgressCallback], report) -> None:
    if progress is None:
        return
    try:
        progress(report)
    except Exception:  # a caller's display failing must not break the conversation with the worker
        pass


class PartitionWorker:
    """One worker process (partitioning, mapping, chunking), reused across documents; thread-safe
    (one task at a time).

    >>> worker = PartitionWorker()
    >>> worker.close()
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._connection: Optional[Connection] = None
        self._ready = False
        self._cpus: Optional[set[int]] = None

    def pin(self, cpus: set[int]) -> None:
        """Keep the worker (and what it starts: tesseract, LibreOffice) on these CPUs, now and after restarts."""
        with self._lock:
            self._cpus = set(cpus)
            if self._process is not None and self._process.poll() is None:
                os.sched_setaffinity(self._process.pid, self._cpus)

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
        # Decoding is batch work: when the caller also answers queries (the web app), those come first.
        make_idle(self._process.pid)
        if self._cpus:
            os.sched_setaffinity(self._process.pid, self._cpus)
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
        return self.call("partition", data, format_name, options, timeout=options.timeout_seconds,
                         crash=f"the {format_name.upper()} parser crashed on this file")

    def build_document(self, plain: bytes, job, progress: Optional[ProgressCallback] = None):
        """Partition (or reuse the parse cache) and map a document to quads in the worker."""
        return self.call("build_document", plain, job, timeout=job.options.timeout_seconds, progress=progress,
                         crash=f"the {job.format_name.upper()} parser crashed on this file")

    def build_chunks(self, inputs, progress: Optional[ProgressCallback] = None):
        """Cut a document's texts into chunks and map them to quads in the worker."""
        return self.call("build_chunks", inputs, progress=progress, crash="the worker crashed while chunking")

    def call(self, name: str, *args, timeout: Optional[float] = None, progress: Optional[ProgressCallback] = None,
             crash: str = "the worker crashed"):
        """Run a task in the worker, relaying its progress reports; its DecodeError is raised here.

        Past ``timeout`` seconds the worker is killed (a new one starts for the next call) and
        DecodeTimeout is raised; a worker that dies is a CorruptDocument with ``crash`` as message.
        """
        with self._lock:
            self._start()
            self._await_ready()
            started = time.monotonic()
            self._connection.send((name, args))
            while True:
                remaining = None if timeout is None else max(0.0, started + timeout - time.monotonic())
                if not self._connection.poll(remaining):
                    self._kill()
                    raise DecodeTimeout(f"decoding took longer than the limit of {timeout:g} s "
                                        f"(stopped after {time.monotonic() - started:.1f} s)")
                try:
                    status, payload = self._connection.recv()
                except EOFError:
                    self._kill()
                    raise CorruptDocument(crash) from None
                if status == "progress":
                    _relay(progress, payload)
                    continue
                break
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
