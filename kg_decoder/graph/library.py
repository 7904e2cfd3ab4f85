"""The library: bytes kept content-addressed on disk beside the graph store.

Original documents, page and section texts (UTF-8) and image bytes live under
``<store>/library/sha256/<first two hex>/<sha256>``. The graph records each
entity's ``tg:sha256``, so any entity's bytes can be fetched by its IRI.

The same layout can live under any fsspec URL (:class:`FsLibrary`: ``s3://bucket/prefix``...),
shared by the machines of a distributed decode; :func:`open_library` picks the class.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator, Optional, Union

from ..model.errors import KgDecoderError, StoreError

_GC_LOCK = ".gc-lock"
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)(?:://|::)")


def sha256_hex(data: bytes) -> str:
    """Hex SHA-256 of ``data``.

    >>> sha256_hex(b"")[:12]
    'e3b0c44298fc'
    """
    return hashlib.sha256(data).hexdigest()


class _Ages:
    """A library's blob ages, from when each was last written (:meth:`modified`)."""

    def modified(self, sha256: str) -> float:
        raise NotImplementedError

    def age(self, sha256: str) -> float:
        """Seconds since the blob was last written: the garbage collector of a shared library removes
        only blobs older than a grace period, as a decode elsewhere may be between its blobs and its
        commit."""
        return max(0.0, time.time() - self.modified(sha256))


class _Unlocked(_Ages):
    """A library without the local lock a garbage collector and its writers share."""

    def leftovers(self) -> list[Path]:
        return []

    def writing(self):
        return contextlib.nullcontext()

    def collecting(self, timeout: float = 60.0):
        return contextlib.nullcontext()


class Library(_Ages):
    """Content-addressed blobs. Writes are atomic per blob (write to a temp file, then rename).

    >>> import tempfile
    >>> lib = Library(tempfile.mkdtemp())
    >>> key = lib.put(b"hello")
    >>> lib.get(key)
    b'hello'
    """

    shared = False  # one machine: its writers and collector share a lock

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
                if _SHA256.fullmatch(blob.name) and blob.name[:2] == prefix.name:  # not temporaries nor strays
                    yield blob.name

    def modified(self, sha256: str) -> float:
        """When the blob was written, in seconds since the epoch."""
        try:
            return self.path_of(sha256).stat().st_mtime
        except FileNotFoundError:
            raise KeyError(f"no bytes with sha256 {sha256} in the library") from None

    def ages(self) -> dict[str, float]:
        """Every blob's :meth:`age`."""
        ages = {}
        for key in self.keys():
            with contextlib.suppress(KeyError):  # removed meanwhile
                ages[key] = self.age(key)
        return ages

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


class MemoryLibrary(_Unlocked):
    """The library of a store in memory: the same interface, a dict behind it."""

    shared = False

    def __init__(self) -> None:
        self._blobs: dict[str, bytes] = {}
        self._written: dict[str, float] = {}
        self.root: Optional[Path] = None

    def __contains__(self, sha256: str) -> bool:
        return sha256 in self._blobs

    def put(self, data: bytes, sha256: str | None = None) -> str:
        key = sha256 or sha256_hex(data)
        if key not in self._blobs:
            self._blobs[key], self._written[key] = data, time.time()
        return key

    def put_new(self, blobs: dict[str, bytes]) -> list[str]:
        added = [key for key in blobs if key not in self._blobs]
        for key in added:
            self.put(blobs[key], key)
        return added

    def remove(self, keys: list[str]) -> None:
        for key in keys:
            self._blobs.pop(key, None)
            self._written.pop(key, None)

    def get(self, sha256: str) -> bytes:
        try:
            return self._blobs[sha256]
        except KeyError:
            raise KeyError(f"no bytes with sha256 {sha256} in the library") from None

    def keys(self) -> Iterator[str]:
        return iter(sorted(self._blobs))

    def modified(self, sha256: str) -> float:
        try:
            return self._written[sha256]
        except KeyError:
            raise KeyError(f"no bytes with sha256 {sha256} in the library") from None

    def ages(self) -> dict[str, float]:
        now = time.time()
        return {key: max(0.0, now - written) for key, written in sorted(self._written.items())}


# Object stores, where one PUT is atomic (a reader sees the whole object or none): a blob is written
# straight to its key. Anywhere else it is written under a temporary name, then moved.
_ATOMIC_PUTS = {"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "oss", "memory"}
_TEMPORARY = ".incoming-"


class FsLibrary(_Unlocked):
    """Content-addressed blobs under any fsspec URL (``s3://bucket/prefix``, ``gs://...``,
    ``file://...``), in :class:`Library`'s layout; ``options`` are the filesystem's storage options.

    Shared by machines, so no lock spans its writers: :meth:`writing` and :meth:`collecting` hold
    nothing, and the garbage collector spares blobs younger than a grace period instead (see
    :meth:`age`). Storing bytes already there writes them again, to renew their age. Failures to
    reach the storage (a connection, credentials, a missing bucket) raise StoreError.

    >>> lib = FsLibrary("memory://doctest-library")
    >>> key = lib.put(b"hello")
    >>> lib.get(key), key in lib, list(lib.keys()) == [key]
    (b'hello', True, True)
    """

    shared = True  # machines share it: no lock spans them

    def __init__(self, url: str, options: Optional[dict] = None) -> None:
        self.url = str(url)
        self.options = dict(options or {})
        self.fs, root = _filesystem(self.url, self.options)
        self.root = root.rstrip("/")
        protocols = self.fs.protocol if isinstance(self.fs.protocol, (tuple, list)) else (self.fs.protocol,)
        self._atomic_puts = bool(_ATOMIC_PUTS.intersection(protocols))
        self._check()

    def path_of(self, sha256: str) -> str:
        if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
            raise KeyError(f"not a sha256 hex digest: {sha256!r}")
        return f"{self.root}/sha256/{sha256[:2]}/{sha256}"

    def __contains__(self, sha256: str) -> bool:
        return self._info(self.path_of(sha256)) is not None

    def put(self, data: bytes, sha256: str | None = None) -> str:
        """Store ``data``; return its sha256. Bytes already there are written again (renewing their age)."""
        key = sha256 or sha256_hex(data)
        with self._reaching("write to"):
            self._write(self.path_of(key), data)
        return key

    def put_new(self, blobs: dict[str, bytes]) -> list[str]:
        """Store several blobs; return the keys that were not there before (to undo on failure)."""
        paths = {key: self.path_of(key) for key in blobs}
        with self._reaching("write to"):
            held = self._each(lambda key: self._info(paths[key]) is not None, list(blobs))
            # The blobs already there are written too: a collector elsewhere counts a blob's age
            # from its last write, and this decode is about to cite them.
            self._each(lambda key: self._write(paths[key], blobs[key]), list(blobs))
        return [key for key, there in zip(blobs, held) if not there]

    def remove(self, keys: list[str]) -> None:
        paths = [self.path_of(key) for key in keys]
        if not paths:
            return
        with self._reaching("remove blobs from"):
            try:
                self.fs.rm(paths)  # one request per thousand keys on S3, where missing keys are no error
            except FileNotFoundError:  # elsewhere they are: one by one
                for path in paths:
                    with contextlib.suppress(FileNotFoundError):
                        self.fs.rm_file(path)
            finally:
                self.fs.invalidate_cache(f"{self.root}/sha256")

    def get(self, sha256: str) -> bytes:
        path = self.path_of(sha256)
        with self._reaching("read from"):
            try:
                return self.fs.cat_file(path)
            except FileNotFoundError:
                raise KeyError(f"no bytes with sha256 {sha256} in the library") from None

    def keys(self) -> Iterator[str]:
        """Every sha256 the library holds."""
        return iter(sorted(self._listing()))

    def modified(self, sha256: str) -> float:
        """When the blob was last written, in seconds since the epoch (by the storage's clock)."""
        path = self.path_of(sha256)
        info = self._info(path)
        if info is None:
            raise KeyError(f"no bytes with sha256 {sha256} in the library")
        return self._written(path, info)

    def ages(self) -> dict[str, float]:
        """Every blob's :meth:`age`, from one listing."""
        now = time.time()
        return {key: max(0.0, now - self._written(path, info)) for key, (path, info) in sorted(self._listing().items())}

    # leftovers(): none. A temporary file of a writer killed before its move may be another machine's
    # write in progress: nothing tells them apart here, so none is offered for removal.

    def __repr__(self) -> str:
        return f"FsLibrary({self.url!r})"

    # ------------------------------------------------------------ the filesystem

    @contextlib.contextmanager
    def _reaching(self, doing: str):
        """Any failure of the storage as a StoreError of one line (never botocore's traceback)."""
        try:
            yield
        except (KeyError, KgDecoderError):
            raise
        except Exception as exc:  # noqa: BLE001 - fsspec backends raise their own (botocore, aiohttp...)
            raise StoreError(f"cannot {doing} the library at {self.url}: {_reason(exc)}") from None

    def _check(self) -> None:
        """Reach the storage once now, so a wrong endpoint, credentials or bucket fail at opening."""
        with self._reaching("reach"):
            try:
                self.fs.info(self.root)
            except FileNotFoundError:  # nothing stored yet; but an object store's bucket must exist
                bucket = self.root.split("/", 1)[0]
                if self._atomic_puts and bucket and not self.fs.exists(bucket):
                    raise StoreError(f"cannot reach the library at {self.url}: there is no bucket {bucket} "
                                     f"(or these credentials may not see it)") from None

    def _info(self, path: str) -> Optional[dict]:
        """The file's fsspec info, or None when there is none."""
        with self._reaching("read from"):
            self.fs.invalidate_cache(path)  # s3fs answers from a listing it cached, stale by now
            try:
                info = self.fs.info(path)
            except FileNotFoundError:
                return None
        return info if info.get("type", "file") == "file" else None

    def _write(self, path: str, data: bytes) -> None:
        if self._atomic_puts:
            self.fs.pipe_file(path, data)
            return
        folder = path.rsplit("/", 1)[0]
        self.fs.makedirs(folder, exist_ok=True)
        temporary = f"{folder}/{_TEMPORARY}{uuid.uuid4().hex}"
        try:
            self.fs.pipe_file(temporary, data)
            self.fs.mv(temporary, path)
        except BaseException:
            with contextlib.suppress(Exception):
                self.fs.rm_file(temporary)
            raise
        finally:
            self.fs.invalidate_cache(folder)

    def _listing(self) -> dict[str, tuple[str, dict]]:
        """Each blob's key: its path and fsspec info."""
        folder = f"{self.root}/sha256"
        with self._reaching("list"):
            self.fs.invalidate_cache(folder)
            try:
                found = self.fs.find(folder, detail=True)
            except FileNotFoundError:
                return {}
        blobs = {}
        for path, info in found.items():
            parent, _, name = path.rstrip("/").rpartition("/")
            if _SHA256.fullmatch(name) and parent.endswith("/" + name[:2]):  # not temporaries nor strays
                blobs[name] = (path, info)
        return blobs

    def _written(self, path: str, info: dict) -> float:
        """The epoch seconds of the last write the info tells (backends name it differently)."""
        for field in ("LastModified", "mtime", "last_modified", "updated", "modified"):
            stamp = _epoch(info.get(field))
            if stamp is not None:
                return stamp
        with self._reaching("read from"):
            try:
                stamp = _epoch(self.fs.modified(path))
            except NotImplementedError:
                stamp = None
        if stamp is None:
            raise StoreError(f"the library at {self.url} does not tell when its blobs were written, "
                             f"so no garbage collection can spare the recent ones")
        return stamp

    def _each(self, function, items: list) -> list:
        """``function`` over ``items``: concurrently on an asynchronous backend (S3: one request each)."""
        if len(items) < 2 or not getattr(self.fs, "async_impl", False):
            return [function(item) for item in items]
        with ThreadPoolExecutor(min(16, len(items))) as pool:
            return list(pool.map(function, items))


def _filesystem(url: str, options: dict):
    try:
        import fsspec
    except ImportError:
        raise StoreError(f"the library {url} needs fsspec: pip install fsspec") from None
    try:
        return fsspec.core.url_to_fs(url, **options)
    except ImportError as exc:  # a known protocol whose package is missing (s3fs, gcsfs...)
        raise StoreError(f"the library {url} needs a package that is not installed: {_reason(exc)}") from None
    except ValueError as exc:
        if "protocol not known" in str(exc).lower():
            scheme = _SCHEME.match(url)
            name = scheme.group(1) if scheme else url
            raise StoreError(f"the library {url} has a protocol fsspec does not know: {name}") from None
        raise StoreError(f"cannot open the library at {url}: {_reason(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - bad storage options: a TypeError, a backend's own error
        raise StoreError(f"cannot open the library at {url}: {_reason(exc)}") from None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, PermissionError):
        return f"access denied (check the credentials): {text}"
    if type(exc).__module__.startswith(("botocore", "aiohttp")) or isinstance(exc, (ConnectionError, TimeoutError)):
        return f"{type(exc).__name__}: {text}"
    return text


def _epoch(value) -> Optional[float]:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).timestamp()
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return value / 1000.0 if value > 1e11 else float(value)  # some backends count milliseconds
    if isinstance(value, str) and value:
        with contextlib.suppress(ValueError):
            return _epoch(datetime.fromisoformat(value.replace("Z", "+00:00")))
    return None


def open_library(location: Union[str, os.PathLike], options: Optional[dict] = None) -> Union[Library, FsLibrary]:
    """The library at ``location``: a :class:`Library` for a folder (a plain path or ``file://``),
    an :class:`FsLibrary` for any other fsspec URL, reached with the storage ``options``.

    >>> import tempfile
    >>> type(open_library(tempfile.mkdtemp())).__name__, type(open_library("memory://doctest-open")).__name__
    ('Library', 'FsLibrary')
    """
    text = os.fspath(location)
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    scheme = _SCHEME.match(text)
    if scheme is None or (scheme.group(1).lower() in ("file", "local") and "::" not in text):
        if options:
            raise StoreError(f"storage options ({', '.join(sorted(options))}) apply to a library URL such as "
                             f"s3://bucket/prefix, not to the folder {text}")
        if scheme is not None:
            from fsspec.implementations.local import LocalFileSystem

            text = LocalFileSystem._strip_protocol(text)
        return Library(text)
    return FsLibrary(text, options)
