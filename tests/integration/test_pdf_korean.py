"""A Korean PDF as Hangul word processors export it (issue 54, item 6): each glyph placed on its own
with room spread between a word's syllables, words parted by room alone, TABs between words, a
margin code drawn twice (fake bold). Its words are read whole, its whitespace as spaces, each glyph
once, and every element has a box on its words."""

from __future__ import annotations

import re

import drawn_pdfs
import pytest

import kg_decoder
from invariants import check_document


@pytest.fixture(scope="module")
def korean(tmp_path_factory):
    folder = tmp_path_factory.mktemp("korean")
    path, lines = drawn_pdfs.korean(folder)
    store = kg_decoder.open_store(folder / "store")
    decoded = kg_decoder.decode(path, store=store)
    return store, decoded, lines


def test_hangul_words_are_read_whole_and_whitespace_as_spaces(korean):
    store, decoded, lines = korean
    elements = store.document_elements(decoded.document)
    text = "\n".join(element.text for element in elements)
    assert "커 피" not in text and "\t" not in text, text
    for line, _ in lines:
        assert any(element.text == line or line in element.text.split("\n") for element in elements), (line, text)
    check_document(store, decoded.document)


def test_a_glyph_drawn_twice_is_read_once_and_every_element_has_a_box(korean):
    store, decoded, _ = korean
    elements = store.document_elements(decoded.document)
    code = [element for element in elements if "K" in element.text]
    assert len(code) == 1 and re.sub(r"\s", "", code[0].text) == drawn_pdfs.KOREAN_CODE, code
    # turned up the margin glyph by glyph (read through PDFium): one element, each glyph once
    turned = [element for element in elements if "문서" in element.text or "2024" in element.text]
    assert [element.text for element in turned] == [drawn_pdfs.KOREAN_TURNED], turned
    assert all(element.bbox is not None for element in elements)


@pytest.mark.parametrize("quote", ["커피전문점 매출은", "작년 전문점 매출", "구분 매출 증가율"])
def test_a_korean_quote_traces_to_the_box_on_its_words(korean, quote):
    store, decoded, lines = korean
    [source] = kg_decoder.trace(quote=quote, document=decoded.document, store=store)
    assert source.quote == quote and source.page_number == 1
    [line_box] = [box for line, box in lines if quote in line]
    [box] = source.boxes
    assert box.source == "characters"
    assert line_box[0] - 2 <= box.left < box.right <= line_box[2] + 2, (box, line_box)
    assert abs(box.top - line_box[1]) <= 3 and abs(box.bottom - line_box[3]) <= 3, (box, line_box)


def test_pdfiums_lines_keep_hangul_words_whole_too(tmp_path):
    """The lines PDFium reads (a page unstructured reads nothing of, turned text, dropped lines, the
    title) put no space of PDFium's own inside a Hangul word, read at once or one by one."""
    import pypdfium2 as pdfium

    from kg_decoder.decode.pdf.text_layer import PdfLines, _lines, _lines_one_by_one, text_layer_elements

    path, lines = drawn_pdfs.korean(tmp_path)
    data = path.read_bytes()
    pdf = pdfium.PdfDocument(data)
    try:
        read = "\n".join(element.text for element in text_layer_elements(PdfLines(data, pdf), [1]))
        assert _lines(pdf[0], {}) == _lines_one_by_one(pdf[0], {})
    finally:
        pdf.close()
    assert "커 피" not in read
    for line, _ in lines:
        assert line in read.split("\n"), (line, read)
