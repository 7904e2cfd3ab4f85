"""What every helper process of decoding needs, below the stages that start them: the CPUs it may use
and its death with the process that started it. Nothing here imports a stage, so the worker, the
backends' reading processes and the pictures' OCR all use it without importing one another.
"""

from __future__ import annotations

import os
import signal

# The CPUs a decoding worker may use, set by the process that starts it (N workers share the machine).
THREADS_VARIABLE = "KG_DECODER_WORKER_THREADS"


def cpu_share() -> int:
    """The CPUs this process may use: the worker's share when it was given one, else all it may run on."""
    if os.environ.get(THREADS_VARIABLE, "").isdigit():
        return max(1, int(os.environ[THREADS_VARIABLE]))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def die_with_parent() -> None:
    """Let the kernel kill this process (a worker, a process it forks) when the process that started it
    dies (Linux)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


__all__ = ["THREADS_VARIABLE", "cpu_share", "die_with_parent"]
