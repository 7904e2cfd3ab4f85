"""What the web app's routes share: the settings of the app (store, token, limits, workers), the
request's client and whether it went away, and errors as JSON or as a page."""

from __future__ import annotations

import hmac
import ipaddress
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional
from urllib.parse import urlsplit

from flask import current_app, jsonify, render_template, request

from kg_decoder import Forbidden, KgStore
from kg_decoder.serve import Bounds, Jobs, WorkerPool, WriteLock, bounded_read

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


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
    writes: WriteLock = field(default_factory=WriteLock)
    jobs: Jobs = field(default_factory=Jobs)
    # Fact lines one request grounds while it waits; a larger post is a job.
    sync_facts: int = 10_000
    # The address the server listens on (a form's Origin may name it).
    listen_host: str = "127.0.0.1"
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

    def writing(self):
        """The store's writer for this request: 503 busy when too many writes wait already, or after
        the wait; not applied when the client left while it waited."""
        return self.writes.request(self.cancelled())

    def read(self, name: str, *args):
        """A page's read (``kg_decoder.serve.page_reads``) in a worker, within the request's limits."""
        return bounded_read(self.store, name, *args, bounds=self.bounds, workers=self.workers, client=self.client(),
                            cancelled=self.cancelled())


def _from_another_site() -> bool:
    """Whether a browser says the request comes from another site's page (``Sec-Fetch-Site``, and
    ``Origin``); a request no browser sent says neither and passes. The ``Host`` a request names is
    the attacker's to choose (a name of theirs made to resolve to this server, DNS rebinding: the
    browser then calls the page same-origin), so an Origin is this server's only when its host
    is one of the server's names: a ``--trusted-host``, the address it listens on, ``localhost``
    or an IP address (a browser sends an IP address as Host only when the page's URL names it)."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None and site not in ("same-origin", "none"):
        return True
    origin = request.headers.get("Origin")
    if origin is None:
        return False
    if origin == "null":
        return True
    try:
        parts = urlsplit(origin)
        origin_host = (parts.hostname or "").lower()
        same = parts.netloc.lower() == (request.host or "").lower()
    except ValueError:
        return True
    return not same or not _own_host_name(origin_host)


def _own_host_name(host: str) -> bool:
    trusted = current_app.config.get("TRUSTED_HOSTS")
    if trusted:
        return host in {name.lower() for name in trusted}
    if host in ("localhost", settings().listen_host.lower()):
        return True
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True


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
