"""The store: a graph (embedded Oxigraph, or a SPARQL 1.1 server), the library of bytes beside it,
and the text index.

:class:`KgStore` is what the stages above use, whatever holds the graph: the typed reads of
:class:`~kg_decoder.graph.reads.GraphReads`, a user's queries, and the ``write_*`` methods, each
one transaction. It is composed of parts with small interfaces: the graph
(:class:`~kg_decoder.graph.backend.GraphBackend`), the library
(:mod:`~kg_decoder.graph.library`) and the text index (:mod:`~kg_decoder.graph.indexing`);
:mod:`~kg_decoder.graph.opening` puts them together. Every query either graph runs is a file in
``queries/``.
"""

from __future__ import annotations

import contextlib
import itertools
import tempfile
import threading
from pathlib import Path
from typing import BinaryIO, Callable, Optional, Sequence, Union

from pyoxigraph import NamedNode, Quad, RdfFormat, Triple, parse

from ..model import Rows
from ..model.errors import BlobMissing, KgDecoderError, MalformedUpdate, QueryError, StoreError, UnknownEntity
from .answers import answer, evaluation_error, select_rows
from .backend import GraphBackend, StorePath
from .indexing import StoreTextIndex
from .library import Library, MemoryLibrary
from .priority import BackgroundCommitter, lower_storage_threads
from .quads import as_nquads
from .queries import query_file
from .reads import GraphReads, snake
from .sparql_guard import check_services
from .terms import insert_data, is_iri, python_value
from .version_mapping import latest_version_quads
from .version_reads import VersionReads
from .vocabulary import SOURCE_GRAPH

_GENERATIONS = itertools.count(1)


class KgStore(GraphReads):
    """A graph with its library and text index: what every stage reads and writes through, whatever
    holds the graph.

    Composed of parts: ``graph`` (a :class:`~kg_decoder.graph.backend.GraphBackend`: evaluate a query,
    load N-Quads, run an update, list quads), ``library`` (the bytes, by hash), ``text_index``
    (:class:`~kg_decoder.graph.indexing.StoreTextIndex`) and ``versions`` (the reads of sources and
    versions, :class:`~kg_decoder.graph.version_reads.VersionReads`). :mod:`~kg_decoder.graph.opening` composes
    them. Beside the typed reads it adds a user's queries and the ``write_*`` methods, each one
    transaction over graph and library.

    A context manager: leaving the ``with`` block flushes and releases the store.

    >>> from kg_decoder.graph.opening import open_store
    >>> with open_store(None) as store:
    ...     len(store)
    0
    """

    def __init__(self, graph: GraphBackend, library: Union[Library, MemoryLibrary]) -> None:
        self.graph = graph
        self.library = library
        self.text_index = StoreTextIndex(self, self._rows)
        self.versions = VersionReads(self._rows)
        self._committer: Optional[BackgroundCommitter] = None
        self._scratch: Optional[tempfile.TemporaryDirectory] = None
        self._scratch_lock = threading.Lock()
        # One commit at a time from this process: parallel decodes commit from several threads.
        self._commit_lock = threading.Lock()
        # Which commit of this process the store is at, counted over every store the process opens (a
        # store opened again starts past its last): it names the snapshots readers in other processes
        # (the web server's workers) are told of after each commit.
        self.generation = next(_GENERATIONS)
        self._readers: list[Callable[[tuple], None]] = []
        self._flush_each_commit = False

    @property
    def path(self) -> Optional[Path]:
        """A local folder for caches (the parse cache, renderings), or None."""
        return self.graph.path

    @property
    def location(self) -> str:
        """The store as messages name it."""
        return self.graph.location

    @property
    def read_only(self) -> bool:
        return self.graph.read_only

    def __enter__(self) -> "KgStore":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<KgStore {self.location} ({type(self.graph).__name__}){' read-only' if self.read_only else ''}>"

    def __len__(self) -> int:
        return len(self.graph)

    def flush(self) -> None:
        self.graph.flush()

    def close(self) -> None:
        """Release the store; a temporary :meth:`work_folder` goes with it."""
        self.text_index.close()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None
        self.graph.close()

    def work_folder(self) -> Path:
        """A local folder for what decoding keeps beside the graph (renderings of Office files): the
        store's own folder, or for a store without one (in memory, remote) a temporary folder that
        lasts as long as the store is open."""
        if self.path is not None:
            return self.path
        with self._scratch_lock:
            if self._scratch is None:
                self._scratch = tempfile.TemporaryDirectory(prefix="kg-decoder-")
            return Path(self._scratch.name)

    # ------------------------------------------------------------ readers in other processes

    def reader_location(self) -> Optional[tuple]:
        """What another process needs to open this store read-only (see :func:`~kg_decoder.graph.opening.open_reader`), or None
        when it cannot (a store in memory)."""
        return self.graph.reader_location()

    def reader_snapshot(self) -> Optional[tuple]:
        """Where another process reads the store as committed now, for a while (an embedded store: a
        snapshot, given back with :meth:`release_reader`); None when no other process can (a store in memory)."""
        if self.reader_location() is None:
            return None
        with self._commit_lock:
            return self.graph.reader_snapshot(self.generation)

    def release_reader(self, location: tuple) -> None:
        """Another process is done reading at ``location`` (from :meth:`reader_snapshot`)."""
        self.graph.release_reader(location)

    def share_with_readers(self, listener: Callable[[tuple], None]) -> None:
        """Other processes read this store while this one writes it: ``listener`` is told, now and
        after each commit, where they read it as committed then (:func:`~kg_decoder.graph.opening.open_reader` opens that);
        each commit is flushed to the storage's tables. Only for a store :meth:`reader_location` names."""
        if self.reader_location() is None:
            raise StoreError(f"the store at {self.location} cannot be read by another process")
        self._flush_each_commit = True
        if listener not in self._readers:  # several apps over one store may share a pool of workers
            self._readers.append(listener)
            listener(self._readers_location())

    def _readers_location(self) -> tuple:
        with self._commit_lock:
            return self.graph.readers_location(self.generation)

    def _committed(self) -> None:
        self.generation = next(_GENERATIONS)
        if self._readers:
            location = self._readers_location()
            for listener in list(self._readers):
                listener(location)

    @contextlib.contextmanager
    def writer_lent(self):
        """Let another process write this store meanwhile (a user's update, in a process that can be
        killed): this process's writer is closed, its reads go to a snapshot taken now, and the writer
        is opened again afterwards, with what the other process committed. Writes from this process
        wait. StoreError for a store in memory, remote or opened read-only."""
        lend = getattr(self.graph, "lend_writer", None)
        if lend is None:
            raise StoreError(f"the store at {self.location} cannot be written by another process")
        with self._commit_lock:
            try:
                with lend():
                    yield
            finally:
                if self._committer is not None:
                    lower_storage_threads()  # the reopened engine's threads
        self._committed()

    def serve_reads_first(self) -> None:
        """Commit on a low-priority thread and nice the storage engine's own threads (the web server).

        Queries then preempt writes: an upload's commit no longer takes CPU turns from them.
        """
        lower_storage_threads()
        if self._committer is None:
            self._committer = BackgroundCommitter()

    # ------------------------------------------------------------ shipped queries

    def _rows(self, name: str, **bindings) -> list[dict]:
        """Rows of the shipped SELECT ``name`` with values bound; snake_case keys, Python values.

        A string that is not an IRI names no entity: no rows (the caller says what is unknown)."""
        query = query_file(name)
        query.check(bindings)
        if any(isinstance(value, str) and not is_iri(value) for value in bindings.values()):
            return []
        try:
            solutions = self.graph.evaluate(query.bound(bindings), {})
            keys = [snake(v.value) for v in solutions.variables]  # once a query, not once a row
            # A solution's terms in the variables' order: a look-up by name costs more than the term.
            return [{key: python_value(term) for key, term in zip(keys, row) if term is not None}
                    for row in solutions]
        except OSError as exc:
            raise StoreError(f"reading the store at {self.location} failed: {exc}") from None

    def _construct(self, name: str, **bindings) -> list[Triple]:
        return list(self.graph.evaluate(query_file(name).bound(bindings), {}))

    def provenance_ntriples(self, document: Optional[str] = None) -> str:
        """The provenance graph (or one document's part of it) as N-Triples, without the triples
        whose object is an RDF 1.2 triple term (``tg:contains``: rdflib cannot hold them)."""
        if document is not None:
            triples = self._construct("document_graph", document=document)
        else:
            triples = (Triple(q.subject, q.predicate, q.object) for q in self.graph.quads(SOURCE_GRAPH))
        return "".join(f"{t} .\n" for t in triples if not isinstance(t.object, Triple))

    # ------------------------------------------------------------ a user's queries

    def select_rows(self, query: str, allow_service: Sequence[str] = ()) -> Rows:
        """A user's SELECT query as rows of plain values (IRIs and literals as their text)."""
        return select_rows(self.graph, query, allow_service)

    def answer(self, query: str, choose_format: Callable[[dict], str], row_cap: int,
               default_graph: Optional[list[str]] = None, named_graphs: Optional[list[str]] = None,
               union: bool = False, allow_service: Sequence[str] = (),
               timeout: Optional[float] = None) -> tuple[str, bytes]:
        """A user's query evaluated and serialised by Oxigraph: ``(media type, body)``; see
        :func:`~kg_decoder.graph.answers.answer`."""
        return answer(self.graph, query, choose_format, row_cap, default_graph, named_graphs, union, allow_service,
                      timeout)

    def sparql_update(self, update: str, allow_service: Sequence[str] = (), allow_load: Sequence[str] = ()) -> None:
        """Run a user's SPARQL Update (one transaction); SERVICE as in :meth:`_start_query`. ``LOAD`` fetches
        a document from the URL it names, from this process: refused (LoadNotAllowed) unless that
        URL is one of ``allow_load`` or under one. A failed remote call's error says only that it failed."""
        calls = check_services(update, allow_service, allow_load, update=True)
        self._writable()
        try:
            with self._commit_lock:
                self._run_commit(lambda: self.graph.update(update, repeatable=False))
        except (OSError, RuntimeError, ValueError, QueryError) as exc:
            raise evaluation_error(exc, bool(calls), "the update") from None
        self._committed()

    # ------------------------------------------------------------ bytes in the library

    def blob(self, sha256: str, entity: Optional[str] = None) -> bytes:
        """The library's bytes under ``sha256``; BlobMissing naming ``entity`` when they are missing."""
        try:
            return self.library.get(sha256)
        except KeyError:
            raise BlobMissing(f"the library has no bytes {sha256[:16]}... for {entity or 'an entity'} "
                              f"(removed by hand, or a store copied without its library)") from None

    def text(self, sha256: str, entity: Optional[str] = None) -> str:
        """A page, section or chunk text from the library."""
        return self.blob(sha256, entity).decode("utf-8")

    def content(self, iri: str) -> bytes:
        """The bytes the library keeps for an entity (a document's original, a page's text...)."""
        sha256 = self.content_hash(iri)
        if sha256 is None:
            raise UnknownEntity(f"{iri} has no content in the library")
        return self.blob(sha256, iri)

    # ------------------------------------------------------------ garbage in the library

    def cited_blobs(self) -> set[str]:
        """The library hashes the graph cites."""
        return {row["sha256"] for row in self._rows("library_references")}

    def orphan_blobs(self) -> list[str]:
        """Library blobs no entity of the graph cites: left by a decode killed between its blobs and
        its commit. (A decode running meanwhile may be about to cite one: see :meth:`collect_garbage`.)"""
        cited = self.cited_blobs()
        return [key for key in self.library.keys() if key not in cited]

    def missing_blobs(self) -> list[str]:
        """Hashes the graph cites that the library does not hold (bytes removed by hand, a store
        copied without its library). Never left by a killed decode: blobs are written first."""
        return sorted(key for key in self.cited_blobs() if key not in self.library)

    def collect_garbage(self, dry_run: bool = False, wait: float = 60.0, min_age: float = 3600.0) -> list[str]:
        """Remove the library blobs the graph does not cite, and half-written blob files; return the
        hashes removed (or, with ``dry_run``, that would be).

        Never removes a blob the graph cites, even while a decode runs: in a local library every
        write holds the library's shared lock from its first blob to its commit, and this takes
        the exclusive one (waiting up to ``wait`` seconds), then reads what the graph cites as it
        is then. No lock spans machines, so in a shared library (S3...) only blobs older than
        ``min_age`` seconds are removed: a decode elsewhere may be between its blobs and its commit.
        """
        with self.library.collecting(timeout=wait):
            cited = self._cited_now()
            orphans = [key for key in self.library.keys() if key not in cited]
            if self.library.shared:
                ages = self.library.ages()
                orphans = [key for key in orphans if ages.get(key, 0.0) >= min_age]
            if not dry_run:
                self.library.remove(orphans)
                for leftover in self.library.leftovers():
                    leftover.unlink(missing_ok=True)
        return orphans

    def _cited_now(self) -> set[str]:
        now = self.graph.cited_blobs_now()
        return self.cited_blobs() if now is None else now

    # ------------------------------------------------------------ writing

    def write_document(self, document: str, nquads: bytes, blobs: dict[str, bytes], replace: bool) -> None:
        """A decoded document in one transaction, replacing what the store held of it when ``replace``;
        then its texts into the text index (:mod:`~kg_decoder.graph.indexing`)."""
        self._writable()
        self.text_index.open_before_commit()
        self._write(nquads, blobs, ("delete_document", {"document": document}) if replace else None, mapped=True)
        self.text_index.add_committed(document)

    def remove_document(self, document: str) -> None:
        """Remove a document and everything derived from it (``queries/delete_document.rq``: facts and
        the documents embedded in it stay) in one transaction, then from the text index. Its library
        bytes stay until ``gc``. The versions of sources it was go with it: a source's latest version is
        then the latest one left, and a source with none left goes too. UnknownEntity for a document
        the store does not hold."""
        self._writable()
        if not self.has_document(document):
            raise UnknownEntity(f"no document {document:.200} in the store")
        its_versions = self.versions.document_versions(document)
        versions = {row.version for row in its_versions}
        deletes, latest = [("delete_version", {"version": version}) for version in sorted(versions)], []
        for source in sorted({row.source for row in its_versions}):
            left = [row.version for row in self.versions.source_versions(source) if row.version not in versions]
            deletes.append(("delete_latest_version", {"source": source}) if left else
                           ("delete_source", {"source": source}))
            latest += latest_version_quads(source, left[-1]) if left else []
        deletes.append(("delete_document", {"document": document}))
        self._write(latest, {}, deletes)
        self.text_index.drop(document)

    def write_chunks(self, document: str, nquads: bytes, blobs: dict[str, bytes], replace: bool) -> None:
        """A chunking run of a document in one transaction, replacing the earlier one when ``replace``."""
        self._write(nquads, blobs, ("delete_chunks", {"document": document}) if replace else None, mapped=True)

    def write_failure(self, failure: str, quads: list[Quad]) -> None:
        """A failed decode's record, replacing an earlier record of the same bytes."""
        self._write(quads, {}, ("delete_failure", {"failure": failure}))

    def write_origin(self, document: str, quads: list[Quad], new_fetch: bool) -> None:
        """Where a stored document came from (its parent, or a fetch replacing the last one when ``new_fetch``)."""
        self._write(quads, {}, ("delete_fetch", {"document": document}) if new_fetch else None)

    def write_version(self, source: str, quads: list[Quad]) -> None:
        """A source's new version, the revision that made it and its fact verdicts in one transaction,
        the source's earlier latest version unmarked in it."""
        self._write(quads, {}, ("delete_latest_version", {"source": source}))

    def remove_versions(self, versions: list[str], documents: list[str]) -> None:
        """Prune: versions of sources and the documents only they were, in one transaction. Blobs stay
        until :meth:`collect_garbage`."""
        deletes = [("delete_version", {"version": v}) for v in versions]
        deletes += [("delete_chunks", {"document": d}) for d in documents]
        deletes += [("delete_document", {"document": d}) for d in documents]
        if deletes:
            self._write(b"", {}, deletes)
        for document in documents:
            self.text_index.drop(document)

    def anchor_detached(self, document: str, quads: list[Quad]) -> None:
        """A document's detached fact subgraphs anchored again, or detached anew (``anchoring_quads``),
        in one transaction."""
        self._write(quads, {}, ("delete_detachments", {"document": document}))

    def write_quads(self, quads: list[Quad]) -> None:
        """Add quads (facts and their provenance) in one transaction."""
        self._write(as_nquads(quads), {}, None)

    def load_nquads(self, nquads: bytes) -> None:
        """Add N-Quads as they are, in one transaction (``kg-decoder import``)."""
        self._write(nquads, {}, None)

    def _write(self, nquads: Union[bytes, list[Quad]], blobs: dict[str, bytes],
               delete: Union[tuple[str, dict], list[tuple[str, dict]], None], mapped: bool = False) -> None:
        """Library blobs first, then one graph transaction; the blobs go again if it fails.

        Without a ``delete`` the N-Quads are loaded as they are (embedded: Oxigraph parses and
        commits them outside Python, the web server's reading threads go on meanwhile; remote:
        one POST); with one, a single ``DELETE ... ; INSERT DATA ...`` update (of the quads as they
        were given, when they were not serialised). ``mapped``: the quads are a mapping's own (no blank
        nodes), which a large load may ingest through the bulk loader (``EmbeddedGraph.load``).
        """
        self._writable()
        if delete is not None:
            deletes = [delete] if isinstance(delete, tuple) else delete
            try:
                quads = nquads if isinstance(nquads, list) else list(parse(nquads, format=RdfFormat.N_QUADS))
            except SyntaxError as exc:
                raise MalformedUpdate(f"the N-Quads do not parse: {str(exc)[:200]}") from None
            update = _one_update([query_file(name).bound(values) for name, values in deletes] + [insert_data(quads)])
            commit = lambda: self.graph.update(update)  # noqa: E731
        else:
            data = as_nquads(nquads) if isinstance(nquads, list) else nquads
            commit = lambda: self.graph.load(data, mapped)  # noqa: E731
        with self.library.writing():
            added = self.library.put_new(blobs)
            try:
                with self._commit_lock:
                    self._run_commit(commit)
            except OSError as exc:
                self._undo(added)
                raise StoreError(f"writing to the store at {self.location} failed: {exc}") from None
            except BaseException:
                self._undo(added)
                raise
        self._committed()

    def _undo(self, added: list[str]) -> None:
        """Remove the blobs a failed write added that the graph does not cite (another decode may
        have committed the same bytes meanwhile). Not from a shared library, where another machine
        may be about to cite one, nor after a remote write that may have been carried out: the
        garbage collector removes what is left."""
        if self.library.shared or not self.graph.undo_is_safe:
            return
        try:
            cited = self.cited_blobs() if added else set()
        except KgDecoderError:
            return
        self.library.remove([key for key in added if key not in cited])

    def _run_commit(self, commit):
        def commit_and_flush():
            done = commit()
            if self._flush_each_commit:
                self.flush()
            return done

        return self._committer.run(commit_and_flush) if self._committer is not None else commit_and_flush()

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(f"the store at {self.location} is open read-only")

    # ------------------------------------------------------------ for tests and tools

    def quads(self) -> set[Quad]:
        """Every quad in the store."""
        return set(self.graph.quads())

    def source_quads(self, subject: Optional[str] = None) -> list[Quad]:
        """The provenance quads (of one subject)."""
        return [q for q in self.graph.quads(SOURCE_GRAPH) if subject is None or q.subject == NamedNode(subject)]

    def dump_nquads(self, output: BinaryIO) -> int:
        """Write every quad as N-Quads to ``output``; how many (``kg-decoder export``)."""
        return self.graph.dump_nquads(output)


def _one_update(operations: list[str]) -> str:
    """Updates joined into one (one transaction), their PREFIX lines once at the top: Oxigraph reads a
    prologue only at the start of a request."""
    prefixes: dict[str, None] = {}
    bodies = []
    for operation in operations:
        lines = operation.split("\n")  # not splitlines(): a literal's U+2028 or U+0085 is no line's end
        prefixes.update((line.strip(), None) for line in lines if line.lstrip().upper().startswith("PREFIX "))
        bodies.append("\n".join(line for line in lines if not line.lstrip().upper().startswith("PREFIX ")))
    return "\n".join(prefixes) + "\n" + " ;\n".join(bodies)


__all__ = ["KgStore", "StorePath"]
