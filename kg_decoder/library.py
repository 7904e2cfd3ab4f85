"""The library: bytes kept content-addressed on disk beside the graph store.

Original documents, page and section texts (UTF-8) and image bytes live under
``<store>/library/sha256/<first two hex>/<sha256>``. The graph records each
entity's ``tg:sha256``, so any entity's bytes can be fetched by its IRI.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of ``data``.

    >>> sha256_hex(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


class Library:
    """Content-addressed blobs. Writes are atomic per blob (write to a temp file, then rename).

    >>> import tempfile
    >>> lib = Library(tempfile.mkdtemp())
    >>> key = lib.put(b"hello")
    >>> lib.get(key)
    b'hello'
    """

    def __init__(self, root: str | os.PathLike) -> None:
        self.root = Path(root)

    def path_of(self, sha256: str) -> Path:
        if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
            raise ValueError(f"not a sha256 hex digest: {sha256!r}")
        return self.root / "sha256" / sha256[:2] / sha256

    def __contains__(self, sha256: str) -> bool:
        return self.path_of(sha256).is_file()

    def put(self, data: bytes, sha256: str | None = None) -> str:
        """Store ``data``; return its sha256. Storing the same bytes again writes nothing."""
        key = sha256 or sha256_hex(data)
        target = self.path_of(key)
        if target.is_file():
            return key
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
        return key

    def put_new(self, blobs: dict[str, bytes]) -> list[str]:
        """Store several blobs; return the keys that were not there before (to undo on failure)."""
        added = [key for key in blobs if key not in self]
        for key in added:
            self.put(blobs[key], key)
        return added

    def remove(self, keys: list[str]) -> None:
        for key in keys:
            self.path_of(key).unlink(missing_ok=True)

    def get(self, sha256: str) -> bytes:
        try:
            return self.path_of(sha256).read_bytes()
        except FileNotFoundError:
            raise KeyError(f"no bytes with sha256 {sha256} in the library") from None
