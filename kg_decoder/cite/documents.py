"""A document as a person names it: its IRI, the uuid at the end of it, the path of the file that
was decoded, or that file's name. One resolution for the command line and the web app."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from ..graph.identifiers import document_iri
from ..graph.library import sha256_hex
from ..graph.store import KgStore
from ..graph.terms import is_iri
from ..model.errors import RequestError, UnknownEntity
from .versions import source_rows

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def document_named(name: str, store: KgStore, read_files: bool = True) -> str:
    """The IRI of the stored document ``name`` names; UnknownEntity if the store holds none.

    Every command and page that takes a document resolves it here.

    Tried in turn: a document IRI; the uuid at its end; with ``read_files``, the path of a file on
    this machine (its bytes hashed: the same bytes are the same document, whatever their name
    today); the file name the decode recorded (a path's last part, so a path that is not on this
    machine still names its file). A file name that several versions of one source were decoded
    from names the latest of those versions; ``SOURCE@N`` names version N of a source given by its
    id, path, URL or file name. A file name that names
    documents of several sources, or bytes that are no source's version (different files under
    one name), is refused with their IRIs (``ambiguous-document``, 409). A web server passes
    ``read_files=False``: a request never makes it read a file of its own.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     iri = kg_decoder.decode(b"Named by its file.", store=store, file_name="notes.txt").document
    ...     [document_named(n, store) == iri for n in (iri, iri.rsplit(":", 1)[-1], "notes.txt", "old/notes.txt")]
    [True, True, True, True]
    >>> with kg_decoder.open_store(None) as store:
    ...     first = kg_decoder.decode(b"One.", store=store, file_name="a.txt", source_id="a").document
    ...     second = kg_decoder.decode(b"Two.", store=store, file_name="a.txt", source_id="a").document
    ...     [document_named(n, store) for n in ("a.txt", "a.txt@1", "a.txt@2")] == [second, first, second]
    True
    >>> with kg_decoder.open_store(None) as store:  # a third version, decoded from a file named otherwise
    ...     first = kg_decoder.decode(b"One.", store=store, file_name="a.txt", source_id="a").document
    ...     second = kg_decoder.decode(b"Two.", store=store, file_name="a.txt", source_id="a").document
    ...     third = kg_decoder.decode(b"Three.", store=store, file_name="b.txt", source_id="a").document
    ...     [document_named(n, store) for n in ("a.txt", "b.txt", "a.txt@3")] == [second, third, third]
    True
    """
    name = name.strip()
    if _UUID.fullmatch(name):
        name = f"urn:document:{name.lower()}"
    if is_iri(name) and store.has_document(name):
        return name
    if name.startswith("urn:"):
        raise UnknownEntity(f"no document {name[:200]} in the store")
    if read_files:
        path = Path(name)
        if path.is_file():
            iri = document_iri(sha256_hex(path.read_bytes()))
            if store.has_document(iri):
                return iri
            raise UnknownEntity(f"{name[:200]} has not been decoded into this store (its bytes are not there)")
    found = store.documents_named(_file_name(name)) if name else []
    numbered = _NUMBERED.fullmatch(name)
    if numbered and not found:
        return _numbered_version(store, numbered.group(1), int(numbered.group(2)), read_files)
    if len(found) == 1:
        return found[0]
    return _version_named(store, found, _file_name(name), None, name)


def _file_name(name: str) -> str:
    return name.replace("\\", "/").rsplit("/", 1)[-1]


def _numbered_version(store: KgStore, source: str, number: int, read_files: bool) -> str:
    """``SOURCE@N``: version N of a source named by its id, path or URL, else by its file's name."""
    try:
        rows = source_rows(store, source, read_files)
    except UnknownEntity:
        return _version_named(store, store.documents_named(_file_name(source)), _file_name(source), number,
                              f"{source}@{number}")
    for row in rows:
        if row.number == number:
            return row.document
    raise UnknownEntity(f"{source[:200]} has no version {number} (its versions: "
                        f"{', '.join(str(row.number) for row in rows)})")


_NUMBERED = re.compile(r"(.+)@(\d{1,9})")


def _version_named(store: KgStore, found: list[str], file_name: str, number: Optional[int], name: str) -> str:
    """The document of version ``number`` (None: the latest) of the one source whose versions the
    documents ``found`` decoded from ``file_name`` are; ambiguous-document when they are not one source's."""
    if not found:
        raise UnknownEntity(f"no document {name[:200]} in the store (give its IRI, the path or the name of its file)")
    versions_of = {document: store.versions.document_versions(document) for document in found}
    sources = {row.source for rows in versions_of.values() for row in rows}
    if number is not None and not sources:
        raise UnknownEntity(f"{file_name[:200]} is no source's version: it has no version {number}")
    if len(sources) != 1 or not all(versions_of.values()):
        raise RequestError(f"{len(found)} documents were decoded from files named {file_name[:200]} "
                           f"({len(sources)} sources): name one by its IRI ({', '.join(found[:5])})",
                           code="ambiguous-document", http_status=409)
    versions = store.versions.source_versions(sources.pop())
    if number is None:  # the latest of the versions decoded from a file of that name
        named = [row for row in versions if row.document in versions_of]
        chosen = [max(named, key=lambda row: row.number)] if named else []
    else:
        chosen = [row for row in versions if row.number == number]
    if not chosen:
        numbers = ", ".join(str(row.number) for row in versions)
        raise UnknownEntity(f"{file_name[:200]} has no version {number} (its versions: {numbers})")
    return chosen[0].document
