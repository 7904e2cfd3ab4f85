"""Typed errors: every bad input and every refused request ends in one of these, never in a crash.

One root, :class:`KgDecoderError`: each error has a stable ``code`` (the JSON API's ``error``
field), an ``http_status`` and a short, one-line message meant for a person; the CLI prints it
as is and the HTTP API returns it in a JSON body.
"""

from __future__ import annotations

import re
from typing import Optional


class KgDecoderError(Exception):
    """The root of kg-decoder's errors: a stable code, an HTTP status, a one-line message.

    A class's code is its name in kebab case unless it says otherwise. ``refuses_input`` marks the
    errors that say what is wrong with a document itself (encrypted, empty, damaged, too large...):
    the decode worked as it should by refusing it. The others say a job could not do its work.

    >>> error = UnknownEntity("no chunk urn:chunk:x in the store")
    >>> (error.code, error.http_status, error.to_json()["message"])
    ('unknown-entity', 404, 'no chunk urn:chunk:x in the store')
    """

    code = "error"
    http_status = 400
    refuses_input = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "code" not in cls.__dict__:
            cls.code = re.sub(r"(?<!^)(?=[A-Z])", "-", cls.__name__).lower()

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))

    @property
    def message(self) -> str:
        return self.args[0]

    def to_json(self) -> dict:
        return {"error": self.code, "message": self.message}

    def __reduce__(self):  # keep the class across the worker's process boundary
        return (type(self), (self.message,))


class DecodeError(KgDecoderError):
    """Base class of every error a decode can end in. Nothing of the document is stored."""

    http_status = 422


class UnsupportedFormat(DecodeError):
    """The bytes are of a type kg-decoder does not decode."""

    refuses_input = True


class EmptyDocument(DecodeError):
    """The file has nothing in it: no bytes, no text in a format of text alone, no pages or parts.
    (A document with pages or parts but no text is decoded, with the warning "no text found".)"""

    refuses_input = True


class CorruptDocument(DecodeError):
    """The file claims a format but its bytes cannot be parsed as it."""

    refuses_input = True


class EncryptedDocument(DecodeError):
    """The document is password-protected and no (right) password was given."""

    refuses_input = True


class UnsafeDocument(DecodeError):
    """The document would expand past safe limits (for example a ZIP bomb)."""

    refuses_input = True


class DocumentTooLarge(DecodeError):
    """The file is larger than the configured byte limit."""

    refuses_input = True


class DecodeTimeout(DecodeError):
    """Partitioning took longer than the per-document time limit."""

    refuses_input = True


class ModelUnavailable(DecodeError):
    """A strategy needs a model that is not present on this machine (no network to fetch it)."""


class FetchFailed(DecodeError):
    """A web page could not be fetched: an HTTP error after the retries, a redirect loop, no connection."""


class UnreadableFile(DecodeError):
    """The path names no file that can be read: missing, a folder, or not readable by this process."""


class InvalidOption(DecodeError):
    """An option given to decode is not valid."""


class StoreError(KgDecoderError):
    """The store cannot be opened, read or written."""

    http_status = 503


class StoreLocked(StoreError):
    """Another process holds the store for writing (a running ``kg-decoder serve``, another decode)."""


class UnknownStore(StoreError):
    """A location given for a store to read or add to holds none (a mistyped folder): nothing is created there."""

    http_status = 404


class StoreUnsupported(StoreError):
    """A remote SPARQL server lacks what the graph needs (RDF 1.2 triple terms, SPARQL Update)."""

    http_status = 502


class BlobMissing(StoreError):
    """The graph cites bytes the library does not hold (removed by hand, a store copied without its library)."""

    http_status = 500


class ProvenanceError(KgDecoderError):
    """Base class of the errors of chunking, facts and trace requests. Nothing is stored."""

    http_status = 422


class UnknownEntity(ProvenanceError):
    """An IRI given by the caller (a document, chunk, page or section) is not in the store."""

    http_status = 404


class InvalidFact(ProvenanceError):
    """A triple is malformed, or a fact file does not parse."""


class InvalidSpan(ProvenanceError):
    """A span lies outside its text, or a quote cannot be resolved to exactly one place."""


class ExtractorUnavailable(ProvenanceError):
    """The extractor an extract step names cannot be had: no such module or function, a command that
    cannot be started. Nothing is extracted."""


class ExtractorFailed(ProvenanceError):
    """An extractor failed on one chunk (raised, exited, answered what is not JSON lines of triples): the
    chunk is reported, not recorded as extracted, and the run goes on."""


class ExtractorTimeout(ExtractorFailed):
    """An extractor's command took longer than its time a chunk: stopped, started again for the next."""


class ExtractorOutputTooLarge(ExtractorFailed):
    """An extractor's command wrote more for one chunk than its output limit: stopped, started again."""


class QueryError(KgDecoderError):
    """A SPARQL query or update that cannot be run as given."""


class MalformedQuery(QueryError):
    """The query or update does not parse."""


class MalformedUpdate(MalformedQuery):
    """The SPARQL Update does not parse."""


class ServiceNotAllowed(QueryError):
    """The query calls a remote endpoint (SERVICE) that the operator has not allowed."""


class TooManyRows(QueryError):
    """The answer has more rows (or triples) than the server gives at once."""

    http_status = 413

    @classmethod
    def over(cls, row_cap: int) -> "TooManyRows":
        return cls(f"the result has more than {row_cap} rows; add a LIMIT")


class QueryTimeout(QueryError):
    """The query or update ran past the time limit; its evaluation was stopped (the process running
    it killed if need be), not only left to finish."""

    http_status = 503


class QueryTooComplex(QueryError):
    """The query is longer, nests deeper or chains more operators than the SPARQL engine takes
    safely (past a few thousand, Oxigraph's parser crashes its process)."""


class LoadNotAllowed(QueryError):
    """An update loads a remote document (LOAD) from an endpoint the operator has not allowed."""



class ServerBusy(KgDecoderError):
    """Too much work is running at once; the request may be tried again."""

    code = "busy"
    http_status = 503


class LimitExceeded(KgDecoderError):
    """Work for a request stopped at one of the server's limits; the process doing it was stopped
    (killed if need be), so the limit frees what the work held. The request may be tried again."""

    http_status = 503


class TimeLimit(LimitExceeded):
    """The work (a trace, a page drawing) ran past its time limit."""

    code = "time-limit"


class MemoryLimit(LimitExceeded):
    """The work needed more memory than a worker process may take."""

    code = "memory-limit"


class CpuLimit(LimitExceeded):
    """The work used more CPU time than a worker process may."""

    code = "cpu-limit"


class WorkCrashed(KgDecoderError):
    """The process doing the work died on this input (a native library's crash); only that process
    was lost."""

    code = "worker-crashed"
    http_status = 422


class RequestCancelled(KgDecoderError):
    """The client went away before its answer was ready; the work for it was stopped. Nobody
    receives this answer."""

    http_status = 499  # as nginx logs a request its client closed


class RequestError(KgDecoderError):
    """A request the web API or the SPARQL protocol cannot take as sent (a parameter missing or
    malformed, a method or media type it does not accept). ``code`` names what is wrong."""

    code = "bad-request"
    http_status = 400

    def __init__(self, message: str, code: Optional[str] = None, http_status: Optional[int] = None):
        super().__init__(message)
        if code is not None:
            self.code = code
        if http_status is not None:
            self.http_status = http_status

    def __reduce__(self):
        return (type(self), (self.message, self.code, self.http_status))


class Forbidden(RequestError):
    """Writing needs the server's write token."""

    http_status = 403


class NotAcceptable(RequestError):
    """None of the media types the client accepts is offered for this answer."""

    http_status = 406


class NotFound(RequestError):
    """No such page, route or resource."""

    http_status = 404


class WorkerUnavailable(KgDecoderError):
    """The decoding worker process could not be started (a broken installation)."""

    http_status = 503


def error_class(code: str) -> Optional[type[KgDecoderError]]:
    """The error class with this code (as a server answers it, as a failed decoding records it).

    >>> error_class("encrypted-document").__name__, error_class("nonsense")
    ('EncryptedDocument', None)
    """
    pending = [KgDecoderError]
    while pending:
        error = pending.pop()
        if error.code == code:
            return error
        pending.extend(error.__subclasses__())
    return None


def refuses_input(code: str) -> bool:
    """Whether the error with this code (as a server answers it) refuses an input.

    >>> refuses_input("encrypted-document"), refuses_input("model-unavailable"), refuses_input("nonsense")
    (True, False, False)
    """
    error = error_class(code)
    return error is not None and error.refuses_input
