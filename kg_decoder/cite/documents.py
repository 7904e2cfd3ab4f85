"""A document as a person names it: its IRI, the uuid at the end of it, the path of the file that
was decoded, or that file's name. One resolution for the command line and the web app."""

from __future__ import annotations

import re
from pathlib import Path

from ..graph.identifiers import document_iri
from ..graph.library import sha256_hex
from ..graph.store import KgStore
from ..graph.terms import is_iri
from ..model.errors import RequestError, UnknownEntity

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.IGNORECASE)


def document_named(name: str, store: KgStore, read_files: bool = True) -> str:
    """The IRI of the stored document ``name`` names; UnknownEntity if the store holds none.

    Tried in turn: a document IRI; the uuid at its end; with ``read_files``, the path of a file on
    this machine (its bytes hashed: the same bytes are the same document, whatever their name
    today); the file name the decode recorded (a path's last part, so a path that is not on this
    machine still names its file). A file name that names several documents (different bytes
    under one name) is refused with their IRIs (``ambiguous-document``, 409). A web server passes
    ``read_files=False``: a request never makes it read a file of its own.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     iri = kg_decoder.decode(b"Named by its file.", store=store, file_name="notes.txt").document
    ...     [document_named(n, store) == iri for n in (iri, iri.rsplit(":", 1)[-1], "notes.txt", "old/notes.txt")]
    [True, True, True, True]
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
    found = store.documents_named(name.replace("\\", "/").rsplit("/", 1)[-1]) if name else []
    if len(found) == 1:
        return found[0]
    if found:
        raise RequestError(f"{len(found)} documents were decoded from files named {name[:200]}: name one by its "
                           f"IRI ({', '.join(found[:5])})", code="ambiguous-document", http_status=409)
    raise UnknownEntity(f"no document {name[:200]} in the store (give its IRI, the path or the name of its file)")
