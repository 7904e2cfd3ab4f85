"""What the web server's workers run (:mod:`kg_decoder.serve.workers`), in their own processes:
a user's SPARQL query or update, a trace, a search, a page drawn as a picture, a page's rows.

Each task names where to read the store (an embedded store's latest snapshot, see
:mod:`kg_decoder.graph.snapshots`, or a remote store). A worker keeps the store
open between tasks and opens the new snapshot when the server has committed since: a warm worker
whose snapshot is current adds nothing to a task. An update opens the store itself for writing,
while the server has lent it its writer (:meth:`KgStore.writer_lent`), and closes it again
whatever happens.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ..cite.search import search
from ..cite.trace import trace
from ..graph.opening import embedded_store, open_reader
from ..graph.store import KgStore
from ..model import SearchResults, TraceSource
from .page_reads import READS
from .pages import page_image, rendered_page_image
from .sparql import Answer, answer_query

_opened: dict[str, tuple[tuple, KgStore]] = {}  # a store (kind and path) -> where it was opened, and it


def warm_up() -> None:
    """Import what drawing a page needs (the rest came with this module)."""
    import pypdfium2  # noqa: F401
    from PIL import Image  # noqa: F401


def _store(location: tuple) -> KgStore:
    """The store read at ``location`` (the one before it closed first: its snapshot may go)."""
    key = repr(location[:2])
    opened = _opened.get(key)
    if opened is not None and opened[0] == location:
        return opened[1]
    if opened is not None:
        del _opened[key]
        opened[1].close()
    store = open_reader(location)
    _opened[key] = (location, store)
    return store


def refresh(location: tuple) -> None:
    """Open the store again if the server committed since this worker opened it (done while idle)."""
    _store(location)


def sparql_answer(location: tuple, query: str, accept: str, default_graph: Optional[list[str]],
                  named_graphs: Optional[list[str]], union: bool, row_cap: int,
                  allow_service: Sequence[str]) -> Answer:
    return answer_query(_store(location), query, accept, default_graph, named_graphs, union, row_cap,
                        allow_service)


def sparql_update(location: tuple, update: str, allow_service: Sequence[str], allow_load: Sequence[str]) -> None:
    """Run an update on the store opened for writing here; closed again whatever happens."""
    kind, path, library, library_options, _ = location
    store = embedded_store(path, library=library, library_options=library_options)
    try:
        store.sparql_update(update, allow_service=allow_service, allow_load=allow_load)
    finally:
        store.close()


def trace_sources(location: tuple, request: dict, limit: int) -> list[TraceSource]:
    """``kg_decoder.trace`` with the request's arguments, a quote's search stopped at ``limit`` places."""
    return trace(**request, store=_store(location), limit=limit)


def search_places(location: tuple, query: str, arguments: dict) -> SearchResults:
    """``kg_decoder.search`` of the request's quote."""
    return search(query, store=_store(location), **arguments)


def draw_page(location: tuple, page: str) -> bytes:
    return page_image(_store(location), page)


def draw_rendered_page(location: tuple, document: str, number: int) -> bytes:
    return rendered_page_image(_store(location), document, number)


def page_read(location: tuple, name: str, args: tuple):
    """One of :data:`~kg_decoder.serve.page_reads.READS` (by name: no function is taken from a request)."""
    return READS[name](_store(location), *args)
