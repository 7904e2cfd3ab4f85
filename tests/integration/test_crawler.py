"""The crawler against a real HTTP server on 127.0.0.1 that misbehaves in the usual ways."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import kg_decoder
from kg_decoder.sources.crawl import CrawlOptions, crawl, normalize_url
from kg_decoder.quality.validation import validate

RUSSIAN = "Привет, мир! Это страница в кодировке windows-1251 без указания кодировки в заголовке."
FAST = dict(delay_seconds=0.0, backoff_seconds=0.05, page_timeout=1.5, retries=2, max_page_bytes=1_000_000)


class Site:
    """The pages of a small site and a log of every request it was sent."""

    def __init__(self, robots: str, pdf: bytes):
        self.robots = robots
        self.pdf = pdf
        self.requests: list[dict] = []
        self.lock = threading.Lock()
        self.port = 0
        self.offsite_port = 0

    def count(self, path: str) -> int:
        return sum(1 for r in self.requests if r["path"] == path)

    def index(self) -> bytes:
        links = [
            "/article?utm_source=news&b=2&a=1#comments",  # the same page as the next link, once normalised
            "/article?a=1&b=2",
            "/private/secret.html",  # robots.txt disallows it
            "/loop-a",  # redirects to /loop-b, which redirects back
            "/busy",  # 429 first, then the page
            "/flaky",  # 500 first, then the page
            "/missing",  # 404: never retried
            "/slow",  # trickles past the time limit
            "/russian",  # windows-1251, no charset anywhere
            "/files/report.pdf",
            "/big-declared",  # says it is larger than the page limit: not read
            "/big-streamed",  # no length given, streams past the limit
            f"http://localhost:{self.port}/elsewhere",  # another host name for the same server
            f"http://127.0.0.1:{self.offsite_port}/offsite.html",  # another host
            "mailto:someone@example.org",
        ]
        anchors = "".join(f'<li><a href="{link}">link {n}</a></li>' for n, link in enumerate(links))
        return (f"<html><head><title>KGSENTCRAWL index</title></head><body><h1>KGSENTCRAWL index</h1>"
                f"<p>The start page of a small site.</p><ul>{anchors}</ul></body></html>").encode()


def make_handler(site: Site):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def send(self, status: int, body: bytes = b"", content_type: str = "text/html; charset=utf-8",
                 **headers: str):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name.replace("_", "-"), value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            with site.lock:
                site.requests.append({"path": self.path, "host": self.headers.get("Host"),
                                      "headers": dict(self.headers), "time": time.monotonic()})
                seen = site.count(self.path)
            path = self.path
            page = lambda title, text="": (f"<html><head><title>{title}</title></head><body><h1>{title}</h1>"  # noqa: E731
                                           f"<p>{text}</p></body></html>").encode()
            if path == "/robots.txt":
                self.send(200, site.robots.encode(), "text/plain")
            elif path == "/":
                if self.headers.get("If-None-Match") == '"v1"':
                    self.send(304, ETag='"v1"')
                else:
                    self.send(200, site.index(), ETag='"v1"')
            elif path == "/article?a=1&b=2":
                modified = "Wed, 21 Oct 2026 07:28:00 GMT"
                if self.headers.get("If-Modified-Since") == modified:
                    self.send(304)
                else:
                    self.send(200, page("KGSENTARTICLE", 'An article. <a href="/article/part-2">more</a>'),
                              Last_Modified=modified)
            elif path == "/article/part-2":
                self.send(200, page("KGSENTPARTTWO", "The second part of the article."))
            elif path == "/loop-a":
                self.send(302, Location="/loop-b")
            elif path == "/loop-b":
                self.send(302, Location=f"http://127.0.0.1:{site.port}/loop-a")
            elif path == "/busy":
                if seen == 1:
                    self.send(429, b"slow down", "text/plain", Retry_After="0")
                else:
                    self.send(200, page("KGSENTBUSY", "Served on the second try."))
            elif path == "/flaky":
                if seen == 1:
                    self.send(500, b"oops", "text/plain")
                else:
                    self.send(200, page("KGSENTFLAKY", "Served after a server error."))
            elif path == "/slow":
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                try:
                    for _ in range(40):
                        self.wfile.write(b"<p>slow</p>")
                        self.wfile.flush()
                        time.sleep(0.1)
                except OSError:
                    pass
            elif path == "/russian":
                body = f"<html><body><h1>Страница</h1><p>{RUSSIAN}</p></body></html>".encode("windows-1251")
                self.send(200, body, "text/html")
            elif path == "/files/report.pdf":
                self.send(200, site.pdf, "application/pdf")
            elif path == "/big-declared":
                self.send(200, b"<html><body>" + b"<p>big</p>" * 200_000 + b"</body></html>")
            elif path == "/big-streamed":
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                try:
                    for _ in range(200):
                        self.wfile.write(b"<p>streamed</p>" * 1000)
                except OSError:
                    pass
            else:
                self.send(404, b"not here", "text/plain")

    return Handler


def serve(handler) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture
def site(corpus_dir):
    def build(robots: str = "User-agent: *\nDisallow: /private/\n"):
        site = Site(robots, (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes())
        offsite_requests = []

        class Offsite(BaseHTTPRequestHandler):
            def do_GET(self):
                offsite_requests.append(self.path)
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args):
                pass

        servers = [serve(make_handler(site)), serve(Offsite)]
        site.port, site.offsite_port = servers[0].server_port, servers[1].server_port
        site.offsite_requests = offsite_requests
        built.append(servers)
        return site

    built = []
    yield build
    for servers in built:
        for server in servers:
            server.shutdown()
            server.server_close()


def text_of(store, document):
    return "\n".join(store.text(row.sha256) for row in store.document_segments(document))


def test_url_normalisation():
    assert normalize_url("HTTPS://Example.org:443/a/./b/../c?utm_medium=x&z=1&a=&gclid=9#frag") == \
        "https://example.org/a/c?a=&z=1"
    assert normalize_url("http://example.org") == "http://example.org/"
    assert normalize_url("http://example.org:8080/%7Euser/a%20b") == "http://example.org:8080/~user/a%20b"
    assert normalize_url("/x?b=1&a=2&fbclid=abc", "http://example.org/dir/page") == "http://example.org/x?a=2&b=1"
    assert normalize_url("javascript:void(0)") is None


def test_a_crawl_of_a_misbehaving_site(site, store):
    site = site()
    start = f"http://127.0.0.1:{site.port}/"
    result = crawl(start, store=store, options=CrawlOptions(max_pages=30, **FAST))
    pages = {p.url.replace(start, "/"): p for p in result.pages}

    assert pages["/"].status == "decoded" and pages["/"].http_status == 200
    article = pages["/article?a=1&b=2"]
    assert article.status == "decoded" and site.count("/article?a=1&b=2") == 1  # two links, one fetch
    assert pages["/article/part-2"].status == "decoded" and pages["/article/part-2"].depth == 2
    assert pages["/private/secret.html"].status == "disallowed"
    assert site.count("/private/secret.html") == 0
    assert isinstance(pages["/loop-a"].error, kg_decoder.FetchFailed) and "redirect loop" in pages["/loop-a"].error.message
    assert pages["/busy"].status == "decoded" and site.count("/busy") == 2
    assert pages["/flaky"].status == "decoded" and site.count("/flaky") == 2
    assert isinstance(pages["/missing"].error, kg_decoder.FetchFailed) and "404" in pages["/missing"].error.message
    assert site.count("/missing") == 1  # a 404 is not retried
    assert isinstance(pages["/slow"].error, kg_decoder.DecodeTimeout) and site.count("/slow") == 1
    assert RUSSIAN in text_of(store, pages["/russian"].document)
    for big in ("/big-declared", "/big-streamed"):  # over the page limit, with or without a length given
        assert isinstance(pages[big].error, kg_decoder.DocumentTooLarge), pages[big].error
        assert site.count(big) == 1
    pdf = pages["/files/report.pdf"]
    assert pdf.status == "decoded"
    assert store.document_summaries(pdf.document)[0].format == "pdf"

    # never off the start host: not another port, not another name for the same server
    assert site.offsite_requests == []
    assert {r["host"] for r in site.requests} == {f"127.0.0.1:{site.port}"}
    assert not any("elsewhere" in r["path"] for r in site.requests)
    assert Counter(r["path"] for r in site.requests)["/robots.txt"] == 1

    # provenance: URL, fetch time, status, validators, the linking page
    [row] = store.select_rows(f"""PREFIX tg: <https://trustgraph.ai/ns/> PREFIX dcterms: <http://purl.org/dc/terms/>
        SELECT ?url ?status ?modified ?from ?fetched WHERE {{ GRAPH <urn:graph:source> {{
          <{article.document}> dcterms:source ?url ; tg:httpStatus ?status ; tg:lastModified ?modified ;
                               tg:linkedFrom ?from ; tg:fetchedAt ?fetched }} }}""").records()
    assert (row["url"], int(row["status"]), row["from"]) == (article.url, 200, pages["/"].document)
    assert row["modified"] == "Wed, 21 Oct 2026 07:28:00 GMT"
    [(etag,)] = store.select_rows(f"""PREFIX tg: <https://trustgraph.ai/ns/>
        SELECT ?etag WHERE {{ GRAPH <urn:graph:source> {{ <{pages['/'].document}> tg:etag ?etag }} }}""").rows
    assert etag == '"v1"'
    report = validate(store)
    assert report.conforms, report.violations[:3]

    # the second crawl asks conditionally and skips what did not change, yet still reaches the pages behind
    before = {q for q in store.quads() if "fetchedAt" not in str(q.predicate)}
    site.requests.clear()
    again = crawl(start, store=store, options=CrawlOptions(max_pages=30, **FAST))
    statuses = {p.url.replace(start, "/"): p.status for p in again.pages}
    assert statuses["/"] == "not modified" and statuses["/article?a=1&b=2"] == "not modified"
    assert statuses["/article/part-2"] == "unchanged"  # no validators: fetched, same bytes, same decode
    index_request = next(r for r in site.requests if r["path"] == "/")
    assert index_request["headers"].get("If-None-Match") == '"v1"'
    article_request = next(r for r in site.requests if r["path"] == "/article?a=1&b=2")
    assert article_request["headers"].get("If-Modified-Since") == "Wed, 21 Oct 2026 07:28:00 GMT"
    after = {q for q in store.quads() if "fetchedAt" not in str(q.predicate)}
    assert {str(q.predicate) for q in after ^ before} <= {"<https://trustgraph.ai/ns/httpStatus>"}
    [(status,)] = store.select_rows(f"""PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?s WHERE {{
        GRAPH <urn:graph:source> {{ <{pages['/'].document}> tg:httpStatus ?s }} }}""").rows
    assert int(status) == 304


def test_max_pages_the_rate_limit_and_a_capped_crawl_delay(site, store):
    slow_robots = site("User-agent: *\nCrawl-delay: 3600\nDisallow: /private/\n")
    start = f"http://127.0.0.1:{slow_robots.port}/"
    result = crawl(start, store=store, options=CrawlOptions(max_pages=3, delay_seconds=0.1,
                                                                 max_crawl_delay=0.4, page_timeout=5))
    assert len(result.fetched) == 3
    times = [r["time"] for r in slow_robots.requests]  # robots.txt, /, /article, /loop-a and /loop-b
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(times) == 5 and all(0.35 <= gap < 3 for gap in gaps), gaps  # Crawl-delay capped at 0.4 s

    polite = site()
    start = f"http://127.0.0.1:{polite.port}/"
    crawl(start, store=store, options=CrawlOptions(max_pages=3, delay_seconds=0.3, page_timeout=5))
    times = [r["time"] for r in polite.requests]
    assert all(b - a >= 0.27 for a, b in zip(times, times[1:])), times


def test_cli_crawl(site, tmp_path):
    site = site()
    run = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "crawl", f"http://127.0.0.1:{site.port}/",
                          "--store", str(tmp_path / "store"), "--max-pages", "2", "--delay", "0", "--no-progress"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "decoded" in run.stdout and "2 of 2 fetched pages" in run.stdout
    bad = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "crawl", "ftp://example.org/",
                          "--store", str(tmp_path / "store")], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "not an http(s) URL" in bad.stderr


def test_a_character_set_given_by_the_caller_is_the_one_used(store):
    short = "Щука и ёж".encode("windows-1251")  # too short for detection to be sure of
    result = kg_decoder.decode(short, store=store, file_name="short.txt", encoding="windows-1251")
    assert text_of(store, result.document).strip() == "Щука и ёж"
    with pytest.raises(kg_decoder.InvalidOption, match="character set"):
        kg_decoder.decode(short, store=store, file_name="short.txt", encoding="no-such-charset")


def test_a_page_decoded_in_part_is_crawled_as_partial_with_its_problems(store, tmp_path):
    import drawn_parts

    damaged = drawn_parts.make_damaged_form_pdf(tmp_path / "form.pdf").read_bytes()

    class Form(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/pdf")
            self.send_header("Content-Length", str(len(damaged)))
            self.end_headers()
            self.wfile.write(damaged)

        def log_message(self, *args):
            pass

    server = serve(Form)
    try:
        result = crawl(f"http://127.0.0.1:{server.server_port}/form.pdf", store=store, **FAST)
    finally:
        server.shutdown()
        server.server_close()
    [page] = result.pages
    assert page.status == kg_decoder.CrawlStatus.PARTIAL and [p.code for p in page.problems] == ["forms-not-read"]
    assert "Application form" in text_of(store, page.document)


def test_a_page_crawled_again_is_a_new_version_only_when_its_bytes_changed(store):
    """A crawl of a page, a fact on it; the same page crawled again (answered 304: no new version), then
    edited on the server: version 2 of the URL's source, with its diff and the fact's verdict."""
    import hashlib

    state = {"paragraphs": ["KGSENTVERSION prices", "The basic plan costs 10 euros a month.",
                            "Support answers within two days."]}
    requests: list[dict] = []

    class Edited(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            body = ("<html><head><title>Prices</title></head><body>"
                    + "".join(f"<p>{p}</p>" for p in state["paragraphs"]) + "</body></html>").encode()
            etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
            requests.append({"path": self.path, "headers": dict(self.headers)})
            if self.path != "/prices.html":
                status, body, headers = 404, b"", {}
            elif self.headers.get("If-None-Match") == etag:
                status, body, headers = 304, b"", {"ETag": etag}
            else:
                status, headers = 200, {"ETag": etag, "Content-Type": "text/html; charset=utf-8"}
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = serve(Edited)
    url = f"http://127.0.0.1:{server.server_port}/prices.html"
    options = CrawlOptions(max_pages=1, **FAST)
    try:
        [first] = crawl(url, store=store, options=options).pages
        assert first.status == "decoded"
        kg_decoder.chunk_document(first.document, store=store)
        [chunk] = kg_decoder.document_chunks(first.document, store=store)
        quote = "costs 10 euros a month"
        [subgraph] = kg_decoder.add_facts(chunk.iri, [("http://ex.org/basic", "http://ex.org/price", quote)],
                                          spans=[{"quote": quote}], store=store).subgraphs
        [version] = kg_decoder.source_versions(url, store=store)
        assert (version.number, version.document) == (1, first.document)

        # Crawled again, unchanged: asked with its ETag, answered 304, no new version.
        [again] = crawl(url, store=store, options=options).pages
        page_requests = [r for r in requests if r["path"] == "/prices.html"]
        assert page_requests[-1]["headers"].get("If-None-Match") is not None
        assert (again.status, again.document) == ("not modified", first.document)
        assert [v.number for v in kg_decoder.source_versions(url, store=store)] == [1]

        # Edited on the server: new bytes, version 2 with its diff, and the fact's verdict.
        state["paragraphs"][1] = "The basic plan costs 12 euros a month."
        state["paragraphs"].append("A yearly plan is new.")
        [edited] = crawl(url, store=store, options=options).pages
        assert edited.status == "decoded" and edited.document != first.document
        old, new = kg_decoder.source_versions(url, store=store)
        assert (old.latest, new.latest, new.number, new.document) == (False, True, 2, edited.document)
        assert (new.counts.changed, new.counts.added, new.counts.removed) == (1, 1, 0)
        assert new.facts["changed"] == 1
        [step] = kg_decoder.verdict_chain(subgraph, store=store)
        assert (step.version, step.verdict, step.text) == (2, "changed", "costs 12 euros a month")
    finally:
        server.shutdown()
        server.server_close()
    assert validate(store).conforms
