"""Pages as pictures for the trace view, drawn by the document's format backend: PDF pages with
PDFium, image files as they are, Office documents through LibreOffice to PDF first (the PDF
cached in ``<store>/renders/``). Offline."""

from __future__ import annotations

import threading
from typing import Optional

from ..decode.backends import render_page, renders_pages
from ..decode.backends.office import libreoffice_pdf
from ..graph.store import KgStore
from ..model.errors import NotFound, UnknownEntity

RENDER_SCALE = 2.0  # pixels per PDF point: sharp enough to read, small enough to send
_CONVERSIONS = threading.Lock()


def page_image(store: KgStore, page: str) -> bytes:
    """A PNG of a page (by IRI): UnknownEntity for no such page, NotFound when its format has no
    pages to draw. Reads only (the PDF a conversion gives is cached beside the store).

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     page_image(store, "urn:page:none")
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.UnknownEntity: no page urn:page:none in the store
    """
    info = store.segment_info(page) if isinstance(page, str) and ":" in page else None
    if info is None or info.kind != "page":
        raise UnknownEntity(f"no page {str(page):.200} in the store")
    document = store.document_info(info.document)
    if not renders_pages(document.format):
        raise NotFound(f"pages of {document.format.upper()} documents cannot be drawn", code="no-rendering")
    data = store.blob(document.sha256, info.document)
    png = render_page(data, document.format, info.page_number or 1,
                      lambda raw, format_name: _converted(store, document.sha256, raw, format_name), RENDER_SCALE)
    if png is None:
        raise NotFound(f"page {info.page_number} of {info.document} could not be drawn", code="no-rendering")
    return png


def _converted(store: KgStore, sha256: str, data: bytes, format_name: str) -> Optional[bytes]:
    """The document as PDF (LibreOffice), from ``<store>/renders/`` when it was converted before."""
    cache = store.path / "renders" / f"{sha256}.pdf" if store.path is not None else None
    if cache is not None and cache.is_file():
        return cache.read_bytes()
    with _CONVERSIONS:  # one LibreOffice at a time
        converted = libreoffice_pdf(data, format_name)
    if converted is not None and cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temporary = cache.with_name(f".{cache.name}.incoming")
        temporary.write_bytes(converted)
        temporary.replace(cache)
    return converted
