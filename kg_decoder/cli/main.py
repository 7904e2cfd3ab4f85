"""The command line: ``kg-decoder decode``, ``chunk``, ``facts add``, ``trace``, ``query`` and the rest.

A thin layer over the Python API: it walks folders, shows progress, prints tables and turns
every typed error into a one-line message and a non-zero exit.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import logging
import math
import os
import sys
import threading
from pathlib import Path
from typing import Iterator, Optional, Sequence

from ..cite.annotations import web_annotations
from ..cite.chunks import chunk_document, document_chunks
from ..cite.documents import document_named
from ..cite.fact_lines import add_fact_lines
from ..cite.extract import extract
from ..cite.facts import add_facts
from ..cite.images import document_images, export_images
from ..cite.search import search
from ..cite.trace import trace
from ..decode.pipeline import needs_worker, render_files_ahead, stored_result
from ..decode.parallel import WorkerPool, available_cpus, in_input_order
from ..decode.images import limit_image_pixels
from ..decode.worker import shared_worker
from ..graph.queries import query_file, shipped_queries
from ..graph.opening import open_for_reading, open_store
from ..graph.store import KgStore
from ..graph.terms import read_facts
from ..graph.transfer import export_store, import_store
from ..model import Audit, CrawlOptions, DecodeResult
from ..model.errors import InvalidFact, KgDecoderError, RequestError
from ..quality.audits import run_audits
from ..quality.validation import validate
from ..serve.version_views import verdict_chain_views
from ..serve.workers import spread_workers
from ..sources.crawl import crawl
from ..versions import decode
from . import remote
from .arguments import build_parser, chunk_options, decode_options
from .versions import diff_command, prune_command, versions_command
from .output import (DECODE_COLUMNS, decoded_row, describe_sources, embedded_row, emit_jsonl, failed_row, json_line,
                     next_steps, short, store_flags, table)


class UsageError(RequestError):
    """The command line was given a combination of arguments it cannot run."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    commands = {"decode": _decode, "query": _query, "chunk": _chunk, "facts": _facts, "extract": _extract, "trace": _trace,
                "serve": _serve, "images": _images, "audit": _audit, "validate": _validate, "crawl": _crawl,
                "gc": _gc, "queries": _queries, "export": _export, "import": _import, "search": _search,
                "reindex": _reindex, "remove": _remove, "mcp": _mcp,
                "versions": lambda a: versions_command(a, _reading_store(a)),
                "diff": lambda a: diff_command(a, _reading_store(a)),
                "prune": lambda a: prune_command(a, _store(a, create=False))}
    try:
        if hasattr(args, "max_image_pixels"):  # a command that decodes pictures, here or in its workers
            if args.max_image_pixels is not None and args.max_image_pixels < 1:
                raise UsageError("--max-image-pixels takes a positive number")
            limit_image_pixels(args.max_image_pixels)  # the environment carries it to the workers
        return commands[args.command](args)
    except KgDecoderError as exc:
        print(f"kg-decoder: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kg-decoder: interrupted", file=sys.stderr)
        return 130


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


def _store(args: argparse.Namespace, create: bool = True) -> KgStore:
    """The store ``--store``, ``--library`` and ``--library-option`` name; ``create``: made where there is
    none (UnknownStore otherwise)."""
    return open_store(args.store, library=args.library, library_options=dict(args.library_option), create=create)


def _reading_store(args: argparse.Namespace) -> KgStore:
    """The store for a command that only reads (see :func:`open_for_reading`)."""

    def say_locked() -> None:
        print(f"kg-decoder: {args.store} is in use by another process (a running kg-decoder serve?): reading it "
              f"read-only, as it is now", file=sys.stderr)

    return open_for_reading(args.store, args.library, dict(args.library_option), on_locked=say_locked)


def _json_progress(report) -> None:
    _json_line(report.to_json())


_stderr_lines = threading.Lock()


def _json_line(record: dict) -> None:
    """One JSON line on stderr, whole even when parallel decodes report at once."""
    line = json_line(record)
    with _stderr_lines:
        sys.stderr.write(line)
        sys.stderr.flush()


def _decode(args: argparse.Namespace) -> int:
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


def _export(args: argparse.Namespace) -> int:
    moved = export_store(_reading_store(args), Path(args.folder))
    print(f"exported {moved.quads} quads and {moved.blobs} blobs from {args.store} into {args.folder}")
    return 0


def _import(args: argparse.Namespace) -> int:
    store = _store(args)
    moved = import_store(store, Path(args.folder))
    store.flush()
    print(f"imported {moved.quads} quads and {moved.blobs} blobs from {args.folder} into {args.store} "
          f"({len(store)} quads in the store)")
    return 0


def _crawl(args: argparse.Namespace) -> int:
    """Crawl, print a table of the pages; exit 1 when the start page itself could not be decoded."""
    options = CrawlOptions(max_pages=args.max_pages, delay_seconds=args.delay, max_crawl_delay=args.max_crawl_delay,
                           page_timeout=args.page_timeout, max_page_bytes=args.max_page_bytes, retries=args.retries,
                           user_agent=args.user_agent)
    store = _store(args)

    def show(report):
        if not args.no_progress:
            print(f"\r{report.current + 1}/{report.total} {report.message}"[:100].ljust(100), end="",
                  file=sys.stderr, flush=True)

    result = crawl(args.url, store=store, options=options, progress=show, section_strategy=args.section_strategy)
    if not args.no_progress:
        print(file=sys.stderr)
    for page in result.pages:
        if page.error is not None:
            print(f"kg-decoder: {page.url}: {type(page.error).__name__}: {page.error.message}", file=sys.stderr)
    rows = [[page.url, str(page.depth), str(page.http_status or "-"), str(page.status), page.document or "-"]
            for page in result.pages]
    print(table(["url", "depth", "http", "status", "document"], rows))
    store.flush()
    done = [p for p in result.pages if p.document]
    print(f"{len(done)} of {len(result.fetched)} fetched pages in {args.store} ({len(store)} quads in the store)")
    return 0 if result.pages and result.pages[0].document else 1


def _chunk(args: argparse.Namespace) -> int:
    options = chunk_options(args)
    store = _store(args, create=False)
    documents = [document_named(name, store) for name in args.documents] or sorted(
        {summary.document for summary in store.document_summaries()})
    report = sys.stderr if args.emit else sys.stdout
    rows = []
    for document in documents:
        result = chunk_document(document, store=store, options=options)
        rows.append([document, str(result.chunks), str(result.status)])
        if args.emit == "jsonl":
            emit_jsonl(view.to_json() for view in document_chunks(document, store=store))
    store.flush()
    print(table(["document", "chunks", "status"], rows), file=report)
    return 0


def _facts(args: argparse.Namespace) -> int:
    if args.chunk is not None:
        triples, spans = read_facts(args.file, format=args.format)
        result = add_facts(args.chunk, triples, spans, store=_store(args, create=False), extractor=args.extractor)
        print(f"{result.facts} facts {result.status} from {result.chunk} in {len(result.subgraphs)} subgraphs")
        return 0
    kind = args.format or os.path.splitext(str(args.file))[1].lower().lstrip(".")
    if kind not in ("jsonl", "json"):
        raise InvalidFact("facts without --chunk are JSON lines (each names its chunk, its document or nothing); "
                          "Turtle and N-Triples need --chunk")
    from tqdm import tqdm

    bar = tqdm(total=0, unit="fact", file=sys.stderr, disable=args.no_progress or None, dynamic_ncols=True)

    def show(report) -> None:
        bar.total = report.total
        bar.update(report.current - bar.n)

    result = add_fact_lines(args.file, store=_store(args, create=False), extractor=args.extractor,
                            batch_lines=args.batch_lines, progress=show)
    bar.close()
    if args.emit == "jsonl":
        emit_jsonl(outcome.to_json() for outcome in result.outcomes)
    report = sys.stderr if args.emit else sys.stdout
    print(table(["grounding", "facts", "reasons"], result.summary_rows()), file=report)
    for outcome in result.refused[:20]:
        print(f"line {outcome.line}: refused: {outcome.reason}", file=report)
    if len(result.refused) > 20:
        print(f"... and {len(result.refused) - 20} more refused lines (--emit jsonl lists every line)", file=report)
    print(f"{result.stored} of {result.lines} lines stored in {result.batches} transactions"
          + (f" ({result.unchanged} already held)" if result.unchanged else ""), file=report)
    return 0


def _extract(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    bar = tqdm(total=0, unit="chunk", file=sys.stderr, disable=args.no_progress or None, dynamic_ncols=True)

    def show(report) -> None:
        bar.total = report.total
        bar.update(report.current - bar.n)

    store = _store(args, create=False)
    result = extract(args.extractor, command=args.with_command, store=store, documents=args.documents or None,
                     name=args.extractor_name, version=args.extractor_version, batch_chunks=args.batch_chunks,
                     chunk_seconds=args.chunk_seconds, max_output=args.max_output, progress=show)
    bar.close()
    store.flush()
    if args.emit == "jsonl":
        emit_jsonl([*(failure.to_json() for failure in result.failed),
                    *(outcome.to_json() for outcome in result.refused)])
    report = sys.stderr if args.emit else sys.stdout
    print(f"extractor {result.extractor} {result.version}", file=report)
    print(table(["", "count", "reasons"], result.summary_rows()), file=report)
    for failure in result.failed[:20]:
        print(f"chunk {failure.chunk}: {failure.code}: {failure.reason}", file=report)
    if len(result.failed) > 20:
        print(f"... and {len(result.failed) - 20} more failed chunks (--emit jsonl lists them)", file=report)
    print(f"{result.facts} facts from {result.extracted} of {result.chunks} chunks in {result.batches} "
          f"transactions", file=report)
    return 1 if result.failed else 0


def _trace(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    if args.fact:
        sources = trace(fact=_parse_fact(args.fact), store=store)
    elif args.segment:
        if args.start is None or args.end is None:
            raise UsageError("--segment needs --start and --end")
        sources = trace(span=(args.segment, args.start, args.end), store=store)
    elif args.quote:
        sources = trace(quote=args.quote, document=document_named(args.document, store) if args.document else None,
                        store=store, limit=args.limit, offset=args.offset)
    else:
        raise UsageError("give a fact, --segment with --start and --end, or --quote")
    if args.format == "jsonld":
        print(json.dumps(web_annotations(sources), ensure_ascii=False, indent=2))
    elif args.format == "json":
        print(json.dumps([source.to_json() for source in sources], ensure_ascii=False, indent=2))
    else:
        print(describe_sources(sources, [verdict_chain_views(store, source) for source in sources]))
    return 0 if sources else 1


def _search(args: argparse.Namespace) -> int:
    found = search(args.quote, store=_reading_store(args), limit=10 if args.limit is None else args.limit,
                   offset=args.offset)
    if args.format == "json":
        print(json.dumps(found.to_json(), ensure_ascii=False, indent=2))
    else:
        for hit in found.hits:
            where = f"page {hit.page_number}" if hit.page_number is not None else hit.segment_kind
            print(f"{hit.file_name or hit.document}  {where}  {hit.segment} {hit.start}..{hit.end}")
            print(f"    ...{hit.before}[{' '.join(hit.quote.split())}]{hit.after}...")
        shown = f"{found.offset + 1}-{found.offset + len(found.hits)} of " if found.hits else ""
        print(f"{shown}{'' if found.total_exact else 'at least '}{found.total} places", file=sys.stderr)
    return 0 if found.hits else 1


def _reindex(args: argparse.Namespace) -> int:
    with _store(args, create=False) as store:
        count = store.reindex()
    print(f"the text index holds {count} documents", file=sys.stderr)
    return 0


def _remove(args: argparse.Namespace) -> int:
    with _store(args, create=False) as store:
        store.remove_document(document_named(args.document, store))
    return 0


def _parse_fact(text: str):
    """A fact written as one N-Triples statement (the final dot may be left out)."""
    statement = text.strip()
    triples, _ = read_facts("fact.nt", data=(statement if statement.endswith(".") else statement + " .").encode(),
                            format="nt")
    if len(triples) != 1:
        raise UsageError("give exactly one fact")
    return triples[0]


def _serve(args: argparse.Namespace) -> int:
    from ..patches import waitress as bounded_waitress
    from ..patches.waitress import install_json_errors

    # Uploads are partitioned, mapped and chunked in the worker; this process reads inputs and commits.
    # What Python work is left here (the multipart body, JSON) is cut in short GIL slices so that
    # reading threads do not wait behind it for the default 5 ms.
    sys.setswitchinterval(0.0005)
    if min(args.threads, args.worker_memory, args.client_slots, args.sync_facts, args.job_queue,
           args.connections_per_client) < 1 \
            or min(args.request_workers, args.write_waiters, args.write_wait, args.reserved_workers) < 0 \
            or not args.request_deadline > 0:
        raise UsageError("--threads, --worker-memory, --client-slots, --sync-facts, --job-queue, "
                         "--connections-per-client and --request-deadline take positive numbers, --request-workers, "
                         "--write-waiters, --write-wait and --reserved-workers ones from 0")
    store = _store(args)
    worker = shared_worker()
    if args.pin_worker:
        _split_cpus(worker)
    worker.start()
    store.serve_reads_first()
    try:
        allowed = {"allow_service": tuple(args.allow_service), "allow_load": tuple(args.allow_load)}
        app = load_web_app().create_app(store, write_token=args.write_token, query_timeout=args.query_timeout,
                                        row_cap=args.row_cap, **allowed,
                                        workers=max(1, min(args.request_workers, args.threads - 2)),
                                        worker_memory_mb=args.worker_memory, client_slots=args.client_slots,
                                        trusted_hosts=args.trusted_host or None, isolate=args.request_workers > 0,
                                        write_waiters=args.write_waiters, write_wait=args.write_wait,
                                        sync_facts=args.sync_facts, job_queue=args.job_queue,
                                        listen_host=args.host, reserved_workers=args.reserved_workers)
    except ValueError as exc:  # an allow-list entry that is no URL
        raise UsageError(str(exc)) from None
    # The heap built at start-up is frozen out of the garbage collector: full passes over it were the
    # slowest requests.
    gc.collect()
    gc.freeze()
    print(f"kg-decoder: serving {args.store} on http://{args.host}:{args.port}/ "
          f"({'writable with the token' if args.write_token else 'read-only'})", file=sys.stderr)
    # The body limit is waitress's, enforced before a body is read (a Content-Length over it, or a
    # chunked body when it passes it, is 413 at once); reading one request ahead on a connection lets
    # a route see that its client went away, and stop the work for it. The server is waitress's with
    # a share of the connections per client address and deadlines for a request's headers and body
    # (kg_decoder/patches/waitress.py): one client's half-sent connections cannot take them all.
    # waitress's own errors (that 413, a malformed request's 400) are JSON as the app's are.
    connections = bounded_waitress.file_limit_for(bounded_waitress.CONNECTION_LIMIT)
    server = bounded_waitress.create_server(
        app, host=args.host, port=args.port, threads=args.threads,
        max_request_body_size=app.config["MAX_CONTENT_LENGTH"] + 1, channel_request_lookahead=1,
        connection_limit=connections, per_client=min(args.connections_per_client, connections),
        header_seconds=args.request_deadline)
    install_json_errors(server)
    logging.basicConfig()
    server.print_listen("Serving on http://{}:{}")
    server.run()
    return 0


def _mcp(args: argparse.Namespace) -> int:
    from .. import mcp

    try:
        from ..mcp import server  # noqa: F401  (the SDK, imported by this module only)
    except ModuleNotFoundError as exc:
        raise UsageError(f"kg-decoder mcp needs the MCP SDK ({exc.name} is missing): "
                         f"pip install 'kg-decoder[mcp]'") from None
    store = mcp.open_mcp_store(args.store, args.library, dict(args.library_option), allow_writes=args.allow_writes)
    try:
        mcp.run_server(store, roots=args.root, allow_writes=args.allow_writes, http_port=args.http,
                       query_timeout=args.query_timeout, row_cap=args.row_cap, allow_service=args.allow_service,
                       request_workers=args.request_workers, worker_memory_mb=args.worker_memory)
    except ValueError as exc:  # an allow-list entry that is no URL
        raise UsageError(str(exc)) from None
    finally:
        store.close()
    return 0


def _split_cpus(worker) -> None:
    """The decoding worker on the last CPU, this process's threads on the others, the request workers
    on every CPU.

    A decode sharing CPUs with the request threads, even at idle priority, evicts their caches
    and draws them across CPUs: on two CPUs it quadrupled the p99 of a trivial query. The request
    workers (queries, traces, page drawings) run at normal priority: on every CPU they pass the idle
    decoder, where on the threads' CPUs alone they all shared one CPU while the decoder had the other.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return
    os.sched_setaffinity(0, set(cpus[:-1]))
    worker.pin({cpus[-1]})
    spread_workers(set(cpus))


def load_web_app():
    """The Flask app package, ``kg_decoder.web`` (imported on demand: Flask is needed by serve only)."""
    from .. import web

    return web


def _images(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    document = document_named(args.document, store)
    images = document_images(document, store=store)
    if args.format == "json":
        emit_jsonl(image.to_json() for image in images)
    else:
        rows = [[image.iri, short(image.page_number or image.sheet_name),
                 " ".join(f"{v:.1f}" for v in image.bbox) if image.bbox else "",
                 f"{image.width}x{image.height}" if image.width else "", short(image.mime_type),
                 image.anchor_cell or "", image.skipped_reason or ("stored" if image.sha256 else
                                                                   image.source_url or "")]
                for image in images]
        print(table(["image", "page", "bbox", "pixels", "mime", "cell", "bytes"], rows))
    if args.export:
        written = export_images(document, args.export, store=store)
        print(f"{len(written)} images written to {args.export}", file=sys.stderr)
    return 0


def _audit(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError("--timeout takes a number of seconds over 0")

    def started(audit: Audit) -> None:  # the name first, so a slow audit is seen while it runs
        if not args.json:
            print(f"== {audit.name}: {audit.title}", flush=True)

    def ended(audit: Audit) -> None:
        if args.json:
            print(json_line(audit.to_json()), end="", flush=True)
            return
        rows = audit.table
        if audit.error is not None:
            print(f"not finished after {audit.seconds:.1f} s: {audit.error}")
        else:
            count = f"{len(rows)} found" if audit.kind == "finding" else f"{len(rows)} rows"
            print(f"{count} in {audit.seconds:.2f} s")
        if rows.rows:
            print(table(rows.columns, [[short(value) for value in row] for row in rows.rows]))
        print(flush=True)

    audits = run_audits(_reading_store(args), timeout=args.timeout, started=started, ended=ended)
    findings = sum(1 for audit in audits if audit.has_findings)
    unfinished = [audit.name for audit in audits if audit.error is not None]
    if not args.json:
        print(f"{findings} of {sum(1 for a in audits if a.kind == 'finding')} finding audits found something")
    if unfinished:
        print(f"kg-decoder: {len(unfinished)} audit{'s' if len(unfinished) > 1 else ''} could not finish: "
              f"{', '.join(unfinished)}", file=sys.stderr)
        return 1
    return 1 if args.fail_on_findings and findings else 0


def _validate(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    report = validate(store, document_named(args.document, store) if args.document else None)
    if report.conforms:
        print(f"conforms: {report.triples} triples checked against ontology/shapes.ttl")
        return 0
    print(table(["focus", "path", "message", "value"],
                [[v.focus, v.path or "", v.message, v.value or ""] for v in report.violations]))
    print(f"{len(report.violations)} violations in {report.triples} triples")
    return 1


def _gc(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    orphans = store.collect_garbage(dry_run=args.dry_run, wait=args.wait)
    for key in orphans:
        print(key)
    verb = "would be removed" if args.dry_run else "removed"
    print(f"{len(orphans)} library blobs no entity cites {verb}", file=sys.stderr)
    return 0


def _queries(args: argparse.Namespace) -> int:
    """The shipped queries a user may run (the store's own updates left out), audits first."""
    runnable = sorted((query for query in shipped_queries() if not query.is_update),
                      key=lambda query: (not query.name.startswith("audit-"), query.name))
    rows = []
    for query in runnable:
        gives = " ".join((query.headers.get("audit") or query.description).split()).split(". ")[0]
        rows.append([query.name, query.kind_of_query, gives if len(gives) <= 100 else gives[:99] + "…"])
    print(table(["query", "kind", "what it gives"], rows))
    return 0


def _query(args: argparse.Namespace) -> int:
    path = Path(args.query)
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        shipped = query_file(args.query)
        if shipped.is_update:
            raise UsageError(f"{shipped.name} is an update the store runs itself; kg-decoder query runs SELECT, "
                             f"ASK and CONSTRUCT queries (kg-decoder queries lists them)")
        text = shipped.text
    rows = _reading_store(args).select_rows(text)
    if args.format == "json":
        emit_jsonl(rows.records())
    else:
        print(table(rows.columns, [[short(value) for value in row] for row in rows.rows]))
    return 0
