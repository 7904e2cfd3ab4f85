"""``/api``: the JSON API (described by ``/api/openapi.json``) — uploads, documents, images, facts, trace, search."""

from __future__ import annotations

import io
import json
import re

from flask import Blueprint, Response, jsonify, request, send_file

import kg_decoder
from kg_decoder import ChunkOptions, DecodeOptions, RequestError, ServerBusy, UnknownEntity
from kg_decoder.serve import (PAGE_ROWS, bounded_search, bounded_trace, decoded_json, document_iri, fact_object,
                              form_options)

from .context import HERE, settings

api = Blueprint("api", __name__, url_prefix="/api")
_TRUE = ("1", "true", "yes")
DECODE_FIELDS = ("strategy", "ocr_languages", "section_strategy", "section_element_count", "section_max_size",
                 "section_within_pages", "password", "mime_type", "encoding", "embedded_depth",
                 "rendered_positions", "image_ocr", "pdf_tables", "pdf_reader", "min_image_text_confidence")
CHUNK_FIELDS = ("chunk_size", "overlap", "min_chunk_tokens", "boundary_window", "heading_prefix")


@api.post("/documents")
def upload():
    config = settings()
    config.require_token()
    upload_file = request.files.get("file")
    if upload_file is None:
        raise RequestError("send the document as the multipart field 'file'", code="missing-file")
    options = DecodeOptions(**form_options(DecodeOptions, request.form, DECODE_FIELDS))  # a bad option: 422 now
    chunk_values = form_options(ChunkOptions, request.form, CHUNK_FIELDS)
    chunking = ChunkOptions(**chunk_values)
    wants_chunks = request.form.get("chunk", "").lower() in _TRUE or bool(chunk_values)
    name = upload_file.filename or None
    source_id = request.form.get("source_id") or None  # the upload is the next version of this source

    def run(payload, writing, progress=None) -> dict:
        with writing:  # an async upload's bytes are read from the spool only now, one upload at a time
            result = kg_decoder.decode(payload() if callable(payload) else payload, store=config.store, options=options, file_name=name,
                                       record_failure=True, progress=progress, source_id=source_id)
            chunks = {document: kg_decoder.chunk_document(document, store=config.store, options=chunking,
                                                          progress=progress, in_worker=True).chunks
                      for document in result.documents()} if wants_chunks else None  # the embedded files' too
        return decoded_json(result, chunks)

    if request.values.get("async", "").lower() in _TRUE:  # the bytes wait on disk, read when the job runs
        spooled = config.jobs.spool(upload_file.save)

        def job(progress) -> dict:
            return run(spooled.read_bytes, config.writes, progress)

        return _job_answer(config.jobs.start(job, files=(spooled,)))
    if not config.uploads.acquire(blocking=False):
        raise ServerBusy("other uploads are being decoded while their requests wait; try again, or send "
                         "async=true and poll the job")
    try:
        return jsonify(run(upload_file.stream.read(), config.writing())), 201
    finally:
        config.uploads.release()


def _job_answer(job: str):
    return jsonify(job=job, status_url=f"/api/jobs/{job}"), 202, {"Location": f"/api/jobs/{job}"}


@api.get("/jobs/<job>")
def job_status(job: str):
    state = settings().jobs.get(job)
    if state is None:
        raise RequestError(f"no job {job[:100]}", code="unknown-job", http_status=404)
    return jsonify(state.to_json())


@api.get("/documents")
def documents():
    limit = min(whole_number(request.args, "limit", PAGE_ROWS), PAGE_ROWS)
    listed = settings().read("documents_page", request.args.get("format") or None,
                             whole_number(request.args, "offset", 0), limit)
    return jsonify(documents=[kg_decoder.to_jsonable(d) for d in listed.items], total=listed.total,
                   offset=listed.offset, left_out=listed.left_out)


@api.get("/documents/<path:identifier>/content")
def content(identifier: str):
    store = settings().store
    iri = document_iri(store, identifier)
    [summary] = store.document_summaries(iri)
    return stored_bytes(store.content(iri), summary.mime_type,
                        _safe_file_name(summary.file_name) or iri.rsplit(":", 1)[-1])


@api.get("/documents/<path:identifier>")
def document(identifier: str):
    config = settings()
    return jsonify(config.read("document_view", document_iri(config.store, identifier)).to_json())


@api.get("/images/<path:identifier>/content")
def image_content(identifier: str):
    store = settings().store
    iri = identifier if identifier.startswith("urn:") else f"urn:image:{identifier}"
    found = store.image_content(iri)
    if found is None:
        raise UnknownEntity(f"no stored image {iri[:200]}")
    return stored_bytes(store.blob(found.sha256, iri), found.mime_type, iri.rsplit(":", 1)[-1])


@api.post("/facts")
def facts():
    config = settings()
    config.require_token()
    payload = _json_body()
    if not isinstance(payload, dict) or not isinstance(payload.get("facts"), list):
        raise RequestError('send {"chunk": IRI, "facts": [{"s", "p", "o", ...}]}, or {"facts": [...]} whose '
                           'facts each name their chunk, their document or nothing')
    extractor = payload.get("extractor")
    if extractor is not None and not isinstance(extractor, str):
        raise RequestError("extractor must be text")
    if "chunk" not in payload:  # in bulk: each fact grounded with a verdict, a bad one refused with its number
        lines, outcomes = payload["facts"], request.args.get("outcomes", "").lower() in _TRUE

        def add(lines, writing, cancelled=None, progress=None) -> dict:
            result = kg_decoder.add_fact_lines(lines, store=config.store, extractor=extractor, read_files=False,
                                               lock=writing, cancelled=cancelled, progress=progress)
            body = result.to_json()
            if not outcomes:
                body.pop("outcomes")
            return body

        if len(lines) > config.sync_facts or request.args.get("async", "").lower() in _TRUE:
            # A job of its own, its body on disk until it runs (read again then), not its lines in memory.
            spooled = config.jobs.spool(lambda path: path.write_bytes(request.get_data()))

            def job(progress) -> dict:
                return add(json.loads(spooled.read_bytes())["facts"], lambda: config.writes, progress=progress)

            return _job_answer(config.jobs.start(job, files=(spooled,)))
        return jsonify(add(lines, config.writing, config.cancelled())), 201
    triples, spans = [], []
    for item in payload["facts"]:
        if not isinstance(item, dict):
            raise RequestError("each fact is an object with s, p, o")
        triples.append((item.get("s"), item.get("p"), item.get("o")))
        spans.append({"quote": item["quote"]} if "quote" in item else
                     {"start": item.get("start"), "end": item.get("end")} if "start" in item else None)
    with config.writing():
        result = kg_decoder.add_facts(payload["chunk"], triples, spans, store=config.store, extractor=extractor)
    return jsonify(result.to_json()), 201


@api.get("/trace")
def trace():
    sources = trace_request(request.args)
    if request.args.get("format") == "jsonld" or "application/ld+json" in request.headers.get("Accept", ""):
        return Response(json.dumps(kg_decoder.web_annotations(sources)), content_type="application/ld+json")
    return jsonify(sources=[s.to_json() for s in sources])


@api.get("/search")
def search():
    return jsonify(search_request(request.args).to_json())


@api.get("/openapi.json")
def openapi():
    return jsonify(json.loads((HERE / "openapi.json").read_text(encoding="utf-8")))


def trace_request(args) -> list:
    """The trace a request asks for, run in a worker within the server's bounds."""
    config = settings()
    if args.get("s") and args.get("p") and args.get("o") is not None:
        wanted = {"fact": (args["s"].strip(), args["p"].strip(),
                           fact_object(args["o"], args.get("object"), args.get("datatype"), args.get("language")))}
    elif args.get("segment"):
        try:
            start, end = int(args.get("start", "")), int(args.get("end", ""))
        except ValueError:
            raise RequestError("start and end must be integers", code="bad-span") from None
        wanted = {"span": (args["segment"], start, end)}
    elif args.get("quote"):
        named = (args.get("document") or "").strip()
        wanted = {"quote": args["quote"], "document": document_iri(config.store, named) if named else None,
                  "offset": whole_number(args, "offset", 0)}
        if args.get("limit"):
            wanted["limit"] = whole_number(args, "limit", None)
    else:
        raise RequestError("give s, p and o; or segment, start and end; or quote")
    return bounded_trace(config.store, wanted, config.bounds, config.workers, config.client(), config.cancelled())


def search_request(args, boxes: bool = False):
    """The search a request asks for (``q``, ``limit``, ``offset``), within the server's bounds."""
    query = args.get("q", "")
    if not query.strip():
        raise RequestError("give q, the quote to search for", code="bad-query")
    config = settings()
    return bounded_search(config.store, query, whole_number(args, "limit", 10), whole_number(args, "offset", 0),
                          boxes, config.bounds, config.workers, config.client(), config.cancelled())


def whole_number(args, name: str, default):
    value = args.get(name)
    if value is None or value == "":
        return default
    if not re.fullmatch(r"\d{1,9}", value):
        raise RequestError(f"{name} must be a whole number", code=f"bad-{name}")
    return int(value)


def _json_body():
    """The request's JSON body; None when it is not JSON (deep nesting included: a RecursionError)."""
    try:
        return json.loads(request.get_data())
    except (ValueError, RecursionError):
        return None


# Shown in the browser as they are: formats that run nothing. Anything else (HTML, SVG, XML, scripts,
# Office files...) is an attachment: an uploaded page must not run on this server's origin.
INLINE_TYPES = ("application/pdf", "image/png", "image/jpeg", "image/gif", "image/webp", "image/bmp",
                "image/tiff", "text/plain")
STORED_BYTES_CSP = "sandbox; default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"


def stored_bytes(data: bytes, mime_type, name: str) -> Response:
    """Bytes someone uploaded, as they are, never as a page of this origin: only types that run
    nothing inline, the rest as an attachment, and every answer in a sandbox (a CSP that gives it
    an origin of its own and runs no script)."""
    mime_type = (mime_type or "application/octet-stream").split(";")[0].strip().lower()
    inline = mime_type in INLINE_TYPES
    response = send_file(io.BytesIO(data), mimetype=mime_type if inline else "application/octet-stream",
                         as_attachment=not inline, download_name=name)
    response.headers["Content-Security-Policy"] = STORED_BYTES_CSP
    return response


def _safe_file_name(name):
    """A file name fit for a Content-Disposition header: no path, no control characters."""
    if not name:
        return None
    cleaned = re.sub(r"[\x00-\x1f\x7f\"\\\\/]", "_", name.replace("\\", "/").rsplit("/", 1)[-1]).strip()[:200]
    return cleaned.lstrip(". ") or None
