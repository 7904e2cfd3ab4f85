"""The kg-decoder web app: SPARQL endpoint, JSON API, and pages (home, SPARQL, documents, trace).

Talks to kg-decoder's public API only. One process owns the store: decodes and other writes go
through one lock, reads run concurrently on the server's threads. Every page escapes document
text (Jinja autoescape), sends a Content-Security-Policy and loads nothing from the network.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
from pathlib import Path
from typing import Optional
from urllib.parse import quote

from flask import Flask, Response, jsonify, render_template, request, send_file

import kg_decoder
from kg_decoder import (KgDecoderError, add_facts, chunk_document, decode, document_chunks, trace,
                        web_annotations)
from kg_decoder.audits import audit_definitions
from kg_decoder.image_catalog import document_images
from kg_decoder.worker import shared_worker
from kg_decoder.page_render import render_page_png
from kg_decoder.resources import resource_dir
from kg_decoder.sparql_protocol import ProtocolError, run_query

HERE = Path(__file__).resolve().parent
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
DECODE_FIELDS = {"strategy": str, "ocr_languages": str, "section_strategy": str, "section_element_count": int,
                 "section_max_size": int, "section_within_pages": bool, "password": str, "mime_type": str,
                 "encoding": str, "embedded_depth": int}
EXAMPLES = [("store_statistics", "entities per class"), ("document_summary", "documents"),
            ("fact_count", "facts in the default graph")]
CHUNK_FIELDS = {"chunk_size": int, "overlap": int, "min_chunk_tokens": int, "boundary_window": int,
                "heading_prefix": bool}


def create_app(store, write_token: Optional[str] = None, query_timeout: float = 30.0, row_cap: int = 100_000,
               max_upload_bytes: int = 100 * 1024 * 1024, allow_service: tuple[str, ...] = ()) -> Flask:
    """The app over ``store`` (a KgStore or a folder). Writes need ``write_token`` (Bearer or form field).

    SPARQL queries and updates may call remote endpoints (SERVICE) only under the prefixes of
    ``allow_service``: by default none.
    """
    if not isinstance(store, kg_decoder.KgStore):
        store = kg_decoder.open_store(store)
    app = Flask(__name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static"))
    app.config["MAX_CONTENT_LENGTH"] = max_upload_bytes
    write_lock = threading.Lock()
    jobs = _Jobs()

    def writable() -> None:
        header = request.headers.get("Authorization", "")
        given = header[len("Bearer "):].strip() if header.startswith("Bearer ") else request.form.get("token", "")
        if not write_token or given != write_token:
            raise ProtocolError(403, "forbidden", "writing needs the configured write token")

    def document_iri(identifier: str) -> str:
        iri = identifier if identifier.startswith("urn:") else f"urn:document:{identifier}"
        if not store.select("document_state", document=iri):
            raise ProtocolError(404, "unknown-entity", f"no document {iri} in the store")
        return iri

    @app.after_request
    def secure(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    @app.errorhandler(KgDecoderError)
    def typed_error(error: KgDecoderError):
        return jsonify(error.to_json()), error.http_status

    @app.errorhandler(413)
    def too_large(_):
        return jsonify(error="too-large", message=f"uploads are limited to {max_upload_bytes} bytes"), 413

    @app.errorhandler(404)
    def not_found(_):
        return jsonify(error="not-found", message="no such page or resource"), 404

    # ------------------------------------------------------------ SPARQL 1.1 Protocol

    @app.route("/sparql", methods=["GET", "POST"])
    def sparql():
        content_type = (request.content_type or "").split(";")[0].strip()
        query = update = None
        if request.method == "GET":
            query = request.args.get("query")
        elif content_type == "application/sparql-query":
            query = request.get_data(as_text=True)
        elif content_type == "application/sparql-update":
            update = request.get_data(as_text=True)
        else:
            query, update = request.form.get("query"), request.form.get("update")
        if update is not None:
            writable()
            with write_lock:
                store.sparql_update(update, allow_service=allow_service)
            return Response(status=204)
        if not query:
            raise ProtocolError(400, "missing-query", "give a query (query=... or a application/sparql-query body)")
        values = request.values
        answer = run_query(store, query, accept=request.headers.get("Accept", ""), format=values.get("format"),
                           default_graph=values.getlist("default-graph-uri"),
                           named_graphs=values.getlist("named-graph-uri"),
                           union=values.get("union", "").lower() in ("1", "true", "yes"),
                           timeout=query_timeout, row_cap=row_cap, allow_service=allow_service)
        return Response(answer.body, content_type=answer.content_type + "; charset=utf-8")

    # ------------------------------------------------------------ JSON API

    @app.post("/api/documents")
    def upload():
        writable()
        upload_file = request.files.get("file")
        if upload_file is None:
            raise ProtocolError(400, "missing-file", "send the document as the multipart field 'file'")
        options = _fields(request.form, DECODE_FIELDS)
        chunking = _fields(request.form, CHUNK_FIELDS)
        wants_chunks = request.form.get("chunk", "").lower() in ("1", "true", "yes") or bool(chunking)
        payload, name = upload_file.stream.read(), upload_file.filename or None
        kg_decoder.DecodeOptions(**options)  # a bad option is a 422 now, not a failed job later

        def run(progress=None) -> dict:
            with write_lock:
                result = decode(payload, store=store, file_name=name, record_failure=True, progress=progress,
                                **options)
                if wants_chunks:
                    for document in result.documents():  # the embedded files' documents too
                        chunk_document(document, store=store, progress=progress, worker=shared_worker(),
                                       **chunking)
            return _decoded(result)

        if request.values.get("async", "").lower() in ("1", "true", "yes"):
            job = jobs.start(run)
            return jsonify(job=job, status_url=f"/api/jobs/{job}"), 202
        return jsonify(run()), 201

    @app.get("/api/jobs/<job>")
    def job_status(job: str):
        state = jobs.get(job)
        if state is None:
            raise ProtocolError(404, "unknown-job", f"no upload job {job}")
        return jsonify(state)

    @app.get("/api/documents")
    def documents():
        return jsonify(documents=store.select("document_summary"))

    @app.get("/api/documents/<path:identifier>/content")
    def content(identifier: str):
        iri = document_iri(identifier)
        summary = store.select("document_summary", document=iri)[0]
        return send_file(io.BytesIO(store.content(iri)), mimetype=summary["mimeType"],
                         download_name=summary.get("fileName") or iri.rsplit(":", 1)[-1])

    @app.get("/api/documents/<path:identifier>")
    def document(identifier: str):
        return jsonify(_document_view(store, document_iri(identifier)))

    @app.get("/api/images/<path:identifier>/content")
    def image_content(identifier: str):
        iri = identifier if identifier.startswith("urn:") else f"urn:image:{identifier}"
        rows = store.select("image_content", image=iri)
        if not rows:
            raise ProtocolError(404, "unknown-entity", f"no stored image {iri}")
        return send_file(io.BytesIO(store.library.get(rows[0]["sha256"])),
                         mimetype=rows[0].get("mimeType") or "application/octet-stream")

    @app.post("/api/facts")
    def facts():
        writable()
        payload = request.get_json(silent=True)
        if not isinstance(payload, dict) or not isinstance(payload.get("facts"), list) or "chunk" not in payload:
            raise ProtocolError(400, "bad-request", 'send {"chunk": IRI, "facts": [{"s", "p", "o", ...}]}')
        triples, spans = [], []
        for item in payload["facts"]:
            if not isinstance(item, dict):
                raise ProtocolError(400, "bad-request", "each fact is an object with s, p, o")
            triples.append((item.get("s"), item.get("p"), item.get("o")))
            spans.append({"quote": item["quote"]} if "quote" in item else
                         {"start": item.get("start"), "end": item.get("end")} if "start" in item else None)
        with write_lock:
            result = add_facts(payload["chunk"], triples, spans, store=store, extractor=payload.get("extractor"))
        return jsonify(chunk=result.chunk, status=result.status, facts=result.facts, subgraphs=result.subgraphs), 201

    @app.get("/api/trace")
    def api_trace():
        sources = _trace_request(store, request.args)
        if request.args.get("format") == "jsonld" or "application/ld+json" in request.headers.get("Accept", ""):
            return Response(json.dumps(web_annotations(sources)), content_type="application/ld+json")
        return jsonify(sources=[s.to_json() for s in sources])

    @app.get("/api/openapi.json")
    def openapi():
        return jsonify(json.loads((HERE / "openapi.json").read_text(encoding="utf-8")))

    # ------------------------------------------------------------ pages

    @app.get("/")
    def home():
        counts = {row["type"].rsplit("/", 1)[-1]: row["count"] for row in store.select("store_statistics")}
        facts = store.select("fact_count")[0]["facts"]
        return render_template("home.html", counts=counts, quads=len(store), facts=facts)

    @app.get("/query")
    def query_page():
        examples = [{"name": name, "title": title, "text": (resource_dir("queries") / f"{name}.rq").read_text("utf-8")}
                    for name, title in EXAMPLES]
        audits = [{"name": a.name, "title": a.title, "text": (resource_dir("queries") / f"{a.name}.rq").read_text(
            "utf-8")} for a in audit_definitions()]
        return render_template("query.html", examples=examples, audits=audits)

    @app.get("/documents")
    def documents_page():
        return render_template("documents.html", documents=store.select("document_summary"))

    @app.get("/documents/<path:identifier>")
    def document_page(identifier: str):
        iri = document_iri(identifier)
        return render_template("document.html", doc=_document_view(store, iri), quote=quote,
                               chunks=document_chunks(iri, store=store))

    @app.get("/pages/<path:identifier>/image.png")
    def page_image(identifier: str):
        iri = identifier if identifier.startswith("urn:") else f"urn:page:{identifier}"
        info = store.select("segment_info", segment=iri)
        if not info or info[0]["kind"] != "page":
            raise ProtocolError(404, "unknown-entity", f"no page {iri}")
        row = info[0]
        about = store.select("document_info", document=row["document"])[0]
        png = render_page_png(store, about, row.get("pageNumber") or 1)
        if png is None:
            raise ProtocolError(404, "no-rendering", "this document's pages cannot be rendered as images")
        return Response(png, content_type="image/png")

    @app.get("/trace")
    def trace_page():
        sources = _trace_request(store, request.args) if request.args else []
        views = [_trace_view(store, s) for s in sources]
        return render_template("trace.html", sources=views, args=request.args, quote=quote)

    return app


def _fields(form, fields: dict) -> dict:
    values = {}
    for name, kind in fields.items():
        raw = form.get(name)
        if raw in (None, ""):
            continue
        if kind is bool:
            values[name] = raw.lower() in ("1", "true", "yes", "on")
        elif kind is int:
            try:
                values[name] = int(raw)
            except ValueError:
                raise ProtocolError(400, "bad-option", f"{name} must be an integer") from None
        else:
            values[name] = raw
    return values


class _Jobs:
    """Uploads decoding in the background, each with its last progress report, for polling."""

    def __init__(self, keep: int = 1000) -> None:
        self._states: dict[str, dict] = {}
        self._lock = threading.Lock()
        self._keep = keep

    def start(self, work) -> str:
        job = uuid.uuid4().hex
        self._set(job, status="queued", stage="queued", current=0, total=1, message="waiting to decode")

        def progress(report) -> None:
            self._set(job, status="running", **report.to_json())

        def run() -> None:
            try:
                result = work(progress)
            except KgDecoderError as error:
                self._set(job, status="failed", error=error.to_json())
            else:
                self._set(job, status="done", result=result)

        threading.Thread(target=run, name=f"upload-{job[:8]}", daemon=True).start()
        return job

    def get(self, job: str) -> Optional[dict]:
        with self._lock:
            state = self._states.get(job)
            return dict(state) if state is not None else None

    def _set(self, job: str, **fields) -> None:
        with self._lock:
            self._states.setdefault(job, {"job": job}).update(fields)
            while len(self._states) > self._keep:
                self._states.pop(next(iter(self._states)))


def _decoded(result) -> dict:
    return {"document": result.document, "status": result.status, "format": result.format,
            "mime_type": result.mime_type, "strategy": result.strategy,
            "pages": [_segment(t) for t in result.text_documents if t.kind == "page"],
            "sections": [_segment(t) for t in result.text_documents if t.kind == "section"],
            "elements": result.elements, "tables": result.tables, "images": result.images,
            "embedded": [_embedded(entry) for entry in result.embedded]}


def _embedded(entry) -> dict:
    """A child document (attachment, embedded file) and, nested, its own children; or why it failed."""
    if entry.result is None:
        return {"path": entry.path, "name": entry.name, "depth": entry.depth,
                "error": {"error": entry.error.code, "message": entry.error.message}}
    return {"path": entry.path, "name": entry.name, "depth": entry.depth, **_decoded(entry.result)}


def _segment(text_document) -> dict:
    return {"iri": text_document.iri, "page_number": text_document.page_number,
            "char_offset": text_document.char_offset, "char_length": text_document.char_length}


def _document_view(store, iri: str) -> dict:
    summary = store.select("document_summary", document=iri)[0]
    segments = store.select("document_segments", document=iri)
    elements = store.select("document_elements", document=iri)
    for element in elements:
        if element["category"] == "Table":
            element["cells"] = store.select("table_cells", table=element["element"])
    activity = store.select("decode_activity", document=iri)
    return {"iri": iri, "summary": summary, "segments": segments, "elements": elements,
            "images": document_images(iri, store=store), "activity": activity[0] if activity else {},
            "versions": sorted({row["version"] for row in activity if "version" in row})}


def _trace_request(store, args) -> list:
    if args.get("s") and args.get("p") and args.get("o") is not None:
        return trace(fact=(args["s"], args["p"], args["o"]), store=store)
    if args.get("segment"):
        try:
            start, end = int(args.get("start", "")), int(args.get("end", ""))
        except ValueError:
            raise ProtocolError(400, "bad-span", "start and end must be integers") from None
        return trace(span=(args["segment"], start, end), store=store)
    if args.get("quote"):
        return trace(quote=args["quote"], document=args.get("document") or None, store=store)
    raise ProtocolError(400, "bad-request", "give s, p and o; or segment, start and end; or quote")


def _trace_view(store, source) -> dict:
    text = store.library.get(store.select("segment_info", segment=source.segment)[0]["sha256"]).decode("utf-8")
    boxes = []
    for box in source.boxes:
        if box.page_width and box.page_height:
            boxes.append({"left": 100 * box.left / box.page_width, "top": 100 * box.top / box.page_height,
                          "width": 100 * (box.right - box.left) / box.page_width,
                          "height": 100 * (box.bottom - box.top) / box.page_height,
                          "page": box.page_number, "source": box.source})
    renderable = source.page is not None and source.document["format"] in ("pdf", "png", "jpeg", "tiff", "pptx", "ppt")
    return {"source": source, "before": text[:source.start], "span": text[source.start:source.end],
            "after": text[source.end:], "boxes": boxes, "page_image": renderable}
