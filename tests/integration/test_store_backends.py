"""The store's behaviour on both backends: the embedded Oxigraph store and a real Oxigraph server
over HTTP (SPARQL 1.1 Query/Update and the Graph Store Protocol), each with a library folder.

The same documents decoded into both give the same quads; every command reads the same answers
from both; writes are all or nothing on the server too (a body cut off, a server killed while
loading, an update that fails).
"""

from __future__ import annotations

import hashlib
import json
import socket
import threading
import tracemalloc
from dataclasses import replace
from http.server import BaseHTTPRequestHandler

import pytest
import requests
from invariants import timeless
from servers import handler_server, oxigraph_server

import kg_decoder
from kg_decoder.graph.remote_store import RemoteGraph, StoreConfig
from kg_decoder.model.errors import MalformedQuery, MalformedUpdate, StoreError, StoreUnsupported, TooManyRows

# Formats with pages, rendered positions, a spreadsheet, markup, an e-mail with attachments.
DOCUMENTS = ["layout-parser-paper-fast.pdf", "handbook-1p.docx", "stanley-cups.xlsx", "example-10k-1p.html",
             "fake-email-attachment.eml"]



@pytest.fixture
def remote(server_url, tmp_path):
    """A remote store on the server, emptied, with a library folder of its own."""
    config = StoreConfig.at(server_url).with_library(str(tmp_path / "remote-library"))
    with kg_decoder.open_store(config) as store:
        store.sparql_update("CLEAR ALL")
        yield store


@pytest.fixture
def both(remote, tmp_path):
    with kg_decoder.open_store(tmp_path / "embedded") as embedded:
        yield embedded, remote


def test_open_store_reads_a_url_and_a_config_file(server_url, tmp_path):
    config = tmp_path / "store.toml"
    config.write_text(f'[store]\nurl = "{server_url}"\ntimeout = 20\n\n[library]\nurl = "{tmp_path / "lib"}"\n')
    with kg_decoder.open_store(config) as store:
        assert isinstance(store.graph, RemoteGraph) and store.graph.config.timeout == 20
        assert store.graph.config.update == f"{server_url}/update"
    with kg_decoder.open_store(server_url, library=str(tmp_path / "lib")) as store:
        assert isinstance(store.graph, RemoteGraph)
    with pytest.raises(StoreError, match="needs a library"):
        kg_decoder.open_store(server_url)
    config.write_text(f'[store]\nurl = "{server_url}"\ncache = false\n\n[library]\nurl = "{tmp_path / "lib"}"\n')
    with kg_decoder.open_store(config) as store:
        assert store.path is None  # no cache folder: a temporary one while the store is open
    config.write_text(f'[store]\nurl = "{server_url}"\ncache = 3\n\n[library]\nurl = "{tmp_path / "lib"}"\n')
    with pytest.raises(StoreError, match="cache is a folder"):
        kg_decoder.open_store(config)


def test_a_remote_store_keeps_its_parse_cache_and_renderings_on_this_machine(server_url, corpus_dir, tmp_path):
    """Re-decoding with other section settings after the store was closed partitions nothing again,
    and the DOCX's rendering is still there for traces, as in an embedded store's folder."""
    path = corpus_dir / "handbook-1p.docx"
    config = replace(StoreConfig.at(server_url).with_library(str(tmp_path / "lib")), cache=str(tmp_path / "cache"))
    with kg_decoder.open_store(config) as store:
        store.sparql_update("CLEAR ALL")
        first = kg_decoder.decode(path, store=store)
    assert first.partition_source == "partitioned"
    assert (tmp_path / "cache" / "renders" / f"{hashlib.sha256(path.read_bytes()).hexdigest()}.pdf").is_file()
    with kg_decoder.open_store(config) as store:
        again = kg_decoder.decode(path, store=store, section_strategy="heading")
        assert again.status == "decoded" and again.partition_source == "parse cache"
    with kg_decoder.open_store(replace(config, cache=False)) as store:
        fresh = kg_decoder.decode(path, store=store, section_strategy="size", section_max_size=50)
        assert fresh.partition_source == "partitioned"


def test_the_same_documents_give_the_same_graph_and_answers(both, corpus_dir, tmp_path):
    embedded, remote = both
    results = {}
    for store in both:
        results[store] = [kg_decoder.decode(corpus_dir / name, store=store) for name in DOCUMENTS]
    assert [r.status for r in results[remote]] == ["decoded"] * len(DOCUMENTS)
    assert timeless(remote.quads()) == timeless(embedded.quads())
    assert len(remote) == len(embedded) > 1000
    assert remote.document_summaries() == embedded.document_summaries()

    # A second decode with the same settings changes nothing; other settings replace the document
    # in one update.
    before = remote.quads()
    again = kg_decoder.decode(corpus_dir / DOCUMENTS[0], store=remote)
    assert again.status == "unchanged" and remote.quads() == before
    for store in both:
        kg_decoder.decode(corpus_dir / DOCUMENTS[0], store=store, pdf_tables=False)
    assert timeless(remote.quads()) == timeless(embedded.quads())

    # Chunks, facts (a triple term per fact: tg:contains), traces, audits, validation.
    pdf = {store: results[store][0].document for store in both}
    for store in both:
        kg_decoder.chunk_document(pdf[store], store=store, chunk_size=128)
    views = {store: kg_decoder.document_chunks(pdf[store], store=store) for store in both}
    assert views[remote] == views[embedded] and len(views[remote]) >= 5
    chunk = views[remote][1].iri
    fact = ("http://example.org/LayoutParser", "http://example.org/is", "a toolkit")
    for store in both:
        kg_decoder.add_facts(chunk, [fact], store=store, extractor="test")
    assert timeless(remote.quads()) == timeless(embedded.quads())
    traced = {store: kg_decoder.trace(fact, store=store) for store in both}
    assert traced[remote] == traced[embedded] and traced[remote][0].chunks == [chunk]
    quote = {store: kg_decoder.trace(quote="Deep Learning Based Document Image Analysis", store=store)
             for store in both}
    assert quote[remote] == quote[embedded] and quote[remote][0].page_number == 1
    audits = {store: [(a.name, sorted(a.table.rows)) for a in kg_decoder.run_audits(store)] for store in both}
    assert audits[remote] == audits[embedded]
    report = kg_decoder.validate(remote)
    assert report == kg_decoder.validate(embedded) and report.conforms and report.triples > 1000
    lines = [sorted(line for line in store.provenance_ntriples().splitlines() if "AtTime>" not in line)
             for store in both]
    assert lines[0] == lines[1] and len(lines[0]) > 1000


def test_user_queries_answer_alike(both):
    embedded, remote = both
    for store in both:
        kg_decoder.decode(b"Alpha beta gamma.\n\nDelta epsilon.", store=store, file_name="note.txt")
    select = "SELECT ?page WHERE { GRAPH ?g { ?page a <https://w3id.org/kg-decoder/ns#Section> } }"
    assert remote.select_rows(select) == embedded.select_rows(select)
    union = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    for media in ("application/sparql-results+json", "text/csv"):
        answers = [store.answer(union, lambda offered: media, 1000, union=True) for store in both]
        assert answers[0] == answers[1]
    construct = "CONSTRUCT { ?s a ?t } WHERE { GRAPH ?g { ?s a ?t } }"
    answers = [store.answer(construct, lambda offered: "application/n-triples", 1000) for store in both]
    assert sorted(answers[0][1].splitlines()) == sorted(answers[1][1].splitlines()) != []
    with pytest.raises(MalformedQuery):
        remote.select_rows("SELECT ?x WHERE {")
    with pytest.raises(MalformedUpdate):
        remote.sparql_update("INSERT DATA {")



def test_a_capped_answer_reads_only_what_the_cap_needs(remote):
    """A user's query with half a million rows under a cap of 100: the server's answer is read as
    the rows are counted, so memory stays small and the connection is closed, not drained."""
    numbers = " ".join(str(n) for n in range(100))
    rows = f"VALUES ?a {{ {numbers} }} VALUES ?b {{ {numbers} }} VALUES ?c {{ {numbers[:140]} }}"
    queries = {"SELECT": f"SELECT ?a ?b ?c WHERE {{ {rows} }}",
               "CONSTRUCT": f"CONSTRUCT {{ ?s <urn:p> ?c }} WHERE {{ {rows} "
                            f"BIND(IRI(CONCAT('urn:', STR(?a), '-', STR(?b))) AS ?s) }}"}
    for kind, query in queries.items():
        tracemalloc.start()
        try:
            with pytest.raises(TooManyRows):
                remote.answer(query, lambda offered: next(iter(offered)), 100)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert peak < 5_000_000, f"{kind}: {peak} bytes at the peak: the answer was read whole"
    assert remote.answer("SELECT ?a WHERE { VALUES ?a { 1 2 } }", lambda offered: "text/csv", 100) == \
        ("text/csv", b"a\r\n1\r\n2\r\n")


@pytest.mark.parametrize("answer, error", [
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "1"}}, ', "part way"),
    (b'{"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "1"}}, zz]}}',
     "does not parse"),
])
def test_an_answer_cut_off_or_damaged_part_way_is_a_store_error(tmp_path, answer, error):
    """A server whose streamed answer stops or turns to garbage after the first row."""

    class Breaking(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            sent = b'{"head": {}, "boolean": false}' if b"urn:kg-decoder:probe" in body else answer  # the probe at open
            self.send_response(200)
            self.send_header("Content-Type", "application/sparql-results+json")
            # More than is sent when the answer is cut off: the client waits for the rest.
            self.send_header("Content-Length", str(len(sent) if sent.endswith(b"}") else 100000))
            self.end_headers()
            self.wfile.write(sent)
            self.wfile.flush()
            self.close_connection = True

    with handler_server(Breaking) as url, kg_decoder.open_store(url, library=str(tmp_path / "lib")) as store:
        for ask in (lambda: store.answer("SELECT ?x {}", lambda offered: "text/csv", 100),
                    lambda: store.select_rows("SELECT ?x {}")):
            with pytest.raises(StoreError, match=error):
                ask()

def test_the_cli_commands_work_on_a_remote_store(server_url, remote, corpus_dir, tmp_path, cli):
    flags = ["--store", server_url, "--library", str(tmp_path / "remote-library")]
    done = cli("decode", corpus_dir / "layout-parser-paper-fast.pdf", corpus_dir / "fake-text.txt", *flags,
               "--chunk", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert "2 of 2 files decoded" in done.stdout and f"--store {server_url} --library" in done.stdout
    traced = cli("trace", "--quote", "Deep Learning Based Document Image Analysis", "--format", "json", *flags)
    assert traced.returncode == 0, traced.stderr
    assert json.loads(traced.stdout)[0]["page_number"] == 1
    audit = cli("audit", "--json", *flags)
    assert audit.returncode == 0, audit.stderr
    assert cli("validate", *flags).returncode == 0
    query = cli("query", "audit-document-counts", "--format", "json", *flags)
    assert query.returncode == 0 and "layout-parser" in query.stdout
    exported = cli("export", tmp_path / "export", *flags)
    assert exported.returncode == 0, exported.stderr
    into = tmp_path / "embedded-copy"
    imported = cli("import", tmp_path / "export", "--store", into)
    assert imported.returncode == 0, imported.stderr
    with kg_decoder.open_store(into) as copy:
        assert copy.quads() == remote.quads()
        assert copy.missing_blobs() == [] and copy.document_summaries() == remote.document_summaries()
    (tmp_path / "export" / "graph.nq").write_text("<urn:a> <urn:b> not n-quads .\n")
    damaged = cli("import", tmp_path / "export", "--store", tmp_path / "other")
    assert damaged.returncode == 2 and "do not parse" in damaged.stderr
    assert len(damaged.stderr.strip().splitlines()) == 1


def test_an_empty_remote_store_validates_and_lists_nothing(remote):
    assert remote.source_quads() == [] and remote.provenance_ntriples() == ""
    assert kg_decoder.validate(remote).conforms


def test_a_redirect_is_refused_not_taken_for_a_write(tmp_path):
    """A proxy answering 307 to a write: not stored, so not reported as stored."""

    class Redirecting(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            if self.path.startswith("/query"):
                self.send_response(200)
                self.send_header("Content-Type", "application/sparql-results+json")
                self.end_headers()
                self.wfile.write(b'{"head": {}, "boolean": false}')
                return
            self.send_response(307)
            self.send_header("Location", "https://elsewhere.example/update")
            self.end_headers()

    with handler_server(Redirecting) as url, kg_decoder.open_store(url, library=str(tmp_path / "lib")) as store:
        with pytest.raises(StoreError, match="redirected the update to https://elsewhere.example/update"):
            store.sparql_update("INSERT DATA { <urn:a> <urn:b> <urn:c> }")


def test_a_server_without_triple_terms_is_refused_at_connect(tmp_path):
    """A SPARQL 1.1 server that does not parse RDF 1.2 triple terms (here: one that answers 400
    to any query that has them) gets a clear error when the store is opened."""

    class OldServer(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(400 if b"%3C%3C%28" in body or b"<<(" in body else 200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"Parse error: unexpected <<(")

    with handler_server(OldServer) as url, pytest.raises(StoreUnsupported, match="triple terms"):
        kg_decoder.open_store(url, library=str(tmp_path / "lib"))


def test_an_unreachable_server_is_a_store_error(tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = StoreConfig.at(f"http://127.0.0.1:{port}").with_library(str(tmp_path / "lib"))
    with pytest.raises(StoreError, match="cannot be reached"):
        RemoteGraph(config.__class__(**{**config.__dict__, "retries": 1}))


# ---------------------------------------------------------------- all or nothing on the server

def _document_nquads(corpus_dir) -> tuple[str, bytes]:
    with kg_decoder.open_store(None) as scratch:
        result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=scratch)
        from io import BytesIO

        out = BytesIO()
        scratch.dump_nquads(out)
        return result.document, out.getvalue()


def test_a_body_cut_off_stores_nothing(remote, server_url, corpus_dir):
    document, nquads = _document_nquads(corpus_dir)
    host, port = server_url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port))) as raw:
        raw.sendall(b"POST /store HTTP/1.1\r\nHost: x\r\nContent-Type: application/n-quads\r\n"
                    + f"Content-Length: {len(nquads)}\r\n\r\n".encode() + nquads[: len(nquads) // 2])
    # the connection closed half way: the server drops the request
    assert len(remote) == 0 and remote.document_summaries() == []


def test_a_failing_update_changes_nothing(remote, corpus_dir):
    kg_decoder.decode(corpus_dir / "fake-text.txt", store=remote)
    before = remote.quads()
    with pytest.raises(MalformedUpdate):  # the INSERT half does not parse: the DELETE half is not run either
        remote.sparql_update("DELETE WHERE { GRAPH ?g { ?s ?p ?o } } ; INSERT DATA { <urn:a> <urn:b> }")
    assert remote.quads() == before


@pytest.mark.slow
def test_a_server_killed_while_loading_leaves_the_document_absent_or_whole(corpus_dir, tmp_path):
    document, nquads = _document_nquads(corpus_dir)
    big = nquads * 1  # one document's quads, as one decode posts them
    location = tmp_path / "killed"
    outcomes = []
    for delay in (0.0, 0.02, 0.05, 0.1):
        with oxigraph_server(location) as server:
            done = threading.Event()

            def post():
                try:
                    requests.post(f"{server.url}/store", data=big, timeout=30,
                                  headers={"Content-Type": "application/n-quads"})
                except requests.RequestException:
                    pass
                done.set()

            threading.Thread(target=post, daemon=True).start()
            threading.Event().wait(delay)
            server.kill()
            done.wait(30)
        with oxigraph_server(location) as server:
            count = requests.post(f"{server.url}/query", data={"query": "SELECT (COUNT(*) AS ?n) { GRAPH ?g { ?s ?p ?o } }"},
                                  headers={"Accept": "text/csv"}, timeout=30).text.split()[-1]
            outcomes.append(int(count))
            requests.post(f"{server.url}/update", data={"update": "CLEAR ALL"}, timeout=30)
    whole = nquads.count(b"\n")
    assert all(n in (0, whole) for n in outcomes), (outcomes, whole)


def test_serve_reads_a_remote_store_as_it_reads_an_embedded_one(both, server_url, corpus_dir, tmp_path):
    """``kg-decoder serve --store URL``: a read-only front end over the server answers what the app
    over the embedded store answers (SPARQL, documents, trace), and draws the page."""
    from conftest import serve_process

    from kg_decoder.cli import load_web_app

    embedded, remote = both
    for store in both:
        kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store)
    local = load_web_app().create_app(embedded).test_client()
    base, process = serve_process(server_url, "--library", str(tmp_path / "remote-library"))
    try:
        count = "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"
        over_http = requests.get(f"{base}/sparql", params={"query": count}, timeout=60)
        assert over_http.status_code == 200 and over_http.json() == local.get("/sparql", query_string={
            "query": count}).json
        assert requests.get(f"{base}/api/documents", timeout=60).json() == local.get("/api/documents").json
        quote = {"quote": "Deep Learning Based Document Image Analysis"}
        traced = requests.get(f"{base}/api/trace", params=quote, timeout=60).json()
        assert traced == local.get("/api/trace", query_string=quote).json and traced["sources"][0]["boxes"]
        page = traced["sources"][0]["page"]
        picture = requests.get(f"{base}/pages/{page}/image.png", timeout=60)
        assert picture.status_code == 200 and picture.content.startswith(b"\x89PNG")
        view = requests.get(f"{base}/trace", params=quote, timeout=60)
        assert view.status_code == 200 and "Deep Learning Based Document Image Analysis" in view.text
        upload = requests.post(f"{base}/api/documents", files={"file": ("a.txt", b"hello")}, timeout=60)
        assert upload.status_code in (401, 403) and upload.json()["error"]  # read-only: no token given
    finally:
        process.terminate()
        process.wait(30)


def _mapped_quads(count: int, tag: str) -> bytes:
    """``count`` quads in the source graph, as a mapping writes them (texts with quotes and accents)."""
    return "".join(f'<urn:kg-test:{tag}:{k}> <https://trustgraph.ai/ns/text> "line {k}: \\"é\\"\\n" '
                   f'<urn:graph:source> .\n' for k in range(count)).encode()


def _table_files(folder) -> set[str]:
    """The store's own table files (not a bulk load's, named bulk-*.sst until ingested)."""
    return {path.name for path in (folder / "oxigraph").glob("*.sst") if not path.name.startswith("bulk-")}


def test_a_large_decode_is_ingested_whole_and_kept(tmp_path):
    """A write past 20 000 quads goes in as table files built beside the store (the bulk loader), not
    key by key: the store then holds every quad, and still does when opened again."""
    folder, nquads = tmp_path / "store", _mapped_quads(25_000, "large")
    with kg_decoder.open_store(folder) as store:
        kg_decoder.decode(b"a small document first", store=store, file_name="small.txt")
        files, before = _table_files(folder), store.quads()
        store.write_document("urn:kg-test:large:0", nquads, {}, replace=False)
        added = store.quads() - before
        assert _table_files(folder) - files  # ingested, not in the write-ahead log
    assert len(added) == 25_000 and {str(q.object) for q in added} >= {'"line 24999: \\"é\\"\\n"'}
    with kg_decoder.open_store(folder) as again:
        assert again.quads() == before | added


def test_a_large_write_that_does_not_parse_leaves_nothing(tmp_path):
    folder = tmp_path / "store"
    broken = _mapped_quads(30_000, "first") + b"<urn:kg-test:cut> <urn:p \n" + _mapped_quads(30_000, "second")
    with kg_decoder.open_store(folder) as store:
        kg_decoder.decode(b"a small document first", store=store, file_name="small.txt")
        before = store.quads()
        with pytest.raises(MalformedUpdate):
            store.write_document("urn:kg-test:first:0", broken, {}, replace=False)
        # (not the table files' names: RocksDB compacts the small document's files whenever it likes)
        assert store.quads() == before
    with kg_decoder.open_store(folder) as store:  # what the failed load built is gone once opened again
        assert not list((folder / "oxigraph").glob("bulk-*.sst"))
        store.write_document("urn:kg-test:first:0", _mapped_quads(30_000, "first"), {}, replace=False)
        assert len(store.quads() - before) == 30_000


_WRITE_A_LARGE_DOCUMENT = """
import sys
import kg_decoder
with kg_decoder.open_store(sys.argv[1]) as store:
    nquads = open(sys.argv[2], "rb").read()
    print("writing", flush=True)
    store.write_document("urn:kg-test:killed:0", nquads, {}, replace=False)
"""


@pytest.mark.slow
def test_a_large_write_killed_at_any_moment_is_all_or_nothing(tmp_path):
    """SIGKILL at moments through a large write (while the bulk loader parses, while it builds its
    files, or after it committed): the store then holds all of the document or none of it, and opening
    it for writing clears the files a cut-off load left."""
    import subprocess
    import sys
    import time

    folder, outcomes = tmp_path / "store", []
    with kg_decoder.open_store(folder) as store:
        kg_decoder.decode(b"a small document first", store=store, file_name="small.txt")
    for trial, delay in enumerate((0.2, 1.0, 1.8, 2.6, 3.4, None)):
        source = tmp_path / f"large-{trial}.nq"
        source.write_bytes(_mapped_quads(200_000, f"killed-{trial}"))
        with kg_decoder.open_store(folder) as store:
            before = len(store)
        writer = subprocess.Popen([sys.executable, "-c", _WRITE_A_LARGE_DOCUMENT, str(folder), str(source)],
                                  stdout=subprocess.PIPE, text=True)
        assert writer.stdout.readline().strip() == "writing"
        if delay is not None:
            time.sleep(delay)
            writer.kill()
        writer.wait(timeout=120)
        with kg_decoder.open_store(folder) as store:
            outcomes.append(len(store) - before)
            assert not list((folder / "oxigraph").glob("bulk-*.sst"))
        writer.stdout.close()
    assert set(outcomes) <= {0, 200_000} and outcomes[0] == 0 and outcomes[-1] == 200_000, outcomes
