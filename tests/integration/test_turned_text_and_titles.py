"""PDF pages as they look: text on a page shown turned (/Rotate 90 over upright content) reads line by
line in order, as words; a turned line in a margin (the arXiv stamp) reads as one line, not as single
letters backwards; a PDF's title is the one it states, else its largest type on page 1, never a stamp.
Boxes are checked against poppler's word boxes (an engine that is not ours)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pypdf
import pytest
from reportlab.pdfgen import canvas

import kg_decoder
from boxes import union
from invariants import check_document

STAMP = "arXiv:2103.15348v2 [cs.CV] 21 Jun 2021"
LINES = ("Hello World", "Test Text", "Rotated page")


def turned_page(path: Path) -> Path:
    """Upright lines on a page whose /Rotate 90 shows them turned, reading downwards."""
    plain = path.with_suffix(".plain.pdf")
    page = canvas.Canvas(str(plain), pagesize=(612, 792))
    page.setFont("Helvetica", 14)
    for number, line in enumerate(LINES):
        page.drawString(72, 700 - 30 * number, line)
    page.showPage()
    page.save()
    writer = pypdf.PdfWriter(clone_from=str(plain))
    writer.pages[0].rotation = 90
    writer.write(str(path))
    return path


def stamped_paper(path: Path, info_title: str | None = None) -> Path:
    """A page with a title, a body line and a margin stamp turned to read upwards."""
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    if info_title is not None:
        page.setTitle(info_title)
    page.setFont("Helvetica", 20)
    page.drawString(150, 700, "A Title For The Paper")
    page.setFont("Helvetica", 11)
    for number in range(6):
        page.drawString(150, 650 - 14 * number, f"Body text of the paper, line {number + 1}, set in the body's type.")
    page.saveState()
    page.translate(30, 250)
    page.rotate(90)
    page.setFont("Times-Roman", 20)
    page.drawString(0, 0, STAMP)
    page.restoreState()
    page.showPage()
    page.save()
    return path


def poppler_words(path: Path) -> list[tuple[str, tuple[float, float, float, float]]]:
    xhtml = subprocess.run(["pdftotext", "-bbox", str(path), "-"], capture_output=True, text=True, check=True).stdout
    return [(m.group(5), tuple(float(m.group(k)) for k in range(1, 5))) for m in re.finditer(
        r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>', xhtml)]


def close(got, want, tolerance=1.5):
    return all(abs(g - w) <= tolerance for g, w in zip(got, want))


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return kg_decoder.open_store(tmp_path_factory.mktemp("turned") / "store")


def test_a_page_shown_turned_reads_its_lines_in_order_as_words(store, tmp_path):
    path = turned_page(tmp_path / "turned.pdf")
    result = kg_decoder.decode(path, store=store)
    [page] = result.text_documents
    assert page.text.split("\n\n") == list(LINES)
    check_document(store, result.document)
    words = poppler_words(path)
    for line in LINES:
        [source] = kg_decoder.trace(quote=line, document=result.document, store=store)
        [box] = source.boxes  # one box for the line, running down the page
        want = union([box for word, box in words if word in line.split()])
        assert box.source == "characters" and close((box.left, box.top, box.right, box.bottom), want)


def test_a_turned_margin_stamp_reads_as_one_line_and_is_never_the_title(store, tmp_path):
    path = stamped_paper(tmp_path / "stamped.pdf")
    result = kg_decoder.decode(path, store=store)
    assert store.document_info(result.document).title == "A Title For The Paper"
    elements = store.document_elements(result.document)
    [stamp] = [e for e in elements if "arXiv" in e.text]
    assert stamp.text == STAMP and stamp.category != "Title"
    assert not any(re.fullmatch(r"(\S ){2,}\S", e.text) for e in elements)  # no letters spaced out backwards
    want = union([box for word, box in poppler_words(path) if word in STAMP.split()])
    assert close(stamp.bbox, want)
    [source] = kg_decoder.trace(quote="[cs.CV] 21 Jun", document=result.document, store=store)
    [box] = source.boxes
    words = dict(poppler_words(path))
    assert close((box.left, box.top, box.right, box.bottom), union([words["[cs.CV]"], words["21"], words["Jun"]]))


def test_a_stated_title_wins_unless_it_is_a_file_name(store, tmp_path):
    stated = kg_decoder.decode(stamped_paper(tmp_path / "stated.pdf", "Coverage of Alpine Sports"), store=store)
    assert store.document_info(stated.document).title == "Coverage of Alpine Sports"
    named = kg_decoder.decode(stamped_paper(tmp_path / "named.pdf", "scan_0042.jpg"), store=store)
    assert store.document_info(named.document).title == "A Title For The Paper"


def test_corpus_papers_read_their_stamp_and_title_and_keep_unmapped_characters(corpus_cached_store, corpus_dir):
    store = corpus_cached_store
    result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store)
    title = store.document_info(result.document).title
    assert title == "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
    first = result.text_documents[0].text
    assert STAMP in first and "n u J" not in first
    assert "\ufffd" in first  # a glyph with no Unicode mapping is recorded as such (U+FFFD), not dropped
    flat = kg_decoder.decode(corpus_dir / "loremipsum-flat.pdf", store=store)
    assert store.document_info(flat.document).title != "loremipsum.jpg"  # the Info title is a file name


def test_a_page_is_read_through_pdfium_once_for_its_turned_text_and_the_title(corpus_dir, monkeypatch):
    """page 1 of the paper holds the stamp (turned text) and the title (largest type): both steps read
    its lines, which cost about 15 µs a character through PDFium, and one reading serves them."""
    from kg_decoder.decode.pdf import text_layer as pdf_text_layer
    from kg_decoder.decode.pdf.backend import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    read: list[str] = []  # each page read, by its text
    lines = pdf_text_layer._lines

    def counted(page, heights):
        read.append(page.get_textpage().get_text_range())
        return lines(page, heights)

    monkeypatch.setattr(pdf_text_layer, "_lines", counted)
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(pdf_tables=False, image_ocr="off"))
    assert partitioned.title == "LayoutParser: A Unified Toolkit for Deep Learning Based Document Image Analysis"
    assert any(e.text == STAMP for e in partitioned.elements)
    assert any(STAMP in text for text in read) and len(read) == len(set(read))


def test_a_pdf_whose_info_title_is_not_utf16_decodes_with_its_largest_type_as_title(store, tmp_path):
    """PDFium refuses an Info title with a lone surrogate (pypdfium2 raises UnicodeDecodeError): the
    title is then read from page 1, and the document decodes."""
    from pypdf.generic import ByteStringObject, NameObject

    paper = stamped_paper(tmp_path / "plain.pdf")
    writer = pypdf.PdfWriter(clone_from=str(paper))
    writer._info.get_object()[NameObject("/Title")] = ByteStringObject(b"\xfe\xff\xd8\x00")
    broken = tmp_path / "broken-title.pdf"
    writer.write(str(broken))
    result = kg_decoder.decode(broken, store=store)
    assert result.status == "decoded"
    assert store.document_info(result.document).title == "A Title For The Paper"
