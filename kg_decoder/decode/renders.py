"""The PDF a document of an Office format was rendered to (LibreOffice), kept beside the store in
``<store>/renders/<sha256>.pdf``: the page images of the trace view and the character boxes of a
trace come from the same rendering the decode placed the elements on. A store in memory, or one
whose folder lost the file, renders again (LibreOffice lays out the same document the same way).
"""

from __future__ import annotations

import threading
from typing import Optional

from ..graph.store import KgStore
from .backends.office import libreoffice_pdf

_CONVERSIONS = threading.Lock()  # one LibreOffice at a time


def keep_rendering(store: KgStore, sha256: str, pdf: bytes) -> None:
    """Keep the rendering of the document with this content hash (written whole, then renamed)."""
    path = _path(store, sha256)
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    incoming = path.with_name(f".{path.name}.incoming")
    incoming.write_bytes(pdf)
    incoming.replace(path)


def rendering(store: KgStore, sha256: str, data: bytes, format_name: str) -> Optional[bytes]:
    """The document's rendering: the one kept beside the store, else rendered now (and kept)."""
    path = _path(store, sha256)
    if path is not None and path.is_file():
        return path.read_bytes()
    with _CONVERSIONS:
        converted = libreoffice_pdf(data, format_name)
    if converted is not None:
        keep_rendering(store, sha256, converted)
    return converted


def _path(store: KgStore, sha256: str):
    return store.path / "renders" / f"{sha256}.pdf" if store.path is not None else None


__all__ = ["keep_rendering", "rendering"]
