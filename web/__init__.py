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

import hmac
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import urlsplit

from flask import Flask, Response, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

import kg_decoder
from kg_decoder import Forbidden, KgDecoderError, KgStore
from kg_decoder.serve import (Bounds, Jobs, RequestCancelled, WorkerPool, allowed_endpoints, bounded_read,
                              worker_pool)

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_log = logging.getLogger("kg_decoder.web")


@dataclass
class WebSettings:
    """What the routes share: the store, who may write, the limits and the workers."""

    store: KgStore
    write_token: Optional[str] = None
    query_timeout: float = 30.0
    row_cap: int = 100_000
    max_upload_bytes: int = 100 * 1024 * 1024
    allow_service: tuple[str, ...] = ()
    allow_load: tuple[str, ...] = ()
    workers: Optional[WorkerPool] = None
    bounds: Bounds = field(default_factory=Bounds)
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    jobs: Jobs = field(default_factory=Jobs)
    # Uploads decoded while their request waits each hold a server thread: so many at a time.
    uploads: threading.BoundedSemaphore = field(default_factory=lambda: threading.BoundedSemaphore(2))

    def require_token(self) -> None:
        """Forbidden unless the request carries the write token: a Bearer header, or a form field
        ``token`` in a form this server's own pages sent (a browser says where a form came from)."""
        header = request.headers.get("Authorization", "")
        from_form = not header.startswith("Bearer ")
        given = request.form.get("token", "") if from_form else header[len("Bearer "):].strip()
        if not self.write_token or not hmac.compare_digest(given.encode("utf-8", "surrogatepass"),
                                                           self.write_token.encode("utf-8", "surrogatepass")):
            raise Forbidden("writing needs the configured write token")
        if from_form and _from_another_site():
            raise Forbidden("a form that writes must be sent from this server's own pages")

    def client(self) -> str:
        """Who asks: the client's address, for the share of the workers one client may hold."""
        return request.remote_addr or ""

    def cancelled(self) -> Optional[Callable[[], bool]]:
        """Whether the client went away (waitress tells, when it reads ahead on the connection)."""
        return request.environ.get("waitress.client_disconnected")

    def read(self, name: str, *args):
        """A page's read (``kg_decoder.serve.page_reads``) in a worker, within the request's limits."""
        return bounded_read(self.store, name, *args, bounds=self.bounds, workers=self.workers, client=self.client(),
                            cancelled=self.cancelled())


def _from_another_site() -> bool:
    """Whether a browser says the request comes from another site's page (``Sec-Fetch-Site``, else
    ``Origin``); a request no browser sent says nothing and passes."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site not in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is None:
        return False
    return origin == "null" or urlsplit(origin).netloc.lower() != (request.host or "").lower()


def wants_html() -> bool:
    """Whether the error goes to a person: a browser asking for a page (it prefers text/html to JSON),
    not a program (``/api/...``, ``/sparql``, ``Accept: application/json``, or no preference)."""
    return not request.path.startswith(("/api/", "/sparql")) and prefers_html()


def prefers_html() -> bool:
    """Whether the client asks for text/html before JSON (a browser does; a program, no preference)."""
    accepted = request.accept_mimetypes
    return accepted["text/html"] > accepted["application/json"]


def error_answer(body: dict, status: int):
    """An error as JSON for programs, as a page with the message and ways back for people."""
    if not wants_html():
        return jsonify(body), status
    return render_template("error.html", status=status, error=body), status


def settings() -> WebSettings:
    return current_app.extensions["kg_decoder"]


def create_app(store, write_token: Optional[str] = None, query_timeout: float = 30.0, row_cap: int = 100_000,
               max_upload_bytes: int = 100 * 1024 * 1024, allow_service: tuple[str, ...] = (),
               allow_load: tuple[str, ...] = (), workers: int = 4, worker_memory_mb: int = 1024,
               client_slots: int = 2, trusted_hosts: Optional[list[str]] = None, isolate: bool = True) -> Flask:
    """The app over ``store`` (a KgStore or a folder). Writes need ``write_token`` (Bearer or form field).

    SPARQL queries and updates may call remote endpoints (SERVICE) only at the URLs of
    ``allow_service`` or under them, and updates load remote documents (LOAD) only from those of
    ``allow_load``: by default none. With ``isolate`` (and a store on disk or remote), queries,
    updates, traces and page drawings run in up to ``workers`` worker processes of
    ``worker_memory_mb`` each, at most ``client_slots`` of them for one client address.
    ``trusted_hosts`` (host names) refuses requests addressed to any other host (400).
    """
    from .api import api
    from .pages import pages
    from .search import search
    from .sparql import sparql
    from .versions import versions

    if not isinstance(store, KgStore):
        store = kg_decoder.open_store(store)
    store.text_index()  # made, or caught up with the graph, before the workers read it
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static"))
    app.config["MAX_CONTENT_LENGTH"] = max_upload_bytes
    app.config["TRUSTED_HOSTS"] = list(trusted_hosts) if trusted_hosts else None
    app.url_map.merge_slashes = False  # "//x" redirected to "/x" would build a URL from the request's Host
    pool = worker_pool(store, workers, worker_memory_mb, client_slots) if isolate else None
    app.extensions["kg_decoder"] = WebSettings(store, write_token, query_timeout, row_cap, max_upload_bytes,
                                               allowed_endpoints(allow_service), allowed_endpoints(allow_load),
                                               pool, Bounds(seconds=query_timeout))
    for blueprint in (sparql, api, pages, search, versions):
        app.register_blueprint(blueprint)

    @app.after_request
    def secure(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.errorhandler(KgDecoderError)
    def typed_error(error: KgDecoderError):
        if isinstance(error, RequestCancelled):  # nobody is left to read it
            return Response(status=error.http_status)
        return error_answer(error.to_json(), error.http_status)

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
