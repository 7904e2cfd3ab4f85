"""Formats whose files state no positions cite a page and a box: a DOCX's elements carry the page
numbers Word recorded in the file, and every element is placed on the document as LibreOffice
renders it; a quote traces to the rendered page with a box on its words, checked against poppler's
word boxes on the same rendering (an engine that is not ours). Table cells have boxes too: a slide's
table from its geometry, a DOCX table from the rendering; the command line, the web page, the JSON
and the Web Annotation name a cell alike, counted from 1."""

from __future__ import annotations

import json
import time
from urllib.parse import quote

import drawn_office
import psutil
import pytest

import kg_decoder
from boxes import within
from invariants import check_document
from kg_decoder.model import RENDERED_PDF_POINTS

PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "
SLIDE = (720.0, 540.0)  # a 10 x 7.5 inch slide, in points


@pytest.fixture(scope="module")
def paged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("paged")
    store = kg_decoder.open_store(folder / "store")
    docx = drawn_office.make_paged_docx(folder / "pages.docx")
    pptx = drawn_office.make_placed_pptx(folder / "slides.pptx")
    return store, kg_decoder.decode(docx, store=store), kg_decoder.decode(pptx, store=store)


def rendered_file(store, result):
    return store.path / "renders" / f"{store.document_info(result.document).sha256}.pdf"


def test_docx_elements_carry_their_rendered_pages_and_a_box_on_the_rendering(paged):
    store, docx, _ = paged
    check_document(store, docx.document)
    elements = [e for e in store.document_elements(docx.document) if e.category != "Image"]
    assert [(" ".join(e.text.split()), e.page_number) for e in elements] == drawn_office.DOCX_PAGES
    assert all(e.coordinate_system == RENDERED_PDF_POINTS and e.bbox and e.rendered_page_number
               for e in elements)
    assert [e.rendered_page_number for e in elements] == [1, 1, 2, 2, 3]  # LibreOffice lays it out alike
    said = store.select_rows(PREFIXES + f"SELECT ?from WHERE {{ GRAPH ?g {{ <{docx.document}> tg:pageNumbersFrom ?from }} }}")
    assert said.rows[0][0].startswith("the rendering")
    [picture] = [e for e in store.document_elements(docx.document) if e.category == "Image"]
    assert picture.rendered_page_number and picture.page_number == picture.rendered_page_number
    run = store.rendering_run(docx.document)
    assert run.renderer.startswith("LibreOffice ") and run.rendered_page_count == 3
    assert kg_decoder.validate(store=store, document=docx.document).conforms
    assert store.table("audit-elements-without-position").rows == []


def test_a_docx_quote_traces_to_its_rendered_page_and_the_words_poppler_finds_there(paged):
    store, docx, _ = paged
    [source] = kg_decoder.trace(quote=drawn_office.DOCX_QUOTE, document=docx.document, store=store)
    assert source.page_number == 3  # the page Word recorded
    [box] = source.boxes
    assert box.source == "characters" and box.coordinate_system == RENDERED_PDF_POINTS and box.page_number == 3
    assert box.verification == "verified"
    assert source.rendered_by.startswith("LibreOffice")
    page, words = drawn_office.poppler_box(rendered_file(store, docx), drawn_office.DOCX_QUOTE)
    assert page == 3
    assert within((box.left, box.top, box.right, box.bottom), words, (box.page_width, box.page_height)), (box, words)
    annotation = kg_decoder.web_annotations([source])["first"]["items"][0]
    [region] = [t for t in annotation["target"] if "renderedVia" in t]
    assert region["renderedVia"]["name"] == source.rendered_by and region["selector"]["value"] == "page=3"


def test_a_slide_quote_traces_to_its_slide_with_a_box_on_its_words(paged):
    store, _, pptx = paged
    [source] = kg_decoder.trace(quote=drawn_office.PPTX_QUOTE, document=pptx.document, store=store)
    assert source.page_number == 2 and source.page is not None  # the slide is the page
    [box] = source.boxes
    assert box.page_number == 2 and box.coordinate_system == RENDERED_PDF_POINTS
    page, words = drawn_office.poppler_box(rendered_file(store, pptx), drawn_office.PPTX_QUOTE)
    assert page == 2
    assert within((box.left, box.top, box.right, box.bottom), words, (box.page_width, box.page_height)), (box, words)
    # The text box was put 4 inches from the left and 5 from the top of a 10 x 7.5 inch slide, 5 x 1 inches.
    assert 4 * 72 < box.left < box.right < 9 * 72 and 5 * 72 < box.top < box.bottom < 6 * 72


def test_chunk_anchors_cite_the_rendered_pages(paged, tmp_path):
    store, docx, _ = paged
    kg_decoder.chunk_document(docx.document, store=store, chunk_size=16, min_chunk_tokens=2)
    anchors = [a for chunk in kg_decoder.document_chunks(docx.document, store=store) for a in chunk.anchors]
    assert {a.page_number for a in anchors} == {1, 2, 3}
    assert all(a.coordinate_system == RENDERED_PDF_POINTS and a.bbox for a in anchors)
    assert {a.verification for a in anchors} == {"verified"}  # each box borne out by the rendering's characters


def test_sections_within_the_pages_word_recorded(paged, tmp_path):
    store, docx, _ = paged
    with kg_decoder.open_store(tmp_path / "within") as other:
        path = tmp_path / "pages.docx"
        path.write_bytes(store.blob(store.document_info(docx.document).sha256))
        result = kg_decoder.decode(path, store=other, section_within_pages=True, section_strategy="element-type")
        pages = other.document_pages(result.document)
        assert [p.page_number for p in pages] == [1, 2, 3]
        assert result.pages == 3 and result.sections >= 3
        check_document(other, result.document)


def test_without_rendered_positions_elements_have_no_box_and_nothing_says_otherwise(paged, tmp_path):
    store, docx, _ = paged
    with kg_decoder.open_store(tmp_path / "plain") as other:
        path = tmp_path / "pages.docx"
        path.write_bytes(store.blob(store.document_info(docx.document).sha256))
        result = kg_decoder.decode(path, store=other, rendered_positions=False)
        assert all(e.bbox is None for e in other.document_elements(result.document))
        assert other.rendering_run(result.document) is None
        [source] = kg_decoder.trace(quote=drawn_office.DOCX_QUOTE, document=result.document, store=other)
        assert source.boxes == [] and source.page_number == 3


def test_decoding_again_changes_nothing(paged):
    store, docx, _ = paged
    before = store.quads()
    assert kg_decoder.decode(store.blob(store.document_info(docx.document).sha256), store=store,
                             file_name="pages.docx").status == "unchanged"
    assert store.quads() == before


def test_the_web_app_draws_the_rendered_pages_and_lists_them_per_element(paged):
    from urllib.parse import quote

    from kg_decoder.cli import load_web_app

    store, docx, _ = paged
    client = load_web_app().create_app(store).test_client()
    page = client.get(f"/renderings/{quote(docx.document, safe='')}/3.png")
    assert page.status_code == 200 and page.data.startswith(b"\x89PNG")
    assert client.get(f"/renderings/{quote(docx.document, safe='')}/9.png").status_code == 404
    assert client.get("/renderings/urn:document:nothing/1.png").status_code == 404
    listing = client.get(f"/documents/{quote(docx.document, safe='')}").get_data(as_text=True)
    placed = [e for e in store.document_elements(docx.document) if e.rendered_page_number]
    assert len(placed) == 6 and sum(e.category == "Image" for e in placed) == 1  # five paragraphs, the picture
    assert listing.count("rendered p. ") == len(placed)
    traced = client.get("/trace", query_string={"quote": drawn_office.DOCX_QUOTE, "document": docx.document})
    html = traced.get_data(as_text=True)
    assert "/3.png" in html and "as LibreOffice" in html and 'class="box characters verified"' in html


def test_the_command_line_renders_a_folder_ahead_in_one_run_with_the_same_positions(paged, tmp_path):
    from conftest import run_cli

    store, docx, pptx = paged
    folder = tmp_path / "in"
    folder.mkdir()
    for result, name in ((docx, "pages.docx"), (pptx, "slides.pptx")):
        (folder / name).write_bytes(store.blob(store.document_info(result.document).sha256))
    done = run_cli("decode", folder, "--store", tmp_path / "cli-store", "--progress-jsonl")
    assert done.returncode == 0, done.stderr
    reports = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert [r["current"] for r in reports if r["stage"] == "render ahead"] == [2]  # both in one run, ahead
    with kg_decoder.open_store(tmp_path / "cli-store") as other:
        assert len(list((tmp_path / "cli-store" / "renders").iterdir())) == 2
        for result in (docx, pptx):
            mine = [(e.element, e.bbox, e.rendered_page_number) for e in store.document_elements(result.document)]
            theirs = [(e.element, e.bbox, e.rendered_page_number) for e in other.document_elements(result.document)]
            assert mine == theirs


def box_of(row):
    return (row.left, row.top, row.right, row.bottom)


def test_a_slide_tables_cells_are_where_its_geometry_puts_them(paged):
    store, _, pptx = paged
    cells = drawn_office.slide_table_cells()
    [table] = [e for e in store.document_elements(pptx.document) if e.category == "Table"]
    assert table.page_number == 2 and table.rendered_page_number == 2
    rows = store.table_cells(table.element)
    assert sorted(row.text for row in rows) == sorted(cells)
    rendered = rendered_file(store, pptx)
    for row in rows:
        assert row.coordinate_system == RENDERED_PDF_POINTS and (row.page_width, row.page_height) == SLIDE
        assert within(box_of(row), cells[row.text], SLIDE), (row.text, box_of(row), cells[row.text])
        page, words = drawn_office.poppler_box(rendered, row.text)  # LibreOffice drew the words in the cell
        left, top, right, bottom = cells[row.text]
        assert page == 2 and left <= words[0] < words[2] <= right and top <= words[1] < words[3] <= bottom
    [source] = kg_decoder.trace(quote="South coast", document=pptx.document, store=store)
    [cell] = [cell for element in source.elements for cell in element.cells]
    assert (cell.row, cell.column, cell.label) == (3, 1, "row 3, column 1")
    [box] = source.boxes  # the quoted characters in the cell, on the slide's rendering
    assert (box.source, box.verification, box.page_number) == ("characters", "verified", 2)
    assert within((box.left, box.top, box.right, box.bottom), drawn_office.poppler_box(rendered, "South coast")[1],
                  SLIDE)
    left, top, right, bottom = cells["South coast"]
    assert left <= box.left < box.right <= right and top <= box.top < box.bottom <= bottom


def test_a_docx_tables_cells_are_where_the_rendering_draws_their_words(paged):
    store, docx, _ = paged
    [table] = [e for e in store.document_elements(docx.document) if e.category == "Table"]
    rows = store.table_cells(table.element)
    assert sorted(row.text for row in rows) == ["12.5", "North", "Region", "Revenue"]
    rendered = rendered_file(store, docx)
    for row in rows:
        page, words = drawn_office.poppler_box(rendered, row.text)
        assert page == 2 and row.rendered_page_number == 2
        assert within(box_of(row), words, (row.page_width, row.page_height)), (row.text, box_of(row), words)


def test_the_command_line_the_web_page_the_json_and_the_annotation_name_a_cell_alike(paged):
    from conftest import run_cli
    from kg_decoder.cli import load_web_app

    store, docx, _ = paged
    [source] = kg_decoder.trace(quote="12.5", document=docx.document, store=store)
    [cell] = [cell for element in source.elements for cell in element.cells]
    assert (cell.row, cell.column, cell.label) == (2, 2, "row 2, column 2")
    [box] = source.boxes
    assert (box.source, box.verification) == ("characters", "verified")
    assert source.to_json()["elements"][0]["cells"][0]["row"] == 2
    [target] = [t for t in kg_decoder.web_annotations([source])["first"]["items"][0]["target"]
                if t.get("id") == cell.iri]
    assert (target["selector"]["value"], target["label"]) == ("cell=2,2", "row 2, column 2")
    client = load_web_app().create_app(store).test_client()
    page = client.get("/trace", query_string={"quote": "12.5", "document": docx.document}).get_data(as_text=True)
    assert "cell row 2, column 2: 12.5" in page
    assert 'class="box characters verified"' in page and 'class="legend"' in page
    listed = client.get(f"/api/documents/{quote(docx.document, safe='')}").get_json()
    [shown] = [c for e in listed["elements"] for c in e["cells"] if c["text"] == "12.5"]
    assert (shown["row"], shown["column"], shown["label"]) == (2, 2, "row 2, column 2")
    store.flush()
    done = run_cli("trace", "--quote", "12.5", "--document", docx.document, "--store", store.path)
    assert done.returncode == 0, done.stderr
    assert "cell    row 2, column 2: '12.5'" in done.stdout and "(characters, verified)" in done.stdout


def test_a_trace_reads_the_rendering_made_when_decoding_and_never_renders(paged):
    """Without its rendering (lost from beside the store) a trace cannot check a box on the words: it
    gives the element's box, unverified, at once; decoding the document again renders it again."""
    store, _, pptx = paged
    rendered = rendered_file(store, pptx)
    kept = rendered.read_bytes()
    rendered.unlink()
    try:
        [source] = kg_decoder.trace(quote=drawn_office.PPTX_QUOTE, document=pptx.document, store=store)
        [box] = source.boxes
        assert (box.source, box.verification) == ("element", "unverified") and not rendered.exists()
        again = kg_decoder.decode(store.blob(store.document_info(pptx.document).sha256), store=store,
                                  file_name="slides.pptx")
        assert again.status == "unchanged" and rendered.is_file()
        [source] = kg_decoder.trace(quote=drawn_office.PPTX_QUOTE, document=pptx.document, store=store)
        assert [(b.source, b.verification) for b in source.boxes] == [("characters", "verified")]
    finally:
        if not rendered.exists():
            rendered.write_bytes(kept)


def test_a_long_rendering_is_read_in_page_ranges_by_forked_readers_alike(paged, monkeypatch):
    """Pages read side by side by forked processes are those one process reads, in order, packed with
    the letters and boxes of the characters PDFium's text layer reads there; a reader that dies has
    its pages read by the decode itself."""
    import os

    import pypdfium2 as pdfium

    from kg_decoder.decode.rendering import pages as rendered_pages
    from kg_decoder.decode.pdf.fonts import declared_heights
    from kg_decoder.decode.pdf.characters import page_text

    store, docx, _ = paged
    pdf = rendered_file(store, docx).read_bytes()
    monkeypatch.setenv("KG_DECODER_WORKER_THREADS", "1")
    alone = rendered_pages.read_rendered_pages(pdf)
    document = pdfium.PdfDocument(pdf)
    for number, page in enumerate(alone, 1):
        chars = page_text(document[number - 1], declared_heights(pdf, number)).chars
        assert [(c.char, c.box, c.line_box) for c in chars] == \
            [(page.text[i], page.box(i), page.line_box(i)) for i in range(len(page))]
    monkeypatch.setenv("KG_DECODER_WORKER_THREADS", "3")
    monkeypatch.setattr(rendered_pages, "_PAGES_PER_READER", 1)

    def same(pages):
        return _packed(pages) == _packed(alone)

    assert len(document) == 3 and sum(len(page) for page in alone) > 0
    assert same(rendered_pages.read_rendered_pages(pdf))
    decoder, reading = os.getpid(), rendered_pages._pages_of

    def dies_in_a_reader(*arguments):
        if os.getpid() != decoder:
            os._exit(3)
        return reading(*arguments)

    monkeypatch.setattr(rendered_pages, "_pages_of", dies_in_a_reader)
    assert same(rendered_pages.read_rendered_pages(pdf))


def _packed(pages) -> list:
    return [(page.size, page.pictures, [(page.text[i], page.box(i), page.line_box(i)) for i in range(len(page))])
            for page in pages]


def test_a_long_rendering_is_read_ahead_by_a_reader_process_alike(paged, monkeypatch):
    """A long rendering's pages read by reader processes as soon as it is done (beside the partition),
    in page ranges side by side, are those the decode reads; the readers start while a conversion that
    takes its time goes on; a reader that fails, or a short rendering, leaves them to be read when
    placing, and its readers started early are stopped."""
    from kg_decoder.decode.rendering import pages as rendered_pages

    store, docx, _ = paged
    pdf = rendered_file(store, docx).read_bytes()

    class Rendered:  # a conversion already done
        cancelled = False

        def over_within(self, seconds):
            return True

        def result(self):
            return pdf

        def cancel(self):
            self.cancelled = True

    monkeypatch.setattr(rendered_pages, "_PAGES_AHEAD", 3)
    monkeypatch.setenv("KG_DECODER_WORKER_THREADS", "1")
    ahead = rendered_pages.ReadAhead(Rendered())
    pages = ahead.pages()
    assert ahead.result() == pdf and pages is not None and len(pages) == 3
    read_here = rendered_pages.read_rendered_pages(pdf)
    assert _packed(pages) == _packed(read_here)  # the characters, and each page's size and pictures
    monkeypatch.setenv("KG_DECODER_WORKER_THREADS", "2")  # two readers side by side, a page range each
    monkeypatch.setattr(rendered_pages, "_PAGES_PER_READER", 1)
    fed = []
    monkeypatch.setattr(rendered_pages.Helper, "send",
                        lambda reader, name, pdf, numbers, send=rendered_pages.Helper.send: (
                            fed.append((reader, numbers)), send(reader, name, pdf, numbers)))
    side_by_side = rendered_pages.ReadAhead(Rendered()).pages()
    assert [numbers for _, numbers in fed] == [range(0, 1), range(1, 3)]
    assert _packed(side_by_side) == _packed(read_here)

    class Rendering(Rendered):  # a conversion that takes its time: the readers start while it goes on
        def over_within(self, seconds):
            time.sleep(seconds)
            return False

        def result(self):
            time.sleep(1.0)
            return pdf

    fed.clear()
    monkeypatch.setattr(rendered_pages, "_READERS_AFTER_SECONDS", 0.1)
    started, spawn = [], rendered_pages.Helper.spawn

    def starts():
        started.append(time.monotonic())
        return spawn()

    monkeypatch.setattr(rendered_pages.Helper, "spawn", starts)
    began = time.monotonic()
    assert _packed(rendered_pages.ReadAhead(Rendering()).pages()) == _packed(read_here)
    assert len(started) == 2 and all(moment < began + 1.0 for moment in started) and len(fed) == 2
    monkeypatch.setattr(rendered_pages, "READ_PAGES", "os:abort")  # a reader whose call fails
    assert rendered_pages.ReadAhead(Rendered()).pages() is None
    monkeypatch.setattr(rendered_pages, "_PAGES_AHEAD", 4)  # too short to read ahead: read when placing
    assert rendered_pages.ReadAhead(Rendered()).pages() is None
    started.clear()
    before = {child.pid for child in psutil.Process().children()}  # the decode's worker
    assert rendered_pages.ReadAhead(Rendering()).pages() is None  # its readers started early are stopped
    assert len(started) == 2 and {child.pid for child in psutil.Process().children()} == before


def test_a_quote_from_a_paragraph_that_runs_over_pages_traces_to_the_page_that_draws_it(tmp_path):
    """A DOCX paragraph LibreOffice lays over three pages: a quote from its middle traces to the page
    the rendering draws it on, with the boxes of its characters there (not the paragraph's first page
    with its box), and every page number of the trace, the boxes and the graph agree."""
    import io

    import pypdfium2 as pdfium
    from docx import Document

    words = "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor".split()
    long = " ".join(words[(i * 7 + 2) % len(words)] for i in range(1500))
    document = Document()
    document.add_paragraph("KGFLOW a heading paragraph")
    hidden = document.add_paragraph("A short paragraph with words enough that the rendering places it by those it draws, "
                                    "all of them here on its first page. ").add_run("KGQUOTE the company grew")
    hidden.font.hidden = True  # in the text, not drawn: the same words drawn later are another paragraph's
    document.add_page_break()
    document.add_paragraph(long[:4000] + " KGQUOTE the company grew big last year. " + long[4000:])
    buffer = io.BytesIO()
    document.save(buffer)
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(buffer.getvalue(), store=store, file_name="flow.docx")
        rendering = pdfium.PdfDocument(next((tmp_path / "store" / "renders").glob("*.pdf")).read_bytes())
        texts = [page.get_textpage().get_text_range() for page in rendering]
        drawn_on = [number for number, text in enumerate(texts, 1) if "KGQUOTE" in text]
        paragraph = max(store.document_elements(decoded.document), key=lambda e: len(e.text or ""))
        assert drawn_on and drawn_on[0] > paragraph.page_number  # the quote is pages after the paragraph begins
        assert paragraph.page_number == next(n for n, t in enumerate(texts, 1) if "lorem" in t or "ipsum" in t)
        sources = kg_decoder.trace(quote="KGQUOTE the company grew", document=decoded.document, store=store)
        [source] = [s for s in sources if any(e.char_length > 1000 for e in s.elements)]
        [other] = [s for s in sources if s is not source]  # the hidden words: not verified on the other's page
        assert all(box.source != "characters" for box in other.boxes), other.boxes
        assert source.page_number == drawn_on[0]
        assert source.boxes and {(box.page_number, box.source, str(box.verification)) for box in source.boxes} == {
            (drawn_on[0], "characters", "verified")}
        regions = [target["selector"]["value"] for target in
                   kg_decoder.web_annotations([source])["first"]["items"][0]["target"][1:]]
        assert regions and set(regions) == {f"page={drawn_on[0]}"}  # the Web Annotation says the same page
