"""From a document's bytes to its quads and library blobs: the CPU-bound part of a decode.

partition (or the parse cache) -> group -> assemble -> map to RDF, serialised as N-Quads.
It runs in the worker (``kg_decoder.decode.worker``), so the process that owns the
store (the web server above all) only commits the result: its threads answering
queries never wait behind a decode's Python work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from datetime import datetime, timezone
from typing import Callable, Optional, Union

from ..graph.identifiers import document_iri
from ..graph.library import sha256_hex
from ..graph.mapping import DocumentRecord, document_quads
from ..graph.quads import as_nquads
from ..graph.run_mapping import EmbeddingLink, WebFetch, origin_quads
from ..model import (DecodeOptions, DecodeResult, DecodeStatus, Element, ElementOffset, PartitionSource,
                     Partitioned, ProgressCallback, TextDocument, report)
from .assembly import assemble, element_text
from .backends import FORMATS, partition_document
from .grouping import complete_pages, group
from .image_text import TIME_LIMIT_SKIP
from .parse_cache import PartitionCache
from .tables.matrix import table_matrix


@dataclass
class DocumentJob:
    """What the worker needs besides the bytes: identity, settings, and where the parse cache is."""

    sha256: str
    byte_size: int
    format_name: str
    file_name: Optional[str]
    options: DecodeOptions
    versions: dict[str, str]
    cache_folder: Optional[str]  # None: partition without the cache
    origin: Union[EmbeddingLink, WebFetch, None] = None
    # The document's rendering when one was made ahead (see ``renders.render_ahead``), else None.
    rendered: Optional[str] = None


@dataclass
class BuiltDocument:
    nquads: bytes
    quad_count: int
    # The library's new content (page/section texts, images); the original bytes are the caller's.
    blobs: dict[str, bytes]
    result: DecodeResult
    # The PDF the document was rendered to for its elements' positions (kept beside the store).
    rendering: Optional[bytes] = None


def build_document(plain: bytes, job: DocumentJob, progress: Optional[ProgressCallback] = None,
                   partition: Optional[Callable[[bytes, str, DecodeOptions], Partitioned]] = None) -> BuiltDocument:
    """Partition ``plain`` (reusing the parse cache) and map it; ``partition`` replaces the partitioner."""
    started = datetime.now(timezone.utc)
    fmt, options = FORMATS[job.format_name], job.options
    partitioned, source = _partitioned(plain, job, progress, partition)
    # A format that is not page-based groups by the pages its file knows (a DOCX's last recorded
    # layout) when sections are asked for within pages.
    page_based = fmt.page_based or (options.section_within_pages and partitioned.page_numbers_from is not None)
    if partitioned.page_numbers_from is not None:
        _carry_page_numbers(partitioned.elements)
    pages = complete_pages(partitioned.elements, partitioned.pages) if page_based else []
    report(progress, "partition", 1, 1, f"{len(partitioned.elements)} elements"
           + (f" on {len(pages)} pages" if pages else "")
           + (", from the parse cache" if source == PartitionSource.PARSE_CACHE else ", partitioned"))
    for element in partitioned.elements:
        if element.is_table:
            element.table = table_matrix(element, element_text(element))
            for cell in element.table.cells if element.cell_places else ():
                cell.bbox, cell.confidence = element.cell_places.get((cell.row, cell.column), (None, None))
    segments = group(partitioned.elements, pages, page_based, options)
    report(progress, "group", 1, 1, f"{len(segments)} pages and sections")
    document_text = assemble(segments, partitioned.elements)
    segment_bytes = [s.text.encode("utf-8") for s in segments]
    segment_sha256 = [sha256_hex(b) for b in segment_bytes]
    iri = document_iri(job.sha256)
    record = DocumentRecord(
        iri=iri,
        sha256=job.sha256,
        byte_size=job.byte_size,
        format=fmt.name,
        mime_type=fmt.mime,
        file_name=job.file_name,
        title=partitioned.title or _title(partitioned.elements, job.file_name),
        options=options,
        strategy=partitioned.strategy or "native",
        elements=partitioned.elements,
        pages={p.number: p for p in pages},
        segments=segments,
        segment_sha256=segment_sha256,
        document_text_length=len(document_text),
        started=started,
        ended=datetime.now(timezone.utc),
        versions=job.versions,
        page_based=page_based,
        warnings=list(partitioned.warnings),
        # in the order the store reads them back (decode_problems.rq), so an unchanged decode's are the same
        problems=sorted(partitioned.problems, key=lambda p: (p.page_number is not None, p.page_number or 0, p.code,
                                                             p.message)),
        rendering=partitioned.rendering,
        page_numbers_from=partitioned.page_numbers_from,
    )
    image_blobs = _image_blobs(record, options) | _image_text_blobs(record)
    mapped, origin = document_quads(record), origin_quads(iri, job.origin) if job.origin else []
    quad_count = len(mapped) + len(origin)
    report(progress, "map", 1, 1, f"{quad_count} quads")
    result = _result(record, partitioned, quad_count)
    result.partition_source = source
    return BuiltDocument(nquads=mapped.nquads() + as_nquads(origin), quad_count=quad_count,
                         blobs=dict(zip(segment_sha256, segment_bytes)) | image_blobs, result=result,
                         rendering=partitioned.rendering.pdf if partitioned.rendering else None)


def _carry_page_numbers(elements: list[Element]) -> None:
    """Elements the partitioner gave no page (pictures, found apart from the text) are on the page of
    the element before them, or of the first element with a page."""
    first = next((e.page_number for e in elements if e.page_number is not None), None)
    current = first
    for element in elements:
        if element.page_number is None:
            element.page_number = current
        else:
            current = element.page_number


def _partitioned(plain: bytes, job: DocumentJob, progress: Optional[ProgressCallback],
                 partition: Optional[Callable]) -> tuple[Partitioned, PartitionSource]:
    cache = PartitionCache(job.cache_folder) if job.cache_folder else None
    key = cache.key(job.sha256, job.format_name, job.options, job.versions) if cache else None
    found = cache.get(key) if cache else None
    if found is not None:
        return found, PartitionSource.PARSE_CACHE
    report(progress, "partition", 0, 1, f"partition the {job.format_name.upper()} file")
    if partition is None:
        rendered = Path(job.rendered).read_bytes() if job.rendered and Path(job.rendered).is_file() else None
        partitioned = partition_document(plain, job.format_name, job.options, progress, rendered)
    else:
        partitioned = partition(plain, job.format_name, job.options)
    if cache and not partitioned.problems and not any(TIME_LIMIT_SKIP in (e.image_text_skipped or "")
                                                      for e in partitioned.elements):
        cache.put(key, partitioned)  # a partition the clock cut short, or a reading failed in, may go better
    return partitioned, PartitionSource.PARTITIONED


def _image_blobs(record: DocumentRecord, options: DecodeOptions) -> dict[str, bytes]:
    """The bytes of each image within the limits (noted on the record); the others get a skip reason."""
    blobs: dict[str, bytes] = {}
    for element in record.elements:
        if not element.is_image or element.image_data is None:
            continue
        pixels = (element.image_width or 0) * (element.image_height or 0)
        if len(element.image_data) > options.max_image_bytes:
            record.image_skipped[element.index] = (f"{len(element.image_data)} bytes, over the limit of "
                                                   f"{options.max_image_bytes}")
        elif pixels > options.max_image_pixels:
            record.image_skipped[element.index] = f"{pixels} pixels, over the limit of {options.max_image_pixels}"
        else:
            key = sha256_hex(element.image_data)
            record.image_sha256[element.index] = key
            blobs[key] = element.image_data
    return blobs


def _image_text_blobs(record: DocumentRecord) -> dict[str, bytes]:
    """The OCR text of each picture that has one, for the library (noted on the record)."""
    blobs: dict[str, bytes] = {}
    for image in record.image_texts():
        data = image.image_text.text.encode("utf-8")
        key = sha256_hex(data)
        record.image_text_sha256[image.index] = key
        blobs[key] = data
    return blobs


# A title element read with less confidence than this (OCR unsure of its words, a text layer doubted for
# its implausible words) names no document: the next title does, or the file name.
TITLE_CONFIDENCE = 0.8


def _title(elements: list[Element], file_name: Optional[str]) -> Optional[str]:
    for element in elements:
        if element.category == "Title" and element.text.strip() and (
                element.confidence is None or element.confidence >= TITLE_CONFIDENCE):
            return element.text.strip()[:300]
    return file_name


def _result(record: DocumentRecord, partitioned: Partitioned, quad_count: int) -> DecodeResult:
    text_documents = [
        TextDocument(
            iri=record.segment_iris[s.index],
            document=record.iri,
            kind=s.kind,
            page_number=s.page_number,
            text=s.text,
            char_offset=s.char_offset,
            char_length=len(s.text),
            element_offsets=[ElementOffset(record.element_iris[span.element], span.offset, span.length)
                             for span in s.spans],
        )
        for s in record.segments
        if s.carries_text
    ] + [
        TextDocument(
            iri=record.image_text_iri(image.index),
            document=record.iri,
            kind="image",
            page_number=image.page_number,
            text=image.image_text.text,
            char_offset=None,
            char_length=len(image.image_text.text),
            element_offsets=[ElementOffset(record.ocr_word_iri(image.index, k), word.start, len(word.text))
                             for k, word in enumerate(image.image_text.words)],
            derived_from=record.element_iris[image.index],
        )
        for image in record.image_texts() if record.image_text_skipped(image) is None
    ]
    elements = partitioned.elements
    return DecodeResult(
        document=record.iri,
        file_name=record.file_name,
        format=record.format,
        mime_type=record.mime_type,
        status=DecodeStatus.PARTIAL if record.problems else DecodeStatus.DECODED,
        strategy=record.strategy,
        pages=sum(1 for s in record.segments if s.kind == "page"),
        sections=sum(1 for s in record.segments if s.kind == "section"),
        elements=sum(1 for e in elements if not e.is_image),
        tables=sum(1 for e in elements if e.is_table),
        images=sum(1 for e in elements if e.is_image),
        quads=quad_count,
        text_documents=text_documents,
        warnings=list(record.warnings),
        problems=list(record.problems),
    )


__all__ = ["BuiltDocument", "DocumentJob", "build_document"]
