"""A user's query answered as the SPARQL protocol's media types, within a row cap; its errors."""

from __future__ import annotations

from typing import Callable, Optional, Sequence

from pyoxigraph import NamedNode, QueryBoolean, QueryResultsFormat, QuerySolutions, RdfFormat, parse, \
    parse_query_results, serialize

from ..model import Rows
from ..model.errors import LoadNotAllowed, QueryError, ServiceNotAllowed, StoreError, TooManyRows
from .backend import GraphBackend
from .sparql_guard import check_services
from .terms import plain_text

# Media types of the SPARQL protocol's answers: solutions and booleans, and graphs.
RESULT_FORMATS = {
    "application/sparql-results+json": QueryResultsFormat.JSON, "application/json": QueryResultsFormat.JSON,
    "application/sparql-results+xml": QueryResultsFormat.XML, "application/xml": QueryResultsFormat.XML,
    "text/csv": QueryResultsFormat.CSV, "text/tab-separated-values": QueryResultsFormat.TSV,
}
GRAPH_FORMATS = {
    "text/turtle": RdfFormat.TURTLE, "application/n-triples": RdfFormat.N_TRIPLES,
    "application/ld+json": RdfFormat.JSON_LD,
}


class _CappedOutput:
    """A writer for Oxigraph's serialisers that stops past ``lines`` lines."""

    def __init__(self, lines: int) -> None:
        self.chunks: list[bytes] = []
        self.lines, self.limit, self.over = 0, lines, False

    def write(self, data) -> int:
        data = bytes(data)
        self.lines += data.count(b"\n")
        if self.lines > self.limit:
            self.over = True
            raise OSError("row cap")
        self.chunks.append(data)
        return len(data)

    def flush(self) -> None:
        pass


def capped_answer(write: Callable, row_cap: int) -> bytes:
    """What ``write`` serialises into a writer, one row or triple a line: TooManyRows past ``row_cap`` lines."""
    output = _CappedOutput(row_cap)
    try:
        write(output)
    except OSError:
        if output.over:
            raise TooManyRows.over(row_cap) from None
        raise
    return b"".join(output.chunks)


def evaluation_error(exc: Exception, calls_service: bool, what: str = "the query") -> QueryError:
    """The typed error for a query or update Oxigraph failed on, never quoting a remote endpoint's answer."""
    if isinstance(exc, (ServiceNotAllowed, LoadNotAllowed)) or (isinstance(exc, QueryError) and not calls_service):
        return exc
    if calls_service:  # Oxigraph puts the remote answer into its messages: never hand it on
        return QueryError(f"{what} failed while calling a remote endpoint (SERVICE or LOAD)")
    return QueryError(f"{what} failed: {str(exc)[:500]}")


def _start_query(graph: GraphBackend, query: str, default_graph: Optional[list[str]] = None,
                 named_graphs: Optional[list[str]] = None, union: bool = False,
                 allow_service: Sequence[str] = (), timeout: Optional[float] = None):
    """Start a user's SPARQL query: Oxigraph's solutions, boolean or triples, to consume once, on this
    thread (a remote store's answer is read as it is consumed: its connection is held until then).
    Private: :func:`select_rows` and :func:`answer` consume it where they start it, and hand out
    rows or bytes that any thread may read.

    ``union`` makes the default graph the union of all graphs (provenance included).
    SERVICE is refused (ServiceNotAllowed) unless its endpoint is one of the ``allow_service``
    URLs or under one: Oxigraph would call any URL from this process. A query too long or too
    deeply nested for the parser is QueryTooComplex. ``timeout`` bounds a remote store's answer
    (QueryTimeout past it); an embedded store's evaluation cannot be interrupted in this process.
    """
    check_services(query, allow_service)
    options: dict = {}
    try:
        if union:
            options["use_default_graph_as_union"] = True
        elif default_graph:
            options["default_graph"] = [NamedNode(iri) for iri in default_graph]
        if named_graphs:
            options["named_graphs"] = [NamedNode(iri) for iri in named_graphs]
    except ValueError as exc:  # an IRI of a graph that is not one
        raise QueryError(str(exc)) from None
    if timeout is not None:
        options["timeout"] = timeout
    return graph.evaluate(query, options, streamed=True)

def select_rows(graph: GraphBackend, query: str, allow_service: Sequence[str] = ()) -> Rows:
    """A user's SELECT query as rows of plain values (IRIs and literals as their text)."""
    calls = check_services(query, allow_service)
    solutions = None
    try:
        solutions = _start_query(graph, query, allow_service=allow_service)
        if not isinstance(solutions, QuerySolutions):
            raise QueryError("only a SELECT query gives rows; ASK, CONSTRUCT and DESCRIBE are answered by the "
                             "web app's /sparql")
        columns = [v.value for v in solutions.variables]
        rows = [tuple(None if row[c] is None else plain_text(row[c]) for c in columns) for row in solutions]
    except SyntaxError as exc:
        raise _unreadable_answer(graph, exc, bool(calls)) from None
    except (OSError, RuntimeError, ValueError) as exc:
        raise evaluation_error(exc, bool(calls)) from None
    finally:
        solutions = None
    return Rows(columns=columns, rows=rows)

def answer(graph: GraphBackend, query: str, choose_format: Callable[[dict], str], row_cap: int,
           default_graph: Optional[list[str]] = None, named_graphs: Optional[list[str]] = None,
           union: bool = False, allow_service: Sequence[str] = (),
           timeout: Optional[float] = None) -> tuple[str, bytes]:
    """A user's query evaluated and serialised by Oxigraph: ``(media type, body)``.

    ``choose_format`` is given the media types offered for the result (:data:`RESULT_FORMATS`
    or :data:`GRAPH_FORMATS`) and returns the one to write. More than ``row_cap`` rows or
    triples is QueryError ``too-many-rows``. Consumes Oxigraph's result on this thread.
    """
    calls = check_services(query, allow_service)
    result = None
    try:
        result = _start_query(graph, query, default_graph, named_graphs, union, allow_service, timeout)
        if isinstance(result, QueryBoolean):
            media = choose_format(RESULT_FORMATS)
            return media, result.serialize(format=RESULT_FORMATS[media])
        if not isinstance(result, QuerySolutions):  # triples
            media = choose_format(GRAPH_FORMATS)
            lines = capped_answer(lambda out: result.serialize(out, format=RdfFormat.N_TRIPLES), row_cap)
            if GRAPH_FORMATS[media] == RdfFormat.N_TRIPLES:
                return media, lines
            return media, serialize(parse(lines, format=RdfFormat.N_TRIPLES), format=GRAPH_FORMATS[media]) or b""
        media = choose_format(RESULT_FORMATS)
        # Written as TSV first (one line per row, so the cap counts rows), then as asked.
        table = capped_answer(lambda out: result.serialize(out, format=QueryResultsFormat.TSV), row_cap + 1)
        if RESULT_FORMATS[media] == QueryResultsFormat.TSV:
            return media, table
        return media, parse_query_results(table, QueryResultsFormat.TSV).serialize(format=RESULT_FORMATS[media])
    except SyntaxError as exc:
        raise _unreadable_answer(graph, exc, bool(calls)) from None
    except (OSError, RuntimeError, ValueError, TypeError) as exc:
        raise evaluation_error(exc, bool(calls)) from None
    finally:
        result = None

def _unreadable_answer(graph: GraphBackend, exc: SyntaxError, calls_service: bool) -> StoreError:
    """A streamed answer (a remote store's) that stops parsing part way: the store's fault.
    The parser's message may quote a SERVICE endpoint's answer: then it is left out."""
    detail = "" if calls_service else f": {str(exc)[:200]}"
    return StoreError(f"the store at {graph.location} answered what does not parse{detail}")


__all__ = ["GRAPH_FORMATS", "RESULT_FORMATS", "answer", "capped_answer", "evaluation_error", "select_rows"]
