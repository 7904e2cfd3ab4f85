"""The library: bytes kept content-addressed on disk beside the graph store.

Original documents, page and section texts (UTF-8) and image bytes live under
``<store>/library/sha256/<first two hex>/<sha256>``. The graph records each
entity's ``tg:sha256``, so any entity's bytes can be fetched by its IRI.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from pathlib import Path
from typing import Iterator, Optional

from ..model.errors import StoreError

_GC_LOCK = ".gc-lock"


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
            raise KeyError(f"not a sha256 hex digest: {sha256!r}")
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

    def keys(self) -> Iterator[str]:
        """Every sha256 the library holds."""
        folder = self.root / "sha256"
        if not folder.is_dir():
            return
        for prefix in sorted(folder.iterdir()):
            for blob in sorted(prefix.iterdir()) if prefix.is_dir() else []:
                if len(blob.name) == 64 and not blob.name.startswith("."):
                    yield blob.name

    def leftovers(self) -> list[Path]:
        """Half-written blob files a killed writer left behind (only meaningful under :meth:`collecting`)."""
        folder = self.root / "sha256"
        return sorted(folder.glob("*/.incoming-*")) if folder.is_dir() else []

    @contextlib.contextmanager
    def writing(self):
        """Held by every write from its first blob to its commit: the garbage collector waits for it.

        A shared lock on ``library/.gc-lock``; a process killed meanwhile drops it with its life.
        """
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / _GC_LOCK, "a+b") as handle:
            fcntl.flock(handle, fcntl.LOCK_SH)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def collecting(self, timeout: float = 60.0):
        """Held by the garbage collector: no write is between its blobs and its commit meanwhile."""
        self.root.mkdir(parents=True, exist_ok=True)
        deadline = time.monotonic() + timeout
        with open(self.root / _GC_LOCK, "a+b") as handle:
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StoreError(f"a decode kept writing to {self.root} for {timeout:g} s; "
                                         f"try the garbage collection again later") from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)


class MemoryLibrary:
    """The library of a store in memory: the same interface, a dict behind it."""

    def __init__(self) -> None:
        self._blobs: dict[str, bytes] = {}
        self.root: Optional[Path] = None

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self._blobs

    def put(self, data: bytes, sha256: str | None = None) -> str:
        key = sha256 or sha256_hex(data)
        self._blobs.setdefault(key, data)
        return key

    def put_new(self, blobs: dict[str, bytes]) -> list[str]:
        added = [key for key in blobs if key not in self._blobs]
        self._blobs.update({key: blobs[key] for key in added})
        return added

    def remove(self, keys: list[str]) -> None:
        for key in keys:
            self._blobs.pop(key, None)

    def get(self, sha256: str) -> bytes:
        try:
            return self._blobs[sha256]
        except KeyError:
            raise KeyError(f"no bytes with sha256 {sha256} in the library") from None

    def keys(self) -> Iterator[str]:
        return iter(sorted(self._blobs))

    def leftovers(self) -> list[Path]:
        return []

    def writing(self):
        return contextlib.nullcontext()

    def collecting(self, timeout: float = 60.0):
        return contextlib.nullcontext()
