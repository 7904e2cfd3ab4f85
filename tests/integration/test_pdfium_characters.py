"""A PDF read once: a page's characters read in one call by the C reader (built by scripts/setup.sh)
are the numbers ctypes reads a call at a time, and the boxes computed from them for a whole page at
once (placing elements on a rendering) are those of the character-by-character reading that traces
use; a partition loads each page once for all its steps."""

from __future__ import annotations

import hashlib
from io import BytesIO

import numpy as np
import pypdfium2 as pdfium

from kg_decoder.decode.pdf import pdfium_chars
from kg_decoder.decode.pdf.fonts import declared_heights
from kg_decoder.decode.pdf.characters import drawn_boxes, drawn_characters

PDFS = ("layout-parser-paper-fast.pdf", "embedded-images-tables.pdf", "loremipsum-flat.pdf")


def pages(corpus_dir):
    for name in PDFS:
        data = (corpus_dir / name).read_bytes()
        document = pdfium.PdfDocument(data)
        for index in range(len(document)):
            yield data, index, document[index]


def test_the_c_reader_is_built_and_reads_what_ctypes_reads(corpus_dir, monkeypatch):
    assert pdfium_chars.native(), "scripts/setup.sh builds the C reader (a C compiler is needed)"
    read = 0
    for _, _, page in pages(corpus_dir):
        textpage = page.get_textpage()
        native = pdfium_chars.read_characters(textpage)
        with monkeypatch.context() as patched:
            patched.setattr(pdfium_chars, "_native_reader", lambda: None)
            one_by_one = pdfium_chars.read_characters(page.get_textpage())  # a new text page: not the one read
        for ours, theirs in ((native.codes, one_by_one.codes), (native.flags, one_by_one.flags),
                             (native.objects, one_by_one.objects), (native.numbers, one_by_one.numbers)):
            assert np.array_equal(ours, theirs)
        read += len(native)
    assert read > 5000


def test_a_pages_boxes_computed_at_once_are_those_read_character_by_character(corpus_dir):
    """Page 1 of the paper holds a turned margin stamp: its characters take the way of turned text."""
    compared = 0
    for data, index, page in pages(corpus_dir):
        heights = declared_heights(data, index + 1, hashlib.sha256(data).hexdigest())
        letters, numbers = drawn_boxes(page, heights)
        chars = list(drawn_characters(page, heights))
        assert letters == "".join(char.char for char in chars)
        assert numbers.tolist() == [list(char.box + char.line_box) for char in chars]
        compared += len(chars)
    assert compared > 5000


def test_a_pages_lines_read_at_once_are_those_read_character_by_character(corpus_dir):
    """The lines turned text, the title, the text beside a table and dropped lines are taken from:
    the paper's page 1 has a turned margin stamp and an author's mark PDFium reads as U+0000."""
    from kg_decoder.decode.pdf.text_layer import _lines, _lines_one_by_one

    compared = lines = 0
    for data, index, page in pages(corpus_dir):
        heights = declared_heights(data, index + 1, hashlib.sha256(data).hexdigest())
        at_once = _lines(page, heights)
        assert at_once == _lines_one_by_one(page, heights)
        compared += 1
        lines += len(at_once)
    assert compared >= 4 and lines > 100
    assert {line.turn for line in _lines(next(pages(corpus_dir))[2], {})} == {0, 270}  # the stamp reads upwards


def test_without_the_c_reader_the_characters_are_read_through_ctypes(corpus_dir, monkeypatch):
    monkeypatch.setenv("KG_DECODER_PDFIUM_CHARS", "ctypes")
    pdfium_chars._native_reader.cache_clear()
    try:
        assert not pdfium_chars.native()
        data, index, page = next(pages(corpus_dir))
        letters, _ = drawn_boxes(page, declared_heights(data, index + 1))
        assert "LayoutParser" in letters
    finally:
        monkeypatch.delenv("KG_DECODER_PDFIUM_CHARS")
        pdfium_chars._native_reader.cache_clear()


def test_a_pdf_page_is_loaded_once_by_all_the_steps_of_its_partition(corpus_dir, monkeypatch):
    """Its geometry, text layer, turned text, tables' pre-signal and the model's drawing, the title, the
    lines a first reading dropped and the boxes' check: each used to load the page again (about 1 ms),
    and to build its own text page (about 1 ms more)."""
    from pypdfium2._helpers.document import PdfDocument

    from kg_decoder.decode.pdf.backend import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    loaded: list[int] = []
    get_page = PdfDocument.get_page

    def counted(document, index):
        loaded.append(index)
        return get_page(document, index)

    monkeypatch.setattr(PdfDocument, "get_page", counted)
    from pypdfium2._helpers.page import PdfPage

    text_pages: list = []
    get_textpage = PdfPage.get_textpage

    def counted_text_page(page):
        text_pages.append(page)
        return get_textpage(page)

    monkeypatch.setattr(PdfPage, "get_textpage", counted_text_page)
    for name in ("layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"):
        loaded.clear()
        text_pages.clear()
        partitioned = PdfBackend().partition((corpus_dir / name).read_bytes(), PDF, DecodeOptions(image_ocr="off"))
        assert partitioned.elements and sorted(loaded) == list(range(len(partitioned.pages)))
        assert len(text_pages) == len(partitioned.pages)  # one text page a page, for every step


def test_the_pictures_found_ahead_and_the_partition_load_each_page_once(corpus_dir, monkeypatch):
    """The pictures are found before the partition (their OCR starts beside it), in the document the
    partition then takes over: it used to open the PDF a second time and load every page again."""
    from pypdfium2._helpers.document import PdfDocument

    from kg_decoder.decode.pdf.backend import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    loaded: list[int] = []
    get_page = PdfDocument.get_page
    monkeypatch.setattr(PdfDocument, "get_page",
                        lambda document, index: loaded.append(index) or get_page(document, index))
    data = (corpus_dir / "embedded-images-tables.pdf").read_bytes()
    backend = PdfBackend()
    ahead = backend.pictures_ahead(data, PDF)
    partitioned = backend.partition(data, PDF, DecodeOptions(image_ocr="off"))
    assert ahead.pictures and partitioned.elements
    assert sorted(loaded) == list(range(len(partitioned.pages)))
    loaded.clear()
    backend.partition(data, PDF, DecodeOptions(image_ocr="off"))  # handed over once: opened again
    assert sorted(loaded) == list(range(len(partitioned.pages)))


def test_a_pages_letters_are_decoded_at_once_as_chr_decodes_each():
    """Every code point (lone surrogates too), PDFium's line-ending hyphen read as "-", a glyph without a
    character (code 0) as U+FFFD."""
    import numpy as np

    from kg_decoder.decode.pdf.characters import letters_of as _letters

    codes = np.arange(0, 0x110000, dtype=np.uint32)
    assert _letters(codes) == "".join("-" if code == 0x02 else "\ufffd" if code == 0 else chr(code)
                                      for code in range(0x110000))


def test_a_character_past_the_basic_plane_is_one_character_and_a_lone_half_none(wild_dir):
    """PDFium reads a Bhaiksuki letter (U+11C00...) as two UTF-16 halves at two indices: the PDF (a
    pdf.js test file nobody here wrote) was refused as corrupt, its lone surrogates not writable."""
    import kg_decoder

    codes = np.array([0x41, 0xD807, 0xDC00, 0xD807, 0x42, 0xDC01], np.uint32)
    pdfium_chars._join_surrogates(codes)
    assert codes.tolist() == [0x41, 0x11C00, 0xFFFE, 0, 0x42, 0]
    with kg_decoder.open_store(None) as store:
        result = kg_decoder.decode(wild_dir / "pdfjs-issue7426.pdf", store=store)
        text = "".join(document.text for document in result.text_documents)
        assert result.status == "decoded" and "\U00011c00" in text
        assert not any("\ud800" <= char <= "\udfff" for char in text)


def test_fonts_heights_read_by_qpdf_are_those_pypdf_reads_and_pypdf_reads_what_qpdf_cannot_open(corpus_dir,
                                                                                                  wild_dir):
    """qpdf reads the font dictionaries (pypdf parses every font's widths in Python); pypdf is the
    fallback where qpdf finds no /Root, and the one pdfjs's reduced file of bug 1811668 opens in."""
    import pypdf

    from kg_decoder.decode.pdf import fonts

    compared = 0
    for data, index, _ in pages(corpus_dir):
        heights = {}
        fonts._collect_heights(pypdf.PdfReader(BytesIO(data)).pages[index].get("/Resources"), heights, 0, set())
        assert declared_heights(data, index + 1) == heights
        compared += len(heights)
    assert compared > 20
    damaged = (wild_dir / "pdfjs-bug1811668_reduced.pdf").read_bytes()
    assert fonts._opened_by_qpdf(damaged) is None
    assert declared_heights(damaged, 1) == {"MinionPro-Regular": (0.712, -0.257)}
