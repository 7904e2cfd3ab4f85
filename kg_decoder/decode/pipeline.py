"""Decode one document into the store: the pipeline from bytes to quads.

read -> detect -> partition, group, assemble, map (in the worker) -> write (one transaction),
then the embedded files, each a document of its own. A failure at any step raises a typed
DecodeError and leaves the store as it was.
"""

from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO, Optional, Union

from ..graph.identifiers import document_iri
from ..graph.library import sha256_hex
from ..graph.quads import activity_iri, agent_iri
from ..graph.run_mapping import (EmbeddingLink, FailureRecord, WebFetch, failure_quads, origin_quads,
                                 other_name_quads)
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import (DecodeOptions, DecodeResult, DecodeStatus, ElementOffset, EmbeddedResult, ProgressCallback,
                     TextDocument, options_from, report)
from ..model.errors import (CorruptDocument, DecodeError, DocumentTooLarge, EmptyDocument, EncryptedDocument,
                            InvalidOption, KgDecoderError, StoreError, UnreadableFile, UnsupportedFormat, error_class)
from .backends import FORMATS, Format, embedded_files, refuse_unreadable
from .office.backend import RENDERED_FOR_POSITIONS
from .build import DocumentJob
from .embedded import over_budget
from .engines import decode_versions
from .formats import decrypt_office, detect_format
from .renders import keep_rendering, kept_rendering, render_ahead, rendering
from .worker import PartitionWorker, shared_worker

Source = Union[str, os.PathLike, bytes, bytearray, BinaryIO]
_AHEAD_BATCH = 16  # files read and rendered together ahead of their decodes


def read_source(source: Source, max_bytes: int) -> tuple[bytes, Optional[str]]:
    """The bytes of a path, bytes or binary file object, and a file name if there is one."""
    if isinstance(source, (bytes, bytearray)):
        data, name = bytes(source), None
    elif isinstance(source, (str, os.PathLike)):
        try:
            path = Path(source)
            size = path.stat().st_size
            is_file = path.is_file()
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            raise UnreadableFile(f"cannot read {str(source)[:200]!r}: {getattr(exc, 'strerror', None) or exc}") from None
        if not is_file:
            raise UnreadableFile(f"{path} is not a file")
        if size > max_bytes:
            raise DocumentTooLarge(f"the file has {size} bytes, over the limit of {max_bytes}")
        try:
            data, name = path.read_bytes(), path.name
        except OSError as exc:
            raise UnreadableFile(f"cannot read {path}: {exc.strerror or exc}") from None
    elif hasattr(source, "read"):
        try:
            data = source.read(max_bytes + 1)
        except (OSError, ValueError) as exc:
            raise InvalidOption(f"cannot read the file object: {exc}") from None
        if not isinstance(data, bytes):
            raise InvalidOption("the file object must be opened in binary mode")
        name = os.path.basename(str(getattr(source, "name", "") or "")) or None
    else:
        raise InvalidOption(f"cannot decode a {type(source).__name__}: give a path, bytes or a binary file")
    if len(data) > max_bytes:
        raise DocumentTooLarge(f"the file has more than {max_bytes} bytes, the limit")
    return data, name


@with_store(read_only=False, create=True)
def decode(
    source: Source,
    *,
    store: Union[KgStore, StorePath],
    options: Optional[DecodeOptions] = None,
    file_name: Optional[str] = None,
    worker: Optional[PartitionWorker] = None,
    record_failure: bool = False,
    partition_cache: bool = True,
    progress: Optional[ProgressCallback] = None,
    fetched: Optional[WebFetch] = None,
    retry_partial: bool = False,
    source_id: Optional[str] = None,
    **option_values,
) -> DecodeResult:
    """Decode a document (path, bytes or binary file object) into ``store``.

    ``options`` is a :class:`DecodeOptions`; its fields may also be given as keywords
    (strategy, section_strategy, mime_type, password...). Transactional: the document is
    written in one transaction, and each embedded file in one of its own. On bad input a
    :class:`DecodeError` subclass is raised and the store is left exactly as it was, unless
    ``record_failure`` asks for a tg:FailedDecoding record of the attempt (no document, no
    bytes; the CLI does this). ``partition_cache`` reuses an earlier partitioning of the same
    bytes with the same partition settings and versions (``<store>/partition-cache/``).
    ``progress`` is called with a :class:`Progress` at each stage. ``fetched`` records where
    on the web the bytes came from (the crawler passes it). ``retry_partial`` decodes again bytes the
    store holds a partial decode of (a reading failed: LibreOffice missing, OCR out of memory), which
    would otherwise answer "unchanged".

    ``source_id`` is checked here; the version of its source a decode is, is recorded by the stage above,
    :func:`kg_decoder.versions.decode` (``kg_decoder.decode``), which every caller uses.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     result = decode(b"Hello, provenance.", store=store, file_name="hello.txt")
    ...     (result.status, result.format, result.text_documents[0].text)
    ('decoded', 'text', 'Hello, provenance.')
    """
    settings = options_from(DecodeOptions, options, option_values)
    if source_id is not None and (not isinstance(source_id, str) or not source_id.strip() or len(source_id) > 4096):
        raise InvalidOption("a source id is non-empty text of at most 4096 characters")
    data, found_name = read_source(source, settings.max_bytes)
    file_name = file_name or found_name
    report(progress, "read", 1, 1, f"read {len(data)} bytes")
    started = datetime.now(timezone.utc)
    try:
        try:
            fmt = _detect(data, file_name, settings.mime_type)
            plain = data
        except EncryptedDocument:
            if not settings.password or settings.mime_type:
                raise
            plain = decrypt_office(data, settings.password)
            fmt = _detect(plain, file_name)
        report(progress, "detect", 1, 1, f"detected {fmt.name} ({fmt.mime})")
        sha256 = sha256_hex(data)
        result = _decode_bytes(data, plain, sha256, fmt, file_name, settings, store, worker, partition_cache,
                               progress, origin=fetched, retry_partial=retry_partial)
    except DecodeError as error:
        if record_failure:
            try:
                _record_failure(store, data, file_name, settings, error, started)
            except StoreError:
                pass  # the decode's own error is the one to report
        raise
    if settings.embedded_depth > 0:
        parent = _Parent(result.document, activity_iri(sha256, settings, decode_versions()), 1)
        result.embedded = _decode_embedded(parent, plain, fmt, settings, store, worker, partition_cache,
                                           [settings.max_embedded_bytes], progress)
    return result


def path_source_id(source: Source) -> Optional[str]:
    """The source a file is a version of: its absolute path (the same source from any folder); None for
    bytes and file objects."""
    if isinstance(source, (str, os.PathLike)):
        return str(Path(source).resolve())
    return None


@dataclass
class _Parent:
    document: str
    activity: str
    depth: int  # the depth its embedded files are at


def _decode_embedded(parent: _Parent, plain: bytes, fmt: Format, settings: DecodeOptions, store: KgStore,
                     worker: Optional[PartitionWorker], use_cache: bool, budget: list[int],
                     progress: Optional[ProgressCallback]) -> list[EmbeddedResult]:
    """Decode each file embedded in a stored document as its own document, linked to the parent.

    Every child is its own transaction: one that fails (a ZIP bomb, a damaged file) is
    recorded as a failed decoding informed by the parent's decoding, and the others go on.
    ``budget`` is the byte allowance left for all embedded files of the top document.
    """
    try:
        found = embedded_files(plain, fmt.name, budget[0])
    except Exception as exc:  # the parent is stored already: a reader's slip here must not undo the decode
        return [EmbeddedResult(path="embedded files", name=None, depth=parent.depth,
                               error=CorruptDocument(f"the embedded files could not be read: {exc}"))]
    if not found:
        return []
    pages = {page.page_number: page.page for page in store.document_pages(parent.document)}
    elements = _elements_by_text(store, parent.document) if any(item.anchor_text for item in found) else {}
    child_settings = replace(settings, mime_type=None, password=None)
    results = []
    for number, item in enumerate(found, start=1):
        report(progress, "embedded files", number - 1, len(found), f"decode {item.name or item.path}")
        entry = EmbeddedResult(path=item.path, name=item.name, depth=parent.depth)
        results.append(entry)
        if item.data is not None and len(item.data) > budget[0]:  # deeper files spent the budget meanwhile
            item.problem = over_budget(item, len(item.data), budget[0])
        if item.problem is not None:
            entry.error = item.problem
            continue
        budget[0] -= len(item.data)
        link = EmbeddingLink(parent=parent.document, page=pages.get(item.page_number), path=item.path,
                             element=elements.get(item.anchor_text))
        started = datetime.now(timezone.utc)
        child_sha256 = sha256_hex(item.data)
        try:
            child_format = _detect(item.data, item.name)
            entry.result = _decode_bytes(item.data, item.data, child_sha256, child_format, item.name, child_settings,
                                         store, worker, use_cache, origin=link)
        except DecodeError as error:
            entry.error = error
            try:
                _record_failure(store, item.data, item.name, child_settings, error, started,
                                informed_by=parent.activity)
            except StoreError:
                pass
            continue
        if parent.depth < settings.embedded_depth:
            child = _Parent(entry.result.document, activity_iri(child_sha256, child_settings, decode_versions()),
                            parent.depth + 1)
            entry.result.embedded = _decode_embedded(child, item.data, child_format, settings, store, worker,
                                                     use_cache, budget, progress)
    report(progress, "embedded files", len(found), len(found), f"{len(found)} embedded files")
    return results


def _detect(data: bytes, file_name: Optional[str], mime_type: Optional[str] = None) -> Format:
    """The format of ``data``; a reader that fails on hostile bytes (python-magic, zipfile, olefile,
    json) is a CorruptDocument, not an untyped exception."""
    try:
        return detect_format(data, file_name, mime_type)
    except DecodeError:
        raise
    except Exception as exc:  # the libraries that look inside containers raise anything on odd bytes
        raise CorruptDocument(f"the file could not be identified: {type(exc).__name__}: {str(exc)[:200]}") from None


def _elements_by_text(store: KgStore, document: str) -> dict[str, str]:
    """A document's elements by their text, for the texts only one element has."""
    found: dict[str, list[str]] = {}
    for row in store.document_elements(document):
        if row.text:
            found.setdefault(row.text.strip(), []).append(row.element)
    return {text: iris[0] for text, iris in found.items() if len(iris) == 1}


def _record_failure(store: KgStore, data: bytes, file_name: Optional[str], options: DecodeOptions,
                    error: DecodeError, started: datetime, informed_by: Optional[str] = None) -> None:
    sha256 = sha256_hex(data)
    record = FailureRecord(sha256=sha256, byte_size=len(data), file_name=file_name, options=options,
                           code=error.code, message=error.message, started=started,
                           ended=datetime.now(timezone.utc), versions=decode_versions(),
                           informed_by=informed_by)
    store.write_failure(record.iri, failure_quads(record, document_iri(sha256)))


def _decode_bytes(data: bytes, plain: bytes, sha256: str, fmt: Format, file_name: Optional[str],
                  options: DecodeOptions, store: KgStore, worker: Optional[PartitionWorker], use_cache: bool = True,
                  progress: Optional[ProgressCallback] = None,
                  origin: Union[EmbeddingLink, WebFetch, None] = None, retry_partial: bool = False) -> DecodeResult:
    """Decode ``plain`` (``data`` itself, or its decrypted form); the document is ``data`` (``sha256``).

    ``origin`` (the parent an embedded file sits in, or a web fetch) is written with the
    document, or alone when the store already holds the document.
    """
    with _one_decode_of(sha256):
        return _decode_new_bytes(data, plain, sha256, fmt, file_name, options, store, worker, use_cache, progress,
                                 origin, retry_partial)


_in_flight: dict[str, list] = {}  # sha256 -> [lock, holders]: one decode of the same bytes at a time
_in_flight_lock = threading.Lock()


@contextlib.contextmanager
def _one_decode_of(sha256: str):
    """Decodes of the same bytes in this process one after the other (parallel decodes of a copied
    file): the second then finds the first's document, as it would one after the other."""
    with _in_flight_lock:
        entry = _in_flight.setdefault(sha256, [threading.Lock(), 0])
        entry[1] += 1
    try:
        with entry[0]:
            yield
    finally:
        with _in_flight_lock:
            entry[1] -= 1
            if entry[1] == 0:
                del _in_flight[sha256]


def _decode_new_bytes(data: bytes, plain: bytes, sha256: str, fmt: Format, file_name: Optional[str],
                      options: DecodeOptions, store: KgStore, worker: Optional[PartitionWorker], use_cache: bool,
                      progress: Optional[ProgressCallback],
                      origin: Union[EmbeddingLink, WebFetch, None], retry_partial: bool = False) -> DecodeResult:
    iri = document_iri(sha256)
    versions = decode_versions()
    states = store.document_states(iri)
    refusal = _held_refusal(store, iri, options, versions, file_name) if not states else None
    if refusal is not None:
        raise refusal
    if _held(store, iri, activity_iri(sha256, options, versions), file_name, states, retry_partial):
        if file_name and file_name not in {state.file_name for state in states} and \
                iri not in store.documents_named(file_name):
            # The same bytes under another name: the document keeps its first name, this one is
            # recorded beside it (the document is found by either).
            store.write_quads(other_name_quads(iri, file_name))
        if origin is not None:  # a later fetch replaces the earlier one's time, status and validators
            store.write_origin(iri, origin_quads(iri, origin), new_fetch=isinstance(origin, WebFetch))
        if options.rendered_positions and kept_rendering(store, sha256) is None and store.rendering_run(iri):
            rendering(store, sha256, plain, fmt.name)  # lost from beside the store: a trace reads it, never makes it
        report(progress, "done", 1, 1, "unchanged: the store already holds this decode")
        return stored_result(store, iri, file_name)

    refuse_unreadable(plain, fmt.name, options.password)  # before a worker is started for it
    cache = str(store.path / "partition-cache") if use_cache and store.path is not None else None
    job = DocumentJob(sha256=sha256, byte_size=len(data), format_name=fmt.name, file_name=file_name,
                      options=options, versions=versions, cache_folder=cache, origin=origin,
                      rendered=kept_rendering(store, sha256) if options.rendered_positions else None)
    built = (worker or shared_worker()).build_document(plain, job, progress)  # started only when needed
    earlier_failure = store.document_failure(iri) is not None
    report(progress, "write quads", 0, built.quad_count, f"write {built.quad_count} quads in one transaction")
    store.write_document(iri, built.nquads, {sha256: data} | built.blobs, replace=bool(states) or earlier_failure)
    if built.rendering is not None:
        keep_rendering(store, sha256, built.rendering)
    report(progress, "write quads", built.quad_count, built.quad_count, f"wrote {built.quad_count} quads")
    report(progress, "done", 1, 1, "decoded")
    return built.result


def needs_worker(path: Path, store: KgStore, options: DecodeOptions, retry_partial: bool = False) -> bool:
    """Whether decoding the file at ``path`` needs a decoding worker: not when ``store`` holds its decode
    with these settings and versions (it answers "unchanged"), nor when the file is refused before it is
    read (it cannot be read or identified) or was refused as it is now (a recorded refusal of the same
    bytes, name, settings and versions: an encrypted PDF, a damaged file), nor when it is found unreadable
    at little cost (a truncated PDF: :func:`~kg_decoder.decode.backends.refuse_unreadable`)."""
    try:
        data, file_name = read_source(path, options.max_bytes)
        fmt = _detect(data, file_name, options.mime_type)
    except EncryptedDocument:
        return bool(options.password)  # an encrypted Office file is decrypted and read with the password
    except KgDecoderError:
        return False
    sha256 = sha256_hex(data)
    iri = document_iri(sha256)
    versions = decode_versions()
    states = store.document_states(iri)
    if not states and _held_refusal(store, iri, options, versions, file_name) is not None:
        return False
    if states and _held(store, iri, activity_iri(sha256, options, versions), file_name, states, retry_partial):
        return False
    try:  # refused before a worker is needed (a truncated PDF)
        refuse_unreadable(data, fmt.name, options.password)
    except KgDecoderError:
        return False
    return True


def _held(store: KgStore, iri: str, activity: str, file_name: Optional[str], states: list,
          retry_partial: bool) -> bool:
    """Whether the store holds this decode (its activity, under this file name or another: the same
    bytes are the same document whatever their name), and it is not a partial one to be tried again."""
    if not any(state.activity == activity for state in states):
        return False
    return not (retry_partial and store.decode_problems(iri))


# Refusals the bytes decide whatever the limits (a time or size limit may pass another time).
_REPLAYED_REFUSALS = {error.code for error in (EmptyDocument, EncryptedDocument, CorruptDocument, UnsupportedFormat)}


def _held_refusal(store: KgStore, iri: str, options: DecodeOptions, versions: dict[str, str],
                  file_name: Optional[str]) -> Optional[DecodeError]:
    """The error a recorded refusal of these bytes gave under this name with these settings and software
    versions, to give again without reading them (None: read them). A password given now is tried."""
    failure = store.document_failure(iri)
    if failure is None or options.password or failure.code not in _REPLAYED_REFUSALS:
        return None
    if (failure.agent, failure.settings_key, failure.file_name) != (agent_iri(versions), options.settings_key(),
                                                                  file_name):
        return None
    return error_class(failure.code)(failure.message)


def render_files_ahead(paths: list[Path], store: KgStore, options: DecodeOptions,
                       progress: Optional[ProgressCallback] = None) -> int:
    """Render the files of the formats placed on a rendering (DOCX, ODT, slides...) many to one
    LibreOffice run before they are decoded one by one: most of a small document's rendering is
    LibreOffice starting. Files that cannot be read or identified are left to their decode."""
    if not options.rendered_positions or options.password:
        return 0
    found: list[tuple[str, bytes, str]] = []
    rendered = 0
    for path in paths:
        try:
            data, _ = read_source(path, options.max_bytes)
            fmt = _detect(data, path.name, options.mime_type)
        except (DecodeError, OSError):
            continue
        if fmt.name in RENDERED_FOR_POSITIONS:
            found.append((sha256_hex(data), data, fmt.name))
        if len(found) >= _AHEAD_BATCH:
            rendered += render_ahead(store, found)
            found = []
    rendered += render_ahead(store, found)
    report(progress, "render ahead", rendered, rendered,
           f"rendered {rendered} Office documents ahead, many to one LibreOffice run")
    return rendered


def stored_result(store: KgStore, iri: str, file_name: Optional[str] = None) -> DecodeResult:
    """The result of a decode the store already holds, read back from the graph and library."""
    [summary] = store.document_summaries(iri)
    text_documents = []
    for segment in store.text_segments(iri):
        offsets = [ElementOffset(e.element, e.char_offset, e.char_length)
                   for e in store.segment_elements(segment.segment)]
        text_documents.append(TextDocument(iri=segment.segment, document=iri, kind=segment.kind,
                                           page_number=segment.page_number,
                                           text=store.text(segment.sha256, segment.segment),
                                           char_offset=segment.char_offset, char_length=segment.char_length,
                                           element_offsets=offsets, derived_from=segment.derived_from))
    fmt = FORMATS.get(summary.format)
    return DecodeResult(
        document=iri,
        file_name=summary.file_name or file_name,
        format=summary.format,
        mime_type=fmt.mime if fmt else summary.mime_type,
        status=DecodeStatus.UNCHANGED,
        strategy=summary.strategy,
        pages=summary.pages or 0,
        sections=summary.sections,
        elements=summary.elements,
        tables=summary.tables,
        images=summary.images,
        text_documents=text_documents,
        problems=store.decode_problems(iri),
    )


__all__ = ["DecodeResult", "EmbeddedResult", "decode", "needs_worker", "path_source_id", "read_source",
           "render_files_ahead", "stored_result"]
