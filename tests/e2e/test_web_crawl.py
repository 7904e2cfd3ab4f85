"""Click everything: headless Chromium walks the web app over a store of decoded corpus files, by
clicks, from the home page to every page the app links to (documents, each document, its page
pictures, the trace of every chunk and fact, the dashboard and the rows behind its charts, the
SPARQL page with every button run), presses every button, and fails on any error shown, any HTTP
status of 400 or more, escaped markup in the SPARQL editor, any console error, an image without
alt text or a view without a title of its own. Then keyboard use, and screenshots of the dashboard
and of a fact's trace for a person to look at (in the test's output folder)."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from urllib.error import HTTPError
from urllib.parse import parse_qsl, quote, urldefrag, urlencode, urljoin, urlsplit

import pytest
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.wait import WebDriverWait
from browser import headless_chromium

import kg_decoder
from conftest import seed_caches
from kg_decoder.cli import load_web_app
from kg_decoder.graph.queries import query_file

EX = "http://example.org/"
CORPUS_FILES = ("layout-parser-paper-fast.pdf", "loremipsum-flat.pdf", "handbook-1p.docx", "stanley-cups.xlsx",
                "fake-email-attachment.eml", "simple-table.md", "password.pdf", "empty.txt")
ERROR_TEXT = ("Traceback", "internal-error", "the server failed", "malformed-query", "No source found")
ESCAPED = ("&lt;", "&gt;", "&amp;", "&#39;", "&quot;")


@pytest.fixture(scope="module")
def site(corpus_dir, corpus_store, tmp_path_factory):
    """The corpus files decoded (the refused and failed ones recorded; from the session corpus store's
    parse cache), chunked, three facts on the PDF's first chunk (an IRI, a plain and a typed literal as
    objects), the app under waitress."""
    from waitress.server import create_server

    folder = tmp_path_factory.mktemp("crawl") / "store"
    seed_caches(folder, corpus_store[0])
    store = kg_decoder.open_store(folder)
    documents = {}
    for name in CORPUS_FILES:
        try:
            result = kg_decoder.decode(corpus_dir / name, store=store, record_failure=True)
        except kg_decoder.KgDecoderError as error:
            assert error.refuses_input, (name, error)
            continue
        documents[name] = result.document
        for document in result.documents():
            kg_decoder.chunk_document(document, store=store)
    chunk = kg_decoder.document_chunks(documents["layout-parser-paper-fast.pdf"], store=store)[0]
    span = (chunk.prefix_length, chunk.prefix_length + 40)
    kg_decoder.add_facts(chunk.iri, [(EX + "paper", EX + "about", f"<{EX}LayoutParser>"),
                                     (EX + "paper", EX + "says", chunk.text[span[0]:span[1]]),
                                     (EX + "paper", EX + "pages", 2)], spans=[span] * 3, store=store,
                         extractor="crawl-test")
    documents.update(two_versions(store, tmp_path_factory.mktemp("versions")))
    store.flush()
    app = load_web_app().create_app(store, workers=2)
    server = create_server(app, host="127.0.0.1", port=0, threads=6)
    threading.Thread(target=server.run, daemon=True).start()
    yield {"base": f"http://127.0.0.1:{server.effective_port}", "store": store, "documents": documents}
    server.close()


# A two-page PDF edited between two decodes of one source: a line changed, one moved to the other
# page, one removed, one added; a fact on each of the first three and on one kept line.
PLANTS = [["The plant in Lyon makes valves.", "Orders rose by 8 percent in spring."],
          ["The warehouse in Ghent ships parts.", "Margins held at 21 percent overall.", "The depot in Bonn closed."]]
PLANTS_EDITED = [["The plant in Paris makes valves."],
                 ["The warehouse in Ghent ships parts.", "Margins held at 21 percent overall.",
                  "Orders rose by 8 percent in spring.", "A new office opened in Porto."]]
VERDICTS = {"The plant in Lyon": "changed", "Orders rose by 8 percent": "moved",
            "Margins held at 21 percent": "current", "The depot in Bonn closed": "removed"}


def drawn_pdf(path, pages: list[list[str]]) -> bytes:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    drawing = canvas.Canvas(str(path), pagesize=letter)
    for lines in pages:
        for number, line in enumerate(lines):
            drawing.drawString(72, 700 - 40 * number, line)
        drawing.showPage()
    drawing.save()
    return path.read_bytes()


def two_versions(store, folder) -> dict[str, str]:
    """Two versions of the source "plants" (both chunked), a fact per quote of VERDICTS on the first."""
    first = kg_decoder.decode(drawn_pdf(folder / "plants.pdf", PLANTS), store=store, source_id="plants",
                              file_name="plants.pdf")
    kg_decoder.chunk_document(first.document, store=store)
    chunks = kg_decoder.document_chunks(first.document, store=store)
    for number, said in enumerate(VERDICTS):
        chunk = next(c for c in chunks if said in c.text)
        kg_decoder.add_facts(chunk.iri, [(EX + "plants", EX + f"says{number}", said)], spans=[{"quote": said}],
                             store=store, extractor="versions-test")
    second = kg_decoder.decode(drawn_pdf(folder / "plants-2.pdf", PLANTS_EDITED), store=store, source_id="plants",
                               file_name="plants.pdf")
    assert second.version.number == 2
    kg_decoder.chunk_document(second.document, store=store)
    return {"plants.pdf@1": first.document, "plants.pdf@2": second.document}


class Crawl:
    """A browser session that clicks its way through the app and notes every problem it meets."""

    def __init__(self, base: str, browser) -> None:
        self.base, self.browser = base, browser
        self.pages: set[str] = set()
        self.links_clicked = 0
        self.buttons_pressed = 0
        self.resources: set[str] = set()
        self.views_pressed: set[tuple] = set()
        self.problems: list[str] = []

    # ------------------------------------------------------------ where we are

    def here(self) -> str:
        return urldefrag(self.browser.current_url)[0][len(self.base):]

    def submit(self, button) -> None:
        """Press a form's button and wait for the page it loads (the page before may still say it is
        complete just after the click)."""
        before = self.browser.find_element("tag name", "html")
        button.click()
        WebDriverWait(self.browser, 60).until(staleness_of(before))
        self.settle()

    def settle(self) -> None:
        deadline = time.time() + 60
        while time.time() < deadline and not self.browser.execute_script(
                "return document.readyState === 'complete' && Array.from(document.images)"
                ".every(i => i.complete && !i.dataset.src);"):  # pictures queued (data-src) drawn too
            time.sleep(0.05)

    def check(self, where: str) -> None:
        """What the page and everything it loaded say: statuses, console, error text, images, title."""
        for entry in self.browser.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.responseReceived":
                response = message["params"]["response"]
                if response["url"].startswith(self.base) and response["status"] >= 400:
                    self.problems.append(f"{where}: HTTP {response['status']} for {response['url']}")
        for entry in self.browser.get_log("browser"):
            if entry["level"] == "SEVERE":
                self.problems.append(f"{where}: console: {entry['message'][:300]}")
        text = self.browser.find_element("tag name", "body").text
        self.problems += [f"{where}: shows {marker!r}" for marker in ERROR_TEXT if marker in text]
        if self.browser.find_elements("id", "error-message"):
            self.problems.append(f"{where}: an error page: {text[:200]}")
        title = self.browser.title
        if not title or title == "kg-decoder":
            self.problems.append(f"{where}: no title of its own ({title!r})")
        for image in self.browser.execute_script(
                "return Array.from(document.images).map(i => [i.src, i.alt, i.naturalWidth]);"):
            if not image[1] or not image[2]:
                self.problems.append(f"{where}: image {image[0]} alt={image[1]!r} width={image[2]}")

    # ------------------------------------------------------------ links and buttons

    def link_targets(self) -> list[tuple[int, str, str]]:
        """The page's links: (index, href as written, absolute URL without its fragment)."""
        hrefs = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'));")
        return [(index, href, urldefrag(urljoin(self.browser.current_url, href))[0])
                for index, href in enumerate(hrefs)]

    def click_link(self, index: int, href: str) -> None:
        link = self.browser.find_elements("css selector", "a[href]")[index]
        assert link.get_attribute("href") and self.browser.execute_script(
            "return arguments[0].getAttribute('href');", link) == href, (self.here(), index, href)
        self.browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
        link.click()
        self.links_clicked += 1

    def return_to(self, where: str) -> None:
        """Back on ``where`` (loaded again: a click on a place in a page adds to the history too)."""
        self.browser.get(self.base + where)
        self.settle()
        self.browser.get_log("performance"), self.browser.get_log("browser")  # seen already

    def fetch(self, url: str, where: str) -> None:
        """A link to something that is not a page (a picture, a file, JSON): its status and type."""
        if url in self.resources:
            return
        self.resources.add(url)
        try:
            with urllib.request.urlopen(url, timeout=120) as answer:
                answer.read()
        except HTTPError as error:
            self.problems.append(f"{where}: HTTP {error.code} for {url}")

    def explore(self, where: str) -> None:
        """Click each link of this page to a page not seen yet (then come back), fetch its other links,
        press its buttons."""
        self.press_buttons(where)
        for index, href, url in self.link_targets():
            if not url.startswith(self.base):
                self.problems.append(f"{where}: a link off the site: {href}")
                continue
            path = url[len(self.base):]
            if href.startswith("#"):  # a place on this page
                self.click_link(index, href)
                continue
            if path.startswith("/api/") or path.endswith(".png") or "format=" in path:
                self.fetch(url, where)
                continue
            if path in self.pages:
                continue
            self.pages.add(path)
            self.click_link(index, href)
            self.settle()
            if self.here() != path:
                self.problems.append(f"{where}: the link to {path} led to {self.here()}")
            self.check(path)
            self.explore(path)
            self.return_to(where)

    def press_buttons(self, where: str) -> None:
        """Every button of each view once (the trace page of every chunk has the same three forms)."""
        parts = urlsplit(where)
        view = (parts.path, tuple(sorted(key for key, _ in parse_qsl(parts.query))))
        if parts.path == "/query":
            named = dict(parse_qsl(parts.query)).get("name")
            if named:  # opened on a chart's query: the editor holds it as written
                loaded = self.browser.execute_script("return document.getElementById('query').value;")
                if loaded != query_file(named).text:
                    self.problems.append(f"{where}: the editor holds {loaded[:120]!r}")
            if "/query" not in self.views_pressed:
                self.views_pressed.add("/query")
                self.run_every_query(where)
            return
        if view in self.views_pressed:
            return
        self.views_pressed.add(view)
        for index in range(len(self.browser.find_elements("css selector", "button"))):
            button = self.browser.find_elements("css selector", "button")[index]
            self.browser.execute_script("arguments[0].scrollIntoView({block: 'center'}); window.crawlMark = 1;",
                                        button)
            sends = self.browser.execute_script(  # a form that will go (one with a required field empty stays)
                "var b = arguments[0]; return b.type === 'submit' && !!b.form && b.form.checkValidity();", button)
            button.click()
            self.buttons_pressed += 1
            if not sends:
                continue
            deadline = time.time() + 60
            while time.time() < deadline and self.browser.execute_script("return window.crawlMark === 1;"):
                time.sleep(0.05)
            self.settle()
            self.check(f"{where} → {self.here()}")  # the form's answer, then back
            self.return_to(where)

    def run_every_query(self, where: str) -> None:
        browser = self.browser
        for button in browser.find_elements("css selector", "button.load"):
            name = button.get_attribute("data-name")
            button.click()
            loaded = browser.execute_script("return document.getElementById('query').value;")
            if loaded != query_file(name).text or any(escaped in loaded for escaped in ESCAPED):
                self.problems.append(f"{where}: {name} reached the editor changed: {loaded[:120]!r}")
            browser.execute_script("document.getElementById('results').textContent = '';")
            browser.find_element("id", "run").click()
            self.buttons_pressed += 2
            deadline = time.time() + 60
            while time.time() < deadline and not browser.execute_script(
                    "return document.getElementById('results').textContent;"):
                time.sleep(0.05)
            if not browser.find_elements("id", "result-table"):
                shown = browser.execute_script("return document.getElementById('results').textContent;")
                self.problems.append(f"{where}: {name} ran to {shown[:200]!r}")
        self.check(f"{where} (every query run)")


@pytest.mark.slow
def test_a_browser_clicks_everything_and_meets_no_error(site, tmp_path_factory):
    browser = headless_chromium(logs=True)
    crawl = Crawl(site["base"], browser)
    started = time.time()
    try:
        browser.get(site["base"] + "/")
        crawl.settle()
        crawl.pages.add("/")
        crawl.check("/")
        crawl.explore("/")
        # What the links do not reach: a trace by quote, by span and by fact through the form.
        store, pdf = site["store"], site["documents"]["layout-parser-paper-fast.pdf"]
        chunk = kg_decoder.document_chunks(pdf, store=store)[0]
        segment = store.document_segments(pdf)[0]
        for form, fields in (("by-quote", {"quote": chunk.text[chunk.prefix_length:][:30],
                                           "document": "layout-parser-paper-fast.pdf"}),
                             ("by-span", {"segment": segment.segment, "start": "0", "end": "20"}),
                             ("by-fact", {"s": EX + "paper", "p": EX + "about", "o": EX + "LayoutParser"})):
            browser.get(site["base"] + "/trace")
            crawl.settle()
            for name, value in fields.items():
                browser.find_element("css selector", f"#{form} input[name={name}]").send_keys(value)
            if form == "by-fact":
                browser.find_element("css selector", "#by-fact input[name=object][value=iri]").click()
            crawl.submit(browser.find_element("css selector", f"#{form} button"))
            crawl.buttons_pressed += 1
            crawl.check(f"/trace {form}")
            assert browser.find_elements("css selector", "section.source .page-image"), (form, browser.current_url)
        # The search box in every page's header: a quote and Enter, then the results page explored as any.
        browser.find_element("css selector", "nav .nav-search input[name=q]").send_keys(
            chunk.text[chunk.prefix_length:][:30], Keys.ENTER)
        crawl.settle()
        found = crawl.here()
        assert found.startswith("/search?q="), found
        assert browser.find_elements("css selector", "section.hit .page-image"), found  # a hit with its page
        crawl.pages.add(found)
        crawl.check(found)
        crawl.explore(found)
        out = tmp_path_factory.mktemp("crawl-screenshots")
        screenshots(browser, site, crawl, out)
        keyboard(browser, site)
    finally:
        browser.quit()
    print(f"\nclick-everything crawl: {len(crawl.pages)} pages visited, {crawl.links_clicked} links clicked, "
          f"{crawl.buttons_pressed} buttons pressed, {len(crawl.resources)} pictures and files fetched, "
          f"in {time.time() - started:.0f} s")
    assert not crawl.problems, "\n".join(crawl.problems[:40])
    kinds = {urlsplit(page).path.split("/")[1] for page in crawl.pages}
    assert {"", "documents", "query", "trace", "dashboard", "search"} <= kinds, kinds
    assert any(page.startswith("/trace?s=") for page in crawl.pages)  # a fact's page, from its document
    assert any(resource.endswith("/image.png") for resource in crawl.resources)
    assert len([p for p in crawl.pages if p.startswith("/documents/")]) >= len(site["documents"])
    assert {"diff", "versions"} <= kinds, kinds  # the views of a source's versions, reached by links


@pytest.mark.slow
def test_a_browser_sees_two_versions_their_diff_and_a_fact_verdict_chain(site):
    """The document page of a source's first version lists both versions with their diff counts; its
    diff opens with the changed elements boxed on both versions' pages; each fact's trace page says
    where it was stated and what version 2 says of it, with a link to the place that still holds it."""
    browser = headless_chromium()
    base, first = site["base"], site["documents"]["plants.pdf@1"]
    try:
        browser.get(f"{base}/documents/{quote(first, safe='')}")
        rows = browser.find_elements("css selector", "table.versions tr.version")
        assert [r.get_attribute("data-number") for r in rows] == ["1", "2"]
        assert "this document" in rows[0].text and "latest" in rows[1].text and "latest" not in rows[0].text
        assert "2 kept, 1 moved, 1 changed, 1 removed, 1 added" in rows[1].text, rows[1].text
        assert "1 current, 1 moved, 1 changed, 1 removed" in rows[1].text, rows[1].text

        rows[1].find_element("css selector", "a.version-diff").click()
        assert urlsplit(browser.current_url).path == "/diff"
        assert "1 changed, 1 removed, 1 added" in browser.find_element("id", "diff-counts").text
        wait_for_images(browser)
        old = {b.get_attribute("class") for b in browser.find_elements("css selector", "#old-pages .box")}
        new = {b.get_attribute("class") for b in browser.find_elements("css selector", "#new-pages .box")}
        assert old == {"box diff-changed", "box diff-moved", "box diff-removed"}, old
        assert new == {"box diff-changed", "box diff-moved", "box diff-added"}, new
        for box in browser.find_elements("css selector", ".diff-side .box"):  # placed on its page (trace.js)
            assert box.size["width"] > 20 and box.size["height"] > 3, box.get_attribute("outerHTML")
        assert len(browser.find_elements("css selector", "#new-pages .page-image")) == 2  # a line moved to page 2

        browser.get(f"{base}/documents/{quote(first, safe='')}")
        traces = [a.get_attribute("href") for a in browser.find_elements("css selector", "a.fact-trace")]
        seen = {}
        for url in traces:
            browser.get(url)
            [chain] = browser.find_elements("css selector", "section.source .verdict-chain")
            seen[chain.get_attribute("data-latest")] = chain.text
            assert chain.text.startswith("Versions of plants: stated in version 1 (") and "→" in chain.text
        assert set(seen) == set(VERDICTS.values()), seen
        assert "no longer in the source since version 2" in seen["removed"]
        assert "still holds in version 2" in seen["current"] and "at page 2 (box)" in seen["current"]
        assert "from page 1 to page 2 (box)" in seen["moved"]
        assert "The plant in Lyon → The plant in Paris" in seen["changed"]

        # The moved fact's place in version 2: its trace, the page picture with the box on it.
        browser.get(next(url for url in traces if "says1" in url))
        browser.find_element("css selector", ".verdict-chain a.version-place").click()
        wait_for_images(browser)
        assert "Orders rose by 8 percent" in browser.find_element("css selector", "mark").text
        assert browser.find_elements("css selector", "section.source .page-image")
        assert browser.find_elements("css selector", ".drawing .box")

        # A typed literal's datatype goes with the object as it was; edited, the object is plain text.
        typed = {"s": EX + "paper", "p": EX + "pages", "o": "2", "object": "literal",
                 "datatype": "http://www.w3.org/2001/XMLSchema#integer"}
        for edit, kept in (("", True), ("3", False)):
            browser.get(f"{base}/trace?{urlencode(typed)}")
            if edit:
                field = browser.find_element("css selector", "#by-fact input[name=o]")
                field.clear()
                field.send_keys(edit)
            browser.find_element("css selector", "#by-fact button").click()
            deadline = time.time() + 30
            while time.time() < deadline and "&o=" + (edit or "2") not in browser.current_url:
                time.sleep(0.05)
            assert ("datatype=" in browser.current_url) == kept, browser.current_url
    finally:
        browser.quit()


def test_a_page_picture_that_fails_is_asked_for_again(site):
    """Pictures refused for a moment (another tab took the client's two drawings, a server restarting)
    are drawn once they can be: here the browser blocks every page picture until the page has asked
    for them, then lets them through, and every picture of a search's hits is drawn."""
    browser = headless_chromium()
    try:
        browser.execute_cdp_cmd("Network.enable", {})
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*.png*"]})
        chunk = kg_decoder.document_chunks(site["documents"]["layout-parser-paper-fast.pdf"], store=site["store"])[0]
        browser.get(site["base"] + "/search?" + urlencode({"q": chunk.text[chunk.prefix_length:][:20]}))
        WebDriverWait(browser, 30).until(lambda b: b.execute_script(
            "return Array.from(document.images).some(i => i.complete && !i.dataset.src && i.naturalWidth === 0);"))
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        assert browser.find_elements("css selector", "section.hit .page-image")
        wait_for_images(browser)
    finally:
        browser.quit()


def wait_for_images(browser) -> None:
    deadline = time.time() + 60
    while time.time() < deadline and not browser.execute_script(
            "return Array.from(document.images).every(i => i.complete && !i.dataset.src && i.naturalWidth > 0);"):
        time.sleep(0.05)
    assert browser.execute_script("return Array.from(document.images).every(i => i.naturalWidth > 0);")


def screenshots(browser, site, crawl, out) -> None:
    """The dashboard and a fact's trace, as PNG files in the test's output folder."""
    browser.get(site["base"] + "/dashboard")
    crawl.settle()
    browser.save_screenshot(str(out / "dashboard.png"))
    browser.get(f"{site['base']}/documents/layout-parser-paper-fast.pdf")
    crawl.settle()
    browser.find_element("css selector", "a.fact-trace").click()
    crawl.settle()
    assert browser.find_elements("css selector", ".box.characters")
    browser.save_screenshot(str(out / "fact-trace.png"))
    print(f"\nscreenshots: {out / 'dashboard.png'} {out / 'fact-trace.png'}")


def keyboard(browser, site) -> None:
    """Tab reaches a chart's bar and a query button; Enter follows the bar, loads the query."""
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    def tab_to(selector: str):
        for _ in range(80):
            ActionChains(browser).send_keys(Keys.TAB).perform()
            if browser.execute_script(f"return document.activeElement.matches({json.dumps(selector)});"):
                return browser.switch_to.active_element
        raise AssertionError(f"Tab never reached {selector} on {browser.current_url}")

    browser.get(site["base"] + "/dashboard")
    bar = tab_to("a.bar-link")
    target = urljoin(browser.current_url, browser.execute_script("return arguments[0].getAttribute('href');", bar))
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    deadline = time.time() + 30
    while time.time() < deadline and urldefrag(browser.current_url)[0] != urldefrag(target)[0]:
        time.sleep(0.05)
    assert urldefrag(browser.current_url)[0] == urldefrag(target)[0]
    browser.get(site["base"] + "/query")
    button = tab_to("button.load:not([data-name=store_statistics])")
    name = button.get_attribute("data-name")
    ActionChains(browser).send_keys(Keys.ENTER).perform()
    assert browser.execute_script("return document.getElementById('query').value;") == query_file(name).text
