"""The commands that serve a store: ``kg-decoder serve`` (the web app under waitress) and ``kg-decoder mcp``."""

from __future__ import annotations

import argparse
import gc
import logging
import os
import sys

from ..decode.worker import shared_worker
from ..serve.workers import spread_workers
from .common import UsageError, open_job_store as _store


def serve_command(args: argparse.Namespace) -> int:
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


def mcp_command(args: argparse.Namespace) -> int:
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


__all__ = ["load_web_app", "mcp_command", "serve_command"]
