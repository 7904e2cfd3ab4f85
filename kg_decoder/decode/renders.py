"""The PDF a document of an Office format was rendered to (LibreOffice), kept beside the store in
``<store>/renders/<sha256>.pdf``: the page images of the trace view and the character boxes of a
trace come from the same rendering the decode placed the elements on. A remote store keeps them in
its local cache folder; a store in memory in a temporary folder while it is open. Renderings are
made when documents are decoded; a trace only reads them (without one its boxes are unverified).
When the file was lost, decoding the document again renders it again (LibreOffice lays out the
same document the same way), as does drawing one of its pages.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import threading
from typing import Optional

from ..graph.store import KgStore
from .office.backend import libreoffice_pdf, libreoffice_pdfs

_CONVERSIONS = threading.Lock()  # one LibreOffice at a time
_BATCH = 16  # documents per LibreOffice run when rendering ahead
_BATCH_SECONDS, _SECONDS_PER_DOCUMENT = 60.0, 30.0


def keep_rendering(store: KgStore, sha256: str, pdf: bytes) -> None:
    """Keep the rendering of the document with this content hash (written whole under a name of its
    own, then renamed: processes sharing a cache folder may keep the same rendering at once)."""
    path = _path(store, sha256)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, incoming = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".incoming")
    try:
        with os.fdopen(handle, "wb") as output:
            output.write(pdf)
        os.replace(incoming, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(incoming)
        raise


def kept_rendering(store: KgStore, sha256: str) -> Optional[str]:
    """Where the rendering of the document with this content hash is kept, if it is."""
    path = _path(store, sha256)
    return str(path) if path.is_file() else None


def render_ahead(store: KgStore, documents: list[tuple[str, bytes, str]]) -> int:
    """Render documents (sha256, bytes, format name) not yet kept, many to one LibreOffice run, and
    keep each rendering for the decode that follows; how many were rendered."""
    wanted = [(sha256, data, name) for sha256, data, name in documents if kept_rendering(store, sha256) is None]
    rendered = 0
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start:start + _BATCH]
        with _CONVERSIONS:
            pdfs = libreoffice_pdfs([(data, name) for _, data, name in batch],
                                    timeout=_BATCH_SECONDS + _SECONDS_PER_DOCUMENT * len(batch))
        for (sha256, _, _), pdf in zip(batch, pdfs):
            if pdf is not None:
                keep_rendering(store, sha256, pdf)
                rendered += 1
    return rendered


def rendering(store: KgStore, sha256: str, data: bytes, format_name: str) -> Optional[bytes]:
    """The document's rendering: the one kept beside the store, else rendered now (and kept)."""
    path = _path(store, sha256)
    if path.is_file():
        return path.read_bytes()
    with _CONVERSIONS:
        converted = libreoffice_pdf(data, format_name)
    if converted is not None:
        keep_rendering(store, sha256, converted)
    return converted


def _path(store: KgStore, sha256: str):
    return store.work_folder() / "renders" / f"{sha256}.pdf"


__all__ = ["keep_rendering", "kept_rendering", "render_ahead", "rendering"]
