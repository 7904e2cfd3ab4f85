"""A quote traces to its page and to a box on the words where a viewer shows them, whatever the
page's geometry (MediaBox origin, CropBox, /Rotate, /UserUnit), with ligature glyphs, a word
hyphenated across lines, a sentence across two columns and a table row stored down its columns.
The PDFs are drawn here, so where every word went is known; a box must be within 2 % of the
page's size on each edge. And a PDF whose text layer fast reads nothing of still decodes."""

from __future__ import annotations

import io
from pathlib import Path

import drawn_pdfs
import pytest
from PIL import Image

import kg_decoder
from invariants import check_document
from kg_decoder.cite.chunks import chunk_document, document_chunks
from kg_decoder.cite.facts import add_facts
from kg_decoder.serve.pages import page_image

TABLES = Path(__file__).resolve().parents[3] / "shared" / "tables-icdar2013"
EX = "http://example.org/"


def assert_near(got, want, size, what):
    width, height = size
    tolerance = (0.02 * width, 0.02 * height, 0.02 * width, 0.02 * height)
    assert all(abs(g - w) <= t for g, w, t in zip(got, want, tolerance)), f"{what}: {got} is not at {want}"


def boxes_of(source):
    return [(b.left, b.top, b.right, b.bottom) for b in source.boxes]


def traced(drawn, store):
    """Decode a drawn PDF and trace its quote: the one source found, and the decode."""
    decoded = kg_decoder.decode(drawn.path, store=store)
    [source] = kg_decoder.trace(quote=drawn.quote, document=decoded.document, store=store)
    return source, decoded


def assert_on_the_words(source, drawn, what):
    """Each box within 2 % of where its words were drawn, and as high as the line (ascent to descent)."""
    boxes = boxes_of(source)
    assert len(boxes) == len(drawn.boxes), (what, boxes)
    for got, want in zip(boxes, drawn.boxes):
        assert_near(got, want, drawn.page_size, what)
        assert got[3] - got[1] == pytest.approx(want[3] - want[1], rel=0.1), f"{what}: {got} is not as high as {want}"


@pytest.fixture(scope="module")
def fidelity_store(tmp_path_factory):
    return kg_decoder.open_store(tmp_path_factory.mktemp("fidelity-store"))


@pytest.mark.parametrize("geometry", drawn_pdfs.GEOMETRIES)
def test_a_quote_traces_to_the_words_whatever_the_page_geometry(geometry, fidelity_store, tmp_path):
    drawn = drawn_pdfs.geometry_page(tmp_path, geometry)
    source, decoded = traced(drawn, fidelity_store)
    assert source.page_number == drawn.page_number == 2
    assert source.quote == drawn.quote
    assert_on_the_words(source, drawn, geometry)
    [box] = source.boxes
    assert box.source == "characters" and box.page_number == 2
    assert (box.page_width, box.page_height) == pytest.approx(drawn.page_size)
    # The element box holds the words too, and the picture is where it was drawn.
    [element] = [e for e in fidelity_store.document_elements(decoded.document) if e.element == box.element]
    words = drawn.boxes[0]
    assert element.bbox[0] - 3 <= words[0] and element.bbox[2] + 3 >= words[2], (element.bbox, words)
    assert element.bbox[1] - 3 <= words[1] and element.bbox[3] + 3 >= words[3], (element.bbox, words)
    [image] = fidelity_store.document_images(decoded.document)
    assert image.page_number == 2
    assert_near(image.bbox, drawn.image, drawn.page_size, f"{geometry} picture")
    check_document(fidelity_store, decoded.document)
    # The page image the trace view draws the box on has the words' ink under the box.
    drawing = Image.open(io.BytesIO(page_image(fidelity_store, source.page))).convert("L")
    scale = drawing.width / box.page_width
    assert drawing.height == pytest.approx(box.page_height * scale, abs=2)
    assert ink(drawing, (box.left, box.top, box.right, box.bottom), scale) > 0.08
    below = (box.left, box.bottom + 60, box.right, box.bottom + 60 + (box.bottom - box.top))  # blank paper
    assert ink(drawing, below, scale) < 0.01


def ink(drawing, box, scale) -> float:
    """The share of dark pixels of a page image inside a box given in page units."""
    region = drawing.crop(tuple(round(v * scale) for v in box))
    histogram = region.histogram()  # 256 counts of a greyscale image
    return sum(histogram[:128]) / max(1, sum(histogram))


def test_ligature_glyphs_are_stored_as_their_letters_and_the_boxes_stay_on_the_glyphs(fidelity_store, tmp_path):
    """The text layer holds U+FB03, U+FB00, U+FB01 (issue 54, item 9): the stored text holds the letters
    every other reader gives, every offset counted in them, and the boxes are still on the glyphs."""
    drawn = drawn_pdfs.ligatures(tmp_path)
    source, decoded = traced(drawn, fidelity_store)
    text = fidelity_store.text(fidelity_store.segment_info(source.segment).sha256, source.segment)
    assert text[source.start:source.end] == source.quote == "efficient staff finished the office"
    assert not any("\ufb00" <= char <= "\ufb06" for char in text)
    elements = fidelity_store.document_elements(decoded.document)
    assert not any("\ufb00" <= char <= "\ufb06" for element in elements for char in element.text or "")
    assert_on_the_words(source, drawn, "ligatures")
    # A fact's quote is found the same way in its chunk.
    chunk_document(decoded.document, store=fidelity_store)
    [chunk] = document_chunks(decoded.document, store=fidelity_store)
    fact = (EX + "staff", EX + "finished", EX + "report")
    assert add_facts(chunk.iri, [fact], [{"quote": "staff finished"}], store=fidelity_store).status == "added"
    [from_fact] = kg_decoder.trace(fact=fact, store=fidelity_store)
    assert from_fact.quote == "staff finished"


def test_a_word_hyphenated_across_lines_is_found_whole_with_a_box_per_line(fidelity_store, tmp_path):
    drawn = drawn_pdfs.hyphenated(tmp_path)
    source, _ = traced(drawn, fidelity_store)
    assert "docu-" in source.quote and source.quote.endswith("ment was filed")
    assert_on_the_words(source, drawn, "hyphenated")


def test_a_sentence_across_two_columns_is_found_with_a_box_in_each(fidelity_store, tmp_path):
    drawn = drawn_pdfs.two_columns(tmp_path)
    source, _ = traced(drawn, fidelity_store)
    assert source.pieces is None and len(source.elements) == 2
    assert_on_the_words(source, drawn, "columns")


def test_a_table_row_quoted_across_its_cells_traces_to_its_pieces(fidelity_store, tmp_path):
    drawn = drawn_pdfs.table_rows(tmp_path)
    source, _ = traced(drawn, fidelity_store)
    segment_text = fidelity_store.text(fidelity_store.segment_info(source.segment).sha256, source.segment)
    assert drawn.quote not in " ".join(segment_text.split())  # stored down the columns, not across the row
    assert [piece.text for piece in source.pieces] == ["Operating costs", "7.1"]
    assert all(segment_text[p.start:p.end] == p.text for p in source.pieces)
    assert source.quote == "Operating costs 7.1" and source.page_number == 1
    assert_on_the_words(source, drawn, "table row")
    annotation = kg_decoder.web_annotations([source])["first"]["items"][0]
    quoted = [t["selector"][1]["exact"] for t in annotation["target"] if t["source"] == source.segment]
    assert quoted == ["Operating costs", "7.1"]


def test_a_page_drawn_out_of_its_reading_order_traces_every_sentence_to_a_verified_box_on_it(fidelity_store,
                                                                                              tmp_path):
    """One element holds the whole page in reading order while the page draws its lines shuffled, under
    plain, flipped and turned matrices: every sentence, and words from the middle of each, trace to
    one box on their words, checked by the page's own reading."""
    path, quotes = drawn_pdfs.out_of_order(tmp_path)
    decoded = kg_decoder.decode(path, store=fidelity_store)
    [element] = fidelity_store.document_elements(decoded.document)
    assert " ".join(element.text.split()) == " ".join(drawn_pdfs.OUT_OF_ORDER)  # the cause, reproduced
    assert fidelity_store.document_text_elements(decoded.document)[0].verification == "verified"
    for quote, words in quotes:
        [source] = kg_decoder.trace(quote=quote, document=decoded.document, store=fidelity_store)
        [box] = source.boxes
        assert (box.source, box.verification) == ("characters", "verified"), quote
        assert_near((box.left, box.top, box.right, box.bottom), words, drawn_pdfs.PAGE, quote)


def test_a_wrong_box_from_the_alignment_is_refused_by_verification(fidelity_store, tmp_path, monkeypatch):
    """An alignment that puts the quote on other words: the box it gives is checked against the page's
    reading and refused; the page as laid out gives the right one, else the element's box says so."""
    from kg_decoder.cite import verification

    drawn = drawn_pdfs.hyphenated(tmp_path)
    decoded = kg_decoder.decode(drawn.path, store=fidelity_store)
    wrong = (90.0, 198.0, 170.0, 211.0)  # the next line, which says something else
    monkeypatch.setattr(verification, "span_line_boxes", lambda *args, **kwargs: [wrong])
    [source] = kg_decoder.trace(quote="signed the", document=decoded.document, store=fidelity_store)
    [box] = source.boxes
    assert box.verification == "verified" and (box.left, box.top, box.right, box.bottom) != wrong
    assert 90 < box.left < box.right < 250 and 180 < box.top < box.bottom < 200
    monkeypatch.setattr(verification, "laid_out_lines", lambda *args, **kwargs: [wrong])
    [source] = kg_decoder.trace(quote="signed the", document=decoded.document, store=fidelity_store)
    [element] = fidelity_store.document_elements(decoded.document)
    assert [(b.source, b.verification, (b.left, b.top, b.right, b.bottom)) for b in source.boxes] == [
        ("element", "element", element.bbox)]


def test_an_element_box_off_its_words_is_caught_when_the_pdf_is_decoded(tmp_path):
    """The decode checks each element's box with PDFium's text inside it: the box where the words were
    drawn holds them, the same box a line lower does not."""
    import pypdfium2

    from kg_decoder.decode.rendering.box_checks import check_pdf_boxes
    from kg_decoder.model import Element

    drawn = drawn_pdfs.hyphenated(tmp_path)
    words = drawn.boxes[0]
    lower = (words[0], words[1] + 30, words[2], words[3] + 30)
    elements = [Element(k, "NarrativeText", "the docu-", page_number=1, bbox=box)
                for k, box in enumerate((words, lower))]
    pdf = pypdfium2.PdfDocument(drawn.path)
    check_pdf_boxes(pdf, elements, {1})
    pdf.close()
    assert [e.verification for e in elements] == ["verified", "element"]


def test_a_pdf_fast_reads_nothing_of_is_read_from_its_text_layer(tmp_path):
    """unstructured's fast refuses eu-011 as too complex (a chart of 18,000 drawing operations);
    its text layer is read through PDFium instead, and the decode says so."""
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(TABLES / "eu-011.pdf", store=store, pdf_reader="unstructured")
        assert decoded.strategy == "text_layer" and decoded.pages == 4
        assert decoded.elements > 100
        check_document(store, decoded.document)
        recorded = store.select_rows(
            "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "
            f"SELECT ?strategy WHERE {{ GRAPH ?g {{ ?page a tg:Page ; prov:wasDerivedFrom <{decoded.document}> ; "
            "tg:partitionStrategy ?strategy } }").rows
        assert sorted(recorded) == [("text_layer",)] * 4
        [source] = kg_decoder.trace(quote="Rising CDS spreads may correspond", document=decoded.document,
                                    store=store)
        assert source.page_number == 1 and source.boxes[0].source == "characters"
        left, top, right, bottom = boxes_of(source)[0]
        assert 60 < left < 80 and right - left > 100 and 5 < bottom - top < 20
