"""The process runner: CPU work of any stage in a separate process, with a time limit and
isolation from crashes.

A parser that hangs or dies (a native library on hostile bytes) must not take the caller
down, and a decode must stop at its time limit. The worker is started once (this module run as a
fresh Python's main, from the caller's own ``kg_decoder``; not multiprocessing's spawn, which would
re-run the caller's main script), warms up (a decoding worker imports unstructured and loads the
spaCy model) and runs one task at a time over a socket pair; on a timeout or a crash it is killed and the next call
starts a new one. A task is a function named ``"kg_decoder.<module>:<function>"`` (the stages
hand theirs in by name, so this module imports none of them); one with a ``progress`` parameter
has its reports relayed. The worker's own output (unstructured's warnings) goes to
``KG_DECODER_WORKER_LOG`` if set, else nowhere. A worker started with ``threads`` keeps the
libraries that spread over CPUs of their own accord (the layout model's ONNX Runtime, OpenCV) to
that many threads: N workers side by side then share the CPUs instead of fighting over them
(tesseract keeps to one thread in every decoding worker: see ``backends.warm_up_decoding``).

A :class:`WorkerSetup` says what a worker is for: the task that warms it up, whether it runs at
idle priority (decoding: batch work), the address space it may take beyond what it maps at rest
(``RLIMIT_AS``), and whether a task may be interrupted (``SIGUSR1`` raises in the task, which
unwinds and leaves the worker warm; one stuck in native code is killed after a grace period).
Each call may also bound the task's CPU time (``RLIMIT_CPU``: the kernel stops the worker, even
if this process is gone). Every worker holds PIL to the pixel limit (:func:`limit_image_pixels`)
and dies with the process that started it.
"""

from __future__ import annotations

import atexit
import gc
import importlib
import inspect
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from typing import Callable, Optional

from ..graph.priority import make_idle
from ..model.errors import (CorruptDocument, CpuLimit, DecodeTimeout, KgDecoderError, MemoryLimit, RequestCancelled,
                            UnsafeDocument, WorkerUnavailable)
from ..model.progress import ProgressCallback
from .images import limit_image_pixels, pixels_refused, too_many_pixels
from .processes import THREADS_VARIABLE, die_with_parent, kill_and_reap, spawn_connected

_START_TIMEOUT_SECONDS = 600.0
# The worker runs the caller's own kg_decoder. Started with ``-m``, it ran first whatever the caller's
# current folder held under that name (a checkout of another version, or a folder anyone named so), and
# that folder shadowed every library: ``-P`` leaves it off the path.
_HOME = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_RUN_WORKER = (f"import runpy, sys; sys.path.insert(0, {_HOME!r}); "
               "runpy.run_module('kg_decoder.decode.worker', run_name='__main__', alter_sys=True)")
BUILD_DOCUMENT = "kg_decoder.decode.build:build_document"
_POLL_SECONDS = 0.1  # how often a call that can be cancelled looks at its caller
_GRACE_SECONDS = 1.0  # how long an interrupted task may take to unwind before its worker is killed


@dataclass(frozen=True)
class WorkerSetup:
    """What a worker process is for: the task run once to warm it up, whether it runs at idle priority, how many bytes of address space it may take beyond what it maps
    when warm (None: no limit), and whether its tasks can be interrupted without killing it."""

    warm_up: str = "kg_decoder.decode.backends:warm_up_decoding"
    idle: bool = True
    memory_bytes: Optional[int] = None
    interruptible: bool = False
    name: str = "decoding worker"


DECODING = WorkerSetup()


class _Interrupted(BaseException):
    """Raised in a task by SIGUSR1: the caller stopped waiting for it. A BaseException, so that no
    library's ``except Exception`` swallows it."""


def _task(name: str):
    """The function a task name gives, and whether it takes ``progress``."""
    module, _, function = name.partition(":")
    if not module.startswith("kg_decoder.") or not function.isidentifier():
        raise ValueError(f"not a kg-decoder task: {name!r}")
    target = getattr(importlib.import_module(module), function)
    return target, "progress" in inspect.signature(target).parameters


def _address_space() -> Optional[int]:
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


YOUNG_OBJECTS_COLLECTED = 20_000


def _freeze_what_lives_on() -> None:
    """What the warm-up made (modules, parsers, models: about 340 000 objects) lives as long as the
    worker: kept out of the garbage collector's full collections, which walked it all each time a
    decode's own objects triggered one (on the 38 corpus and ICDAR PDFs 2.9 of 43 s in those
    collections, 0.5 s frozen; on an 872-page DOCX 1.7 s, 0.2 s). Its garbage is collected first.
    A collection of the youngest objects then waits for 20 000 of them, not 700: a page's reading
    makes thousands that reference counting frees (pdfminer's characters), and collecting them every
    700 took 2 % of a prose PDF's decode (45 collections over the two layout-parser PDFs, none after)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(YOUNG_OBJECTS_COLLECTED, *gc.get_threshold()[1:])


def collector_state() -> dict[str, int]:
    """The worker's garbage collector: how many objects it keeps frozen, and how many young ones a
    collection waits for (a task, for tests and tools)."""
    return {"frozen": gc.get_freeze_count(), "young_collected_after": gc.get_threshold()[0]}


def _serve(connection, setup: WorkerSetup) -> None:
    """A worker's life: warmed up, then one task after another until its caller closes the connection."""
    _warm(setup)
    running = [False]

    def interrupt(signum, frame):
        if running[0]:
            raise _Interrupted()

    if setup.interruptible:
        signal.signal(signal.SIGUSR1, interrupt)

    def send(message) -> None:  # never interrupted half way: the caller would read half a message
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            connection.send(message)
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)

    tasks: dict = {}
    send("ready")
    while True:
        try:
            request = connection.recv()
        except EOFError:
            return
        if request is None:
            return
        reply = _run_task(request, tasks, running, send)
        try:
            send(reply)
        except _Interrupted:  # a late interrupt, after the task: the reply still goes
            send(reply)


def _warm(setup: WorkerSetup) -> None:
    """The worker made ready: deaf to Ctrl-C, dying with its parent, offline, its libraries imported by
    the warm-up task and frozen out of the collector, its address space bounded beyond what that took."""
    import resource

    # Ctrl-C in a terminal reaches the whole process group: the caller stops the worker itself,
    # and a worker dying of it would be reported as a parser that crashed.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with_parent()
    # No task uses torch, but thinc (under spaCy) imports it whenever it is installed: 1.2 of the
    # 4 CPU-seconds a worker takes to start. Kept out, thinc goes on without it.
    sys.modules.setdefault("torch", None)
    from .offline import set_offline_environment

    set_offline_environment()
    if os.environ.get(THREADS_VARIABLE):
        import cv2

        cv2.setNumThreads(int(os.environ[THREADS_VARIABLE]))
    warm_up, _ = _task(setup.warm_up)
    warm_up()
    limit_image_pixels()  # after the imports: unstructured raises PIL's limit when imported
    _freeze_what_lives_on()
    at_rest = _address_space()
    if setup.memory_bytes and at_rest:
        resource.setrlimit(resource.RLIMIT_AS, (at_rest + setup.memory_bytes, at_rest + setup.memory_bytes))


def _run_task(request: tuple, tasks: dict, running: list, send: Callable) -> tuple:
    """One task run within its CPU time, as the reply to send: ("ok", value), ("interrupted", None),
    ("error", a typed error) or ("unexpected", what a parser raised)."""
    import resource

    name, args, cpu_seconds = request
    used = sum(resource.getrusage(resource.RUSAGE_SELF)[:2])
    soft = int(used + cpu_seconds) + 1 if cpu_seconds else resource.RLIM_INFINITY
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))
    try:
        running[0] = True
        try:
            if name not in tasks:
                tasks[name] = _task(name)
            function, takes_progress = tasks[name]
            limit_image_pixels()
            if takes_progress:
                value = function(*args, progress=lambda progress: send(("progress", progress)))
            else:
                value = function(*args)
        finally:
            running[0] = False
        return ("ok", value)
    except _Interrupted:
        return ("interrupted", None)
    except KgDecoderError as exc:
        return ("error", exc)
    except MemoryError:
        return ("error", MemoryLimit("the work needed more memory than a worker may take"))
    except Exception as exc:  # a parser bug on odd bytes: the document, not the caller, is at fault
        if too_many_pixels(exc):
            return ("error", UnsafeDocument(pixels_refused(exc)))
        return ("unexpected", f"{type(exc).__name__}: {exc}"[:500])


def _relay(progress: Optional[ProgressCallback], report) -> None:
    if progress is None:
        return
    try:
        progress(report)
    except Exception:  # a caller's display failing must not break the conversation with the worker
        pass


class PartitionWorker:
    """One worker process (partitioning, mapping, chunking; or what ``setup`` says), reused across
    tasks; thread-safe (one task at a time).

    >>> worker = PartitionWorker()
    >>> worker.close()
    """

    def __init__(self, threads: Optional[int] = None, setup: WorkerSetup = DECODING) -> None:
        self._threads = threads
        self.setup = setup
        self._lock = threading.Lock()
        self._process: Optional[subprocess.Popen] = None
        self._connection: Optional[Connection] = None
        self._ready = False
        self._cpus: Optional[set[int]] = None
        self.restarts = 0  # how many times a worker process was started

    def pin(self, cpus: set[int]) -> None:
        """Keep the worker (and what it starts: tesseract, LibreOffice) on these CPUs, now and after restarts."""
        with self._lock:
            self._cpus = set(cpus)
            if self._process is not None and self._process.poll() is None:
                os.sched_setaffinity(self._process.pid, self._cpus)

    @property
    def pid(self) -> Optional[int]:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def warm(self) -> bool:
        """Whether the worker has started and warmed up (for a caller that holds it, idle)."""
        if self._ready:
            return True
        return self.pid is not None and self._connection is not None and self._connection.poll(0)

    def start(self) -> None:
        """Start the worker now (it warms up in the background while the caller goes on)."""
        with self._lock:
            self._start()

    def _start(self) -> None:
        if self._process is not None and self._process.poll() is None:
            return
        log_path = os.environ.get("KG_DECODER_WORKER_LOG")
        log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        environment = None
        if self._threads:
            environment = {**os.environ, THREADS_VARIABLE: str(self._threads)}
        if self.setup.memory_bytes:  # each thread's malloc arena would take 64 MB of the address space
            environment = {**(environment or os.environ), "MALLOC_ARENA_MAX": "2"}
        try:
            self._process, self._connection = spawn_connected(
                lambda end: [sys.executable, "-P", "-c", _RUN_WORKER, str(end), json.dumps(asdict(self.setup))],
                stdout=log, stderr=log, env=environment)
        finally:
            if log_path:
                log.close()
        self.restarts += 1
        if self.setup.idle:  # batch work: when the caller also answers queries (the web app), those come first
            make_idle(self._process.pid)
        if self._cpus:
            os.sched_setaffinity(self._process.pid, self._cpus)
        self._ready = False

    def _await_ready(self) -> None:
        if self._ready:
            return
        if not self._connection.poll(_START_TIMEOUT_SECONDS):
            self._kill()
            raise WorkerUnavailable(f"the {self.setup.name} did not start")
        try:
            message = self._connection.recv()
        except EOFError:
            self._kill()
            raise WorkerUnavailable(f"the {self.setup.name} died while starting (is unstructured installed?)") from None
        if message != "ready":
            self._kill()
            raise WorkerUnavailable(f"unexpected message from the {self.setup.name}: {message!r:.100}")
        self._ready = True

    def build_document(self, plain: bytes, job, progress: Optional[ProgressCallback] = None):
        """Partition (or reuse the parse cache) and map a document to quads in the worker."""
        return self.call(BUILD_DOCUMENT, plain, job, timeout=job.options.timeout_seconds, progress=progress,
                         crash=f"the {job.format_name.upper()} parser crashed on this file")

    def call(self, name: str, *args, timeout: Optional[float] = None, progress: Optional[ProgressCallback] = None,
             crash: str = "the worker crashed", cancelled: Optional[Callable[[], bool]] = None,
             cpu_seconds: Optional[float] = None, timed_out: Optional[Callable[[float], KgDecoderError]] = None,
             unexpected: Optional[Callable[[str], Exception]] = None,
             crashed: Callable[[str], KgDecoderError] = CorruptDocument):
        """Run the task ``name`` in the worker, relaying its progress reports; its typed error is raised here.

        Past ``timeout`` seconds the task is stopped (interrupted, or its worker killed: a new one
        starts for the next call) and ``timed_out(timeout)`` is raised (DecodeTimeout by default).
        Once ``cancelled()`` turns true the task is interrupted and RequestCancelled raised when it
        has unwound; one stuck in native code runs on to its time limit (a kill would cost a new
        worker's start each time a client hangs up). A worker that dies is
        ``crashed(crash)``, a CorruptDocument by default (CpuLimit past ``cpu_seconds`` of CPU time,
        MemoryLimit when it ran out of its address space); an untyped exception in the task,
        ``unexpected(message)`` (CorruptDocument by default).
        """
        with self._lock:
            self._start()
            self._await_ready()
            started = time.monotonic()
            self._connection.send((name, args, cpu_seconds))
            cancelling = False  # the caller went away: the task was interrupted, its answer is awaited
            while True:
                remaining = None if timeout is None else max(0.0, started + timeout - time.monotonic())
                wait = remaining if cancelled is None else min(_POLL_SECONDS, _POLL_SECONDS if remaining is None
                                                                else remaining)
                if not self._connection.poll(wait):
                    if remaining is not None and remaining <= wait:
                        self._stop(interrupt=not cancelling)
                        if cancelling:
                            raise RequestCancelled("the client went away; its work was stopped at the time limit")
                        elapsed = time.monotonic() - started
                        raise (timed_out(timeout) if timed_out else
                               DecodeTimeout(f"decoding took longer than the limit of {timeout:g} s "
                                             f"(stopped after {elapsed:.1f} s)"))
                    if not cancelling and cancelled is not None and cancelled():
                        if not self._interrupt():
                            self._kill()
                            raise RequestCancelled("the client went away; its work was stopped")
                        cancelling = True  # stuck in native code, it runs on to its time limit
                    continue
                try:
                    status, payload = self._connection.recv()
                except EOFError:
                    raise self._died(crashed(crash), cpu_seconds) from None
                if status == "progress":
                    _relay(progress, payload)
                    continue
                break
        if cancelling:
            raise RequestCancelled("the client went away; its work was stopped")
        if status == "ok":
            return payload
        if status == "unexpected":
            raise unexpected(payload) if unexpected else CorruptDocument(
                f"the document could not be processed: {payload}"[:500])
        raise payload

    def _interrupt(self) -> bool:
        """Ask the running task to stop (SIGUSR1 raises in it); whether the worker can be asked."""
        if not self.setup.interruptible or self._process is None:
            return False
        try:
            self._process.send_signal(signal.SIGUSR1)
            return True
        except OSError:
            return False

    def _stop(self, interrupt: bool = True) -> None:
        """Stop the running task: interrupt it and wait a moment for it to unwind (the worker stays
        warm), or kill the worker."""
        if interrupt and self._interrupt():
            deadline = time.monotonic() + _GRACE_SECONDS
            while self._connection.poll(max(0.0, deadline - time.monotonic())):
                try:
                    status, _ = self._connection.recv()
                except EOFError:
                    break
                if status != "progress":  # the task's last word (interrupted, or done just then)
                    return
        self._kill()

    def _died(self, crashed: KgDecoderError, cpu_seconds: Optional[float]) -> KgDecoderError:
        """The error for a worker that died during a task, by the signal that ended it."""
        code = None
        if self._process is not None:
            try:
                code = self._process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self._kill()
        if code == -signal.SIGXCPU:
            return CpuLimit(f"the work used more than its {cpu_seconds or 0:g} s of CPU time")
        if code in (-signal.SIGABRT, -signal.SIGKILL) and self.setup.memory_bytes:
            return MemoryLimit(f"the work needed more than the {self.setup.memory_bytes // 2 ** 20} MB "
                               f"a worker may take")
        return crashed

    def _kill(self) -> None:
        if self._process is not None:
            kill_and_reap(self._process)
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
    _serve(Connection(int(sys.argv[1])), WorkerSetup(**json.loads(sys.argv[2])) if len(sys.argv) > 2 else DECODING)
