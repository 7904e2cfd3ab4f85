"""The web app: SPARQL 1.1 Protocol, JSON API and pages with Flask's test client; a live
waitress server for SPARQLWrapper, rdflib's SPARQLStore and a headless Chromium."""

from __future__ import annotations

import csv
import io
import json
import re
import socket
import threading
import time
from urllib.parse import quote, urlencode

import drawn_office
import drawn_pictures
import pytest
from browser import headless_chromium

import kg_decoder
from kg_decoder.cli import load_web_app
from test_chunks_facts_trace import drawn_box, make_placed_pdf

TOKEN = "test-write-token"
EX = "http://example.org/"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def served(tmp_path_factory, generated):
    """A store with a decoded, chunked PDF carrying one fact, and the app over it."""
    folder = tmp_path_factory.mktemp("web")
    make_placed_pdf(folder / "placed.pdf")
    store = kg_decoder.open_store(folder / "store")
    app = load_web_app().create_app(store, write_token=TOKEN, max_upload_bytes=2_000_000)
    client = app.test_client()
    with open(folder / "placed.pdf", "rb") as stream:
        response = client.post("/api/documents", data={"file": (stream, "placed.pdf"), "chunk": "true",
                                                       "chunk_size": "24", "min_chunk_tokens": "2"}, headers=AUTH)
    assert response.status_code == 201, response.json
    document = response.json["document"]
    chunk = next(c for c in kg_decoder.document_chunks(document, store=store) if "kilo" in c.text)
    response = client.post("/api/facts", json={"chunk": chunk.iri, "facts": [
        {"s": EX + "kilo", "p": EX + "near", "o": f"<{EX}lima>", "quote": "kilo lima"}]}, headers=AUTH)
    assert response.status_code == 201, response.json
    return {"app": app, "client": client, "store": store, "document": document, "folder": folder,
            "generated": generated}


# ---------------------------------------------------------------- SPARQL protocol

SELECT = "SELECT ?s ?o WHERE { ?s <http://example.org/near> ?o }"


def test_select_by_get_form_post_and_direct_post(served):
    client = served["client"]
    by_get = client.get("/sparql", query_string={"query": SELECT})
    by_form = client.post("/sparql", data={"query": SELECT})
    direct = client.post("/sparql", data=SELECT, content_type="application/sparql-query")
    for response in (by_get, by_form, direct):
        assert response.status_code == 200 and response.content_type.startswith("application/sparql-results+json")
        assert response.json["results"]["bindings"] == [
            {"s": {"type": "uri", "value": EX + "kilo"}, "o": {"type": "uri", "value": EX + "lima"}}]


def test_results_in_every_format_by_accept(served):
    client = served["client"]
    xml = client.get("/sparql", query_string={"query": SELECT}, headers={"Accept": "application/sparql-results+xml"})
    assert b"<uri>http://example.org/kilo</uri>" in xml.data
    table = client.get("/sparql", query_string={"query": SELECT}, headers={"Accept": "text/csv"})
    assert list(csv.reader(io.StringIO(table.get_data(as_text=True)))) == [["s", "o"], [EX + "kilo", EX + "lima"]]
    tsv = client.get("/sparql", query_string={"query": SELECT}, headers={"Accept": "text/tab-separated-values"})
    assert tsv.get_data(as_text=True).splitlines() == ["?s\t?o", f"<{EX}kilo>\t<{EX}lima>"]
    ask = client.get("/sparql", query_string={"query": "ASK { ?s ?p ?o }"})
    assert ask.json["boolean"] is True
    construct = "CONSTRUCT { ?s ?p ?o } WHERE { ?s <http://example.org/near> ?o . BIND(<http://example.org/near> AS ?p) }"
    turtle = client.get("/sparql", query_string={"query": construct})
    assert turtle.content_type.startswith("text/turtle") and b"example.org/lima" in turtle.data
    ntriples = client.get("/sparql", query_string={"query": construct}, headers={"Accept": "application/n-triples"})
    assert ntriples.get_data(as_text=True).strip() == f"<{EX}kilo> <{EX}near> <{EX}lima> ."
    jsonld = client.get("/sparql", query_string={"query": construct}, headers={"Accept": "application/ld+json"})
    assert json.loads(jsonld.data)
    refused = client.get("/sparql", query_string={"query": SELECT}, headers={"Accept": "image/png"})
    assert refused.status_code == 406 and refused.json["error"] == "not-acceptable"


def test_graphs_union_and_triple_terms(served):
    client = served["client"]
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s a <https://trustgraph.ai/ns/Page> }"
    number = lambda r: int(r.json["results"]["bindings"][0]["n"]["value"])  # noqa: E731
    assert number(client.get("/sparql", query_string={"query": count})) == 0  # provenance is in a named graph
    assert number(client.get("/sparql", query_string={"query": count, "default-graph-uri": "urn:graph:source"})) == 2
    assert number(client.get("/sparql", query_string={"query": count, "union": "true"})) == 2
    named = "SELECT ?g WHERE { GRAPH ?g { ?s a <https://trustgraph.ai/ns/Page> } } LIMIT 1"
    assert client.get("/sparql", query_string={"query": named, "named-graph-uri": "urn:graph:other"}).json[
        "results"]["bindings"] == []
    terms = ("SELECT ?chunk WHERE { GRAPH <urn:graph:source> { ?g <https://trustgraph.ai/ns/contains> "
             f"<<( <{EX}kilo> <{EX}near> <{EX}lima> )>> ; <http://www.w3.org/ns/prov#wasDerivedFrom> ?chunk }} }}")
    [row] = client.get("/sparql", query_string={"query": terms}).json["results"]["bindings"]
    assert row["chunk"]["value"].startswith("urn:chunk:")


def test_updates_need_the_token_and_errors_are_json(served):
    client = served["client"]
    update = f"INSERT DATA {{ <{EX}x> <{EX}y> <{EX}z> }}"
    refused = client.post("/sparql", data={"update": update})
    assert refused.status_code == 403 and refused.json["error"] == "forbidden"
    assert client.post("/sparql", data=update, content_type="application/sparql-update",
                       headers={"Authorization": "Bearer wrong"}).status_code == 403
    assert client.post("/sparql", data=update, content_type="application/sparql-update", headers=AUTH).status_code == 204
    assert client.post("/sparql", data={"update": f"DELETE DATA {{ <{EX}x> <{EX}y> <{EX}z> }}"},
                       headers=AUTH).status_code == 204
    bad = client.get("/sparql", query_string={"query": "SELECT ?x WHERE { ?x"})
    assert bad.status_code == 400 and bad.json["error"] == "malformed-query" and "parse" in bad.json["message"]


def test_row_cap_and_time_limit(served):
    app = load_web_app().create_app(served["store"], row_cap=5, query_timeout=0.05)
    client = app.test_client()
    many = client.get("/sparql", query_string={"query": "SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }"})
    assert many.status_code == 413 and many.json["error"] == "too-many-rows"
    heavy = ("SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?a ?b ?c } GRAPH ?h { ?d ?e ?f } "
             "GRAPH ?i { ?x ?y ?z } }")
    slow = client.get("/sparql", query_string={"query": heavy})
    assert slow.status_code == 503 and slow.json["error"] == "query-timeout"


# ---------------------------------------------------------------- API


def test_documents_api(served):
    client, document = served["client"], served["document"]
    listed = client.get("/api/documents").json["documents"]
    assert [d["file_name"] for d in listed] == ["placed.pdf"]
    detail = client.get(f"/api/documents/{quote(document, safe='')}").json
    assert len([s for s in detail["segments"] if s["kind"] == "page"]) == 2
    assert detail["activity"]["strategy"] == "fast"
    assert any("unstructured" in v for v in detail["activity"]["versions"])
    by_uuid = client.get(f"/api/documents/{document.rsplit(':', 1)[-1]}")
    assert by_uuid.json["iri"] == document
    content = client.get(f"/api/documents/{quote(document, safe='')}/content")
    assert content.mimetype == "application/pdf"
    assert content.data == (served["folder"] / "placed.pdf").read_bytes()
    missing = client.get("/api/documents/urn:document:00000000-0000-0000-0000-000000000000")
    assert missing.status_code == 404 and missing.json["error"] == "unknown-entity"


def test_uploads_refused_without_token_too_large_or_bad_store_nothing(served):
    client, store = served["client"], served["store"]
    before = store.quads()
    no_token = client.post("/api/documents", data={"file": (io.BytesIO(b"hello words"), "a.txt")})
    assert no_token.status_code == 403
    too_big = client.post("/api/documents", data={"file": (io.BytesIO(b"x" * 2_100_000), "big.txt")}, headers=AUTH)
    assert too_big.status_code == 413 and too_big.json["error"] == "too-large"
    broken = client.post("/api/documents", data={"file": (io.BytesIO(b"%PDF-1.4\n" + bytes(range(256)) * 4),
                                                          "broken.pdf")}, headers=AUTH)
    assert broken.status_code == 422 and broken.json["error"] == "corrupt-document"
    unsure = client.post("/api/documents", data={"file": (io.BytesIO(b"hello words"), "a.txt"),
                                                 "min_image_text_confidence": "1.5"}, headers=AUTH)
    assert unsure.status_code == 422 and "image text confidence" in unsure.json["message"]
    assert not [q for q in store.quads() - before if "FailedDecoding" not in str(q)
                and not str(q.subject).startswith("<urn:failure:") and not str(q.subject).startswith("<urn:agent:")]
    assert all(d.file_name != "broken.pdf" for d in store.document_summaries())


def test_an_upload_answers_with_its_embedded_documents_chunked_too(served, corpus_dir):
    client = served["client"]
    path = corpus_dir / "fake-email-attachment.eml"
    response = client.post("/api/documents", data={"file": (io.BytesIO(path.read_bytes()), path.name),
                                                   "chunk": "true"}, headers=AUTH)
    assert response.status_code == 201, response.json
    [child] = response.json["embedded"]
    assert (child["path"], child["name"], child["depth"], child["format"]) == (
        "attachment 1", "fake-attachment.txt", 1, "text")
    assert response.json["chunks"] >= 1 and child["chunks"] == 1  # the chunks made, per document
    chunks = client.get("/sparql", query_string={"query": f"""PREFIX tg: <https://trustgraph.ai/ns/>
        PREFIX prov: <http://www.w3.org/ns/prov#>
        SELECT ?chunk WHERE {{ GRAPH <urn:graph:source> {{ ?chunk tg:chunkIndex ?i ; prov:wasDerivedFrom+
        <{child['document']}> }} }}"""}, headers={"Accept": "application/sparql-results+json"})
    assert "results" in chunks.json, chunks.json
    assert len(chunks.json["results"]["bindings"]) == 1


def test_an_async_upload_reports_its_progress_until_done(served):
    client = served["client"]
    text = b"KGSENTASYNC words of a text file decoded in the background. " * 20
    accepted = client.post("/api/documents?async=true", data={"file": (io.BytesIO(text), "async.txt"),
                                                              "chunk": "true"}, headers=AUTH)
    assert accepted.status_code == 202
    seen, deadline = [], time.time() + 60
    while time.time() < deadline:
        state = client.get(accepted.json["status_url"]).json
        seen.append(state["stage"])
        if state["status"] in ("done", "failed"):
            break
        time.sleep(0.02)
    assert state["status"] == "done" and state["result"]["document"].startswith("urn:document:")
    assert state["stage"] == "write quads" and state["current"] == state["total"] > 0  # the chunks' write, last
    bad = client.post("/api/documents?async=true", data={"file": (io.BytesIO(b""), "empty.txt")}, headers=AUTH)
    while (state := client.get(bad.json["status_url"]).json)["status"] not in ("done", "failed"):
        time.sleep(0.02)
    assert state["status"] == "failed" and state["error"]["error"] == "empty-document"
    assert client.get("/api/jobs/nope").status_code == 404


def test_facts_and_trace_api(served):
    client = served["client"]
    bad = client.post("/api/facts", json={"chunk": "urn:chunk:none", "facts": [{"s": EX + "a", "p": EX + "b", "o": "c"}]},
                      headers=AUTH)
    assert bad.status_code == 404 and bad.json["error"] == "unknown-entity"
    traced = client.get("/api/trace", query_string={"s": EX + "kilo", "p": EX + "near", "o": f"<{EX}lima>"}).json
    [source] = traced["sources"]
    assert source["page_number"] == 1 and " ".join(source["quote"].split()) == "kilo lima"
    assert [b["source"] for b in source["boxes"]] == ["characters"]
    annotation = client.get("/api/trace", query_string={"quote": "kilo lima", "format": "jsonld"})
    assert annotation.content_type == "application/ld+json"
    assert json.loads(annotation.data)["first"]["items"][0]["type"] == "Annotation"
    assert client.get("/api/trace").status_code == 400


def test_openapi_describes_every_route(served):
    spec = served["client"].get("/api/openapi.json").json
    assert spec["openapi"].startswith("3.")
    routes = {re.sub(r"<[^>]+>", "{}", str(rule)) for rule in served["app"].url_map.iter_rules()
              if str(rule).startswith(("/api", "/sparql"))}
    documented = {re.sub(r"\{\w+\}", "{}", path) for path in spec["paths"]}
    assert routes == documented, routes ^ documented


# ---------------------------------------------------------------- pages


def test_pages_escape_document_text_and_load_nothing_from_outside(served):
    client = served["client"]
    html_fixture = served["generated"]["generated.html"].path
    with open(html_fixture, "rb") as stream:
        response = client.post("/api/documents", data={"file": (stream, "generated.html")}, headers=AUTH)
    assert response.status_code == 201
    page = client.get(f"/documents/{quote(response.json['document'], safe='')}")
    body = page.get_data(as_text=True)
    assert "&lt;script&gt;" in body and "<script>" not in body.replace(
        '<script src="/static/', "").replace('<script type="application/sparql-query"', "")
    for url in ("/", "/documents", "/query", "/trace?quote=kilo", page.request.path):
        response = client.get(url)
        assert response.status_code == 200, url
        csp = response.headers["Content-Security-Policy"]
        assert "default-src 'self'" in csp and "script-src 'self'" in csp
        text = response.get_data(as_text=True)
        assert not re.search(r"""(src|href)=["']?(https?:)?//""", text), url
    home = client.get("/").get_data(as_text=True)
    assert 'id="count-facts">1<' in home
    titles = {url: re.search(r"<title>(.*)</title>", client.get(url).get_data(as_text=True)).group(1)
              for url in ("/trace", "/trace?quote=kilo")}
    assert titles == {"/trace": "Trace · kg-decoder", "/trace?quote=kilo": "“kilo” · trace · kg-decoder"}


def test_page_image_is_rendered(served):
    client, store, document = served["client"], served["store"], served["document"]
    page = next(s.segment for s in store.document_segments(document) if s.page_number == 1)
    image = client.get(f"/pages/{quote(page, safe='')}/image.png")
    assert image.status_code == 200 and image.data.startswith(b"\x89PNG")
    from PIL import Image

    with Image.open(io.BytesIO(image.data)) as picture:
        assert picture.size == (1224, 1584)  # 612 x 792 points at scale 2


# ---------------------------------------------------------------- a live server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def live(served):
    from waitress.server import create_server

    server = create_server(served["app"], host="127.0.0.1", port=free_port(), threads=4)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.effective_port}"
    yield url
    server.close()


def test_sparqlwrapper_and_rdflib_query_the_live_server(live):
    from SPARQLWrapper import JSON, SPARQLWrapper

    client = SPARQLWrapper(live + "/sparql")
    client.setQuery(SELECT)
    client.setReturnFormat(JSON)
    rows = client.query().convert()["results"]["bindings"]
    assert rows == [{"s": {"type": "uri", "value": EX + "kilo"}, "o": {"type": "uri", "value": EX + "lima"}}]

    import rdflib
    from rdflib.plugins.stores.sparqlstore import SPARQLStore

    graph = rdflib.Graph(store=SPARQLStore(live + "/sparql"))
    found = list(graph.query(SELECT))
    assert [(str(s), str(o)) for s, o in found] == [(EX + "kilo", EX + "lima")]


@pytest.mark.slow
def test_every_example_and_audit_button_loads_its_query_as_written_and_runs(live, served):
    from kg_decoder.graph.queries import query_file

    browser = headless_chromium()
    try:
        browser.get(f"{live}/query")
        buttons = browser.find_elements("css selector", "button.load")
        assert len(buttons) >= 10
        for button in buttons:
            name = button.get_attribute("data-name")
            button.click()
            loaded = browser.execute_script("return document.getElementById('query').value;")
            assert loaded == query_file(name).text, name  # not HTML-escaped: "<https://...>" as written
            browser.execute_script("document.getElementById('results').textContent = '';")
            browser.find_element("id", "run").click()
            deadline = time.time() + 30
            while time.time() < deadline and not browser.execute_script(
                    "return document.getElementById('results').textContent;"):
                time.sleep(0.1)
            shown = browser.execute_script("return document.getElementById('results').textContent;")
            assert browser.find_elements("id", "result-table"), (name, shown[:200])  # rows, not an error
        # a query opened at the endpoint runs in the editor; an IRI in its answer is a link to what the
        # store says of it; a query that does not parse says why there
        documents = "SELECT ?document WHERE { GRAPH ?g { ?document a <https://trustgraph.ai/ns/Document> } }"
        browser.get(f"{live}/sparql?" + urlencode({"query": documents}))
        links = _waited(browser, "#result-table a")
        document = links[0].text
        assert document.startswith("urn:document:") and browser.current_url.startswith(f"{live}/query?")
        links[0].click()
        assert any(link.text == "https://trustgraph.ai/ns/Document" for link in _waited(browser, "#result-table a"))
        browser.get(f"{live}/sparql?" + urlencode({"query": "SELEC ?x"}))
        deadline = time.time() + 30
        while time.time() < deadline and "does not parse" not in browser.find_element("id", "results").text:
            time.sleep(0.1)
        assert "malformed-query" in browser.find_element("id", "results").text
    finally:
        browser.quit()


def _waited(browser, selector: str, seconds: float = 30.0) -> list:
    deadline = time.time() + seconds
    while time.time() < deadline:
        found = browser.find_elements("css selector", selector)
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"nothing matched {selector} in {seconds} s")


def drawn_trace(url: str, boxes_of: str = "characters") -> tuple[dict, list[dict], str]:
    """Open a trace page in headless Chromium: the page picture's rect, the rects of the boxes drawn
    from ``boxes_of`` (characters of a text layer, OCR words), the marked text."""
    browser = headless_chromium()
    try:
        browser.get(url)
        deadline = time.time() + 60
        while time.time() < deadline and not browser.execute_script(
                "var i = document.querySelector('.page-image'); return i && i.complete && i.naturalWidth > 0;"):
            time.sleep(0.2)
        image = browser.execute_script("return document.querySelector('.page-image').getBoundingClientRect().toJSON();")
        boxes = browser.execute_script(
            f"return Array.from(document.querySelectorAll('.box.{boxes_of}')).map(b => b.getBoundingClientRect().toJSON());")
        marked = browser.execute_script("return document.getElementById('span').textContent;")
    finally:
        browser.quit()
    return image, boxes, marked


def assert_drawn_over(image: dict, box: dict, expected, page_size) -> None:
    """A box drawn over the page picture sits where ``expected`` (page units, top-left) is, within 1 %."""
    width, height = page_size
    scale_x, scale_y = image["width"] / width, image["height"] / height
    assert abs((box["left"] - image["left"]) / scale_x - expected[0]) <= 0.01 * width
    assert abs((box["right"] - image["left"]) / scale_x - expected[2]) <= 0.01 * width
    middle = ((box["top"] + box["bottom"]) / 2 - image["top"]) / scale_y
    assert abs(middle - (expected[1] + expected[3]) / 2) <= 0.01 * height


@pytest.mark.slow
def test_chromium_draws_the_trace_box_over_the_quoted_words(live):
    image, boxes, marked = drawn_trace(
        f"{live}/trace?s={quote(EX + 'kilo')}&p={quote(EX + 'near')}&o={quote('<' + EX + 'lima>')}")
    assert " ".join(marked.split()) == "kilo lima"
    [box] = boxes
    assert_drawn_over(image, box, drawn_box(1, "kilo lima"), (612, 792))


@pytest.mark.slow
def test_chromium_draws_a_docx_quote_over_the_rendered_page(served, live, tmp_path):
    path = drawn_office.make_paged_docx(tmp_path / "pages.docx")
    with open(path, "rb") as stream:
        response = served["client"].post("/api/documents", data={"file": (stream, "pages.docx")}, headers=AUTH)
    assert response.status_code == 201, response.json
    document = response.json["document"]
    image, boxes, marked = drawn_trace(f"{live}/trace?quote={quote(drawn_office.DOCX_QUOTE)}&document={quote(document)}")
    assert " ".join(marked.split()) == drawn_office.DOCX_QUOTE
    [box] = boxes
    store = served["store"]
    rendering = store.path / "renders" / f"{store.document_info(document).sha256}.pdf"
    page, words = drawn_office.poppler_box(rendering, drawn_office.DOCX_QUOTE)
    assert page == 3
    assert_drawn_over(image, box, words, (612, 792))
    trail = served["client"].get(f"/trace?quote={quote(drawn_office.DOCX_QUOTE)}&document=pages.docx")
    assert re.search(r'→ (<span class="rendered-page"[^>]*>)?page 3\b', trail.get_data(as_text=True))  # not "section" alone


@pytest.mark.slow
def test_chromium_draws_a_quote_from_a_pictures_words_over_the_page(served, live, tmp_path):
    path, picture, picture_box = drawn_pictures.pdf_with_picture(tmp_path / "figure.pdf")
    with open(path, "rb") as stream:
        response = served["client"].post("/api/documents", data={"file": (stream, "figure.pdf")}, headers=AUTH)
    assert response.status_code == 201, response.json
    quoted = "Quorum ledger 4711"
    image, boxes, marked = drawn_trace(f"{live}/trace?quote={quote(quoted)}&document={quote(response.json['document'])}",
                                       boxes_of="ocr")
    assert " ".join(marked.split()) == quoted
    assert len(boxes) == 3
    for box, word in zip(boxes, quoted.split()):
        assert_drawn_over(image, box, drawn_pictures.on_page(picture.words[word], picture_box), (612, 792))


# ---------------------------------------------------------------- facts first-class


def test_the_document_page_lists_its_facts_and_chunks_each_fact_leading_to_its_trace(served):
    client, document = served["client"], served["document"]
    page = client.get(f"/documents/{quote(document, safe='')}").get_data(as_text=True)
    [row] = re.findall(r'<tr class="fact">(.*?)</tr>', page, re.S)
    assert EX + "kilo" in row and EX + "near" in row and EX + "lima" in row and "chunk " in row
    chunk_rows = re.findall(r'<tr id="chunk-(\d+)">(.*?)</tr>', page, re.S)
    assert len(chunk_rows) >= 2 and all("page " in body and "trace" in body for _, body in chunk_rows)
    link = re.search(r'class="fact-trace" href="([^"]+)"', row).group(1).replace("&amp;", "&")
    assert "object=iri" in link and "%3C" not in link  # the object's kind beside it, no brackets
    fact_page = client.get(link)
    assert fact_page.status_code == 200
    body = fact_page.get_data(as_text=True)
    assert "<title>Fact · trace · kg-decoder</title>" in body and 'id="span">kilo' in body


def test_the_trace_form_takes_a_fact_as_three_fields_and_a_document_by_file_name(served):
    client = served["client"]
    as_iri = client.get("/api/trace", query_string={"s": EX + "kilo", "p": EX + "near", "o": EX + "lima",
                                                    "object": "iri"}).json["sources"]
    assert [s["page_number"] for s in as_iri] == [1]
    as_text = client.get("/api/trace", query_string={"s": EX + "kilo", "p": EX + "near", "o": EX + "lima",
                                                     "object": "literal"}).json["sources"]
    assert as_text == []  # a literal with the IRI's text is another fact
    for named in ("placed.pdf", "/somewhere/else/placed.pdf", served["document"],
                  served["document"].rsplit(":", 1)[-1]):
        [source] = client.get("/api/trace", query_string={"quote": "kilo lima", "document": named}).json["sources"]
        assert source["document"]["iri"] == served["document"], named
    unknown = client.get("/api/trace", query_string={"quote": "kilo", "document": "nothing.pdf"})
    assert unknown.status_code == 404 and unknown.json["error"] == "unknown-entity"
    by_name = client.get("/documents/placed.pdf")
    assert by_name.status_code == 200 and served["document"] in by_name.get_data(as_text=True)


def test_the_command_line_and_the_web_name_documents_the_same_way(served):
    from kg_decoder.cite.documents import document_named

    store, document = served["store"], served["document"]
    path = served["folder"] / "placed.pdf"
    assert document_named(str(path), store) == document  # its bytes, hashed
    copy = served["folder"] / "renamed.pdf"
    copy.write_bytes(path.read_bytes())
    assert document_named(str(copy), store) == document
    with pytest.raises(kg_decoder.UnknownEntity):
        document_named(str(copy), store, read_files=False)  # a server does not read the file: its name only


def test_a_browser_gets_an_error_page_with_a_way_back_a_program_gets_json(served):
    client = served["client"]
    browser = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    for url, status in (("/documents/nothing.pdf", 404), ("/no/such/page", 404), ("/trace?segment=x&start=a&end=1", 400)):
        page = client.get(url, headers=browser)
        assert page.status_code == status and page.content_type.startswith("text/html"), url
        body = page.get_data(as_text=True)
        assert 'id="error-message"' in body and 'href="/documents"' in body and "{" not in body.split("<main>")[1]
        assert client.get(url).json["error"]  # no preference: JSON, as before
        assert client.get(url, headers={"Accept": "application/json"}).json["error"]
    api = client.get("/api/documents/nothing.pdf", headers=browser)
    assert api.status_code == 404 and api.json["error"] == "unknown-entity"


def test_a_person_at_the_sparql_endpoint_lands_in_the_editor_a_program_gets_the_protocol(served):
    client = served["client"]
    page = client.get("/sparql", headers={"Accept": "text/html,*/*;q=0.8"})
    assert page.status_code == 303 and page.headers["Location"].endswith("/query")
    assert client.get("/sparql").status_code == 400  # the protocol: a query is missing
    # a query a person opens at the endpoint (a bad one too) goes to the editor, which runs it
    bad = client.get("/sparql", query_string={"query": "SELEC ?x"}, headers={"Accept": "text/html,*/*;q=0.8"})
    assert bad.status_code == 303 and bad.headers["Location"] == "/query?query=SELEC+%3Fx"
    shown = client.get(bad.headers["Location"], headers={"Accept": "text/html,*/*;q=0.8"}).get_data(as_text=True)
    assert "SELEC ?x</textarea>" in shown and 'data-run="yes"' in shown  # in the editor, run as it loads
    assert client.get("/sparql", query_string={"query": "SELEC ?x"}).json["error"] == "malformed-query"
    assert client.get("/favicon.ico").status_code == 204


def test_the_dashboard_draws_each_chart_from_its_audit_with_its_rows_and_sparql_a_click_away(served):
    client = served["client"]
    page = client.get("/dashboard").get_data(as_text=True)
    charts = re.findall(r'<section class="chart" id="([^"]+)">', page)
    assert charts == ["documents-by-format", "pages-per-document", "verified-boxes", "ocr-confidence",
                      "chunks-without-facts", "refused-and-failed"]
    pdf_bar = re.search(r'<a href="/documents\?format=pdf" class="bar-link" aria-label="pdf: decoded (\d+)', page)
    pdfs = [d for d in served["store"].document_summaries() if d.format == "pdf"]
    assert pdf_bar and int(pdf_bar.group(1)) == len(pdfs) >= 1  # placed.pdf, and what other tests uploaded
    for audit in set(re.findall(r'href="/dashboard/rows/([a-z-]+)"', page)):
        rows = client.get(f"/dashboard/rows/{audit}")
        assert rows.status_code == 200 and 'id="audit-rows"' in rows.get_data(as_text=True), audit
        editor = client.get(f"/query?name={audit}").get_data(as_text=True)
        assert f"Query: {audit}" in editor
    assert client.get("/dashboard/rows/document_info").status_code == 404  # audits only


@pytest.mark.slow
def test_the_dashboards_labels_stay_inside_its_charts_in_a_browser(tmp_path):
    """A long file name's bar label is cut to fit left of its bar (an ellipsis, the whole name in the
    bar's tooltip), not drawn past the chart's left edge."""
    from waitress.server import create_server

    name = "3-half-year-analyses-of-the-regional-market-report-2023-final-version.txt"
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(b"Kilo lima mike.\n\nNovember oscar papa.", store=store, file_name=name)
        kg_decoder.chunk_document(decoded.document, store=store)  # a bar of chunks without facts, named by file
        server = create_server(load_web_app().create_app(store, isolate=False), host="127.0.0.1", port=0, threads=4)
        threading.Thread(target=server.run, daemon=True).start()
        browser = headless_chromium()
        try:
            browser.get(f"http://127.0.0.1:{server.effective_port}/dashboard")
            labels = browser.execute_script(
                "return Array.from(document.querySelectorAll('svg.bars .bar-label')).map(t => "
                "[t.textContent, t.getBBox().x, t.closest('svg').getBoundingClientRect().width]);")
            tooltips = browser.execute_script(
                "return Array.from(document.querySelectorAll('svg.bars a title')).map(t => t.textContent);")
            shown = browser.page_source[:300]
        finally:
            browser.quit()
            server.close()
    assert labels and all(x >= 0 for _, x, _ in labels), (labels, shown)
    cut = [text for text, _, _ in labels if text.endswith("…")]
    assert cut and all(name.startswith(text[:-1]) for text in cut)
    assert any(tooltip.startswith(name) for tooltip in tooltips)


def test_a_common_quote_traces_a_page_of_places_each_with_the_text_around_it(tmp_path, web_app):
    """The HTML trace of a common phrase in a long section was one page of every place, each with the
    whole section (25.9 MB): now ten places a page, a link to the next, and the text around each."""
    sentence = "The history of the city is the story of the river, and of the people of the valley. "
    text = "\n\n".join(f"Part {n}. " + sentence * 3 for n in range(600))  # 12 places a part
    with kg_decoder.open_store(tmp_path / "store") as store:
        kg_decoder.decode(text.encode(), store=store, section_strategy="size", section_max_size=1_000_000)
        client = web_app.create_app(store, isolate=False).test_client()
        first = client.get("/trace?quote=of%20the")
        assert first.status_code == 200
        page = first.get_data(as_text=True)
        assert page.count('<section class="source">') == 10 and 'rel="next"' in page and 'rel="prev"' not in page
        assert len(page) < len(text) / 4, (len(page), len(text))  # each place's text around it, not the section
        assert page.count('id="span"') == 10
        second = client.get("/trace?quote=of%20the&offset=10").get_data(as_text=True)
        assert "places 11–20" in second and 'rel="prev"' in second
        assert second.count('<section class="source">') == 10
        last = client.get("/trace?quote=of%20the&offset=7195&limit=10").get_data(as_text=True)
        assert 'rel="next"' not in last and last.count('<section class="source">') == 5  # 7 200 places
        assert client.get("/search?q=of+the").status_code == 200


def test_a_document_page_lists_its_first_facts_without_sorting_them_all(tmp_path, web_app, monkeypatch):
    """A document's page reads a page of its facts (in the chunks' order) and counts the rest: it sorted
    every fact cited to the document first (7 s at 20 000, 503 at 192 000)."""
    from kg_decoder.serve import PAGE_ROWS

    text = "\n\n".join(f"Paragraph {n} says something about topic {n}." for n in range(40))
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(text.encode(), store=store)
        kg_decoder.chunk_document(decoded.document, store=store, chunk_size=40, min_chunk_tokens=2)
        first, second = kg_decoder.document_chunks(decoded.document, store=store)[:2]
        kg_decoder.add_facts(second.iri, [(f"{EX}late{n}", f"{EX}p", f"o{n}") for n in range(PAGE_ROWS + 2)],
                             store=store)
        kg_decoder.add_facts(first.iri, [(f"{EX}early{n}", f"{EX}p", f"o{n}") for n in (2, 0, 1)], store=store)
        client = web_app.create_app(store, isolate=False).test_client()
        monkeypatch.setattr(type(store), "document_facts", lambda *_: pytest.fail("the page read every fact"))
        page = client.get(f"/documents/{quote(decoded.document, safe='')}").get_data(as_text=True)
    assert f"Facts ({PAGE_ROWS + 5})" in page and "5 more are in the store" in page
    assert page.count('class="fact-trace"') == PAGE_ROWS
    listed = re.findall(rf"{EX}(early|late)(\d+)", page)
    assert listed[:3] == [("early", "0"), ("early", "1"), ("early", "2")]  # the first chunk's, sorted, first


def test_the_documents_list_counts_each_documents_chunks_and_facts(served):
    """#54: the documents list had no chunk or fact counts; a row now shows both, as the store counts them."""
    page = served["client"].get("/documents").get_data(as_text=True)
    chunks = len(kg_decoder.document_chunks(served["document"], store=served["store"]))
    assert "<th>chunks</th><th>facts</th>" in page
    row = next(line for line in page.splitlines() if "placed.pdf" in line)
    following = page.split(row, 1)[1].split("</tr>", 1)[0]
    facts = served["store"].document_fact_count(served["document"])
    assert chunks >= 2 and facts >= 1
    assert f"<td>{chunks}</td><td>{facts}</td>" in following, following


def test_a_span_over_a_whole_section_names_its_first_and_last_elements_not_all(tmp_path, web_app):
    """#54: the trace of a whole page ran its breadcrumb through every element kind on it (60); a span
    over more than three elements names the first and the last and counts those between."""
    text = "\n\n".join(f"Paragraph {n} of the notes says something." for n in range(12))
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(text.encode(), store=store, file_name="notes.txt", section_strategy="size",
                                    section_max_size=100_000)
        [section] = [t for t in decoded.text_documents if t.kind == "section"]
        client = web_app.create_app(store, isolate=False).test_client()
        page = client.get("/trace", query_string={"segment": section.iri, "start": 0,
                                                   "end": len(section.text)}).get_data(as_text=True)
        few = client.get("/trace", query_string={"segment": section.iri, "start": 0, "end": 20}).get_data(as_text=True)
    chain = page.split('<p class="chain">', 1)[1].split("</p>", 1)[0]
    assert chain.count('class="element"') == 2 and '<span class="elements-between">10 elements</span>' in chain
    assert few.split('<p class="chain">', 1)[1].split("</p>", 1)[0].count('class="element"') == 1
