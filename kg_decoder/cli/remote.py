"""``kg-decoder decode --server URL``: the files sent to a running ``kg-decoder serve`` through its
upload API, for when the server holds the store (one process may hold it for writing)."""

from __future__ import annotations

import json
import sys
import uuid
from dataclasses import fields
from pathlib import Path
from typing import Optional
from urllib import error as url_error
from urllib import request as url_request
from urllib.parse import urlsplit

from ..decode.pipeline import path_source_id
from ..model import ChunkOptions, DecodeOptions
from ..model.errors import FetchFailed, Forbidden, RequestError, refuses_input
from .output import DECODE_COLUMNS, emit_jsonl, failed_row, status_with_problems, table

_SENT_OPTIONS = ("strategy", "ocr_languages", "section_strategy", "section_element_count", "section_max_size",
                 "section_within_pages", "password", "mime_type", "encoding", "embedded_depth",
                 "rendered_positions")


def upload(files: list[Path], server: str, token: Optional[str], options: DecodeOptions,
           chunking: Optional[ChunkOptions], emit: Optional[str], fail_on_error: bool = False,
           source_id: Optional[str] = None) -> int:
    """Upload each file (one request each), print the summary table; 1 when any file failed (or, with
    ``fail_on_error``, was refused as an input), as a local decode does. Each upload names its source
    as a local decode would: ``source_id``, else the file's absolute path, so that new bytes of a file
    are its next version on the server too."""
    if not token:
        raise Forbidden("uploading to a server needs its write token: --token or $KG_DECODER_WRITE_TOKEN")
    if urlsplit(server).scheme not in ("http", "https"):
        raise RequestError(f"--server must be an http(s) URL, not {server[:200]!r}")
    fields_sent = {name: getattr(options, name) for name in _SENT_OPTIONS if getattr(options, name) is not None}
    if chunking is not None:
        fields_sent["chunk"] = True
        fields_sent |= {f.name: getattr(chunking, f.name) for f in fields(chunking)
                        if getattr(chunking, f.name) is not None}
    endpoint = server.rstrip("/") + "/api/documents"
    rows, failures, refused = [], 0, 0
    for path in files:
        try:
            answer = _post_file(endpoint, token, path, fields_sent | {"source_id": source_id or path_source_id(path)})
        except (RequestError, FetchFailed) as exc:
            if isinstance(exc, Forbidden):
                raise
            refusal = refuses_input(exc.code)
            refused += refusal
            failures += not refusal
            print(f"kg-decoder: {path}: {exc.code}: {exc.message}", file=sys.stderr)
            rows.append(failed_row(str(path), f"{'refused' if refusal else 'failed'}: {exc.code}"))
            continue
        pages, sections = len(answer.get("pages", [])), len(answer.get("sections", []))
        layout = ", ".join(part for part in (f"{pages} pages" if pages else "", f"{sections} sections"
                                             if sections else "") if part)
        rows.append([str(path), answer.get("format", ""), layout, str(answer.get("elements", "")),
                     str(answer.get("tables", "")), str(answer.get("images", "")), str("-" if answer.get("chunks") is None else answer["chunks"]),
                     status_with_problems(answer.get("status", ""),
                                          [problem.get("code", "") for problem in answer.get("problems") or []])])
        if emit == "jsonl":
            emit_jsonl([{"document": answer.get("document"), "pages": answer.get("pages"),
                         "sections": answer.get("sections")}])
    print(table(DECODE_COLUMNS, rows),
          file=sys.stderr if emit else sys.stdout)
    print(f"{len(files) - failures - refused} of {len(files)} files sent to {server} and decoded"
          + (f"; {refused} refused as inputs" if refused else "") + (f"; {failures} failed" if failures else ""),
          file=sys.stderr if emit else sys.stdout)
    return 1 if failures or (fail_on_error and refused) else 0


def _post_file(endpoint: str, token: str, path: Path, values: dict) -> dict:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in values.items():
        text = str(value).lower() if isinstance(value, bool) else str(value)
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{text}\r\n'.encode())
    safe_name = path.name.replace('"', "_").replace("\r", "_").replace("\n", "_")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RequestError(f"cannot read {path}: {exc.strerror or exc}") from None
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe_name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    body = b"".join(parts) + f"--{boundary}--\r\n".encode()
    request = url_request.Request(endpoint, data=body, method="POST", headers={
        "Authorization": f"Bearer {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"})
    try:
        with url_request.urlopen(request, timeout=3600) as response:
            return json.loads(response.read())
    except url_error.HTTPError as exc:
        try:
            answer = json.loads(exc.read())
        except ValueError:
            answer = {}
        message = answer.get("message") or f"HTTP {exc.code}"
        if exc.code == 403:
            raise Forbidden(f"the server refused the token: {message}") from None
        raise RequestError(message, code=answer.get("error") or "http-error", http_status=exc.code) from None
    except (url_error.URLError, OSError, ValueError) as exc:
        raise FetchFailed(f"cannot reach {endpoint}: {getattr(exc, 'reason', exc)}") from None
