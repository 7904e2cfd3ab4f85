"""The text index beside the graph (SQLite FTS5, trigram): quotes found in every document through it,
kept in step with the graph (written after each commit, removed with the document, replaced by a
re-decode, repaired at open after a crash between the two, rebuilt by reindex), on both store
backends, with bounded cost."""

from __future__ import annotations

import sqlite3
from dataclasses import replace

import pytest
from servers import oxigraph_server

import kg_decoder
from kg_decoder.graph import indexing
from kg_decoder.graph.remote_store import StoreConfig
from kg_decoder.graph.text_index import INDEX_FILE, TextIndex
from kg_decoder.model.errors import RequestError, TimeLimit

LIGATURES = "The e\ufb03cient method of uni\ufb01ed \u201cprovenance\u201d was well-\nknown to every docu-\nment reader."
PLAIN = "Nothing but plain words: an efficient method, indeed, and a unified view of provenance."


def index_rows(store) -> tuple:
    """What the index holds, as comparable rows (documents with their decodes, texts, the texts holding
    each trigram)."""
    path = store.work_folder() / INDEX_FILE
    with sqlite3.connect(path) as db:
        documents = sorted(db.execute("SELECT document, activity, ended, file_name FROM documents"))
        texts = sorted(db.execute("SELECT document, segment, kind, position, page_number, text FROM segments"))
        counts = sorted(db.execute("SELECT trigram, texts FROM trigram_counts WHERE texts > 0"))
    return documents, texts, counts


def counted_as_the_full_text_index_does(store) -> bool:
    """Whether the index's trigram counts are those FTS5 itself holds."""
    with sqlite3.connect(store.work_folder() / INDEX_FILE) as db:
        db.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, segment_keys, 'row')")
        held = sorted(db.execute("SELECT term, doc FROM temp.v"))
        return held == sorted(db.execute("SELECT trigram, texts FROM trigram_counts WHERE texts > 0")) and held != []


def test_substring_and_phrase_hits_with_ligatures_and_hyphenation(store):
    ligatures = kg_decoder.decode(LIGATURES.encode(), store=store).document
    plain = kg_decoder.decode(PLAIN.encode(), store=store).document
    found = kg_decoder.search("efficient method", store=store)
    assert found.total == 2 and {hit.document for hit in found.hits} == {ligatures, plain}
    assert all(hit.as_written and hit.quote == "efficient method" for hit in found.hits)  # ligatures stored as letters
    [plain_hit] = [hit for hit in found.hits if hit.document == plain]
    assert plain_hit.before == "Nothing but plain words: an " and plain_hit.after.startswith(", indeed")
    # a quote typed with a ligature, a substring inside words, a word broken at a line end, a hyphenated
    # word broken there, curly quotes
    assert kg_decoder.search("e\ufb03cient method", store=store).total == 2
    assert [hit.quote for hit in kg_decoder.search("ficient meth", store=store).hits] == ["ficient meth"] * 2
    assert [hit.quote.split() for hit in kg_decoder.search("document reader", store=store).hits] \
        == [["docu-", "ment", "reader"]]
    assert [hit.quote.split() for hit in kg_decoder.search("well-known", store=store).hits] == [["well-", "known"]]
    assert {hit.document for hit in kg_decoder.search('unified "provenance"', store=store).hits} == {ligatures}
    assert kg_decoder.search("a sentence no document holds", store=store).total == 0
    # the trace through the index: the same places, ranked the same, paged
    sources = kg_decoder.trace(quote="efficient method", store=store)
    assert [(s.document.iri, s.quote) for s in sources] == [(h.document, h.quote) for h in found.hits]
    assert [s.document.iri for s in kg_decoder.trace(quote="efficient method", store=store, limit=1, offset=1)] \
        == [found.hits[1].document]


def test_a_hit_in_a_table_has_its_cells_words_around_it_not_markup(store, corpus_dir):
    kg_decoder.decode(corpus_dir / "stanley-cups.csv", store=store)
    [hit] = kg_decoder.search("Maple Leafs", store=store).hits
    assert hit.before and hit.after and "13" in hit.after
    assert not any(mark in hit.before + hit.after for mark in ("<", ">", "&amp;", "\\n"))


def test_bounds_refuse_too_short_too_long_and_too_slow(store, monkeypatch):
    kg_decoder.decode(PLAIN.encode(), store=store)
    with pytest.raises(RequestError) as short:
        kg_decoder.trace(quote="a -b", store=store)
    assert short.value.code == "quote-too-short" and short.value.http_status == 400
    assert kg_decoder.trace(quote="an", document=kg_decoder.search("plain", store=store).hits[0].document,
                            store=store)  # in one document a short quote is fine
    with pytest.raises(RequestError) as long:
        kg_decoder.search("word " * 500, store=store)
    assert long.value.code == "quote-too-long" and long.value.http_status == 413
    with pytest.raises(RequestError, match="limit"):
        kg_decoder.search("plain", store=store, limit=1000)
    monkeypatch.setattr("kg_decoder.cite.places.MAX_CANDIDATE_TEXTS", 0)
    with pytest.raises(RequestError) as common:
        kg_decoder.trace(quote="plain", store=store)  # every place at once
    assert common.value.code == "quote-too-common"
    assert len(kg_decoder.search("plain", store=store).hits) == 1  # a page is read in windows: not capped
    assert len(kg_decoder.trace(quote="plain", store=store, limit=5)) == 1
    monkeypatch.undo()
    with pytest.raises(TimeLimit):
        kg_decoder.search("plain", store=store, seconds=-1)


def test_a_quote_in_more_texts_than_a_window_pages_to_every_place(store, monkeypatch):
    monkeypatch.setattr("kg_decoder.cite.places.FIRST_WINDOW", 2)
    monkeypatch.setattr("kg_decoder.cite.places.LARGEST_WINDOW", 4)
    written, folded = "the final phrase", "the fi-\nnal phrase"  # the second found, not as written
    parts = [f"Part {n}: {written if n % 3 else folded} ends." for n in range(13)]
    kg_decoder.decode("\n\n".join(parts).encode(), store=store, section_strategy="size", section_max_size=40)
    every = kg_decoder.trace(quote="the final phrase", store=store)  # no limit: every place, one read
    assert len(every) == 13 and len({s.segment for s in every}) == 13
    first = kg_decoder.search("the final phrase", store=store, limit=3)
    assert len(first.hits) == 3 and not first.total_exact and 3 <= first.total < 13  # a window or two read
    paged, offset = [], 0
    while True:
        page = kg_decoder.search("the final phrase", store=store, limit=3, offset=offset)
        paged += [(hit.segment, hit.start, hit.as_written) for hit in page.hits]
        if page.total_exact and offset + 3 >= page.total:
            break
        offset += 3
    assert page.total == 13 and len(paged) == 13  # every place once, none twice
    assert sorted(paged) == sorted((s.segment, s.start, s.quote == written) for s in every)
    assert [(s.segment, s.start) for s in kg_decoder.trace(quote="the final phrase", store=store, limit=3, offset=6)] \
        == [place[:2] for place in paged[6:9]]  # the trace pages the same places
    assert paged[0][2] and not paged[1][2]  # as written first within the first window of two texts
    absent = kg_decoder.search("the final phrase is absent", store=store)
    assert (absent.total, absent.total_exact, absent.hits) == (0, True, [])
    assert kg_decoder.trace(quote="the final phrase is absent", store=store, limit=3) == []


def test_a_common_phrase_reads_each_section_once_however_many_places_it_holds(store, monkeypatch):
    """A page of a common phrase's places, crowded in a few long sections, reads each section's elements
    and chunks once: it read them again for every place (98 s for 100 places of "of the")."""
    sentence = "The history of the city is the story of the river, and of the people of the valley. "
    kg_decoder.decode("\n\n".join(f"Part {n}. " + sentence * 3 for n in range(200)).encode(), store=store,
                      section_strategy="size", section_max_size=20_000)
    reads: list[str] = []
    read_elements = type(store).segment_text_elements
    monkeypatch.setattr(type(store), "segment_text_elements",
                        lambda self, segment: reads.append(segment) or read_elements(self, segment))
    sources = kg_decoder.trace(quote="of the", store=store, limit=100)
    assert len(sources) == 100
    segments = {source.segment for source in sources}
    assert len(segments) < 10 and sorted(reads) == sorted(segments), (len(reads), len(segments))
    assert all(source.elements for source in sources)


def test_removed_and_redecoded_documents_leave_the_index(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        first = kg_decoder.decode(LIGATURES.encode(), store=store)
        kept = kg_decoder.decode(PLAIN.encode(), store=store).document
        [hit] = kg_decoder.search("document reader", store=store).hits
        assert hit.segment_kind == "section"
        again = kg_decoder.decode(LIGATURES.encode(), store=store, section_strategy="size", section_max_size=40)
        assert again.document == first.document
        hits = kg_decoder.search("document reader", store=store).hits
        assert len(hits) == 1 and hits[0].segment != hit.segment  # the new decode's section
        assert hits[0].segment in {s.segment for s in store.text_segments(first.document)}
        store.remove_document(first.document)
        assert kg_decoder.search("document reader", store=store).total == 0
        assert counted_as_the_full_text_index_does(store)  # kept in step by re-decodes and removals
        assert [h.document for h in kg_decoder.search("efficient method", store=store).hits] == [kept]
        assert not store.text_index.audit().has_findings
        # removed by a user's own update, behind the index's back: the audit sees it, a search drops it
        store.sparql_update(f"DELETE WHERE {{ GRAPH <urn:graph:source> {{ ?run <http://www.w3.org/ns/prov#used> <{kept}> ;"
                            f" ?p ?o }} }} ; DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{kept}> ?p ?o }} }}")
        assert [row[1] for row in store.text_index.audit().table.rows] == ["in the index, not in the graph"]
        assert kg_decoder.search("efficient method", store=store).hits == []
        assert not store.text_index.audit().has_findings


def test_a_crash_between_commit_and_index_is_repaired_at_open(tmp_path, monkeypatch):
    with kg_decoder.open_store(tmp_path / "store") as store:
        kg_decoder.decode(PLAIN.encode(), store=store)
        monkeypatch.setattr(indexing.StoreTextIndex, "add_committed", lambda self, document: None)  # the crash
        missed = kg_decoder.decode(LIGATURES.encode(), store=store).document
        assert kg_decoder.search("document reader", store=store).total == 0
        assert [row[0] for row in store.text_index.audit().table.rows] == [missed]
    monkeypatch.undo()
    with kg_decoder.open_store(tmp_path / "store") as store:
        [hit] = kg_decoder.search("document reader", store=store).hits
        assert hit.document == missed and not store.text_index.audit().has_findings
        path = store.work_folder() / INDEX_FILE
    with sqlite3.connect(path) as db:  # as an index made before the trigram counts were kept
        db.execute("DELETE FROM trigram_counts")
        db.execute("DELETE FROM meta WHERE name = 'trigram_counts'")
    with kg_decoder.open_store(tmp_path / "store") as store:
        assert [hit.document for hit in kg_decoder.search("document reader", store=store).hits] == [missed]
        assert counted_as_the_full_text_index_does(store)  # counted when the index was opened


def test_a_new_stores_first_document_is_indexed_once(tmp_path, monkeypatch):
    put, real_put_many = [], TextIndex.put_many

    def put_many(self, documents):
        put.extend(held.document for held, _ in documents)
        return real_put_many(self, documents)

    monkeypatch.setattr(TextIndex, "put_many", put_many)
    with kg_decoder.open_store(tmp_path / "store") as store:
        first = kg_decoder.decode(PLAIN.encode(), store=store).document
        assert put == [first]  # not caught up with the graph at opening and put again after the commit
        assert [hit.document for hit in kg_decoder.search("efficient method", store=store).hits] == [first]
        assert not store.text_index.audit().has_findings


def test_reindex_equals_the_incremental_index(generated_store, cli):
    store, _ = generated_store
    incremental = index_rows(store)
    assert len(incremental[0]) == len(store.document_summaries()) and incremental[1]
    assert store.text_index.rebuild() == len(incremental[0])
    assert index_rows(store) == incremental


def test_the_cli_searches_removes_and_reindexes(tmp_path, cli):
    (tmp_path / "a.txt").write_text(LIGATURES, encoding="utf-8")
    assert cli("decode", tmp_path / "a.txt", "--store", tmp_path / "store").returncode == 0
    found = cli("search", "document reader", "--store", tmp_path / "store")
    assert found.returncode == 0 and "a.txt" in found.stdout and "[docu- ment reader]" in found.stdout
    traced = cli("trace", "--quote", "efficient method", "--store", tmp_path / "store", "--offset", "1")
    assert traced.returncode == 1  # one place only: the second page of places is empty
    assert cli("reindex", "--store", tmp_path / "store").returncode == 0
    assert cli("remove", tmp_path / "a.txt", "--store", tmp_path / "store").returncode == 0
    assert cli("search", "document reader", "--store", tmp_path / "store").returncode == 1


def test_a_remote_store_keeps_an_index_in_each_front_ends_cache(tmp_path, monkeypatch):
    with oxigraph_server(tmp_path / "oxigraph") as server:
        config = StoreConfig.at(server.url).with_library(str(tmp_path / "library"))
        with kg_decoder.open_store(replace(config, cache=str(tmp_path / "one"))) as one:
            first = kg_decoder.decode(LIGATURES.encode(), store=one).document
            assert not (tmp_path / "one" / INDEX_FILE).exists()  # a writer that never searched keeps no index
            assert [h.document for h in kg_decoder.search("document reader", store=one).hits] == [first]
            with kg_decoder.open_store(replace(config, cache=str(tmp_path / "two"))) as two:
                # another front end catches up from the graph's decode activities
                assert [s.document.iri for s in kg_decoder.trace(quote="document reader", store=two)] == [first]
                second = kg_decoder.decode(PLAIN.encode(), store=one).document
                monkeypatch.setattr(indexing, "REMOTE_REFRESH_SECONDS", 0.0)
                assert {h.document for h in kg_decoder.search("efficient method", store=two).hits} == {first, second}
                assert index_rows(two) == index_rows(one)
                assert (tmp_path / "two" / INDEX_FILE).is_file()
            one.sparql_update("CLEAR ALL")  # behind every index's back
        with kg_decoder.open_store(replace(config, cache=str(tmp_path / "two"))) as two:
            assert kg_decoder.search("efficient method", store=two).total == 0  # the index saw the graph emptied
            assert not two.text_index.audit().has_findings and index_rows(two) == ([], [], [])


def test_the_server_searches_and_traces_within_its_bounds(tmp_path, cli):
    import requests
    from conftest import serve_process

    # a.txt's quote broken at a line's end: found, not as written, so after b.txt's
    (tmp_path / "a.txt").write_text(LIGATURES.replace("e\ufb03cient", "e\ufb03-\ncient"), encoding="utf-8")
    (tmp_path / "b.txt").write_text(PLAIN, encoding="utf-8")
    assert cli("decode", tmp_path / "a.txt", tmp_path / "b.txt", "--store", tmp_path / "store").returncode == 0
    base, process = serve_process(tmp_path / "store", "--request-workers", "1", "--write-token", "secret")
    try:
        found = requests.get(base + "/api/search", params={"q": "efficient method", "limit": 1}, timeout=60)
        assert found.status_code == 200, found.text
        body = found.json()
        assert body["total"] == 2 and len(body["hits"]) == 1 and body["hits"][0]["file_name"] == "b.txt"
        assert body["hits"][0]["before"].endswith("an ") and body["hits"][0]["quote"] == "efficient method"
        traced = requests.get(base + "/api/trace", params={"quote": "efficient method", "offset": 1}, timeout=60)
        assert [s["document"]["file_name"] for s in traced.json()["sources"]] == ["a.txt"]
        for params, status, code in [({"q": "ab"}, 400, "quote-too-short"), ({"q": "x" * 2001}, 413, "quote-too-long"),
                                     ({"q": "plain", "limit": "1000"}, 400, "bad-limit"),
                                     ({"q": "plain", "offset": "-1"}, 400, "bad-offset"), ({}, 400, "bad-query")]:
            refused = requests.get(base + "/api/search", params=params, timeout=60)
            assert (refused.status_code, refused.json()["error"]) == (status, code)
        # decoded while the server runs: in the index at once
        (tmp_path / "c.txt").write_text("A third text about an efficient method.", encoding="utf-8")
        with open(tmp_path / "c.txt", "rb") as stream:
            assert requests.post(base + "/api/documents", files={"file": stream}, timeout=120,
                                 headers={"Authorization": "Bearer secret"}).status_code == 201
        found = requests.get(base + "/api/search", params={"q": "efficient method"}, timeout=60).json()
        assert sorted(hit["file_name"] for hit in found["hits"]) == ["a.txt", "b.txt", "c.txt"]
    finally:
        process.kill()
        process.wait()
    base, process = serve_process(tmp_path / "store", "--request-workers", "1", "--query-timeout", "0.001")
    try:
        slow = requests.get(base + "/api/search", params={"q": "efficient method"}, timeout=60)
        assert slow.status_code == 503 and slow.json()["error"] in ("time-limit", "busy")
    finally:
        process.kill()
        process.wait()


@pytest.mark.slow
def test_chromium_shows_a_search_hit_on_its_page_with_its_box(tmp_path):
    """From the search box in any page's header to the results: the page's thumbnail with the box of
    the hit drawn over the words."""
    import threading
    import time

    from test_chunks_facts_trace import drawn_box, make_placed_pdf
    from test_web import assert_drawn_over, headless_chromium
    from waitress.server import create_server

    from kg_decoder.cli import load_web_app

    make_placed_pdf(tmp_path / "placed.pdf")
    with kg_decoder.open_store(tmp_path / "store") as store:
        kg_decoder.decode(tmp_path / "placed.pdf", store=store)
        kg_decoder.decode(PLAIN.encode(), store=store)  # a document without pages: a hit without a thumbnail
        server = create_server(load_web_app().create_app(store), host="127.0.0.1", port=0, threads=4)
        threading.Thread(target=server.run, daemon=True).start()
        browser = headless_chromium()
        try:
            browser.get(f"http://127.0.0.1:{server.effective_port}/documents")
            box = browser.find_element("css selector", "nav .nav-search input")
            box.send_keys("kilo lima\n")
            deadline = time.time() + 60
            while time.time() < deadline and not browser.execute_script(
                    "var i = document.querySelector('.hit .page-image'); return i && i.complete && i.naturalWidth > 0;"):
                time.sleep(0.2)
            assert browser.current_url.split("?")[0].endswith("/search")
            assert browser.find_element("id", "count").text == "1–1 of 1 places"
            assert browser.find_element("css selector", ".hit mark").text == "kilo lima"
            assert "placed.pdf" in browser.find_element("css selector", ".hit .chain").text
            image = browser.execute_script(
                "return document.querySelector('.hit .page-image').getBoundingClientRect().toJSON();")
            boxes = browser.execute_script("return Array.from(document.querySelectorAll('.hit .box.characters'))"
                                           ".map(b => b.getBoundingClientRect().toJSON());")
        finally:
            browser.quit()
            server.close()
    [drawn] = boxes
    assert image["width"] <= 221  # a thumbnail
    assert_drawn_over(image, drawn, drawn_box(1, "kilo lima"), (612, 792))


@pytest.mark.slow
def test_chromium_draws_every_thumbnail_of_a_search_page_without_a_busy_answer(tmp_path):
    """Ten hits on ten pages: every page picture is drawn, none answered 503 busy (a client may have
    two pictures drawn at once; the page asks for them two at a time)."""
    import json
    import threading
    import time

    from reportlab.pdfgen import canvas
    from test_web import headless_chromium
    from waitress.server import create_server

    from kg_decoder.cli import load_web_app

    drawing = canvas.Canvas(str(tmp_path / "ten.pdf"))
    for number in range(10):
        drawing.drawString(72, 700, f"Page {number + 1} reports KGTHUMB sales of the quarter.")
        drawing.showPage()
    drawing.save()
    with kg_decoder.open_store(tmp_path / "store") as store:
        kg_decoder.decode(tmp_path / "ten.pdf", store=store)
        server = create_server(load_web_app().create_app(store), host="127.0.0.1", port=0, threads=8)
        threading.Thread(target=server.run, daemon=True).start()
        browser = headless_chromium(logs=True)
        try:
            browser.get(f"http://127.0.0.1:{server.effective_port}/search?q=KGTHUMB")
            deadline = time.time() + 120
            while time.time() < deadline and not browser.execute_script(
                    "var images = Array.from(document.querySelectorAll('.hit .page-image'));"
                    "return images.length > 0 && images.every(i => !i.dataset.src && i.complete);"):
                time.sleep(0.2)
            drawn = browser.execute_script(
                "return Array.from(document.querySelectorAll('.hit .page-image')).map(i => i.naturalWidth);")
            statuses = [json.loads(entry["message"])["message"]["params"]["response"]["status"]
                        for entry in browser.get_log("performance")
                        if json.loads(entry["message"])["message"]["method"] == "Network.responseReceived"]
        finally:
            browser.quit()
            server.close()
    assert len(drawn) == 10 and all(width > 0 for width in drawn), drawn
    assert [status for status in statuses if status >= 400] == []
