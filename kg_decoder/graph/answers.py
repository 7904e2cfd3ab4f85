"""A user's query answered as the SPARQL protocol's media types, within a row cap; its errors."""

from __future__ import annotations

from typing import Callable

from pyoxigraph import QueryResultsFormat, RdfFormat

from ..model.errors import LoadNotAllowed, QueryError, ServiceNotAllowed, TooManyRows

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


__all__ = ["GRAPH_FORMATS", "RESULT_FORMATS", "capped_answer", "evaluation_error"]
