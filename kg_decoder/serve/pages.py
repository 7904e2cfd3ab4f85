"""Pages as pictures for the trace view, drawn by the document's format backend: PDF pages with
PDFium, image files as they are, Office documents through LibreOffice to PDF first (the PDF
cached in ``<store>/renders/``). Offline."""

from __future__ import annotations

from ..decode.backends import render_page, renders_pages
from ..decode.renders import rendering
from ..graph.store import KgStore
from ..model.errors import NotFound, UnknownEntity

RENDER_SCALE = 2.0  # pixels per PDF point: sharp enough to read, small enough to send


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
                      lambda raw, format_name: rendering(store, document.sha256, raw, format_name), RENDER_SCALE)
    if png is None:
        raise NotFound(f"page {info.page_number} of {info.document} could not be drawn", code="no-rendering")
    return png


def rendered_page_image(store: KgStore, document: str, page_number: int) -> bytes:
    """A PNG of a page of the rendering a document's elements were placed on (UnknownEntity for no
    such document, NotFound when it has no rendering or no such page)."""
    about = store.document_info(document) if isinstance(document, str) and ":" in document else None
    if about is None:
        raise UnknownEntity(f"no document {str(document):.200} in the store")
    run = store.rendering_run(document)
    if run is None or not 1 <= page_number <= run.rendered_page_count:
        raise NotFound(f"{document} has no rendered page {page_number}", code="no-rendering")
    pdf = rendering(store, about.sha256, store.blob(about.sha256, document), about.format)
    png = render_page(pdf, "pdf", page_number, lambda raw, name: raw, RENDER_SCALE) if pdf is not None else None
    if png is None:
        raise NotFound(f"page {page_number} of the rendering of {document} could not be drawn", code="no-rendering")
    return png

