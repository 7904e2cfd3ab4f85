"""The SPARQL 1.1 Protocol over a KgStore: run a query within a time limit and a row cap, and
serialize its result in the format the client accepts. Used by the web app's ``/sparql``.

SELECT and ASK answer as SPARQL JSON (default), XML, CSV or TSV; CONSTRUCT and DESCRIBE as
Turtle (default), N-Triples or JSON-LD. Errors are KgDecoderErrors, each with its HTTP status.
"""

from __future__ import annotations

import csv
import io
import json
import threading
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Optional, Sequence, Union
from xml.sax.saxutils import escape, quoteattr

from pyoxigraph import BlankNode, NamedNode, QueryBoolean, QueryTriples, RdfFormat, Triple
from pyoxigraph import serialize as serialize_rdf

from .errors import KgDecoderError, MalformedQuery, QueryError
from .sparql_guard import check_services
from .store import KgStore

RESULT_TYPES = {
    "application/sparql-results+json": "json", "application/json": "json",
    "application/sparql-results+xml": "xml", "application/xml": "xml",
    "text/csv": "csv", "text/tab-separated-values": "tsv",
}
GRAPH_TYPES = {
    "text/turtle": RdfFormat.TURTLE, "application/n-triples": RdfFormat.N_TRIPLES,
    "application/ld+json": RdfFormat.JSON_LD,
}
_SHORT = {"json": "application/sparql-results+json", "xml": "application/sparql-results+xml", "csv": "text/csv",
          "tsv": "text/tab-separated-values", "turtle": "text/turtle", "ttl": "text/turtle",
          "nt": "application/n-triples", "ntriples": "application/n-triples", "jsonld": "application/ld+json"}
_XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"


class ProtocolError(KgDecoderError):
    """A request the SPARQL protocol or the web API refuses, with its HTTP status."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.http_status, self.code = status, code

    @property
    def status(self) -> int:
        return self.http_status

    def __reduce__(self):
        return (type(self), (self.http_status, self.code, self.message))


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
    calls = check_services(query, allow_service)
    if not _SLOTS.acquire(blocking=False):
        raise ProtocolError(503, "busy", "too many queries are running; try again")
    future = _POOL.submit(_evaluate, store, query, accept, format, default_graph, named_graphs, union, row_cap,
                          allow_service, bool(calls))
    future.add_done_callback(lambda _: _SLOTS.release())
    try:
        outcome = future.result(timeout=timeout)
    except FutureTimeout:
        raise ProtocolError(503, "query-timeout", f"the query ran past the time limit of {timeout:g} s") from None
    if isinstance(outcome, KgDecoderError):
        raise outcome
    return outcome


def _evaluate(store, query, accept, format, default_graph, named_graphs, union, row_cap, allow_service,
              calls_service: bool) -> Union[Answer, KgDecoderError]:
    """The answer, or the error to raise, never an exception: Oxigraph's result objects must be
    consumed and dropped on the thread that made them, and a raised exception would carry them
    (in its traceback's frames) to the request's thread."""
    result = None
    try:
        result = store.sparql(query, default_graph, named_graphs, union, allow_service=allow_service)
        return _serialized(result, accept, format, row_cap)
    except KgDecoderError as error:
        return _detached(error)
    except SyntaxError as exc:
        return MalformedQuery(f"the query does not parse: {exc}")
    except (ValueError, OSError, RuntimeError, TypeError) as exc:
        if calls_service:  # Oxigraph puts the remote answer into its messages: never hand it on
            return QueryError("the query failed while calling a SERVICE endpoint")
        return QueryError(f"the query failed: {exc}")
    finally:
        result = None


def _detached(error: KgDecoderError) -> KgDecoderError:
    """``error`` without the traceback (and the frames holding Oxigraph's results) it was raised with."""
    error.__traceback__ = None
    error.__context__ = None
    return error


def _serialized(result, accept: str, format: Optional[str], row_cap: int) -> Answer:
    wanted = _SHORT.get((format or "").lower(), format or "")
    if isinstance(result, QueryBoolean):
        kind = _pick(wanted or accept, RESULT_TYPES, "application/sparql-results+json")
        return Answer(kind, _boolean(bool(result), RESULT_TYPES[kind]))
    if isinstance(result, QueryTriples):
        kind = _pick(wanted or accept, GRAPH_TYPES, "text/turtle")
        triples = _capped(result, row_cap)
        return Answer(kind, serialize_rdf(triples, format=GRAPH_TYPES[kind]) or b"")
    kind = _pick(wanted or accept, RESULT_TYPES, "application/sparql-results+json")
    names = [v.value for v in result.variables]
    rows = _capped(result, row_cap)
    return Answer(kind, _SERIALIZERS[RESULT_TYPES[kind]](names, rows))


def _capped(results, row_cap: int) -> list:
    rows = []
    for row in results:
        rows.append(row)
        if len(rows) > row_cap:
            raise ProtocolError(413, "too-many-rows", f"the result has more than {row_cap} rows; add a LIMIT")
    return rows


def _pick(accept: str, types: dict, default: str) -> str:
    """The first media type of an Accept header (or a type) that is offered; else the default."""
    for part in accept.split(","):
        media = part.split(";")[0].strip().lower()
        if media in types:
            return media
        if media in ("*/*", "", "application/*", "text/*"):
            return default
    if accept.strip():
        raise ProtocolError(406, "not-acceptable", f"cannot answer as {accept}; offered: {', '.join(types)}")
    return default


def _boolean(value: bool, kind: str) -> bytes:
    if kind == "json":
        return json.dumps({"head": {}, "boolean": value}).encode()
    if kind == "xml":
        return (f'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head/>'
                f"<boolean>{'true' if value else 'false'}</boolean></sparql>").encode()
    return ("_askResult\n" + ("true" if value else "false") + "\n").encode()


def _json_term(term) -> dict:
    if isinstance(term, NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BlankNode):
        return {"type": "bnode", "value": term.value}
    if isinstance(term, Triple):
        return {"type": "triple", "value": {"subject": _json_term(term.subject),
                                            "predicate": _json_term(term.predicate),
                                            "object": _json_term(term.object)}}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != _XSD_STRING:
        out["datatype"] = term.datatype.value
    return out


def _json(names, rows) -> bytes:
    bindings = [{n: _json_term(row[n]) for n in names if row[n] is not None} for row in rows]
    return json.dumps({"head": {"vars": names}, "results": {"bindings": bindings}}, ensure_ascii=False).encode()


def _xml_term(term) -> str:
    if isinstance(term, NamedNode):
        return f"<uri>{escape(term.value)}</uri>"
    if isinstance(term, BlankNode):
        return f"<bnode>{escape(term.value)}</bnode>"
    if isinstance(term, Triple):
        return (f"<triple><subject>{_xml_term(term.subject)}</subject><predicate>{_xml_term(term.predicate)}"
                f"</predicate><object>{_xml_term(term.object)}</object></triple>")
    if term.language:
        return f"<literal xml:lang={quoteattr(term.language)}>{escape(term.value)}</literal>"
    if term.datatype.value != _XSD_STRING:
        return f"<literal datatype={quoteattr(term.datatype.value)}>{escape(term.value)}</literal>"
    return f"<literal>{escape(term.value)}</literal>"


def _xml(names, rows) -> bytes:
    out = ['<?xml version="1.0"?>\n<sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>']
    out += [f"<variable name={quoteattr(n)}/>" for n in names]
    out.append("</head><results>")
    for row in rows:
        out.append("<result>")
        out += [f"<binding name={quoteattr(n)}>{_xml_term(row[n])}</binding>" for n in names if row[n] is not None]
        out.append("</result>")
    out.append("</results></sparql>")
    return "".join(out).encode()


def _csv(names, rows) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(names)
    for row in rows:
        writer.writerow(["" if row[n] is None else _plain(row[n]) for n in names])
    return buffer.getvalue().encode()


def _plain(term) -> str:
    return str(term) if isinstance(term, Triple) else term.value


def _tsv(names, rows) -> bytes:
    lines = ["\t".join(f"?{n}" for n in names)]
    for row in rows:
        lines.append("\t".join("" if row[n] is None else str(row[n]).replace("\t", "\\t").replace("\n", "\\n")
                               for n in names))
    return ("\n".join(lines) + "\n").encode()


_SERIALIZERS = {"json": _json, "xml": _xml, "csv": _csv, "tsv": _tsv}
