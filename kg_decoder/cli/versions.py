"""The commands of sources and their versions: ``versions``, ``diff`` and ``prune``."""

from __future__ import annotations

import argparse
import json

from ..cite.documents import document_named
from ..cite.versions import diff_documents, prune_versions, source_versions
from ..graph.store import KgStore
from ..model import VersionDiff
from .output import table


def add_version_commands(commands) -> list[argparse.ArgumentParser]:
    """The parsers of ``versions``, ``diff`` and ``prune`` (store arguments added by the caller)."""
    listing = commands.add_parser("versions", help="list a source's versions (a path, URL or --source-id) with "
                                                   "their dates, diff counts and fact verdicts")
    listing.add_argument("source", metavar="SOURCE")
    listing.add_argument("--format", choices=["table", "json"], default="table")
    compare = commands.add_parser("diff", help="compare two versions element by element (kept, moved, changed, "
                                               "removed, added, with pages and boxes)")
    compare.add_argument("old", metavar="OLD", help="document or version IRI, a decoded file, or SOURCE@N")
    compare.add_argument("new", metavar="NEW", help="document or version IRI, a decoded file, or SOURCE@N")
    compare.add_argument("--format", choices=["table", "json"], default="table")
    compare.add_argument("--all", action="store_true", help="list kept elements too")
    prune = commands.add_parser("prune", help="remove all but the latest N versions of each source (or of one); "
                                              "`gc` then collects their bytes")
    prune.add_argument("source", metavar="SOURCE", nargs="?")
    prune.add_argument("--keep", type=int, required=True, metavar="N")
    return [listing, compare, prune]


def versions_command(args: argparse.Namespace, store: KgStore) -> int:
    versions = source_versions(args.source, store=store)
    if args.format == "json":
        print(json.dumps([v.to_json() for v in versions], ensure_ascii=False, indent=2))
        return 0
    rows = []
    for v in versions:
        counts = v.counts
        changes = "" if counts is None else \
            f"{counts.kept} kept, {counts.moved} moved, {counts.changed} changed, {counts.removed} removed, " \
            f"{counts.added} added"
        facts = ", ".join(f"{n} {name}" for name, n in v.facts.items() if n) if v.facts else ""
        rows.append([f"{v.number}{' (latest)' if v.latest else ''}", v.generated[:19], v.document, changes, facts])
    print(table(["version", "generated", "document", "elements", "facts"], rows))
    return 0


def diff_command(args: argparse.Namespace, store: KgStore) -> int:
    diff = diff_documents(_named(store, args.old), _named(store, args.new), store=store)
    if args.format == "json":
        print(json.dumps(diff.to_json(), ensure_ascii=False, indent=2))
        return 0
    print(describe_diff(diff, args.all))
    return 0


def prune_command(args: argparse.Namespace, store: KgStore) -> int:
    removed = prune_versions(args.keep, args.source, store=store)
    for v in removed:
        print(f"{v.source} version {v.number}  {v.document}")
    print(f"{len(removed)} versions removed; `kg-decoder gc` collects the bytes only they cited")
    return 0


def _named(store: KgStore, name: str) -> str:
    """A version IRI, or a document as :func:`document_named` reads it (``SOURCE@N`` included)."""
    return name if name.startswith("urn:version:") else document_named(name, store)


def _side(side) -> str:
    if side is None:
        return ""
    box = "" if side.bbox is None else " [" + ", ".join(f"{v:.0f}" for v in side.bbox) + "]"
    page = "" if side.page_number is None else f"p{side.page_number}"
    return f"{page}{box} {_clip(side.text)}".strip()


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def describe_diff(diff: VersionDiff, everything: bool = False) -> str:
    rows = []
    for entry in diff.entries:
        if entry.op == "kept" and not everything:
            continue
        edits = "; ".join(f"{old!r}->{new!r}" for _, old, new in entry.edits[:5])
        rows.append([str(entry.op), _side(entry.old), _side(entry.new), _clip(edits)])
    c = diff.counts
    summary = f"{c.kept} kept, {c.moved} moved, {c.changed} changed, {c.removed} removed, {c.added} added"
    return table(["op", "old", "new", "edits"], rows) + "\n" + summary


__all__ = ["add_version_commands", "diff_command", "prune_command", "versions_command"]
