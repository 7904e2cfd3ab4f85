"""A store whose graph is on a SPARQL 1.1 server: the Query and Update protocols, and the Graph
Store Protocol's ``POST`` of N-Quads where the server has one (Oxigraph's ``/store``).

Each write is one request, so all or nothing on a server whose requests are transactions (the
Oxigraph server's are): a first decode ``POST``s its N-Quads, a re-decode sends one ``DELETE ...
; INSERT DATA ...`` update. The graph has no blank nodes, so a request repeated after a lost
answer writes nothing twice. Connections are kept alive (one per request is several times
slower); requests time out, and are repeated with growing pauses when the connection fails or
the server answers 502, 503 or 504 (a proxy, an overloaded server). A 500 is the server failing
the request itself: repeating it would fail the same way. The library is a folder or an fsspec
URL of its own: no lock spans machines, see :meth:`KgStore.collect_garbage`.

A store is named by the server's base URL (``http://host:7878``, Oxigraph's layout: ``/query``,
``/update``, ``/store``) or by a TOML file::

    [store]
    query = "https://sparql.example.org/query"
    update = "https://sparql.example.org/update"
    graph-store = "https://sparql.example.org/store"   # optional: updates carry the data without it
    user = "decoder"                                   # or token = "..." (a Bearer token)
    password-env = "KG_STORE_PASSWORD"                 # the password from this variable
    timeout = 300
    cache = "/var/cache/kg-decoder"                    # optional, see below; false: none

    [library]
    url = "s3://bucket/kg-library"
    endpoint_url = "http://127.0.0.1:9000"             # any other key: an fsspec storage option

What decoding keeps beside the graph on this machine (the parse cache, LibreOffice renderings)
goes to ``cache``, by default ``$KG_DECODER_CACHE/stores/<host>-<port>-<hash>`` (the variable
defaults to ``$XDG_CACHE_HOME/kg-decoder``, that is ``~/.cache/kg-decoder``): re-decoding with
other section settings then partitions nothing again, and a trace view draws an Office page
without rendering the document again, as on an embedded store.
"""

from __future__ import annotations

import hashlib
import io
import os
import time
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import BinaryIO, Iterable, Optional, Union
from urllib.parse import urlencode, urlsplit

import urllib3
from pyoxigraph import DefaultGraph, NamedNode, Quad, QueryResultsFormat, RdfFormat, parse, parse_query_results, serialize

from ..model.errors import (KgDecoderError, MalformedQuery, MalformedUpdate, NotFound, QueryError, QueryTimeout,
                            StoreError, StoreUnsupported)
from .queries import query_file
from .terms import insert_data

CACHE_VARIABLE = "KG_DECODER_CACHE"  # where remote stores' local cache folders go by default
_RESULTS = "application/sparql-results+json"
_TRIPLES = "application/n-triples"
_QUADS = "application/n-quads"
_TRANSIENT = {502, 503, 504}


@dataclass(frozen=True)
class StoreConfig:
    """Where a remote store's graph and library are, and how to reach them."""

    query: str
    update: Optional[str] = None
    graph_store: Optional[str] = None
    user: Optional[str] = None
    password: Optional[str] = field(default=None, repr=False)
    token: Optional[str] = field(default=None, repr=False)
    timeout: float = 300.0
    retries: int = 3
    library: Optional[str] = None
    library_options: dict = field(default_factory=dict, repr=False)  # may hold the library's secrets
    cache: Union[str, bool] = True  # this machine's folder for the parse cache and renderings; True: the default

    @classmethod
    def at(cls, base_url: str) -> "StoreConfig":
        """The endpoints of an Oxigraph server at ``base_url``.

        >>> StoreConfig.at("http://127.0.0.1:7878/").update
        'http://127.0.0.1:7878/update'
        """
        base = base_url.rstrip("/")
        return cls(query=f"{base}/query", update=f"{base}/update", graph_store=f"{base}/store")

    def with_library(self, library: str, options: Optional[dict] = None) -> "StoreConfig":
        return replace(self, library=str(library), library_options=dict(options or {}))

    def cache_folder(self) -> Optional[Path]:
        """The local folder ``cache`` names, made if need be; None when there is none (or the default
        one cannot be made: then a temporary folder serves while the store is open)."""
        if self.cache is False:
            return None
        if isinstance(self.cache, str):
            folder = Path(self.cache).expanduser()
        else:
            parts = urlsplit(self.query)
            digest = hashlib.sha256(self.query.encode("utf-8")).hexdigest()[:12]
            base = os.environ.get(CACHE_VARIABLE) or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache",
                                                          "kg-decoder")
            folder = Path(base) / "stores" / f"{parts.hostname}-{parts.port or parts.scheme}-{digest}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            if isinstance(self.cache, str):
                raise StoreError(f"cannot make the cache folder {folder}: {exc}") from None
            return None
        return folder

    @property
    def name(self) -> str:
        """The server as messages name it: scheme, host and port (never credentials)."""
        parts = urlsplit(self.query)
        return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}"


def is_remote_location(location) -> bool:
    """Whether a ``--store`` value names a remote store (a URL or a TOML file), not a folder."""
    if not isinstance(location, (str, os.PathLike)):
        return False
    text = str(location)
    return text.startswith(("http://", "https://")) or text.endswith(".toml")


def read_store_config(location: str) -> StoreConfig:
    """The config a ``--store`` value names: a server's base URL, or a TOML file (see the module)."""
    if location.startswith(("http://", "https://")):
        if urlsplit(location).username or urlsplit(location).password:
            raise StoreError("credentials do not belong in a store URL (it is printed and logged): give them in a "
                             "config file ([store] user and password-env, or token)")
        return StoreConfig.at(location)
    if not Path(location).is_file():
        raise StoreError(f"there is no store config {location}")
    try:
        settings = tomllib.loads(Path(location).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise StoreError(f"cannot read the store config {location}: {exc}") from None
    store, library = dict(settings.get("store", {})), dict(settings.get("library", {}))
    if "query" not in store and "url" not in store:
        raise StoreError(f"{location}: [store] needs query = \"URL\" (or url = a server's base URL)")
    config = StoreConfig.at(store["url"]) if "url" in store else StoreConfig(query=store["query"])
    password = store.get("password")
    if "password-env" in store:
        password = os.environ.get(store["password-env"])
        if password is None:
            raise StoreError(f"{location}: the variable {store['password-env']} (password-env) is not set")
    try:
        timeout, retries = float(store.get("timeout", 300.0)), int(store.get("retries", 3))
    except (TypeError, ValueError):
        raise StoreError(f"{location}: timeout and retries are numbers") from None
    if timeout <= 0 or retries < 0:
        raise StoreError(f"{location}: timeout must be above 0 and retries 0 or more")
    cache = store.get("cache", True)
    if not isinstance(cache, (str, bool)):
        raise StoreError(f"{location}: cache is a folder, or false for none")
    config = replace(config, update=store.get("update", config.update),
                     graph_store=store.get("graph-store", config.graph_store), user=store.get("user"),
                     password=password, token=store.get("token"), timeout=timeout, retries=retries, cache=cache)
    if library:
        url = library.pop("url", None)
        if url is None:
            raise StoreError(f"{location}: [library] needs url = \"a folder or an fsspec URL\"")
        config = config.with_library(url, library)
    return config


class _Triples:
    """The triples of a CONSTRUCT or DESCRIBE answer, to iterate once or serialise as Oxigraph's
    own result is."""

    def __init__(self, triples: Iterable) -> None:
        self._triples = triples

    def __iter__(self):
        return iter(self._triples)

    def serialize(self, output=None, format=RdfFormat.N_TRIPLES):
        return serialize(self._triples, output, format=format)


class _StreamedAnswer(io.RawIOBase):
    """A server's answer read as the parser asks for it: a row cap stops reading, and dropping the
    result closes the connection, so the server stops sending. A connection cut part way is
    StoreError, which the parser passes on as it is."""

    def __init__(self, response: urllib3.BaseHTTPResponse, location: str, deadline: Optional[float] = None) -> None:
        super().__init__()
        self._response = response
        self._location = location
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        if self._deadline is not None and time.monotonic() > self._deadline:
            raise QueryTimeout("the SPARQL server's answer took longer than the time limit; it was abandoned")
        try:
            data = self._response.read(len(buffer))
        except urllib3.exceptions.ReadTimeoutError:
            if self._deadline is None:
                raise StoreError(f"the SPARQL server at {self._location} stopped part way through its answer "
                                 f"(ReadTimeoutError)") from None
            raise QueryTimeout("the SPARQL server's answer took longer than the time limit; it was abandoned") from None
        except urllib3.exceptions.HTTPError as exc:
            raise StoreError(f"the SPARQL server at {self._location} stopped part way through its answer "
                             f"({type(exc).__name__})") from None
        buffer[:len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._response.close()  # a half-read answer cannot go back to the pool
            self._response.release_conn()
        super().close()


class RemoteGraph:
    """The graph of a remote store, on a SPARQL 1.1 server (a part of
    :class:`~kg_decoder.graph.store.KgStore`; its library is a folder or an fsspec location).

    Checks at once that the server answers and takes RDF 1.2 triple terms (StoreUnsupported).
    """

    undo_is_safe = False  # a write whose answer was lost may have been carried out
    keeps_own_index = True  # the text index is this machine's, in the cache folder, caught up from the graph

    def __init__(self, config: StoreConfig, read_only: bool = False) -> None:
        self.config = config
        self.location = config.name
        self.read_only = read_only or config.update is None
        if config.library is None:
            raise StoreError(f"the store at {self.location} needs a library for its bytes: give --library "
                             f"(a folder, or an fsspec URL such as s3://bucket/prefix) or [library] in a config")
        self.path = config.cache_folder()  # the parse cache and renderings, as an embedded store's folder holds them
        # urllib3 rather than requests: a third less time per round trip, which a trace makes six of.
        headers = {}
        if config.token:
            headers["Authorization"] = f"Bearer {config.token}"
        elif config.user:
            headers.update(urllib3.make_headers(basic_auth=f"{config.user}:{config.password or ''}"))
        self._http = urllib3.PoolManager(maxsize=32, headers=headers, retries=False,
                                         timeout=urllib3.Timeout(connect=10.0, read=config.timeout))
        try:
            self._check_server()
        except BaseException:
            self.close()
            raise

    def _check_server(self) -> None:
        try:
            self._sparql(self.config.query, "query", query_file("triple_term_probe").text, {}, _RESULTS)
        except MalformedQuery:
            raise StoreUnsupported(f"the SPARQL server at {self.location} cannot take RDF 1.2 triple terms "
                                   f"(<<( s p o )>>), which the graph uses for tg:contains: use a server that "
                                   f"can (Oxigraph 0.5 or newer)") from None

    # ------------------------------------------------------------ HTTP

    def _sparql(self, url: str, kind: str, text: str, parameters: dict, accept: Optional[str] = None,
                repeatable: bool = True, stream: bool = False, timeout: Optional[float] = None):
        """A query or update POSTed directly (the protocol's ``application/sparql-query`` or
        ``-update`` body; dataset parameters in the URL); ``stream``: the answer left unread;
        ``timeout``: seconds to wait for the server at a time, instead of the store's own."""
        if parameters:
            url = f"{url}?{urlencode(parameters, doseq=True)}"
        headers = {"Content-Type": f"application/sparql-{kind}; charset=utf-8"}
        if accept:
            headers["Accept"] = accept
        extra = {"timeout": urllib3.Timeout(connect=min(10.0, timeout), read=timeout)} if timeout else {}
        return self._send("POST", url, kind, body=text.encode("utf-8"), headers=headers, repeatable=repeatable,
                          stream=stream, **extra)

    def _send(self, method: str, url: str, kind: str, stream: bool = False, repeatable: bool = True,
              **request) -> urllib3.BaseHTTPResponse:
        """One request (``kind``: query, update or write), repeated with growing pauses while no
        connection can be made or the server is passing through a bad moment (502/503/504). A
        request that may have been carried out (an answer cut off, a read timeout) is not
        repeated, nor is any request that is not ``repeatable`` (a user's update: it may add to
        what it finds). Only a 2xx answer is success; a 4xx is the caller's error, typed."""
        pause = 0.25
        for attempt in range(self.config.retries + 1):
            last_try = attempt == self.config.retries or not repeatable
            try:
                response = self._http.request(method, url, preload_content=not stream, **request)
            except (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError) as exc:
                if last_try:
                    raise StoreError(f"the SPARQL server at {self.location} cannot be reached "
                                     f"({type(exc).__name__} after {attempt + 1} tries)") from None
            except urllib3.exceptions.ReadTimeoutError:
                if "timeout" in request:  # a user's query with a time limit of its own
                    raise QueryTimeout(f"the SPARQL server did not answer the {kind} within its time limit; "
                                       f"it was abandoned") from None
                raise StoreError(f"the SPARQL server at {self.location} did not answer the {kind} (ReadTimeoutError)"
                                 ) from None
            except urllib3.exceptions.HTTPError as exc:  # a connection cut mid-answer
                raise StoreError(f"the SPARQL server at {self.location} did not answer the {kind} "
                                 f"({type(exc).__name__})") from None
            else:
                if 200 <= response.status < 300:
                    return response
                body = response.read() if stream else response.data
                if stream:
                    response.release_conn()
                if 300 <= response.status < 400:  # redirects are not followed: a write would be lost
                    raise StoreError(f"the SPARQL server at {self.location} redirected the {kind} to "
                                     f"{response.headers.get('Location', '?')}: give that endpoint instead")
                if response.status not in _TRANSIENT or last_try:
                    raise self._error(response.status, body, kind)
            time.sleep(pause)
            pause *= 2
        raise AssertionError("unreachable")

    def _error(self, status: int, body: bytes, kind: str) -> KgDecoderError:
        message = " ".join(body.decode("utf-8", "replace").split())[:300] or f"HTTP {status}"
        if status in (401, 403):
            return StoreError(f"the SPARQL server at {self.location} refused the credentials ({status})")
        if status == 400 and kind == "query":
            return MalformedQuery(f"the server refused the query: {message}")
        if status == 400 and kind == "update":
            return MalformedUpdate(f"the server refused the update: {message}")
        if status == 404:
            return NotFound(f"the SPARQL server has nothing at that address for the {kind}: {message}")
        if status < 500:
            return QueryError(f"the SPARQL server answered {status} to the {kind}: {message}")
        return StoreError(f"the SPARQL server at {self.location} failed ({status}) on the {kind}: {message}")

    # ------------------------------------------------------------ the backend

    def __len__(self) -> int:
        """The quads of the default graph and of every named graph."""
        return int(next(iter(self.evaluate(query_file("quad_count").text, {})))["quads"].value)

    def evaluate(self, query: str, options: dict, streamed: bool = False):
        timeout = options.get("timeout")
        deadline = time.monotonic() + timeout if timeout else None
        parameters: dict = {}
        if options.get("use_default_graph_as_union"):
            parameters["union-default-graph"] = ""  # Oxigraph's; other servers take no such switch
        if options.get("default_graph"):
            parameters["default-graph-uri"] = [graph.value for graph in options["default_graph"]]
        if options.get("named_graphs"):
            parameters["named-graph-uri"] = [graph.value for graph in options["named_graphs"]]
        response = self._sparql(self.config.query, "query", query, parameters, f"{_RESULTS}, {_TRIPLES};q=0.9",
                                stream=streamed, timeout=timeout)
        media = (response.headers.get("Content-Type") or "").split(";")[0].strip()
        answer = _StreamedAnswer(response, self.location, deadline) if streamed else response.data
        try:
            if media in (_RESULTS, "application/json"):
                return parse_query_results(answer, QueryResultsFormat.JSON)
            if media == _TRIPLES:
                triples = parse(answer, format=RdfFormat.N_TRIPLES)
                return _Triples(triples if streamed else list(triples))
            raise StoreError(f"the SPARQL server at {self.location} answered in {media or 'no media type'}")
        except BaseException as exc:
            if streamed:  # not left open for as long as the error is kept
                answer.close()
            if isinstance(exc, SyntaxError):
                raise StoreError(f"the SPARQL server at {self.location} answered what does not parse: "
                                 f"{str(exc)[:200]}") from None
            raise

    def load(self, nquads: bytes, mapped: bool = False) -> None:
        if self.config.graph_store is None:
            self.update(insert_data(parse(nquads, format=RdfFormat.N_QUADS)))
            return
        self._send("POST", self.config.graph_store, "write", body=nquads, headers={"Content-Type": _QUADS})

    def update(self, update: str, repeatable: bool = True) -> None:
        self._sparql(self.config.update, "update", update, {}, repeatable=repeatable)

    def quads(self, graph: Optional[NamedNode] = None) -> Iterable[Quad]:
        if self.config.graph_store is None:  # no Graph Store Protocol to list them: a query
            rows = list(self.evaluate(query_file("all_quads").text, {}))
            return [Quad(row["s"], row["p"], row["o"], row["g"] or DefaultGraph()) for row in rows
                    if graph is None or row["g"] == graph]
        if graph is None:
            response = self._send("GET", self.config.graph_store, "query", headers={"Accept": _QUADS})
            return list(parse(response.data, format=RdfFormat.N_QUADS))
        try:
            response = self._send("GET", f"{self.config.graph_store}?{urlencode({'graph': graph.value})}", "query",
                                  headers={"Accept": _TRIPLES})
        except NotFound:  # a graph nothing was written to yet: empty, as in the embedded store
            return []
        return [Quad(t.subject, t.predicate, t.object, graph)
                for t in parse(response.data, format=RdfFormat.N_TRIPLES)]

    def dump_nquads(self, output: BinaryIO) -> int:
        if self.config.graph_store is None:
            quads = list(self.quads())
            output.write("".join(f"{quad} .\n" for quad in quads).encode("utf-8"))
            return len(quads)
        response = self._send("GET", self.config.graph_store, "query", stream=True, headers={"Accept": _QUADS})
        lines = 0
        try:
            for block in response.stream(1 << 20):
                output.write(block)
                lines += block.count(b"\n")
        except urllib3.exceptions.HTTPError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {type(exc).__name__}") from None
        finally:
            response.release_conn()
        return lines

    # ------------------------------------------------------------ readers in other processes: the same server

    def reader_location(self) -> Optional[tuple]:
        return ("remote", self.config)

    def readers_location(self, generation: int) -> tuple:
        return self.reader_location()

    def reader_snapshot(self, generation: int) -> tuple:
        return self.reader_location()

    def release_reader(self, location: tuple) -> None:
        pass

    def cited_blobs_now(self) -> Optional[set[str]]:
        return None

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self._http.clear()


__all__ = ["RemoteGraph", "StoreConfig", "is_remote_location", "read_store_config"]
