"""kg-decoder: decode documents of every common format into a knowledge graph of provenance.

    >>> import kg_decoder
    >>> callable(kg_decoder.decode) and callable(kg_decoder.open_store)
    True
"""

from .decoder import DecodeResult, decode
from .errors import (
    CorruptDocument,
    DecodeError,
    DecodeTimeout,
    DocumentTooLarge,
    EmptyDocument,
    EncryptedDocument,
    InvalidOption,
    ModelUnavailable,
    StoreError,
    UnsafeDocument,
    UnsupportedFormat,
)
from .model import DecodeOptions, TextDocument
from .store import KgStore, open_store

__all__ = [
    "CorruptDocument",
    "DecodeError",
    "DecodeOptions",
    "DecodeResult",
    "DecodeTimeout",
    "DocumentTooLarge",
    "EmptyDocument",
    "EncryptedDocument",
    "InvalidOption",
    "KgStore",
    "ModelUnavailable",
    "StoreError",
    "TextDocument",
    "UnsafeDocument",
    "UnsupportedFormat",
    "decode",
    "open_store",
]
