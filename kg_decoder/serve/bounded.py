"""A trace, a page drawing or a page's rows for a request, bounded: in one of the server's workers where the store
allows (:mod:`kg_decoder.serve.workers`), within a time limit, and for a quote, within a length
and a number of places.

A quote searched in every document (no ``document``) and a search go through the text index
(:mod:`kg_decoder.cite.search`, with its own bounds: a quote of three letters or more, so many texts
looked at, a page of places); here they also run within the request's time limit, and a trace
returns at most ``bounds.sources`` places a page.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from ..cite.places import check_quote_length
from ..cite.search import search
from ..cite.trace import trace
from ..graph.store import KgStore
from ..model import SearchResults, TraceSource
from ..model.errors import TimeLimit
from .page_reads import READS
from .pages import page_image, rendered_page_image

if TYPE_CHECKING:
    from .workers import WorkerPool

MAX_TRACE_SOURCES = 100
PAGE_SECONDS = 200.0  # a drawing may convert an Office document with LibreOffice first (180 s at most)


@dataclass(frozen=True)
class Bounds:
    """What one request may take: ``seconds`` for a trace, ``sources`` places for a quote."""

    seconds: float = 30.0
    sources: int = MAX_TRACE_SOURCES
    page_seconds: float = PAGE_SECONDS


def bounded_trace(store: KgStore, request: dict, bounds: Bounds = Bounds(), workers: Optional[WorkerPool] = None,
                  client: str = "", cancelled: Optional[Callable[[], bool]] = None) -> list[TraceSource]:
    """``kg_decoder.trace(**request)``: a quote at most
    :data:`~kg_decoder.cite.places.MAX_QUOTE_CHARACTERS` long (RequestError
    ``quote-too-long``), its search stopped at ``bounds.sources`` places; in a worker, stopped past
    ``bounds.seconds`` (TimeLimit) or once ``cancelled()``."""
    check_quote_length(request.get("quote"))
    request = dict(request)
    limit = request.pop("limit", None)
    limit = bounds.sources if limit is None else min(limit, bounds.sources)
    if request.get("quote") is not None and request.get("document") is None:
        request["seconds"] = bounds.seconds  # the search's own budget, inside the worker's time limit
    if workers is None or store.reader_location() is None:
        return trace(**request, store=store, limit=limit)
    return workers.run("trace_sources", store, request, limit, client=client,
                       timeout=bounds.seconds, cancelled=cancelled, crash="the trace crashed its worker",
                       timed_out=lambda limit: TimeLimit(f"the trace ran past the time limit of {limit:g} s and was "
                                                         f"stopped; give a document or a longer quote"))


def bounded_search(store: KgStore, query: str, limit: int, offset: int, boxes: bool = False,
                   bounds: Bounds = Bounds(), workers: Optional[WorkerPool] = None, client: str = "",
                   cancelled: Optional[Callable[[], bool]] = None) -> SearchResults:
    """``kg_decoder.search`` within the request's time limit (a worker's, where the store allows)."""
    arguments = {"limit": limit, "offset": offset, "boxes": boxes, "seconds": bounds.seconds}
    if workers is None or store.reader_location() is None:
        return search(query, store=store, **arguments)
    return workers.run("search_places", store, query, arguments, client=client, timeout=bounds.seconds,
                       cancelled=cancelled, crash="the search crashed its worker",
                       timed_out=lambda limit: TimeLimit(f"the search ran past the time limit of {limit:g} s and "
                                                         f"was stopped; give more of the quote"))


def bounded_page_image(store: KgStore, page: str, bounds: Bounds = Bounds(), workers: Optional[WorkerPool] = None,
                       client: str = "", cancelled: Optional[Callable[[], bool]] = None) -> bytes:
    """:func:`~kg_decoder.serve.pages.page_image` in a worker (where the store allows), within
    ``bounds.page_seconds``."""
    if workers is None or store.reader_location() is None:
        return page_image(store, page)
    return workers.run("draw_page", store, page, client=client, timeout=bounds.page_seconds,
                       cancelled=cancelled, crash="drawing the page crashed its worker",
                       timed_out=_drawing_timeout)


def bounded_rendered_page_image(store: KgStore, document: str, number: int, bounds: Bounds = Bounds(),
                                workers: Optional[WorkerPool] = None, client: str = "",
                                cancelled: Optional[Callable[[], bool]] = None) -> bytes:
    """:func:`~kg_decoder.serve.pages.rendered_page_image` in a worker (where the store allows)."""
    if workers is None or store.reader_location() is None:
        return rendered_page_image(store, document, number)
    return workers.run("draw_rendered_page", store, document, number, client=client,
                       timeout=bounds.page_seconds, cancelled=cancelled, crash="drawing the page crashed its worker",
                       timed_out=_drawing_timeout)


def bounded_read(store: KgStore, name: str, *args, bounds: Bounds = Bounds(), workers: Optional[WorkerPool] = None,
                 client: str = "", cancelled: Optional[Callable[[], bool]] = None):
    """The page read ``name`` of :data:`~kg_decoder.serve.page_reads.READS` over ``store`` with ``args``:
    in a worker (where the store allows), within ``bounds.seconds``."""
    if workers is None or store.reader_location() is None:
        return READS[name](store, *args)
    return workers.run("page_read", store, name, args, client=client, timeout=bounds.seconds, cancelled=cancelled,
                       crash="reading the page crashed its worker",
                       timed_out=lambda limit: TimeLimit(f"reading this page ran past the time limit of {limit:g} s "
                                                         f"and was stopped; ask SPARQL for less (/query)"))


def _drawing_timeout(limit: float) -> TimeLimit:
    return TimeLimit(f"drawing the page ran past the time limit of {limit:g} s and was stopped")
