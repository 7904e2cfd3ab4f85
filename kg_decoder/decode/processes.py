"""Helper processes of decoding, one way: the CPUs a process may use, its death with the process that
started it, and :class:`Helper`, a process that makes one call and answers it. Nothing here imports a
stage, so the worker, the readers of a rendering and the pictures' OCR all use it without importing one
another.

A helper is forked (it shares what this process has loaded: no start of its own; only where no other
thread of this process may hold a lock the child would need) or spawned (a fresh Python that imports
only the modules its call needs: :func:`python_command`). Its call and its answer travel pickled
through a socket pair, length-prefixed (multiprocessing's ``Connection``, as the decoding worker's
tasks do); it dies with the thread that started it; :meth:`Helper.result` waits for the answer within
a deadline and :meth:`Helper.stop` kills and reaps it.
"""

from __future__ import annotations

import importlib
import os
import signal
import socket
import subprocess
import sys
from multiprocessing.connection import Connection
from typing import Any, Callable, Optional

# The CPUs a decoding worker may use, set by the process that starts it (N workers share the machine).
THREADS_VARIABLE = "KG_DECODER_WORKER_THREADS"


def cpu_share() -> int:
    """The CPUs this process may use: the worker's share when it was given one, else all it may run on."""
    if os.environ.get(THREADS_VARIABLE, "").isdigit():
        return max(1, int(os.environ[THREADS_VARIABLE]))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def die_with_parent() -> None:
    """Let the kernel kill this process (a worker, a process it forks) when the thread that started it
    ends (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


# In a spawned helper the packages above the modules it runs are made empty: ``kg_decoder/__init__``
# imports every stage (the graph, the web app's reads, every backend), 0.7 to 1.3 CPU-seconds of such
# a process's start against 0.3 for a rendering's reader, paid while the decode itself needs the CPU.
_DECODE = os.path.dirname(os.path.abspath(__file__))
_PACKAGES = {"kg_decoder": os.path.dirname(_DECODE), "kg_decoder.decode": _DECODE,
             "kg_decoder.decode.backends": os.path.join(_DECODE, "backends")}
_EMPTY_PACKAGES = f"""
import sys, types
for name, folder in {_PACKAGES!r}.items():
    package = sys.modules[name] = types.ModuleType(name)
    package.__path__ = [folder]
"""


def python_command(code: str) -> list[str]:
    """The command that runs ``code`` in a fresh Python, its ``kg_decoder`` imports of modules alone."""
    return [sys.executable, "-P", "-c", _EMPTY_PACKAGES + code]  # -P: the current folder shadows no library


class HelperFailed(Exception):
    """A helper process died, its call raised, or it did not answer in time."""


class Helper:
    """A process of its own that makes one call and answers it (see the module's description).

    >>> helper = Helper.fork(pow, 2, 10)
    >>> helper.result(timeout=30)
    1024
    >>> helper.stop()
    """

    def __init__(self, pid: int, connection: Connection, process: Optional[subprocess.Popen] = None) -> None:
        self._pid, self._connection, self._process = pid, connection, process

    @classmethod
    def fork(cls, function: Callable[..., Any], *args: Any) -> "Helper":
        """``function(*args)`` called at once in a fork of this process."""
        parent_end, child_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the helper: it leaves by os._exit, running none of this process's exit handlers
            status = 1
            try:
                parent_end.close()
                die_with_parent()
                _answer(Connection(child_end.detach()), function, args)
                status = 0
            finally:
                os._exit(status)
        child_end.close()
        return cls(pid, Connection(parent_end.detach()))

    @classmethod
    def spawn(cls) -> "Helper":
        """A fresh Python, started at once, waiting for its call (:meth:`send`)."""
        process, connection = spawn_connected(lambda end: python_command(
            f"from kg_decoder.decode.processes import _serve_call; _serve_call({end})"))
        return cls(process.pid, connection, process)

    @property
    def pid(self) -> int:
        return self._pid

    def send(self, function: str, *args: Any) -> None:
        """The call of a spawned helper: ``function`` named ``"module:function"``, its arguments pickled."""
        try:
            self._connection.send((function, args))
        except (OSError, ValueError) as exc:
            raise HelperFailed(f"the helper is gone: {exc}") from None

    def result(self, timeout: Optional[float] = None) -> Any:
        """The call's value, waited for at most ``timeout`` seconds (None: as long as it takes)."""
        try:
            if not self._connection.poll(timeout):
                raise HelperFailed(f"no answer within {timeout} s")
            done, value = self._connection.recv()
        except (OSError, EOFError, ValueError) as exc:
            raise HelperFailed(f"the helper died: {exc!r}") from None
        if not done:
            raise HelperFailed(value)
        return value

    def stop(self) -> None:
        """Killed if still running, and reaped; may be called again."""
        if self._process is not None:
            kill_and_reap(self._process)
        elif self._pid:
            try:
                os.kill(self._pid, signal.SIGKILL)
            except OSError:
                pass
            try:
                os.waitpid(self._pid, 0)
            except ChildProcessError:
                pass
            self._pid = 0
        self._connection.close()


def spawn_connected(command: Callable[[int], list[str]], **popen: Any) -> tuple[subprocess.Popen, Connection]:
    """A process started from ``command(descriptor)``, the descriptor its end of a socket pair (it reads
    ``Connection(descriptor)``), and this process's end as a ``Connection``. ``popen``: more of
    ``subprocess.Popen``'s arguments (the standard streams default to nothing)."""
    parent_end, child_end = socket.socketpair()
    streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    try:
        process = subprocess.Popen(command(child_end.fileno()), pass_fds=[child_end.fileno()], **{**streams, **popen})
    except BaseException:
        parent_end.close()
        raise
    finally:
        child_end.close()
    return process, Connection(parent_end.detach())


def kill_and_reap(process: subprocess.Popen, timeout: float = 30.0) -> None:
    """A started process killed if it still runs, and waited for."""
    if process.poll() is None:
        try:
            process.kill()
        except OSError:
            pass
    process.wait(timeout=timeout)


def _answer(connection: Connection, function: Callable[..., Any], args: tuple) -> None:
    try:
        answer = (True, function(*args))
    except Exception as exc:  # noqa: BLE001 — the caller is told, and decides
        answer = (False, f"{type(exc).__name__}: {exc}")
    connection.send(answer)
    connection.close()


def _serve_call(descriptor: int) -> None:
    """A spawned helper's life: its call read, made and answered."""
    die_with_parent()
    connection = Connection(descriptor)
    try:
        name, args = connection.recv()
    except EOFError:  # stopped before it was given a call
        return
    module, _, function = name.partition(":")
    try:
        target = getattr(importlib.import_module(module), function)
    except (ImportError, AttributeError) as exc:
        connection.send((False, f"no call {name}: {exc}"))
        return
    _answer(connection, target, args)


__all__ = ["THREADS_VARIABLE", "Helper", "HelperFailed", "cpu_share", "die_with_parent", "kill_and_reap", "python_command",
           "spawn_connected"]
