"""A PDF page's text layer read by PDFium alone (``--pdf-reader pdfium``, the default), beside
unstructured's ``fast`` (``--pdf-reader unstructured``)."""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

import pytest

import kg_decoder
from kg_decoder.decode import offline
from kg_decoder.decode.pdf.backend import PDF, PdfBackend
from kg_decoder.model import DecodeOptions

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import pdf_reader  # noqa: E402  (the bench's pairing of blocks both readings find)


def test_pdfium_types_the_blocks_both_readings_find_as_fast_types_them(corpus_dir):
    offline.prepare()
    found = []
    for name in ("layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"):
        data = (corpus_dir / name).read_bytes()
        found += pdf_reader.pairs(pdf_reader.fast_elements(data), pdf_reader.pdfium_read(data))
    agreed = sum(fast[1] == ours[1] for fast, ours in found)
    assert len(found) >= 25 and agreed >= 0.95 * len(found)


def test_fast_stays_selectable_and_each_page_says_who_read_it(corpus_dir, store):
    path = corpus_dir / "layout-parser-paper-fast.pdf"
    ours = kg_decoder.decode(path, store=store, image_ocr="off")
    theirs = kg_decoder.decode(path, store=store, image_ocr="off", pdf_reader="unstructured")
    assert ours.status.value != "unchanged" != theirs.status.value  # another setting: decoded again
    assert ours.strategy == theirs.strategy == "fast"  # the text layer's strategy; tg:pdfReader says who read it
    assert DecodeOptions().pdf_reader == "pdfium"
    assert "pdf-reader=pdfium" in DecodeOptions().settings_key()
    assert "pdf-reader" not in DecodeOptions(pdf_reader="unstructured").settings_key()  # old decodes' keys kept
    text = " ".join(" ".join(page.text for page in ours.text_documents).split())
    assert "off-the-shelf" in text and "Zejiang Shen1" in text  # a ligature's letters, a raised index


def _running_pages(path: Path) -> None:
    """Three pages, each with a running head and foot inside the page (not where unstructured's position
    rule alone finds them) and two paragraphs of body text."""
    from reportlab.pdfgen import canvas

    drawn = canvas.Canvas(str(path), pagesize=(612, 792))
    for number in range(1, 4):
        drawn.setFont("Helvetica", 9)
        drawn.drawString(72, 792 - 66, "Quarterly Review of Alpine Sports")
        drawn.drawString(290, 792 - 730, f"Page {number} of 3")
        drawn.setFont("Helvetica", 11)
        for line in range(12):
            drawn.drawString(72, 792 - 200 - 14 * line, f"The ski season went on through the month, line {line} "
                                                          f"of page {number}, and the teams trained daily.")
        drawn.showPage()
    drawn.save()


def test_running_heads_and_feet_are_found_by_their_place_and_repetition(tmp_path):
    offline.prepare()
    path = tmp_path / "running.pdf"
    _running_pages(path)
    partitioned = PdfBackend().partition(path.read_bytes(), PDF, DecodeOptions(image_ocr="off", pdf_tables=False))
    by_text = {}
    for element in partitioned.elements:
        by_text.setdefault(element.category, []).append(element.text)
    assert by_text["Header"] == ["Quarterly Review of Alpine Sports"] * 3
    assert by_text["Footer"] == [f"Page {number} of 3" for number in range(1, 4)]
    body = [e for e in partitioned.elements if e.category not in ("Header", "Footer")]
    assert len(body) == 3 and all(e.category == "NarrativeText" for e in body)
    assert {page.strategy for page in partitioned.pages} == {"fast"}


def test_fast_reads_the_same_pages_when_asked(corpus_dir):
    offline.prepare()
    data = (corpus_dir / "embedded-images-tables.pdf").read_bytes()
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader="unstructured"))
    assert {page.strategy for page in partitioned.pages} == {"fast"}


def test_a_ligature_pdfium_cannot_map_is_read_through_its_font(corpus_dir, store):
    """Page 4 of this LaTeX paper draws "ffi" with a Type 1 font that has no /ToUnicode: PDFium maps the
    glyph to nothing (U+FFFD). The word is read again as pdfminer decodes it through the font's own
    encoding, alone ("difficulties") and inside a line with no space glyphs ("for efficient")."""
    decoded = kg_decoder.decode(corpus_dir / "layout-parser-paper-with-empty-pages.pdf", store=store,
                                image_ocr="off", pdf_tables=False)
    page = " ".join(" ".join(page.text for page in decoded.text_documents if page.page_number == 4).split())
    assert "\ufffd" not in page
    assert "practical difficulties for taking" in page and "tools for efficient document" in page


def test_the_unmapped_ligatures_are_read_from_the_content_as_pdfminer_reads_them(corpus_dir, monkeypatch):
    """The same page read without pdfminer: its content stream spells each word through the fonts'
    encodings (``content_words``); the blocks' texts are those pdfminer's words gave."""
    from kg_decoder.decode.pdf import blocks

    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-with-empty-pages.pdf").read_bytes()

    def page_four() -> list[str]:
        options = DecodeOptions(image_ocr="off", pdf_tables=False)
        return [element.text for element in PdfBackend().partition(data, PDF, options).elements
                if element.page_number == 4]

    def refused(data: bytes, number: int):
        return None

    def unused(data: bytes, number: int):
        raise AssertionError("pdfminer read the page again")

    with monkeypatch.context() as patched:
        patched.setattr(blocks, "content_words", refused)
        by_pdfminer = page_four()
    monkeypatch.setattr(blocks, "pdfminer_words", unused)
    by_content = page_four()
    assert by_content == by_pdfminer
    page = unicodedata.normalize("NFKC", " ".join(" ".join(by_content).split()))
    assert "\ufffd" not in page and "practical difficulties for taking" in page


def test_a_code_the_declared_encoding_lacks_is_read_through_the_font_programs_own(corpus_dir):
    """The same page with its ligature fonts declared /MacRomanEncoding (no /ToUnicode) and the ligature
    drawn by code 14, which MacRoman leaves out: the embedded Type 1 program's ``dup 14 /ffi put`` reads it."""
    import io

    import pikepdf

    from kg_decoder.decode.pdf.content_words import page_words

    pdf = pikepdf.open(corpus_dir / "layout-parser-paper-with-empty-pages.pdf")
    page = pdf.pages[3]
    for name in ("/Ty12", "/Ty14"):
        del page.Resources.Font[name]["/ToUnicode"]
        page.Resources.Font[name].Encoding = pikepdf.Name.MacRomanEncoding
    drawn, font = [], None
    for operands, operator in pikepdf.parse_content_stream(page):
        font = str(operands[0]) if str(operator) == "Tf" else font
        if str(operator) == "TJ" and font in ("/Ty12", "/Ty14"):
            operands = [pikepdf.Array([pikepdf.String(bytes(item).replace(b"!", b"\x0e"))
                                       if isinstance(item, pikepdf.String) else item for item in operands[0]])]
        drawn.append(pikepdf.ContentStreamInstruction(operands, operator))
    page.Contents = pdf.make_stream(pikepdf.unparse_content_stream(drawn))
    changed = io.BytesIO()
    pdf.save(changed)
    words = page_words(changed.getvalue(), 4)
    assert {"diﬃculties", "eﬃcient"} <= words and not any("!" in word for word in words)


@pytest.mark.timeout(120)  # a hang, not a speed: the unbounded search took minutes
def test_a_word_of_many_unmapped_glyphs_is_left_as_it_is_at_once():
    """A word PDFium can map almost nothing of (many U+FFFD) made the glyph search backtrack for minutes
    against long runs of pdfminer's (this test then ran for minutes); such a word is kept as it is."""
    from kg_decoder.decode.pdf.blocks import _read_again

    assert _read_again("\ufffd" * 12 + "b", {"x" * 40 + str(i) for i in range(200)}) == "\ufffd" * 12 + "b"
    assert _read_again("a" + "\ufffd" * 18 + "b", {"a" * 300 + "c"}) == "a" + "\ufffd" * 18 + "b"
    assert _read_again("o\ufffdce", {"oﬃce", "of"}) == "oﬃce"
