"""``kg-decoder decode --ray ADDRESS``: documents decoded as Ray tasks (the extra ``kg-decoder[ray]``).

Each task runs where Ray puts it: it decodes one document with a partition worker of its own
(the same time limit and crash isolation as on one machine), writes the bytes to the shared
library and commits the document straight to the remote store; only a summary comes back. The
embedded store is refused: it has one writer (the process holding its folder), so tasks on other
machines cannot commit to it, and gathering every document's quads back to the driver would make
the driver the bottleneck the cluster is there to remove. ``--workers N`` is the one-machine way.

A task whose process dies (killed, out of memory) is run again by Ray, twice; then the file is
reported as failed and the batch goes on.
"""

from __future__ import annotations

import argparse
import os
from collections import deque
from dataclasses import replace
from pathlib import Path
from typing import Iterator, Optional, Union

from ..cite.chunks import chunk_document
from ..decode.parallel import READ_AHEAD, available_cpus
from ..decode.pipeline import read_source, render_files_ahead
from ..versions import decode
from ..decode.renders import keep_rendering, kept_rendering
from ..decode.worker import PartitionWorker
from ..graph.remote_store import StoreConfig, is_remote_location
from ..graph.library import sha256_hex
from ..graph.opening import open_store
from ..graph.store import KgStore
from ..model import ChunkOptions, DecodeOptions, DecodeResult, EmbeddedResult
from ..model.errors import InvalidOption, KgDecoderError, RequestError, WorkerUnavailable

_TASK_RETRIES = 2  # runs again after the task's process died, before the file is reported failed


class RayUnavailable(RequestError):
    """``--ray`` was asked for, but Ray is not installed or the store cannot take it."""


def decode_on_ray(files: list[Path], args: argparse.Namespace, options: DecodeOptions,
                  chunking: Optional[ChunkOptions]) -> tuple[KgStore, Iterator[tuple[Path, Union[DecodeResult,
                                                                                             KgDecoderError]]]]:
    """Decode ``files`` as Ray tasks on the cluster at ``args.ray``: the store (read-only here) and
    ``(path, summary or error)`` in input order. The store, the library and the cluster are checked
    before the first task is sent."""
    if not is_remote_location(args.store):
        raise RayUnavailable("--ray needs a remote --store (a SPARQL server's URL or a .toml config): the embedded "
                             "store has one writer, which tasks on other machines cannot reach; use --workers N "
                             "to decode on this machine's CPUs")
    store = open_store(args.store, read_only=True, library=args.library, library_options=dict(args.library_option))
    if not store.library.shared and args.ray != "auto":
        store.close()
        raise RayUnavailable("--ray on a cluster needs a library every machine reaches (--library s3://bucket/prefix "
                             "or another fsspec URL): a folder is on one machine's disk")
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'kg-decoder[ray]'") from None
    started_here = _connect(ray, args.ray, args.workers)
    # Office files rendered here, many to one LibreOffice run, each rendering sent with its file:
    # a task alone would start LibreOffice for one document.
    render_files_ahead(files, store, options)
    return store, _results(ray, files, store, options, chunking, not args.no_record_failures, started_here,
                           args.source_id)


def _results(ray, files: list[Path], store: KgStore, options: DecodeOptions, chunking: Optional[ChunkOptions],
             record_failure: bool, started_here: bool,
             source_id: Optional[str] = None) -> Iterator[tuple[Path, Union[DecodeResult, KgDecoderError]]]:
    try:
        task = ray.remote(num_cpus=1, max_retries=_TASK_RETRIES)(decode_task)
        in_flight = READ_AHEAD * max(1, int(ray.cluster_resources().get("CPU", 1)))
        pending: deque = deque()  # [path, task or error, sha256] in input order
        # Copies of bytes in flight, sent when the copy before them is collected: two tasks committing
        # one document at once (on two machines) would give its activity two start and end times.
        waiting: dict[str, list] = {}

        def send(entry: list, data: bytes, sha256: str) -> None:
            kept = kept_rendering(store, sha256)
            rendered = Path(kept).read_bytes() if kept else None
            entry[1] = task.remote(entry[0].name, data, store.graph.config, options, chunking, record_failure, rendered,
                                   source_id or str(entry[0].resolve()))
            entry[2] = sha256
            waiting.setdefault(sha256, [])

        def submit(path: Path) -> None:
            entry = [path, None, None]
            pending.append(entry)
            try:
                data, _ = read_source(path, options.max_bytes)
            except KgDecoderError as error:
                entry[1] = error
                return
            sha256 = sha256_hex(data)
            if sha256 in waiting:
                waiting[sha256].append((entry, data))
            else:
                send(entry, data, sha256)

        def collect():
            path, outcome, sha256 = pending.popleft()
            collected = _collected(ray, path, outcome)
            copies = waiting.pop(sha256, [])
            if copies:
                send(*copies[0], sha256)
                waiting[sha256] = copies[1:]
            return collected

        for path in files:
            submit(path)
            if len(pending) >= in_flight:
                yield collect()
        while pending:
            yield collect()
    finally:
        if started_here:
            ray.shutdown()


def _connect(ray, address: str, workers: Optional[int]) -> bool:
    """Join the cluster at ``address``; ``auto``: the one running on this machine, else a local one
    with ``workers`` (or every available) CPUs. Whether this call started it."""
    if ray.is_initialized():
        return False
    quiet = dict(include_dashboard=False, log_to_driver=False, configure_logging=False)
    if address != "auto":
        try:
            ray.init(address=address, **{k: v for k, v in quiet.items() if k != "include_dashboard"})
        except (ConnectionError, ValueError, RuntimeError) as exc:
            raise RayUnavailable(f"cannot join the Ray cluster at {address}: {str(exc)[:300]}") from None
        return True
    try:
        ray.init(address="auto", **{k: v for k, v in quiet.items() if k != "include_dashboard"})
    except (ConnectionError, ValueError, RuntimeError):
        ray.init(num_cpus=workers or available_cpus(), **quiet)
    return True


def _collected(ray, path: Path, outcome) -> tuple[Path, Union[DecodeResult, KgDecoderError]]:
    if isinstance(outcome, KgDecoderError):
        return path, outcome
    try:
        return path, ray.get(outcome)
    except ray.exceptions.RayTaskError as exc:  # the task raised (a bug): Ray does not run it again
        return path, WorkerUnavailable(f"the Ray task decoding this file raised {type(exc.cause).__name__}: "
                                       f"{str(exc.cause)[:200]}")
    except ray.exceptions.RayError as exc:  # the task's process died on each of its runs
        return path, WorkerUnavailable(f"the Ray task decoding this file failed {_TASK_RETRIES + 1} times: "
                                       f"{type(exc).__name__}")


# ---------------------------------------------------------------- in the Ray worker process

_task_cache: dict = {}  # the store connection and partition worker a Ray worker process keeps between tasks


def decode_task(file_name: str, data: bytes, config: StoreConfig, options: DecodeOptions,
                chunking: Optional[ChunkOptions], record_failure: bool,
                rendering: Optional[bytes] = None,
                source_id: Optional[str] = None) -> Union[DecodeResult, KgDecoderError]:
    """One document decoded and committed where the task runs; its summary (no texts) or typed error.
    ``rendering`` is the document's LibreOffice rendering when the driver made it; ``source_id``: the
    source it is a version of (``--source-id``, else the file's absolute path on the driver's machine,
    as a decode there names it)."""
    try:
        if _task_cache.get("config") != config:
            _task_cache.update(config=config, store=open_store(config))
        if "worker" not in _task_cache:
            _task_cache["worker"] = PartitionWorker(threads=1)  # a task holds one CPU
        store = _task_cache["store"]
        if rendering is not None:
            keep_rendering(store, sha256_hex(data), rendering)
        result = decode(data, store=store, options=options, file_name=file_name, worker=_task_cache["worker"],
                        record_failure=record_failure, source_id=source_id)
        if chunking is not None:
            for document in result.documents():
                chunk_document(document, store=store, options=chunking)
        return _summary(result)
    except KgDecoderError as error:
        error.__traceback__ = error.__context__ = None
        return error
    except (OSError, ValueError) as exc:
        return InvalidOption(f"{file_name}: {exc}")


def _summary(result: DecodeResult) -> DecodeResult:
    """A result without its texts (the store has them): what a task hands back."""
    return replace(result, text_documents=[], embedded=[_embedded_summary(entry) for entry in result.embedded])


def _embedded_summary(entry: EmbeddedResult) -> EmbeddedResult:
    if entry.result is None:
        return entry
    return replace(entry, result=_summary(entry.result))


__all__ = ["decode_on_ray", "decode_task"]
