"""The format backends, one per family, and the registry of every format kg-decoder reads.

Everything the rest of the code knows of a format comes from here: its MIME types and
extensions, whether it is page-based or text-based, how it is partitioned, where its pictures
and embedded files are, and whether its pages can be drawn.

    >>> backend_for("pptx").family
    'ooxml'
    >>> FORMATS["xlsx"].page_based and renders_pages("xlsx") and not renders_pages("html")
    True
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from typing import Optional

from ...model import NO_TEXT_FOUND, DecodeOptions, Element, PageText, Partitioned, Problem, ProgressCallback
from ...model.errors import UnsupportedFormat
from ...patches.unstructured import spacy_pipeline
from ..embedded import EmbeddedFile
from ..image_text import PicturesReadAhead, read_image_texts
from ..author_lines import retype_author_lines
from ..ligatures import unligate
from ..images import merge_by_position
from ..offline import prepare
from ..processes import THREADS_VARIABLE
from .base import Backend, Format, PdfConverter, PicturesAhead
from .image import ImageBackend
from .json_structure import JsonBackend
from ..office.legacy import LegacyOfficeBackend
from .mail import EmailBackend
from .markup import MarkupBackend
from ..office.ooxml import OoxmlBackend
from ..pdf.backend import PdfBackend
from .text import TextBackend

BACKENDS: tuple[Backend, ...] = (PdfBackend(), ImageBackend(), OoxmlBackend(), LegacyOfficeBackend(),
                                 MarkupBackend(), TextBackend(), JsonBackend(), EmailBackend())
FORMATS: dict[str, Format] = {fmt.name: fmt for backend in BACKENDS for fmt in backend.formats}
BY_MIME: dict[str, Format] = {mime: fmt for fmt in FORMATS.values() for mime in (fmt.mime, *fmt.aliases)}
BY_EXTENSION: dict[str, Format] = {ext: fmt for fmt in FORMATS.values() for ext in fmt.extensions}
_BACKEND_OF: dict[str, Backend] = {fmt.name: backend for backend in BACKENDS for fmt in backend.formats}


def backend_for(format_name: str) -> Backend:
    try:
        return _BACKEND_OF[format_name]
    except KeyError:
        raise UnsupportedFormat(f"no backend for format {format_name!r}") from None


def format_for_mime(mime: str) -> Format:
    """The format a MIME type names (the caller's "library kind").

    >>> format_for_mime("application/pdf; charset=binary").name
    'pdf'
    """
    base = mime.split(";")[0].strip().lower()
    if base in BY_MIME:
        return BY_MIME[base]
    raise UnsupportedFormat(f"unsupported MIME type {base!r:.100}")


def refuse_unreadable(data: bytes, format_name: str, password: Optional[str] = None) -> None:
    """Raise a DecodeError for a file of ``format_name`` its readers certainly cannot open (a truncated
    PDF), found at little cost before a worker is started for it (:meth:`Backend.refuse_unreadable`)."""
    backend_for(format_name).refuse_unreadable(data, FORMATS[format_name], password)


def partition_document(data: bytes, format_name: str, options: DecodeOptions,
                       progress: Optional[ProgressCallback] = None, rendered: Optional[bytes] = None) -> Partitioned:
    """Partition ``data`` (already known to be ``format_name``) into elements, pictures included.

    A picture that cannot be read must not cost the document its text: a failure of the
    picture finder leaves the text elements as they are and is recorded as a warning.
    ``rendered``: the document's rendering, made ahead, for the formats placed on one. Pictures
    are then read by OCR (``options.image_ocr``), within what is left of the time limit. A document
    with pages or parts but no text is kept as it is, with the warning "no text found".
    """
    started = time.monotonic()
    fmt = FORMATS[format_name]
    backend = backend_for(format_name)
    # The rendering the elements are placed on is made while they are found (LibreOffice is a process
    # of its own): a long document's rendering then costs little more than reading it.
    pending = backend.start_rendering(data, fmt, options) if rendered is None else None
    found_ahead = _pictures_ahead(backend, data, fmt, options)
    # Their OCR goes on in a thread while the document is partitioned.
    ahead = PicturesReadAhead(found_ahead.to_read, options, started) if found_ahead and found_ahead.to_read else None
    try:
        partitioned = backend.partition(data, fmt, options, progress)
        try:
            merged = (backend.images(data, fmt, partitioned.elements, partitioned.pages) if found_ahead is None
                      else merge_by_position(partitioned.elements, found_ahead.pictures))
        except Exception as exc:  # format libraries raise anything on odd pictures: keep the text
            partitioned.problems.append(Problem.of("pictures-not-read", "the pictures could not be read", exc))
        else:
            partitioned.elements = [replace(element, index=i) for i, element in enumerate(merged)]
        backend.place(data, fmt, partitioned, options, rendered if rendered is not None else pending)
    except BaseException:
        if ahead is not None:
            ahead.stop()
        raise
    finally:
        if pending is not None:
            pending.cancel()
    read_image_texts(partitioned, options, started, ahead)
    unligate(partitioned)  # the letters every other reader gives, before any text is assembled
    retype_author_lines(partitioned.elements)  # names are no headings: before sections are built
    if not any(element.text.strip() for element in partitioned.elements if not element.is_image):
        partitioned.warnings.append(_no_text_warning(partitioned))
    return partitioned


def _pictures_ahead(backend: Backend, data: bytes, fmt: Format, options: DecodeOptions) -> Optional[PicturesAhead]:
    """The pictures the backend finds before the partition, when they are to be read; None: found after
    it (a failure here is met again, and reported, by :meth:`Backend.images`)."""
    if options.image_ocr == "off":
        return None
    try:
        return backend.pictures_ahead(data, fmt)
    except Exception:
        return None


def _no_text_warning(partitioned: Partitioned) -> str:
    """What a document with pages or parts but no text keeps, said in its warning."""
    pictures = [e for e in partitioned.elements if e.is_image]
    read = sum(1 for e in pictures if e.image_text is not None and e.image_text.text.strip())
    kept = [_counted(len(partitioned.pages), "page")] if partitioned.pages else ["the document"]
    kept += [_counted(len(pictures), "picture")] if pictures else []
    said = f"{NO_TEXT_FOUND}; kept: {' and '.join(kept)}"
    return said + (f"; OCR read words in {_counted(read, 'picture')}" if read else "")


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def embedded_files(data: bytes, format_name: str, budget: int) -> list[EmbeddedFile]:
    """The files inside a document of ``format_name``, reading at most ``budget`` bytes."""
    return backend_for(format_name).embedded_files(data, FORMATS[format_name], budget)


def renders_pages(format_name: str) -> bool:
    """Whether pages of this format can be drawn for the trace view."""
    fmt = FORMATS.get(format_name)
    return fmt is not None and backend_for(format_name).renders_pages(fmt)


def render_page(data: bytes, format_name: str, page_number: int, as_pdf: PdfConverter,
                scale: float) -> Optional[bytes]:
    """A PNG of one page of a document, or None (no such page, or the format has no pages to draw)."""
    if not renders_pages(format_name):
        return None
    return backend_for(format_name).render_page(data, FORMATS[format_name], page_number, as_pdf, scale)


def page_text(data: bytes, format_name: str, page_number: int,
              rendered: Optional[bytes] = None) -> Optional[PageText]:
    """The characters one page of a document shows, with their boxes (see :meth:`Backend.page_text`);
    None when nothing can be read there."""
    fmt = FORMATS.get(format_name)
    return backend_for(format_name).page_text(data, fmt, page_number, rendered) if fmt is not None else None


def warm_up_decoding() -> None:
    """A decoding worker's start: offline first, then every backend's parsers and the spaCy model loaded,
    the layout model kept to the worker's share of the CPUs, tesseract to one thread."""
    # tesseract's OpenMP threads read the same words for 2.3 times the CPU (pictures of the ICDAR set:
    # 13.0 against 5.6 CPU-seconds) and took longer on a busy machine, not shorter.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    prepare()
    warm_up(int(os.environ[THREADS_VARIABLE]) if os.environ.get(THREADS_VARIABLE) else None)


def warm_up(threads: Optional[int] = None) -> None:
    """Import every backend's parsers and load the spaCy model once, before the first document;
    ``threads``: this process's share of the CPUs, which the layout model keeps to (None: all)."""
    from ..tables.pdf_pages import limit_threads

    limit_threads(threads)
    for backend in BACKENDS:
        backend.warm_up()
    spacy_pipeline()


__all__ = ["BACKENDS", "BY_EXTENSION", "BY_MIME", "Backend", "Element", "FORMATS", "Format", "backend_for",
           "embedded_files", "format_for_mime", "page_text", "partition_document", "refuse_unreadable",
           "render_page", "renders_pages",
           "warm_up", "warm_up_decoding"]
