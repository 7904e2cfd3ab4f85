"""Typed decode errors: every bad input ends in one of these, never in a crash.

Each error carries a short, one-line message meant for a person; the CLI prints
it as is and the HTTP API returns it in a JSON body.
"""

from __future__ import annotations


class _OneLineError(Exception):
    """An error with a code and a one-line message (whitespace folded)."""

    code = "error"

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split()))

    @property
    def message(self) -> str:
        return self.args[0]


class DecodeError(_OneLineError):
    """Base class of every error a decode can end in. Nothing of the document is stored."""

    code = "decode-error"

    def __reduce__(self):  # keep the class across the worker's process boundary
        return (type(self), (self.message,))


class UnsupportedFormat(DecodeError):
    """The bytes are of a type kg-decoder does not decode."""

    code = "unsupported-format"


class EmptyDocument(DecodeError):
    """The file has no bytes, or no text and nothing OCR could read."""

    code = "empty-document"


class CorruptDocument(DecodeError):
    """The file claims a format but its bytes cannot be parsed as it."""

    code = "corrupt-document"


class EncryptedDocument(DecodeError):
    """The document is password-protected and no (right) password was given."""

    code = "encrypted-document"


class UnsafeDocument(DecodeError):
    """The document would expand past safe limits (for example a ZIP bomb)."""

    code = "unsafe-document"


class DocumentTooLarge(DecodeError):
    """The file is larger than the configured byte limit."""

    code = "document-too-large"


class DecodeTimeout(DecodeError):
    """Partitioning took longer than the per-document time limit."""

    code = "decode-timeout"


class ModelUnavailable(DecodeError):
    """A strategy needs a model that is not present on this machine (no network to fetch it)."""

    code = "model-unavailable"


class FetchFailed(DecodeError):
    """A web page could not be fetched: an HTTP error after the retries, a redirect loop, no connection."""

    code = "fetch-failed"


class InvalidOption(DecodeError):
    """An option given to decode is not valid."""

    code = "invalid-option"


class StoreError(Exception):
    """The store cannot be opened or written (for example another process holds it)."""


class ProvenanceError(_OneLineError):
    """Base class of the errors of chunking, facts and trace requests. Nothing is stored."""

    code = "provenance-error"


class UnknownEntity(ProvenanceError):
    """An IRI given by the caller (a document, chunk, page or section) is not in the store."""

    code = "unknown-entity"


class InvalidFact(ProvenanceError):
    """A triple is malformed, or a fact file does not parse."""

    code = "invalid-fact"


class InvalidSpan(ProvenanceError):
    """A span lies outside its text, or a quote cannot be resolved to exactly one place."""

    code = "invalid-span"
