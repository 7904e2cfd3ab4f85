"""The SPARQL 1.1 Protocol over a KgStore: a query within a time limit and a row cap, answered in
the format the client accepts (Oxigraph writes every format). Used by the web app's ``/sparql``.

SELECT and ASK answer as SPARQL JSON (default), XML, CSV or TSV; CONSTRUCT and DESCRIBE as
Turtle (default), N-Triples or JSON-LD. Errors are KgDecoderErrors, each with its HTTP status.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from ..graph.store import KgStore
from ..model.errors import KgDecoderError, NotAcceptable, QueryTimeout, ServerBusy

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
              allow_service: Sequence[str] = ()) -> Answer:
    """Evaluate ``query`` and serialize it; a KgDecoderError on a bad query, a timeout or too many rows.

    A query past the time limit is answered 503 at once; its evaluation cannot be interrupted in
    Oxigraph and finishes in the background, so at most 8 run at a time (else 503 too). SERVICE
    is refused unless its endpoint starts with one of ``allow_service``.
    """
    wanted = _SHORT.get((format or "").lower(), format or "") or accept
    if not _SLOTS.acquire(blocking=False):
        raise ServerBusy("too many queries are running; try again")
    future = _POOL.submit(_evaluate, store, query, wanted, default_graph, named_graphs, union, row_cap,
                          allow_service)
    future.add_done_callback(lambda _: _SLOTS.release())
    try:
        outcome = future.result(timeout=timeout)
    except FutureTimeout:
        raise QueryTimeout(f"the query ran past the time limit of {timeout:g} s") from None
    if isinstance(outcome, KgDecoderError):
        raise outcome
    return outcome


def _evaluate(store, query, wanted, default_graph, named_graphs, union, row_cap,
              allow_service) -> Union[Answer, KgDecoderError]:
    """The answer, or the error to raise, never an exception: Oxigraph's result objects must be
    consumed and dropped on the thread that made them, and a raised exception would carry them
    (in its traceback's frames) to the request's thread."""
    try:
        media, body = store.answer(query, lambda offered: _pick(wanted, offered), row_cap, default_graph,
                                   named_graphs, union, allow_service)
        return Answer(media, body)
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
