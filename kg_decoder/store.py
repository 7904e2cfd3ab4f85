"""The store: the embedded Oxigraph database and the library beside it.

The only module that opens Oxigraph. A store is a folder::

    kg-store/
      oxigraph/   the RDF store (RocksDB); one process may hold it for writing
      library/    content-addressed bytes (see library.py)

Every query it runs is a file in ``queries/``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Iterable, Optional, Sequence

from pyoxigraph import NamedNode, Quad, QuerySolutions, RdfFormat, Store, Triple, parse

from .errors import MalformedUpdate, StoreError
from .library import Library
from .priority import BackgroundCommitter, lower_storage_threads
from .resources import query_text
from .sparql_guard import check_services
from .vocabulary import SOURCE_GRAPH

_SAFE_IRI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*$")


class KgStore:
    """An Oxigraph store on disk with its library.

    >>> import tempfile
    >>> store = open_store(tempfile.mkdtemp())
    >>> len(store)
    0
    >>> store.close()
    """

    def __init__(self, path: str | os.PathLike, read_only: bool = False) -> None:
        self.path = Path(path)
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            graph_path = self.path / "oxigraph"
            self.graph = Store.read_only(str(graph_path)) if read_only else Store(str(graph_path))
        except OSError as exc:
            raise StoreError(f"cannot open the store at {self.path}: {exc}") from None
        self.library = Library(self.path / "library")
        self._committer: Optional[BackgroundCommitter] = None

    def serve_reads_first(self) -> None:
        """Commit on a low-priority thread and nice the storage engine's own threads (the web server).

        Queries then preempt writes: an upload's commit no longer takes CPU turns from them.
        """
        lower_storage_threads()
        if self._committer is None:
            self._committer = BackgroundCommitter()

    # ------------------------------------------------------------ reading

    def __len__(self) -> int:
        return len(self.graph)

    def select(self, name: str, **bindings) -> list[dict]:
        """Run ``queries/<name>.rq`` with values bound to variables; rows as dicts of Python values.

        A bound value is an IRI string or an RDF term (a literal). The values are written
        into the query as constants rather than passed as Oxigraph substitutions: the
        planner then knows them and starts from them, so a lookup costs the same in a
        small and a large store (with substitutions it may scan every chunk or element).
        """
        terms = _terms(bindings)
        solutions = self.graph.query(_with_values(query_text(name), terms))
        assert isinstance(solutions, QuerySolutions)
        names = [v.value for v in solutions.variables]
        return [{n: _python_value(row[n]) for n in names if row[n] is not None} for row in solutions]

    def construct(self, name: str, **bindings) -> list[Triple]:
        """Run the CONSTRUCT ``queries/<name>.rq`` with values bound as in :meth:`select`."""
        terms = _terms(bindings)
        return list(self.graph.query(_with_values(query_text(name), terms)))

    def sparql(self, query: str, default_graph: Optional[list[str]] = None,
               named_graphs: Optional[list[str]] = None, union: bool = False, allow_service: Sequence[str] = ()):
        """Run a user's SPARQL query (the SPARQL endpoint, ``kg-decoder query``): solutions, a boolean or triples.

        ``union`` makes the default graph the union of all graphs (provenance included).
        SERVICE is refused (ServiceNotAllowed) unless its endpoint starts with one of the
        ``allow_service`` prefixes: Oxigraph would call any URL from this process.
        """
        check_services(query, allow_service)
        options: dict = {}
        if union:
            options["use_default_graph_as_union"] = True
        elif default_graph:
            options["default_graph"] = [NamedNode(iri) for iri in default_graph]
        if named_graphs:
            options["named_graphs"] = [NamedNode(iri) for iri in named_graphs]
        return self.graph.query(query, **options)

    def sparql_update(self, update: str, allow_service: Sequence[str] = ()) -> None:
        """Run a user's SPARQL Update (one transaction); SERVICE as in :meth:`sparql`."""
        check_services(update, allow_service)
        try:
            self.graph.update(update)
        except SyntaxError as exc:
            raise MalformedUpdate(f"the update does not parse: {exc}") from None
        except OSError as exc:
            raise StoreError(f"writing to the store at {self.path} failed: {exc}") from None

    def quads(self) -> set[Quad]:
        """Every quad in the store (for comparisons in tests and tools)."""
        return set(self.graph.quads_for_pattern(None, None, None, None))

    def source_quads(self, subject: Optional[str] = None) -> list[Quad]:
        node = NamedNode(subject) if subject else None
        return list(self.graph.quads_for_pattern(node, None, None, SOURCE_GRAPH))

    def content(self, iri: str) -> bytes:
        """The bytes the library keeps for an entity (a document's original, a page's text...)."""
        rows = self.select("content_hash", entity=iri)
        if not rows:
            raise KeyError(f"{iri} has no content in the library")
        return self.library.get(rows[0]["sha256"])

    # ------------------------------------------------------------ writing

    def write(self, quads: list[Quad], blobs: dict[str, bytes],
              delete: Optional[tuple[str, dict[str, str]]] = None) -> None:
        """Add quads in one transaction, after running the ``delete`` update (a query name and its IRIs).

        The library blobs are written first; if the transaction fails, the blobs this
        call added are removed again, so the store is left exactly as it was.
        """
        def commit() -> None:
            if delete is not None:
                name, iris = delete
                self.graph.update(_bind(query_text(name), **iris) + " ;\n" + _insert_data(quads))
            else:
                self.graph.extend(quads)

        self._commit(blobs, commit)

    def write_serialized(self, nquads: bytes, blobs: dict[str, bytes],
                         delete: Optional[tuple[str, dict[str, str]]] = None) -> None:
        """:meth:`write` for quads serialised as N-Quads (as the worker sends them).

        Without a ``delete`` Oxigraph parses and commits them in one transaction outside
        Python (the GIL released): the web server's reading threads go on meanwhile.
        """
        if delete is not None:
            self.write(list(parse(nquads, format=RdfFormat.N_QUADS)), blobs, delete)
        else:
            self._commit(blobs, lambda: self.graph.load(nquads, format=RdfFormat.N_QUADS))

    def _commit(self, blobs: dict[str, bytes], commit) -> None:
        """Library blobs first, then the graph transaction; the blobs go again if it fails."""
        added = self.library.put_new(blobs)
        try:
            if self._committer is not None:
                self._committer.run(commit)
            else:
                commit()
        except OSError as exc:
            self.library.remove(added)
            raise StoreError(f"writing to the store at {self.path} failed: {exc}") from exc
        except BaseException:
            self.library.remove(added)
            raise

    def flush(self) -> None:
        self.graph.flush()

    def close(self) -> None:
        """Flush and release the store (Oxigraph frees its lock when the last reference goes)."""
        self.graph.flush()
        del self.graph


def open_store(path: str | os.PathLike = "kg-store", read_only: bool = False) -> KgStore:
    """Open (or create) the store folder at ``path``."""
    return KgStore(path, read_only=read_only)


def _bind(update: str, **iris: str) -> str:
    """Put IRIs in place of variables of an update (SPARQL Update has no substitutions)."""
    for name, iri in iris.items():
        if not _SAFE_IRI.match(iri):
            raise ValueError(f"not an IRI that can be bound: {iri!r}")
        update = re.sub(rf"\?{name}\b", f"<{iri}>", update)
    return update


def _terms(bindings: dict) -> dict:
    """Bound values as RDF terms: a string is an IRI."""
    return {key: NamedNode(value) if isinstance(value, str) else value for key, value in bindings.items()}


_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


def _with_values(query: str, terms: dict) -> str:
    """``query`` with the bound variables written in as constants (kept in the projection).

    >>> _with_values("SELECT ?a ?b WHERE { ?a ?b ?c }", {"b": NamedNode("http://ex.org/p")})
    'SELECT ?a (<http://ex.org/p> AS ?b) WHERE { ?a <http://ex.org/p> ?c }'
    """
    if not terms:
        return query
    code = "\n".join(line for line in query.splitlines() if not line.lstrip().startswith("#"))
    where = _WHERE.search(code)
    if where is None:
        raise ValueError("a query with bound values needs a WHERE clause")
    last_brace = code.rindex("}") + 1
    head, body, tail = code[:where.start()], code[where.start():last_brace], code[last_brace:]
    for key, term in terms.items():
        head = re.sub(rf"\?{key}\b", lambda _: f"({term} AS ?{key})", head)
        body = re.sub(rf"\?{key}\b", lambda _: str(term), body)
    return head + body + tail  # the tail (ORDER BY...) sees the projected variable


def _insert_data(quads: Iterable[Quad]) -> str:
    lines = []
    for quad in quads:
        triple = Triple(quad.subject, quad.predicate, quad.object)
        lines.append(f"GRAPH {quad.graph_name} {{ {triple} }}")
    return "INSERT DATA {\n" + "\n".join(lines) + "\n}"


def _python_value(term):
    if isinstance(term, NamedNode):
        return term.value
    value = getattr(term, "value", None)
    datatype = getattr(term, "datatype", None)
    if datatype is not None:
        kind = datatype.value.rsplit("#", 1)[-1]
        if kind == "integer":
            return int(value)
        if kind in ("double", "decimal", "float"):
            return float(value)
        if kind == "boolean":
            return value == "true"
    return value
