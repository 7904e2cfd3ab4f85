"""A trace or a page drawing for a request, bounded: in one of the server's workers where the store
allows (:mod:`kg_decoder.serve.workers`), within a time limit, and for a quote, within a length
and a number of places.

A quote searched in every document (no ``document``) reads every text of the store; these bounds
are where a full-text index will slot in (the search narrowed first, the same bounds after).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from ..cite.trace import trace
from ..graph.store import KgStore
from ..model import TraceSource
from ..model.errors import RequestError, TimeLimit
from .pages import page_image, rendered_page_image

if TYPE_CHECKING:
    from .workers import WorkerPool

MAX_QUOTE_CHARACTERS = 2000
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
    """``kg_decoder.trace(**request)``: a quote at most :data:`MAX_QUOTE_CHARACTERS` long (RequestError
    ``quote-too-long``), its search stopped at ``bounds.sources`` places; in a worker, stopped past
    ``bounds.seconds`` (TimeLimit) or once ``cancelled()``."""
    quote = request.get("quote")
    if isinstance(quote, str) and len(quote) > MAX_QUOTE_CHARACTERS:
        raise RequestError(f"a quote may be {MAX_QUOTE_CHARACTERS} characters long, not {len(quote)}",
                           code="quote-too-long", http_status=413)
    if workers is None or store.reader_location() is None:
        return trace(**request, store=store, limit=bounds.sources)
    return workers.run("trace_sources", store, request, bounds.sources, client=client,
                       timeout=bounds.seconds, cancelled=cancelled, crash="the trace crashed its worker",
                       timed_out=lambda limit: TimeLimit(f"the trace ran past the time limit of {limit:g} s and was "
                                                         f"stopped; give a document or a longer quote"))


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


def _drawing_timeout(limit: float) -> TimeLimit:
    return TimeLimit(f"drawing the page ran past the time limit of {limit:g} s and was stopped")
