"""No 500 from any input (issue 59): every route of the app, every parameter a route reads, sent
nulls, lone surrogates (as UTF-8 would never carry them), huge and negative numbers, control
characters and deeply nested JSON, by GET and by POST (form and JSON bodies, with the token): each
answer is a 2xx/3xx or a typed 4xx (JSON for programs), or a documented 503; never a 5xx else."""

from __future__ import annotations

import json
import re

import pytest

import kg_decoder
from kg_decoder.cli import load_web_app

TOKEN = "route-fuzz-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EX = "http://example.org/fuzz/"
# Every name a route reads from the query string or a form (kg_decoder/web/*.py), and the decode's
# and chunking's fields an upload takes.
PARAMETERS = ["async", "chunk", "datatype", "default-graph-uri", "document", "end", "format", "language", "limit",
              "name", "named-graph-uri", "o", "object", "offset", "outcomes", "p", "q", "query", "quote", "s",
              "segment", "source_id", "start", "token", "union", "update", "source", "old", "new", "strategy",
              "chunk_size", "overlap", "section_max_size", "embedded_depth", "min_image_text_confidence",
              "ocr_languages", "password", "mime_type", "encoding", "pdf_tables"]
# Raw query-string values (percent-encoded as sent): a null, lone surrogates in UTF-8's form
# (%ED%A0%80) and in JSON's, bytes that are no UTF-8, huge and negative numbers, a float past
# every range, control characters, a deep bracket run.
RAW_VALUES = ["%00", "%ED%A0%80", "%ED%B0%80x", "%5Cud800", "%FF%FE", "9" * 400, "-1", "-99999999999999999999",
              "1e308", "1e999", "NaN", "0x7fffffffffffffff", "%0D%0AX-Injected:%201", "%5B" * 5000,
              "urn:chunk:%00", "%F0%9F%92%A9" * 200]
ALONE = ["%00", "%ED%A0%80", "9" * 400]
DEEP = "[" * 50_000 + "]" * 50_000


@pytest.fixture(scope="module")
def app():
    with kg_decoder.open_store(None) as store:
        result = kg_decoder.decode(b"Fuzzed words about the harbour committee on one page.", store=store,
                                   file_name="fuzz.txt")
        kg_decoder.chunk_document(result.document, store=store)
        chunk = kg_decoder.document_chunks(result.document, store=store)[0]
        kg_decoder.add_facts(chunk.iri, [(EX + "a", EX + "b", "c")], store=store)
        application = load_web_app().create_app(store, write_token=TOKEN, query_timeout=5.0, row_cap=1000,
                                                isolate=False)
        routes = sorted({re.sub(r"<(?:path:)?(\w+)>", "{id}", str(rule)) for rule in application.url_map.iter_rules()
                         if not str(rule).startswith("/static")})
        yield application, routes, result.document


def sound(answer, what) -> None:
    status = answer.status_code
    assert status < 500 or (status == 503 and answer.json["error"] in ("busy", "query-timeout", "time-limit")), (
        what, status, answer.get_data()[:300])
    if status >= 400 and not answer.mimetype.startswith("text/html"):
        body = answer.json
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str), what
    assert "X-Injected" not in answer.headers, what


def test_every_parameter_of_every_route_by_get(app):
    application, routes, document = app
    client = application.test_client()
    for route in routes:
        path = route.replace("{id}", document)
        for value in RAW_VALUES:  # every parameter at once, as a route that reads several sees them
            sound(client.get(path + "?" + "&".join(f"{name}={value}" for name in PARAMETERS)), (route, value))
        for value in ALONE:  # each alone, where the others would have stopped the request first
            for name in PARAMETERS:
                sound(client.get(f"{path}?{name}={value}"), (route, name, value))
        for value in RAW_VALUES:  # the identifier in the path itself
            sound(client.get(route.replace("{id}", value)), (route, "path", value))


def test_every_route_by_post_form_and_json(app):
    application, routes, document = app
    client = application.test_client()
    for route in routes:
        path = route.replace("{id}", document)
        for value in RAW_VALUES:
            form = "&".join(f"{name}={value}" for name in PARAMETERS if name != "token")
            sound(client.post(path, data=form.encode(), headers={**AUTH, "Content-Type":
                                                                 "application/x-www-form-urlencoded"}),
                  (route, "form", value))
        for body in (DEEP, '{"facts": ' + DEEP + "}", '{"chunk": "\\ud800", "facts": [{"s": "\\udfff"}]}',
                     json.dumps({"facts": [{"s": EX + "a", "p": EX + "b", "o": "c", "start": 10 ** 400, "end": -1,
                                            "chunk": "x"}]}),
                     json.dumps({"facts": [{"s": EX + "a", "p": EX + "b", "o": 1e308, "quote": "harbour",
                                            "document": "\x00"}]}),
                     '{"facts": [{"s": "%sa", "p": "%sb", "o": {"type": "literal", "value": "\\ud800", '
                     '"datatype": "\\u0000"}}]}' % (EX, EX),
                     '{"facts": [' + ",".join(['{"s": null, "p": null, "o": null}'] * 50) + "]}",
                     "1e999", "null", '"\\ud800"', "\x00"):
            sound(client.post(path, data=body.encode("utf-8", "surrogatepass"),
                              headers={**AUTH, "Content-Type": "application/json"}), (route, "json", body[:60]))
