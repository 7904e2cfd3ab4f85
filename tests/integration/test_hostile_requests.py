"""Every route of a live server, driven with malformed and hostile input: bad IRIs, huge parameters,
wrong methods and content types, binary bodies, deep nesting. Every answer is JSON or the page
it should be, with a 2xx/3xx/4xx status or a documented 503; never a 5xx of another kind, and
the server stays up."""

from __future__ import annotations

import io
import itertools
import json
import random
import re
import zipfile

import pytest
import requests

import kg_decoder
from conftest import serve_app

TOKEN = "hostile-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EX = "http://example.org/"

BAD_VALUES = ["", "urn:document:../../etc/passwd", "<>", "urn:page:%00", "\x00", "../" * 50, "/etc/passwd",
              "a" * 5000, "urn:page:" + "x" * 20000, "ﬁ\u202e\ufffd", "urn:chunk:" + "{" * 3000, "javascript:alert(1)",
              "http://169.254.169.254/latest/meta-data/", "urn:document:0 UNION { ?s ?p ?o }", "?x", "\r\nX-Injected: 1"]
HOSTILE_QUERIES = ["SELECT * WHERE " + "{" * 5000 + " }", "SELECT * WHERE { FILTER(" + "(" * 9000 + "1) }",
                   "SELECT * WHERE { FILTER(" + "!" * 20000 + "true) }", "ASK { " + "<<( " * 400 + " }",
                   "SELECT * WHERE { ?s ?p ?o }" * 40000, "\x00\x01\x02", "SELECT ?x WHERE { ?x",
                   "SELECT * WHERE { SERVICE <http://127.0.0.1:9/> { ?s ?p ?o } }",
                   "CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }", "DESCRIBE <" + "a" * 10000 + ">",
                   "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile")
    store = kg_decoder.open_store(folder / "store")
    result = kg_decoder.decode(b"KGSENT hostile words on one page of text.", store=store, file_name="a.txt")
    kg_decoder.chunk_document(result.document, store=store)
    chunk = kg_decoder.document_chunks(result.document, store=store)[0]
    kg_decoder.add_facts(chunk.iri, [(EX + "a", EX + "b", "c")], store=store)
    from kg_decoder.cli import load_web_app

    app = load_web_app().create_app(store, write_token=TOKEN, query_timeout=2.0, row_cap=1000,
                                    max_upload_bytes=2_000_000)
    base, running = serve_app(app)
    routes = sorted({re.sub(r"<(?:path:)?(\w+)>", r"{\1}", str(rule)) for rule in app.url_map.iter_rules()
                     if not str(rule).startswith("/static")})
    yield {"base": base, "routes": routes, "document": result.document, "chunk": chunk.iri}
    running.close()


def sound(response: requests.Response) -> None:
    """A documented answer: no 5xx but the 503s of a busy or slow query; errors as JSON."""
    status = response.status_code
    assert status < 500 or (status == 503 and response.json()["error"] in ("busy", "query-timeout")), (
        status, response.text[:300])
    if status >= 400:  # waitress's own answers too (HTTP itself malformed, a body too large)
        body = response.json()
        assert isinstance(body.get("error"), str) and isinstance(body.get("message"), str)
        assert "\n" not in body["message"] and "Traceback" not in body["message"]
    assert "X-Injected" not in response.headers


def fill(route: str, value: str) -> str:
    return re.sub(r"\{\w+\}", lambda _: requests.utils.quote(value, safe=""), route)


def test_every_route_with_bad_identifiers_and_every_method(server):
    base = server["base"]
    for route, value in itertools.product(server["routes"], BAD_VALUES):
        url = base + fill(route, value)
        for method in ("GET", "POST", "PUT", "DELETE", "PATCH"):
            sound(requests.request(method, url, timeout=30, headers=AUTH if method == "POST" else {}))


def test_huge_and_binary_parameters(server):
    base = server["base"]
    rng = random.Random(5)
    binary = bytes(rng.randrange(256) for _ in range(4096))
    for route in server["routes"]:
        url = base + fill(route, server["document"])
        for params in ({"query": "x" * 60_000}, {"s": "\x00" * 100, "p": "ﬁ", "o": "<>"}, {"quote": "a" * 60_000},
                       {"segment": "urn:page:x", "start": "-1", "end": "9" * 40}, {"format": "../../etc"},
                       {"union": "maybe", "default-graph-uri": "not an iri"}, {"async": "true"}):
            sound(requests.get(url, params=params, timeout=30))
        for content_type in ("application/sparql-query", "application/sparql-update", "application/json",
                             "application/x-www-form-urlencoded", "multipart/form-data", "text/plain",
                             "application/octet-stream", "multipart/form-data; boundary=x"):
            sound(requests.post(url, data=binary, headers={**AUTH, "Content-Type": content_type}, timeout=30))


def test_hostile_queries_and_updates_never_crash_the_server(server):
    base = server["base"]
    for query in HOSTILE_QUERIES:
        sound(requests.get(base + "/sparql", params={"query": query[:8000]}, timeout=30))
        sound(requests.post(base + "/sparql", data=query.encode(), headers={"Content-Type": "application/sparql-query"},
                            timeout=30))
        sound(requests.post(base + "/sparql", data=query.replace("SELECT", "DELETE WHERE").encode(),
                            headers={**AUTH, "Content-Type": "application/sparql-update"}, timeout=30))
        for accept in ("text/csv", "application/ld+json", "image/png", "*/*;q=0.1", "\x00"):
            sound(requests.get(base + "/sparql", params={"query": query[:2000]}, headers={"Accept": accept},
                               timeout=30))
    assert requests.get(base + "/api/openapi.json", timeout=30).status_code == 200  # still up


def test_hostile_json_and_uploads(server):
    base = server["base"]
    deep = "[" * 100_000 + "]" * 100_000
    for body in (deep, '{"chunk": ' + deep + '}', '{"chunk": 5, "facts": 5}', '{"chunk": "x", "facts": [5]}',
                 json.dumps({"chunk": server["chunk"], "facts": [{"s": 1, "p": None, "o": {"type": "bnode"}}]}),
                 json.dumps({"chunk": server["chunk"], "facts": [{"s": EX + "a", "p": EX + "b", "o": "c",
                                                                 "start": "x", "end": None}]}),
                 json.dumps({"chunk": server["chunk"], "facts": [], "extractor": {"a": 1}}), "\xff\xfe", "",
                 # lone surrogates (JSON carries them; they are no Unicode text): an object, a quote, in bulk
                 '{"chunk": "%s", "facts": [{"s": "%sa", "p": "%sb", "o": "\\ud800"}]}' % (server["chunk"], EX, EX),
                 '{"facts": [{"s": "%sa", "p": "%sb", "o": "x", "quote": "\\udc00 hostile words"}]}' % (EX, EX),
                 '{"facts": [{"s": "%sa", "p": "%sb", "o": "\\ud800", "document": "%s"}]}' % (EX, EX, server["document"])):
        sound(requests.post(base + "/api/facts", data=body.encode("utf-8", "surrogatepass"),
                            headers={**AUTH, "Content-Type": "application/json"}, timeout=30))
    bomb = io.BytesIO()
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", b"\0" * 30_000_000)
    uploads = [("deep.json", deep.encode()), ("deep.html", b"<div>" * 50_000), ("bomb.docx", bomb.getvalue()),
               ("x" * 4000 + ".txt", b"long name"), ("../../etc/passwd", b"a path as name"),
               ("a\r\nX-Injected: 1.txt", b"header in a name"), ("nul\x00.txt", b"nul in a name"), ("", b"")]
    for name, data in uploads:
        for fields in ({}, {"strategy": "best"}, {"section_max_size": "big"}, {"chunk_size": "-5", "chunk": "true"},
                       {"mime_type": "application/x-unknown"}, {"encoding": "no-such-charset"}):
            sound(requests.post(base + "/api/documents", files={"file": (name, data)}, data=fields, headers=AUTH,
                                timeout=300))
    for document in kg_decoder.open_store(None).document_summaries():  # (nothing leaks between stores)
        raise AssertionError(document)
    listed = requests.get(base + "/api/documents", timeout=30).json()["documents"]
    for summary in listed:
        content = requests.get(base + f"/api/documents/{requests.utils.quote(summary['document'], safe='')}/content",
                               timeout=30)
        sound(content)
        disposition = content.headers.get("Content-Disposition", "")
        assert "\r" not in disposition and "\n" not in disposition and "/" not in disposition.split("filename")[-1]


@pytest.mark.parametrize("sent, status", [
    (b"POST /api/facts HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n", 413),
    (b"POST /api/facts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
     + b"%x\r\n" % 3_000_000 + b"a" * 3_000_000 + b"\r\n0\r\n\r\n", 413),
    (b"GET /sparql HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n", 400),
    (b"GET /sparql HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n", 400),
    (b"GET /sparql HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 300_000 + b"\r\n\r\n", 431),
    (b"POST /sparql HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501),
])
def test_waitress_own_errors_are_the_documented_json(server, sent, status):
    """What waitress answers itself, before the app sees the request, is JSON as the app's errors."""
    import socket
    from urllib.parse import urlsplit

    where = urlsplit(server["base"])
    with socket.create_connection((where.hostname, where.port), timeout=30) as connection:
        try:
            connection.sendall(sent)
        except OSError:  # the server may answer and close before the body is sent
            pass
        answer = b""
        while True:
            try:
                part = connection.recv(65536)
            except OSError:
                break
            if not part:
                break
            answer += part
    head, _, body = answer.partition(b"\r\n\r\n")
    assert re.match(rb"HTTP/1.[01] %d " % status, head), answer[:200]
    assert b"Content-Type: application/json" in head
    error = json.loads(body)
    assert isinstance(error["error"], str) and error["message"] and "\n" not in error["message"]
    assert "waitress" not in error["message"]
