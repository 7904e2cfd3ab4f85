"""Structured progress of long work: a stage, how far, of how much, and a message for a person.

Python callers pass a callback; the CLI shows it on its progress bar; the web API keeps the last
report of an upload for polling.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Callable, Optional


@dataclass(frozen=True)
class Progress:
    """One report: ``stage`` (read, detect, partition, group, write quads, chunk, done), ``current`` of ``total``.

    >>> Progress("chunk", 2, 5, "chunk section 2 of 5").to_json()["current"]
    2
    """

    stage: str
    current: int
    total: int
    message: str

    def to_json(self) -> dict:
        return asdict(self)


ProgressCallback = Callable[[Progress], None]


def report(callback: Optional[ProgressCallback], stage: str, current: int, total: int, message: str) -> None:
    """Tell ``callback`` (if any). An exception from the callback stops the work: nothing is stored."""
    if callback is not None:
        callback(Progress(stage, current, total, message))
