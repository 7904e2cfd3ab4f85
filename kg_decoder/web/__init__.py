"""The kg-decoder web app: SPARQL endpoint, JSON API, and pages (home, SPARQL, documents, trace, search).

Routes only, as four blueprints (``sparql``, ``api``, ``pages``, ``search``) over kg-decoder's public API
(``kg_decoder`` and ``kg_decoder.serve``). One process owns the store: decodes and other writes
go through one lock, reads run concurrently on the server's threads. What a request can make
expensive (a SPARQL query or update, a trace, a page drawn) runs in the server's workers, which
can be killed (``kg_decoder.serve.workers``; SECURITY.md says which work runs where). Every page
escapes document text (Jinja autoescape), sends a Content-Security-Policy and loads nothing from
the network. Every error is JSON with its status for programs (``/api``, ``/sparql``, ``Accept:
application/json``) and a page with the message and ways back for browsers; nothing answers 500
but a bug, which is logged.
"""

from __future__ import annotations

import logging
from typing import Optional

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

import kg_decoder
from kg_decoder import KgDecoderError, KgStore
from kg_decoder.serve import Bounds, Jobs, RequestCancelled, WriteLock, allowed_endpoints, worker_pool

from .api import api
from .context import CSP, HERE, WebSettings, error_answer
from .pages import pages
from .search import search
from .sparql import sparql
from .versions import versions

_log = logging.getLogger("kg_decoder.web")
RETRY_AFTER_SECONDS = 5


def create_app(store, write_token: Optional[str] = None, query_timeout: float = 30.0, row_cap: int = 100_000,
               max_upload_bytes: int = 100 * 1024 * 1024, allow_service: tuple[str, ...] = (),
               allow_load: tuple[str, ...] = (), workers: int = 4, worker_memory_mb: int = 1024,
               client_slots: int = 2, trusted_hosts: Optional[list[str]] = None, isolate: bool = True,
               write_waiters: int = 2, write_wait: float = 60.0, sync_facts: int = 10_000,
               job_queue: int = 8, listen_host: str = "127.0.0.1",
               reserved_workers: Optional[int] = None) -> Flask:
    """The app over ``store`` (a KgStore or a folder). Writes need ``write_token`` (Bearer or form field).

    SPARQL queries and updates may call remote endpoints (SERVICE) only at the URLs of
    ``allow_service`` or under them, and updates load remote documents (LOAD) only from those of
    ``allow_load``: by default none. With ``isolate`` (and a store on disk or remote), queries,
    updates, traces and page drawings run in up to ``workers`` worker processes of
    ``worker_memory_mb`` each, at most ``client_slots`` of them for one client address, with
    ``reserved_workers`` of them (default one) kept for short requests (``kg_decoder.serve.workers``).
    ``trusted_hosts`` (host names) refuses requests addressed to any other host (400); a form that
    writes is taken from a page of this server only, named by a trusted host, else by ``listen_host``,
    localhost or an IP address.
    At most ``write_waiters`` requests wait for the store's writer, each ``write_wait`` seconds at
    most; a fact post of more than ``sync_facts`` lines, and an async upload, is a job of a queue of
    ``job_queue``, its body kept on disk (``<store>/upload-spool``) until it ends.
    """
    if not isinstance(store, KgStore):
        store = kg_decoder.open_store(store)
    store.text_index.opened()  # made, or caught up with the graph, before the workers read it
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static"))
    app.config["MAX_CONTENT_LENGTH"] = max_upload_bytes
    app.config["TRUSTED_HOSTS"] = list(trusted_hosts) if trusted_hosts else None
    app.url_map.merge_slashes = False  # "//x" redirected to "/x" would build a URL from the request's Host
    pool = worker_pool(store, workers, worker_memory_mb, client_slots, reserved_workers) if isolate else None
    app.extensions["kg_decoder"] = WebSettings(store, write_token, query_timeout, row_cap, max_upload_bytes,
                                               allowed_endpoints(allow_service), allowed_endpoints(allow_load),
                                               pool, Bounds(seconds=query_timeout),
                                               WriteLock(write_waiters, write_wait),
                                               Jobs(queued=job_queue, spool=store.work_folder() / "upload-spool"),
                                               sync_facts, listen_host=listen_host)
    for blueprint in (sparql, api, pages, search, versions):
        app.register_blueprint(blueprint)

    @app.after_request
    def secure(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CSP)  # stored bytes have a stricter one
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.errorhandler(KgDecoderError)
    def typed_error(error: KgDecoderError):
        if isinstance(error, RequestCancelled):  # nobody is left to read it
            return Response(status=error.http_status)
        answer = error_answer(error.to_json(), error.http_status)
        if error.http_status == 503:  # busy or at a limit: worth trying again, not at once
            response = app.make_response(answer)
            response.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        return answer

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if error.code == 413:
            return error_answer({"error": "too-large", "message": f"uploads are limited to {max_upload_bytes} bytes"},
                                413)
        if error.code == 404:
            return error_answer({"error": "not-found", "message": "no such page or resource"}, 404)
        code = (error.name or "error").lower().replace(" ", "-")
        return error_answer({"error": code, "message": " ".join((error.description or error.name).split())},
                            error.code)

    @app.errorhandler(Exception)
    def unexpected(error: Exception):  # a bug: logged with its traceback, answered without one
        _log.exception("unexpected error on %s %s", request.method, request.path)
        return error_answer({"error": "internal-error", "message": "the server failed on this request"}, 500)

    return app
