"""What the commands share: the error of a command line that cannot run, and the store a command opens."""

from __future__ import annotations

import argparse
import sys

from ..graph.opening import open_for_reading, open_store
from ..graph.store import KgStore
from ..model.errors import RequestError


class UsageError(RequestError):
    """The command line was given a combination of arguments it cannot run."""


def open_job_store(args: argparse.Namespace, create: bool = True) -> KgStore:
    """The store ``--store``, ``--library`` and ``--library-option`` name; ``create``: made where there is
    none (UnknownStore otherwise)."""
    return open_store(args.store, library=args.library, library_options=dict(args.library_option), create=create)


def open_reading_store(args: argparse.Namespace) -> KgStore:
    """The store for a command that only reads (see :func:`open_for_reading`)."""

    def say_locked() -> None:
        print(f"kg-decoder: {args.store} is in use by another process (a running kg-decoder serve?): reading it "
              f"read-only, as it is now", file=sys.stderr)

    return open_for_reading(args.store, args.library, dict(args.library_option), on_locked=say_locked)


__all__ = ["UsageError", "open_job_store", "open_reading_store"]
