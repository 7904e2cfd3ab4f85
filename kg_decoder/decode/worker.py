"""The process runner: CPU work of any stage in a separate process, with a time limit and
isolation from crashes.

A parser that hangs or dies (a native library on hostile bytes) must not take the caller
down, and a decode must stop at its time limit. The worker is started once (``python -m
kg_decoder.decode.worker``, not multiprocessing's spawn, which would re-run the caller's main
script), warms up (imports unstructured, loads the spaCy model) and runs one task at a time
over a socket pair; on a timeout or a crash it is killed and the next call starts a new one.
A task is a function named ``"kg_decoder.<module>:<function>"`` (the stages hand theirs in by
name, so this module imports none of them); one with a ``progress`` parameter has its reports
relayed. The worker's own output (unstructured's warnings) goes to ``KG_DECODER_WORKER_LOG``
if set, else nowhere. A worker started with ``threads`` keeps the libraries that spread over
CPUs of their own accord (tesseract's OpenMP, the layout model's ONNX Runtime, OpenCV) to that
many threads: N workers side by side then share the CPUs instead of fighting over them.
"""

from __future__ import annotations

import atexit
import importlib
import inspect
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from multiprocessing.connection import Connection
from typing import Optional

from ..graph.priority import make_idle
from ..model.errors import CorruptDocument, DecodeTimeout, KgDecoderError, WorkerUnavailable
from ..model.progress import ProgressCallback

_START_TIMEOUT_SECONDS = 600.0
BUILD_DOCUMENT = "kg_decoder.decode.build:build_document"
THREADS_VARIABLE = "KG_DECODER_WORKER_THREADS"


def _task(name: str):
    """The function a task name gives, and whether it takes ``progress``."""
    module, _, function = name.partition(":")
    if not module.startswith("kg_decoder.") or not function.isidentifier():
        raise ValueError(f"not a kg-decoder task: {name!r}")
    target = getattr(importlib.import_module(module), function)
    return target, "progress" in inspect.signature(target).parameters


def _serve(connection) -> None:
    # Ctrl-C in a terminal reaches the whole process group: the caller stops the worker itself,
    # and a worker dying of it would be reported as a parser that crashed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # No task uses torch, but thinc (under spaCy) imports it whenever it is installed: 1.2 of the
    # 4 CPU-seconds a worker takes to start. Kept out, thinc goes on without it.
    sys.modules.setdefault("torch", None)
    from . import offline

    offline.prepare()
    threads = int(os.environ[THREADS_VARIABLE]) if os.environ.get(THREADS_VARIABLE) else None
    if threads:
        import cv2

        cv2.setNumThreads(threads)
    from .backends import warm_up

    warm_up(threads)
    tasks: dict = {}
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
        try:
            if name not in tasks:
                tasks[name] = _task(name)
            function, takes_progress = tasks[name]
            value = function(*args, progress=send_progress) if takes_progress else function(*args)
            reply = ("ok", value)
        except KgDecoderError as exc:
            reply = ("error", exc)
        except Exception as exc:  # a parser bug on odd bytes: the document, not the caller, is at fault
            message = f"the document could not be processed: {type(exc).__name__}: {exc}"
            reply = ("error", CorruptDocument(message[:500]))
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

    def __init__(self, threads: Optional[int] = None) -> None:
        self._threads = threads
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
        environment = None
        if self._threads:
            environment = {**os.environ, THREADS_VARIABLE: str(self._threads), "OMP_THREAD_LIMIT": str(self._threads)}
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "kg_decoder.decode.worker", str(child_end.fileno())],
                pass_fds=[child_end.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                env=environment,
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
            raise WorkerUnavailable("the decoding worker did not start")
        try:
            message = self._connection.recv()
        except EOFError:
            self._kill()
            raise WorkerUnavailable("the decoding worker died while starting (is unstructured installed?)") from None
        if message != "ready":
            self._kill()
            raise WorkerUnavailable(f"unexpected message from the decoding worker: {message!r:.100}")
        self._ready = True

    def build_document(self, plain: bytes, job, progress: Optional[ProgressCallback] = None):
        """Partition (or reuse the parse cache) and map a document to quads in the worker."""
        return self.call(BUILD_DOCUMENT, plain, job, timeout=job.options.timeout_seconds, progress=progress,
                         crash=f"the {job.format_name.upper()} parser crashed on this file")

    def call(self, name: str, *args, timeout: Optional[float] = None, progress: Optional[ProgressCallback] = None,
             crash: str = "the worker crashed"):
        """Run the task ``name`` in the worker, relaying its progress reports; its typed error is raised here.

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
