"""A PDF page's elements and chunks in the order a person reads them: a two-column page of real text,
laid out by LibreOffice, whose paragraphs break at different heights in each column (pdfminer's
order, unstructured's ``fast``, reads such a page in turns); and the cut itself on known boxes."""

from __future__ import annotations

import html
import re
import subprocess
import zipfile

import kg_decoder
from kg_decoder.decode.pdf.reading_order import reading_order
from kg_decoder.model import Element

SNIPPET = 8


def _words(text: str) -> list[str]:
    return re.findall(r"[^\W_]+", text.lower())


def _book(corpus_dir) -> list[str]:
    book = zipfile.ZipFile(corpus_dir / "winter-sports.epub")
    found = []
    for name in book.namelist():
        if name.endswith((".html", ".xhtml")):
            for paragraph in re.findall(r"<p[^>]*>(.*?)</p>", book.read(name).decode("utf-8", "replace"), re.S):
                text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", paragraph)).split())
                if len(text) >= 150:
                    found.append(text)
    return found


def _two_columns(path, paragraphs: list[str]) -> list[str]:
    """A DOCX: a title and an abstract over the width, then two columns of the book's paragraphs with a
    heading every fourth, and a running head; its texts in order (what a reader reads). Its first
    paragraph runs on from the left column's foot to the right column's head."""
    from docx import Document
    from docx.enum.section import WD_SECTION
    from docx.oxml import OxmlElement
    from docx.oxml.ns import qn

    document = Document()
    truth = ["Winter Sports in Switzerland", "An abstract paragraph across the whole width of the page: " + paragraphs[0][:400]]
    document.add_heading(truth[0], level=0)
    document.add_paragraph(truth[1])
    section = document.add_section(WD_SECTION.CONTINUOUS)
    columns = OxmlElement("w:cols")
    columns.set(qn("w:num"), "2")
    columns.set(qn("w:space"), "432")
    section._sectPr.append(columns)
    section.header.paragraphs[0].text = "E. F. Benson: Winter Sports"
    for number, text in enumerate(paragraphs[1:25]):
        if number % 4 == 0:
            truth.append(f"Part {number // 4 + 1}")
            document.add_heading(truth[-1], level=2)
        truth.append(text)
        document.add_paragraph(text)
    document.save(str(path))
    return truth


def _in_order(truth: list[str], text: str) -> tuple[int, int]:
    """How many of the truth's snippets the text holds in the truth's order, of how many."""
    snippets = [" ".join(w[k:k + SNIPPET]) for w in map(_words, truth) for k in range(0, len(w) - SNIPPET + 1, SNIPPET)]
    read = " " + " ".join(_words(text)) + " "
    places, after = [], 0
    for snippet in snippets:
        found = read.find(" " + snippet + " ", after)
        if found >= 0:
            places.append(found)
            after = found + 1
    return len(places), len(snippets)


def test_a_two_column_page_is_read_column_after_column(corpus_dir, store, tmp_path):
    truth = _two_columns(tmp_path / "columns.docx", _book(corpus_dir))
    subprocess.run(["soffice", "--headless", "--convert-to", "pdf", "--outdir", str(tmp_path),
                    str(tmp_path / "columns.docx")], capture_output=True, timeout=300, check=True)
    decoded = kg_decoder.decode(tmp_path / "columns.pdf", store=store)
    elements = store.document_elements(decoded.document)
    found, total = _in_order(truth, "\n".join(e.text or "" for e in elements))
    assert found >= 0.98 * total, (found, total)
    kg_decoder.chunk_document(decoded.document, store=store)
    source = " " + " ".join(_words(" ".join(truth))) + " "
    for chunk in kg_decoder.document_chunks(decoded.document, store=store):  # none reads across the columns
        words = _words(chunk.text[chunk.prefix_length:])
        places, after = [], 0
        for k in range(0, len(words) - SNIPPET + 1, SNIPPET // 2):
            piece = " " + " ".join(words[k:k + SNIPPET]) + " "
            found = source.find(piece, after)
            places.append(found if found >= 0 else source.find(piece))
            after = max(after, found + 1)
        places = [p for p in places if p >= 0]
        assert places == sorted(places), words
        assert len(places) >= 0.6 * len(range(0, len(words) - SNIPPET + 1, SNIPPET // 2)), words
    for number in {e.page_number for e in elements}:  # each page's elements: the left column's first
        page = [e for e in elements if e.page_number == number and e.bbox and e.bbox[1] > 150]
        lefts = [e.bbox[0] < 250 for e in page]
        assert lefts == sorted(lefts, reverse=True), [(e.bbox, e.text[:30]) for e in page]


def _block(text: str, box, category: str = "NarrativeText") -> Element:
    return Element(0, category, text, page_number=1, bbox=box)


def test_the_cut_reads_columns_bands_and_keeps_what_it_cannot_place():
    page = [_block("head", (50, 10, 300, 20), "Header"),
            _block("left 1", (50, 80, 290, 300)), _block("right 1", (310, 80, 550, 250)),
            Element(0, "Image", "", page_number=1),  # no box: stays after the element before it
            _block("left 2", (50, 310, 290, 400)), _block("right 2", (310, 260, 550, 400)),
            _block("figure over both", (50, 420, 550, 500)),
            _block("left 3", (50, 510, 290, 700)), _block("right 3", (310, 510, 550, 690)),
            _block("7", (290, 760, 310, 770), "Footer")]
    assert [e.text for e in reading_order(page)] == [
        "head", "left 1", "left 2", "right 1", "", "right 2", "figure over both", "left 3", "right 3", "7"]
    three = [_block(f"{column} {row}", (50 + 170 * column, 100 + 200 * row, 200 + 170 * column, 280 + 200 * row))
             for row in range(2) for column in range(3)]
    assert [e.text for e in reading_order(three)] == ["0 0", "0 1", "1 0", "1 1", "2 0", "2 1"]
    lines = [_block(f"line {k}", (100 + 20 * k, 50, 115 + 20 * k, 700)) for k in range(4)]  # a page read turned
    assert [e.text for e in reading_order(lines)] == [e.text for e in lines]


def test_a_staircase_of_boxes_each_cut_off_alone_is_read_without_recursion():
    """Boxes laid so that each cut takes one off (a hostile page): all read, in a stack, not recursion."""
    page = []
    for k in range(700):
        page.append(_block(f"tall {k}", (10 * k, 10 * k + 10, 10 * k + 5, 8000)))
        page.append(_block(f"wide {k}", (10 * k + 10, 10 * k, 8000, 10 * k + 5)))
    ordered = reading_order(page)
    assert sorted(e.text for e in ordered) == sorted(e.text for e in page)
    assert [e.text for e in ordered[:3]] == ["tall 0", "wide 0", "tall 1"]  # a column, then a band, in turns
