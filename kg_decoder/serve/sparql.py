"""The SPARQL 1.1 Protocol over a KgStore: a query within a time limit and a row cap, answered in
the format the client accepts (Oxigraph writes every format); an update within a time limit.
Used by the web app's ``/sparql``.

SELECT and ASK answer as SPARQL JSON (default), XML, CSV or TSV; CONSTRUCT and DESCRIBE as
Turtle (default), N-Triples or JSON-LD. Errors are KgDecoderErrors, each with its HTTP status.

Over an embedded store on disk, queries and updates run in the server's workers
(:mod:`kg_decoder.serve.workers`), where the time limit stops the evaluation. A remote store
evaluates them itself: its answer is bounded by the time limit and abandoned past it. A store in
memory evaluates them in this process, in threads, where a query past the limit finishes in the
background (so at most 8 run at a time).
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

from ..graph.sparql_guard import check_services
from ..graph.store import KgStore
from ..model.errors import KgDecoderError, NotAcceptable, QueryTimeout, QueryTooComplex, ServerBusy

if TYPE_CHECKING:
    from .workers import WorkerPool

_SHORT = {"json": "application/sparql-results+json", "xml": "application/sparql-results+xml", "csv": "text/csv",
          "tsv": "text/tab-separated-values", "turtle": "text/turtle", "ttl": "text/turtle",
          "nt": "application/n-triples", "ntriples": "application/n-triples", "jsonld": "application/ld+json"}
_DEFAULTS = ("application/sparql-results+json", "text/turtle")


@dataclass
class Answer:
    content_type: str
    body: bytes


_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="sparql")
_SLOTS = threading.BoundedSemaphore(8)


def run_query(store: KgStore, query: str, accept: str = "", format: Optional[str] = None,
              default_graph: Optional[list[str]] = None, named_graphs: Optional[list[str]] = None,
              union: bool = False, timeout: float = 30.0, row_cap: int = 100_000,
              allow_service: Sequence[str] = (), workers: Optional[WorkerPool] = None, client: str = "",
              cancelled: Optional[Callable[[], bool]] = None) -> Answer:
    """Evaluate ``query`` and serialize it; a KgDecoderError on a bad query, a timeout or too many rows.

    With ``workers`` (over an embedded store on disk) the query runs in one of them and is stopped
    at the time limit, or when ``cancelled()`` (the client went away). Otherwise a query past the
    limit is answered 503 at once and finishes in the background, at most 8 at a time (else 503
    too). SERVICE is refused unless its endpoint is one of ``allow_service`` or under one; a query
    too long or chaining too much for the parser is refused before it is sent anywhere.
    """
    wanted = _SHORT.get((format or "").lower(), format or "") or accept
    check_services(query, allow_service)
    location = store.reader_location()
    if workers is not None and location is not None and location[0] == "embedded":
        return workers.run("sparql_answer", store, query, wanted, default_graph, named_graphs,
                           union, row_cap, tuple(allow_service), client=client, timeout=timeout, cancelled=cancelled,
                           crash="the query crashed the SPARQL engine (it is too complex); it was stopped",
                           crashed=QueryTooComplex, timed_out=_query_timeout("query"))
    if not _SLOTS.acquire(blocking=False):
        raise ServerBusy("too many queries are running; try again")
    future = _POOL.submit(_evaluate, store, query, wanted, default_graph, named_graphs, union, row_cap,
                          allow_service, timeout)
    future.add_done_callback(lambda _: _SLOTS.release())
    try:
        outcome = future.result(timeout=timeout)
    except FutureTimeout:
        raise QueryTimeout(f"the query ran past the time limit of {timeout:g} s") from None
    if isinstance(outcome, KgDecoderError):
        raise outcome
    return outcome


def run_update(store: KgStore, update: str, allow_service: Sequence[str] = (), allow_load: Sequence[str] = (),
               timeout: float = 30.0, workers: Optional[WorkerPool] = None) -> None:
    """Run a user's SPARQL Update, refused first when it calls or loads from an endpoint not allowed.

    With ``workers`` (over an embedded store on disk) this process lends its writer to their writing
    worker for the update (:meth:`KgStore.writer_lent`), which is stopped at the time limit: an update
    is one transaction, written all at once at its end, so a stopped one leaves the store as it was.
    """
    check_services(update, allow_service, allow_load, update=True)
    location = store.reader_location()
    if workers is None or location is None or location[0] != "embedded":
        store.sparql_update(update, allow_service=allow_service, allow_load=allow_load)
        return
    with store.writer_lent():
        workers.write("sparql_update", location, update, tuple(allow_service), tuple(allow_load), timeout=timeout,
                      crash="the update crashed the SPARQL engine (it is too complex); it was stopped",
                      crashed=QueryTooComplex, timed_out=_query_timeout("update"))


def answer_query(store: KgStore, query: str, accept: str, default_graph: Optional[list[str]],
                 named_graphs: Optional[list[str]], union: bool, row_cap: int, allow_service: Sequence[str],
                 timeout: Optional[float] = None) -> Answer:
    """``query`` evaluated over ``store`` and written in the first format of ``accept`` offered."""
    media, body = store.answer(query, lambda offered: _pick(accept, offered), row_cap, default_graph, named_graphs,
                               union, allow_service, timeout)
    return Answer(media, body)


def _query_timeout(what: str) -> Callable[[float], QueryTimeout]:
    return lambda limit: QueryTimeout(f"the {what} ran past the time limit of {limit:g} s and was stopped")


def _evaluate(store, query, wanted, default_graph, named_graphs, union, row_cap, allow_service,
              timeout) -> Union[Answer, KgDecoderError]:
    """The answer, or the error to raise, never an exception: Oxigraph's result objects must be
    consumed and dropped on the thread that made them, and a raised exception would carry them
    (in its traceback's frames) to the request's thread."""
    try:
        return answer_query(store, query, wanted, default_graph, named_graphs, union, row_cap, allow_service, timeout)
    except KgDecoderError as error:
        error.__traceback__ = error.__context__ = None
        return error


def _pick(accept: str, offered: dict) -> str:
    """The first media type of an Accept header (or a type) that is offered; else the default.

    >>> _pick("text/csv;q=0.9, */*", {"text/csv": 1, "application/sparql-results+json": 2})
    'text/csv'
    """
    default = next(media for media in _DEFAULTS if media in offered)
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in offered:
            return media
        if media in ("*/*", "", "application/*", "text/*"):
            return default
    if accept.strip():
        raise NotAcceptable(f"cannot answer as {accept[:200]}; offered: {', '.join(offered)}")
    return default
