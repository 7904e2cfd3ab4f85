"""The kg-decoder web app: SPARQL endpoint, JSON API, and pages (home, SPARQL, documents, trace).

Routes only, as three blueprints (``sparql``, ``api``, ``pages``) over kg-decoder's public API
(``kg_decoder`` and ``kg_decoder.serve``). One process owns the store: decodes and other writes
go through one lock, reads run concurrently on the server's threads. Every page escapes
document text (Jinja autoescape), sends a Content-Security-Policy and loads nothing from the
network. Every error is JSON with its status; nothing answers 500 but a bug, which is logged.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from flask import Flask, Response, current_app, jsonify, request
from werkzeug.exceptions import HTTPException

import kg_decoder
from kg_decoder import Forbidden, KgDecoderError, KgStore
from kg_decoder.serve import Jobs

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
_log = logging.getLogger("kg_decoder.web")


@dataclass
class WebSettings:
    """What the routes share: the store, who may write, and the limits."""

    store: KgStore
    write_token: Optional[str] = None
    query_timeout: float = 30.0
    row_cap: int = 100_000
    max_upload_bytes: int = 100 * 1024 * 1024
    allow_service: tuple[str, ...] = ()
    write_lock: threading.Lock = field(default_factory=threading.Lock)
    jobs: Jobs = field(default_factory=Jobs)

    def require_token(self) -> None:
        header = request.headers.get("Authorization", "")
        given = header[len("Bearer "):].strip() if header.startswith("Bearer ") else request.form.get("token", "")
        if not self.write_token or given != self.write_token:
            raise Forbidden("writing needs the configured write token")


def settings() -> WebSettings:
    return current_app.extensions["kg_decoder"]


def create_app(store, write_token: Optional[str] = None, query_timeout: float = 30.0, row_cap: int = 100_000,
               max_upload_bytes: int = 100 * 1024 * 1024, allow_service: tuple[str, ...] = ()) -> Flask:
    """The app over ``store`` (a KgStore or a folder). Writes need ``write_token`` (Bearer or form field).

    SPARQL queries and updates may call remote endpoints (SERVICE) only under the prefixes of
    ``allow_service``: by default none.
    """
    from .api import api
    from .pages import pages
    from .sparql import sparql

    if not isinstance(store, KgStore):
        store = kg_decoder.open_store(store)
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static"))
    app.config["MAX_CONTENT_LENGTH"] = max_upload_bytes
    app.extensions["kg_decoder"] = WebSettings(store, write_token, query_timeout, row_cap, max_upload_bytes,
                                               tuple(allow_service))
    for blueprint in (sparql, api, pages):
        app.register_blueprint(blueprint)

    @app.after_request
    def secure(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.errorhandler(KgDecoderError)
    def typed_error(error: KgDecoderError):
        return jsonify(error.to_json()), error.http_status

    @app.errorhandler(HTTPException)
    def http_error(error: HTTPException):
        if error.code == 413:
            return jsonify(error="too-large", message=f"uploads are limited to {max_upload_bytes} bytes"), 413
        if error.code == 404:
            return jsonify(error="not-found", message="no such page or resource"), 404
        code = (error.name or "error").lower().replace(" ", "-")
        return jsonify(error=code, message=" ".join((error.description or error.name).split())), error.code

    @app.errorhandler(Exception)
    def unexpected(error: Exception):  # a bug: logged with its traceback, answered without one
        _log.exception("unexpected error on %s %s", request.method, request.path)
        return jsonify(error="internal-error", message="the server failed on this request"), 500

    return app
