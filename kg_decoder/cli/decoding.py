"""``kg-decoder decode``: files and folders decoded on this machine's workers (or on Ray), each file's row
printed in input order, then the next steps to take on the store."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
from pathlib import Path
from typing import Iterator, Sequence

from ..cite.chunks import chunk_document, document_chunks
from ..decode.pipeline import needs_worker, render_files_ahead, stored_result
from ..decode.parallel import WorkerPool, available_cpus, in_input_order
from ..model import DecodeResult
from ..model.errors import KgDecoderError
from ..versions import decode
from . import remote
from .arguments import chunk_options, decode_options
from .common import UsageError, open_job_store as _store
from .output import (DECODE_COLUMNS, decoded_row, embedded_row, emit_jsonl, failed_row, json_line, next_steps,
                     store_flags, table)


def iter_files(paths: Sequence[str]) -> Iterator[Path]:
    """Files named, and the files inside folders named (recursively, sorted, hidden ones skipped)."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for root, folders, files in os.walk(path):
                folders[:] = sorted(f for f in folders if not f.startswith("."))
                for file in sorted(files):
                    if not file.startswith("."):
                        yield Path(root) / file
        else:
            yield path


def _json_progress(report) -> None:
    _json_line(report.to_json())


_stderr_lines = threading.Lock()


def _json_line(record: dict) -> None:
    """One JSON line on stderr, whole even when parallel decodes report at once."""
    line = json_line(record)
    with _stderr_lines:
        sys.stderr.write(line)
        sys.stderr.flush()


def decode_command(args: argparse.Namespace) -> int:
    options = decode_options(args)  # a bad option fails once, before any file
    chunking = chunk_options(args) if args.chunk else None
    files = list(iter_files(args.paths))
    if not files:
        raise UsageError("no files to decode")
    if args.source_id is not None and len(files) > 1:
        raise UsageError("--source-id names the source of one file: give one file")
    if args.server:
        if args.workers is not None or args.ray:
            raise UsageError("--server sends the files to a running kg-decoder serve, which decodes them: "
                             "--workers and --ray do not apply")
        return remote.upload(files, args.server, args.token, options, chunking, args.emit, args.fail_on_error,
                             args.source_id)
    with contextlib.ExitStack() as stack:
        return _decode_files(files, args, options, chunking, stack)


def _decode_files(files: list[Path], args: argparse.Namespace, options, chunking, stack: contextlib.ExitStack) -> int:
    """Decode on this machine's workers (or on Ray), print the table in input order; the exit status."""
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be 1 or more")
    store, pool, outcomes = _decoding_setup(files, args, options, chunking, stack)
    report = sys.stderr if args.emit else sys.stdout
    rows: list[list[str]] = []
    refused: list[str] = []  # files refused for what they are (encrypted, empty...): the job did its work
    failures = 0  # files the job could not do its work on (a missing model...)
    decoded: list[tuple[Path, DecodeResult]] = []
    chunks_made: dict[str, int] = {}  # per document IRI, when the job chunks
    from tqdm import tqdm

    progress = tqdm(total=len(files), unit="file", file=sys.stderr,
                    disable=args.no_progress or args.progress_jsonl or None, dynamic_ncols=True)

    def decode_one(path: Path, worker) -> DecodeResult:
        def show(report, name=path.name[:30], file=str(path)):
            if args.progress_jsonl:
                _json_line({"file": file, **report.to_json()})
            else:
                progress.set_postfix_str(f"{name}: {report.message}"[:70])

        result = decode(path, store=store, options=options, worker=worker,
                        record_failure=not args.no_record_failures,
                        partition_cache=not args.no_partition_cache, progress=show, retry_partial=args.retry_partial,
                        source_id=args.source_id)
        if chunking is not None:
            for document in result.documents():
                chunks_made[document] = chunk_document(document, store=store, options=chunking,
                                                       progress=show).chunks
        return result

    if outcomes is None:
        outcomes = in_input_order(files, decode_one, pool)
    stack.callback(outcomes.close)  # stopped early: no job starts after this, before the workers stop
    for path, result in outcomes:
        progress.update(1)
        if isinstance(result, KgDecoderError):
            exc = result
            if exc.refuses_input:
                refused.append(type(exc).__name__)
            else:
                failures += 1
            progress.write(f"kg-decoder: {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            verdict = "refused" if exc.refuses_input else "failed"
            rows.append(failed_row(str(path), f"{verdict}: {type(exc).__name__}"))
            continue
        children = [e for top in result.embedded for e in top.walk()]
        decoded.append((path, result))
        if chunking is not None and result.document not in chunks_made:  # chunked by a Ray task: count them
            chunks_made.update((d, len({c.chunk for c in store.document_chunks(d)})) for d in result.documents())
        made = chunks_made if chunking is not None else None
        rows.append(decoded_row(path, result, made))
        rows.extend(embedded_row(path, child, made) for child in children)
        for child in children:
            if child.error is not None:  # the parent is decoded; its attachment is reported, not fatal
                progress.write(f"kg-decoder: {path} > {child.path}: {type(child.error).__name__}: "
                               f"{child.error.message}", file=sys.stderr)
        if args.emit == "jsonl":  # (a Ray task hands back a summary: its texts are read from the store)
            records = (document_chunks(result.document, store=store) if chunking is not None
                       else result.text_documents or stored_result(store, result.document).text_documents)
            emit_jsonl(record.to_json() for record in records)
    progress.close()
    store.flush()
    print(table(DECODE_COLUMNS, rows), file=report)
    _print_summary(files, decoded, refused, failures, store, args, report)
    return 1 if failures or (args.fail_on_error and refused) else 0


def _decoding_setup(files: list[Path], args: argparse.Namespace, options, chunking, stack: contextlib.ExitStack):
    """The store the job writes, its pool of workers (None: none needed) and, on Ray, the outcomes."""
    if args.ray:
        from .distributed import decode_on_ray

        store, outcomes = decode_on_ray(files, args, options, chunking)
        stack.enter_context(store)
        return store, None, outcomes
    # Closed when the job ends, not when the last reference goes (an error kept from a decode holds one).
    store = stack.enter_context(_store(args))
    # Files whose decode (or refusal) the store holds answer from it: workers start only for the others
    # (a re-run of unchanged files starts none).
    new = [path for path in files if needs_worker(path, store, options, args.retry_partial)] \
        if store.holds_documents() else files
    pool = None
    if new:
        # The workers warm up while LibreOffice renders the Office files ahead (many to one run).
        pool = stack.enter_context(WorkerPool(max(1, min(args.workers or available_cpus(), len(new)))))
        if len(new) > 1:
            render_files_ahead(new, store, options, progress=_json_progress if args.progress_jsonl else None)
    return store, pool, None


def _print_summary(files: list[Path], decoded: list, refused: list[str], failures: int, store, args: argparse.Namespace,
                   report) -> None:
    summary = (f"{len(decoded)} of {len(files)} files decoded into {args.store} "
               f"({len(store)} quads in the store)")
    if refused:
        summary += f"; {len(refused)} refused as inputs ({', '.join(sorted(set(refused)))})"
    if failures:
        summary += f"; {failures} failed"
    print(summary, file=report)
    if decoded:
        print(next_steps(store_flags(args.store, args.library, args.library_option), decoded), file=report)


__all__ = ["decode_command", "iter_files"]
