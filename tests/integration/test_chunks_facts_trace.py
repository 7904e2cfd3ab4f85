"""Cited chunks, cited tables, facts and trace-back, end to end on a real store.

The traced rectangles are checked against where the words really are: for the
generated PDF, where reportlab drew them; for corpus PDFs, the word boxes that
poppler's ``pdftotext -bbox`` reads (an independent PDF engine).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest
from pyoxigraph import Literal

import kg_decoder
from conftest import run_cli
from invariants import check_chunks, reference_tokens
from kg_decoder.cite.chunks import chunk_document, document_chunks
from kg_decoder.cite.chunker import ChunkOptions, Heading, chunk_text
from kg_decoder.model.errors import InvalidFact, InvalidOption, InvalidSpan, UnknownEntity
from kg_decoder import add_facts, read_facts
from kg_decoder.decode.tables.matrix import parse_table
from kg_decoder import trace, web_annotations

EX = "http://example.org/"

# ---------------------------------------------------------------- a PDF whose words we placed

LINES = [
    "Alpha bravo charlie delta echo foxtrot.",
    "Golf hotel india juliett kilo lima mike.",
    "November oscar papa quebec romeo sierra.",
]
LINE_Y = [700.0, 684.0, 668.0]  # baselines, PDF user space (origin bottom-left)
FONT, SIZE = "Helvetica", 12


def make_placed_pdf(path):
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(612, 792))
    pdf.setFont(FONT, SIZE)
    pdf.drawString(72, 740, "Placed words for tracing")
    for line, y in zip(LINES, LINE_Y):
        pdf.drawString(72, y, line)
    pdf.showPage()
    pdf.setFont(FONT, SIZE)
    pdf.drawString(100, 500, "The second page holds the word zanzibar once.")
    pdf.save()


def drawn_box(line: int, words: str):
    """Where reportlab drew ``words`` of LINES[line]: (left, top, right, bottom), top-left origin."""
    from reportlab.pdfbase.pdfmetrics import getAscent, getDescent, stringWidth

    text = LINES[line]
    start = text.index(words)
    left = 72 + stringWidth(text[:start], FONT, SIZE)
    right = left + stringWidth(words, FONT, SIZE)
    baseline = 792 - LINE_Y[line]
    return left, baseline - getAscent(FONT, SIZE), right, baseline - getDescent(FONT, SIZE)


def assert_box_near(box, expected, page=(612.0, 792.0)):
    tolerance_x, tolerance_y = 0.01 * page[0], 0.01 * page[1]
    assert abs(box.left - expected[0]) <= tolerance_x, (box, expected)
    assert abs(box.right - expected[2]) <= tolerance_x, (box, expected)
    assert box.top <= expected[3] and box.bottom >= expected[1], (box, expected)  # the lines overlap
    assert abs((box.top + box.bottom) / 2 - (expected[1] + expected[3]) / 2) <= tolerance_y, (box, expected)


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("placed")
    make_placed_pdf(folder / "placed.pdf")
    store = kg_decoder.open_store(folder / "store")
    result = kg_decoder.decode(folder / "placed.pdf", store=store)
    chunk_document(result.document, store=store, chunk_size=24, min_chunk_tokens=2)
    return store, result


def test_fact_traces_to_the_page_and_the_exact_words_one_box_per_line(placed):
    store, result = placed
    check_chunks(store, result.document, 24)
    quote = "echo foxtrot. Golf hotel"
    chunk = next(c for c in document_chunks(result.document, store=store) if quote in " ".join(c.text.split()))
    fact = (EX + "echo", EX + "precedes", EX + "hotel")
    added = add_facts(chunk.iri, [fact], [{"quote": quote}], store=store)
    assert added.status == "added"
    [source] = trace(fact=fact, store=store)
    assert source.document.iri == result.document and source.document.mime_type == "application/pdf"
    assert source.page_number == 1 and source.page.startswith("urn:page:")
    assert source.chunks == [chunk.iri] and source.subgraph == added.subgraphs[0]
    assert " ".join(source.quote.split()) == quote
    assert any("echo foxtrot" in e.text for e in source.elements)
    boxes = [b for b in source.boxes if b.source == "characters"]
    assert len(boxes) == 2, source.boxes
    assert_box_near(boxes[0], drawn_box(0, "echo foxtrot."))
    assert_box_near(boxes[1], drawn_box(1, "Golf hotel"))
    assert all(b.coordinate_system == "pdf-points-top-left" and b.page_width == 612.0 for b in boxes)


def test_trace_by_span_and_by_quote_agree(placed):
    store, result = placed
    [by_quote] = trace(quote="zanzibar", document=result.document, store=store)
    assert by_quote.page_number == 2 and by_quote.quote == "zanzibar"
    [box] = by_quote.boxes
    from reportlab.pdfbase.pdfmetrics import stringWidth

    left = 100 + stringWidth("The second page holds the word ", FONT, SIZE)
    assert abs(box.left - left) <= 6.12 and abs(box.right - (left + stringWidth("zanzibar", FONT, SIZE))) <= 6.12
    [by_span] = trace(span=(by_quote.segment, by_quote.start, by_quote.end), store=store)
    assert (by_span.boxes, by_span.elements) == (by_quote.boxes, by_quote.elements)
    chunk = by_quote.chunks[0]
    info = store.chunk_info(chunk)
    local = by_quote.start - info.char_offset + info.prefix_length
    [by_chunk] = trace(span=(chunk, local, local + len("zanzibar")), store=store)
    assert by_chunk.quote == "zanzibar" and by_chunk.boxes == by_quote.boxes
    assert trace(quote="not in any document", store=store) == []


def test_web_annotation_jsonld_selects_the_span_and_the_rectangle(placed):
    store, result = placed
    sources = trace(quote="kilo lima", document=result.document, store=store)
    document = web_annotations(sources)
    assert document["@context"][0] == "http://www.w3.org/ns/anno.jsonld"
    [annotation] = document["first"]["items"]
    text_target, region_target = annotation["target"][0], annotation["target"][1]
    position = next(s for s in text_target["selector"] if s["type"] == "TextPositionSelector")
    assert (position["start"], position["end"]) == (sources[0].start, sources[0].end)
    assert region_target["selector"]["value"] == "page=1" and region_target["verification"] == "verified"
    value = region_target["selector"]["refinedBy"]["value"]
    x, y, w, h = map(float, re.fullmatch(r"xywh=percent:([\d.]+),([\d.]+),([\d.]+),([\d.]+)", value).groups())
    expected = drawn_box(1, "kilo lima")
    assert abs(x / 100 * 612 - expected[0]) <= 6.12 and abs((x + w) / 100 * 612 - expected[2]) <= 6.12
    assert abs((y + h / 2) / 100 * 792 - (expected[1] + expected[3]) / 2) <= 7.92


@pytest.mark.slow
@pytest.mark.parametrize("name", ["layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"])
def test_corpus_pdf_trace_boxes_hold_the_words_poppler_finds(name, corpus_dir, corpus_cached_store):
    if shutil.which("pdftotext") is None:
        pytest.fail("poppler-utils (pdftotext) is not installed; scripts/setup.sh installs it")
    store = corpus_cached_store
    result = kg_decoder.decode(corpus_dir / name, store=store)
    chunk_document(result.document, store=store, chunk_size=128)
    check_chunks(store, result.document, 128)
    words = _poppler_words(corpus_dir / name, page=1)
    # a run of three distinctive words on one line, taken from poppler's own reading
    run = next(words[i:i + 3] for i in range(len(words) - 2)
               if len({w[4] for w in words[i:i + 3]}) == 1 and all(len(w[0]) > 3 and w[0].isalpha()
                                                                   for w in words[i:i + 3]))
    quote = " ".join(w[0] for w in run)
    sources = [s for s in trace(quote=quote, document=result.document, store=store) if s.page_number == 1]
    assert sources, quote
    boxes = [b for s in sources for b in s.boxes if b.source == "characters"]
    assert boxes, sources[0].boxes
    left, top = min(w[1] for w in run), min(w[2] for w in run)
    right, bottom = max(w[3] for w in run), max(w[5] for w in run)
    width, height = boxes[0].page_width, boxes[0].page_height
    assert any(abs(b.left - left) <= 0.01 * width and abs(b.right - right) <= 0.01 * width
               and abs(b.top - top) <= 0.01 * height and abs(b.bottom - bottom) <= 0.01 * height
               for b in boxes), (quote, run, boxes)


def _poppler_words(path, page):
    out = subprocess.run(["pdftotext", "-bbox-layout", "-f", str(page), "-l", str(page), str(path), "-"],
                         capture_output=True, text=True, check=True).stdout
    words = []
    for line_number, line in enumerate(re.findall(r"<line[^>]*>(.*?)</line>", out, re.S)):
        for m in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
                             line):
            words.append((html.unescape(m.group(5)), float(m.group(1)), float(m.group(2)), float(m.group(3)),
                          line_number, float(m.group(4))))
    return words


# ---------------------------------------------------------------- chunks of every format


@pytest.fixture(scope="module")
def chunked_generated(chunked_generated_store):
    return chunked_generated_store


def test_every_generated_format_chunks_with_exact_offsets(chunked_generated):
    store, results = chunked_generated
    for name, result in results.items():
        chunks = check_chunks(store, result.document, 32)
        assert chunks, name
        if result.pages:
            assert all(c.anchors and c.anchors[0].page.startswith("urn:page:") for c in chunks), name


def test_pdf_chunk_anchor_is_the_union_box_of_its_elements(chunked_generated):
    store, results = chunked_generated
    document = results["generated.pdf"].document
    chunk = next(c for c in document_chunks(document, store=store) if "KGSENTPDFONE" in c.text)
    [anchor] = chunk.anchors
    assert anchor.page_number == 1
    elements = [e for e in store.document_elements(document)
                if e.page_number == 1 and e.bbox is not None
                and chunk.char_offset < e.char_offset + e.char_length
                and e.char_offset < chunk.char_offset + chunk.char_length]
    assert anchor.bbox == (min(e.left for e in elements), min(e.top for e in elements),
                           max(e.right for e in elements), max(e.bottom for e in elements))


def test_chunking_again_is_unchanged_and_new_settings_replace(generated, store):
    result = kg_decoder.decode(generated["generated.md"].path, store=store)
    first = chunk_document(result.document, store=store, chunk_size=16, min_chunk_tokens=2)
    before = store.quads()
    again = chunk_document(result.document, store=store, chunk_size=16, min_chunk_tokens=2)
    assert (first.status, again.status) == ("chunked", "unchanged") and store.quads() == before
    old = {c.iri for c in document_chunks(result.document, store=store)}
    bigger = chunk_document(result.document, store=store, chunk_size=512)
    new = {c.iri for c in document_chunks(result.document, store=store)}
    assert bigger.chunks == len(new) < len(old) and not old & new
    assert len(store.chunking_runs(result.document)) == 1
    check_chunks(store, result.document, 512)


@pytest.mark.parametrize("encoding", ["utf-8", "gb18030"])
def test_cjk_and_right_to_left_text_chunk_without_broken_characters(encoding, store, tmp_path):
    hebrew = "שָׁלוֹם לָכֶם, זֶהוּ מִבְחָן שֶׁל טֶקְסְט עִבְרִי עִם נִקּוּד. "
    arabic = "هذه جملة عربية للاختبار، مع علامات الترقيم؟ "
    chinese = "这是一个用于测试的中文句子。我们希望分块不会破坏任何汉字！"
    text = (chinese * 30 + "\n\n" + hebrew * 20 + "\n\n" + arabic * 20) if encoding == "utf-8" else chinese * 60
    path = tmp_path / f"mixed-{encoding}.txt"
    path.write_bytes(text.encode(encoding))
    result = kg_decoder.decode(path, store=store)
    chunk_document(result.document, store=store, chunk_size=40, min_chunk_tokens=4)
    chunks = check_chunks(store, result.document, 40)
    assert len(chunks) > 5
    for chunk in chunks:
        assert chunk.text.encode("utf-8").decode("utf-8") == chunk.text
        assert not chunk.text[0].isspace() and not re.match(r"[\u0591-\u05c7\u064b-\u065f]", chunk.text)
    cjk_ends = [c.text[-1] for c in chunks if "中文" in c.text and "ש" not in c.text]
    assert cjk_ends and all(end in "。！" for end in cjk_ends[:-1]), cjk_ends


# ---------------------------------------------------------------- the chunker itself


def test_chunker_prefers_paragraphs_then_sentences_and_never_cuts_a_word_when_it_can_help():
    paragraph = "First sentence here. Second sentence follows. " * 3
    text = paragraph.strip() + "\n\n" + paragraph.strip() + "\n\n" + paragraph.strip()
    # a paragraph is 25 tokens: within a 20-token window back from the 40-token limit, so cut there
    chunks = chunk_text(text, ChunkOptions(chunk_size=40, boundary_window=20, min_chunk_tokens=2))
    assert len(chunks) == 3 and all(c.tokens <= 40 for c in chunks)
    assert all(text[c.end:c.end + 2] in ("\n\n", "") for c in chunks)
    # with the default window (10 tokens) the paragraph break is too far back: a sentence end instead
    narrow = chunk_text(text, ChunkOptions(chunk_size=40, min_chunk_tokens=2))
    assert all(c.text.endswith(".") and c.tokens >= 30 for c in narrow[:-1])
    words = "word " * 200
    hard = chunk_text(words, ChunkOptions(chunk_size=20, min_chunk_tokens=2))
    assert all(c.text.split() and set(c.text.split()) == {"word"} for c in hard)
    sentences = "This is a sentence. " * 50
    cut = chunk_text(sentences, ChunkOptions(chunk_size=30, min_chunk_tokens=2))
    assert all(c.text.endswith(".") for c in cut)


def test_chunker_overlap_is_counted_in_tokens():
    text = " ".join(f"w{i}" for i in range(400))
    chunks = chunk_text(text, ChunkOptions(chunk_size=50, overlap=10, min_chunk_tokens=2))
    for first, second in zip(chunks, chunks[1:]):
        assert second.start < first.end < second.end
        shared = reference_tokens(text[second.start:first.end])
        assert 8 <= shared <= 11, shared


def test_tables_stay_whole_when_they_fit_and_split_between_rows_with_the_header_otherwise():
    small = "<table><tr><th>h1</th><th>h2</th></tr><tr><td>a</td><td>b</td></tr></table>"
    rows = "".join(f"<tr><td>cell {i}</td><td>value {i}</td></tr>" for i in range(80))
    big = f"<table><thead><tr><th>Name</th><th>Value</th></tr></thead><tbody>{rows}</tbody></table>"
    text = "Intro words here.\n\n" + small + "\n\n" + "Middle text. " * 3 + "\n\n" + big
    small_at = text.index(small)
    big_at = text.index(big)
    tables = [(small_at, small_at + len(small)), (big_at, big_at + len(big))]
    chunks = chunk_text(text, ChunkOptions(chunk_size=60, min_chunk_tokens=2), tables=tables)
    assert any(small in c.text for c in chunks)
    pieces = [c for c in chunks if "<tr><td>cell" in c.text]
    assert len(pieces) > 3
    for piece in pieces:
        assert piece.tokens <= 60
        body = piece.text[len(piece.prefix):len(piece.text) - len(piece.suffix)]
        assert body == text[piece.start:piece.end]
        assert "<th>Name</th><th>Value</th>" in piece.text
        assert piece.text.rstrip().endswith("</table>") and "<table>" in piece.text
        assert re.fullmatch(r"(?s).*<table>.*", piece.text) and piece.text.count("<tr>") == piece.text.count("</tr>")
        assert not re.search(r"<[^>]*$", body) and not re.match(r"^[^<]*>", body)  # no cut inside a tag
    covered = "".join(text[p.start:p.end] for p in pieces)
    assert all(f"cell {i}<" in covered for i in range(80))


def test_an_oversized_row_is_cut_outside_tags():
    cell = "x" * 3000
    table = f"<table><tr><td>{cell}</td><td>{'y ' * 400}</td></tr></table>"
    chunks = chunk_text(table, ChunkOptions(chunk_size=64, min_chunk_tokens=2), tables=[(0, len(table))])
    assert len(chunks) > 5 and all(c.tokens <= 64 for c in chunks)
    for chunk in chunks:
        assert not re.search(r"<[^>]*$", chunk.text) and not re.match(r"^[^<]*>", chunk.text)


def test_heading_prefix_is_recorded_apart_from_the_offsets():
    text = "Guide\n\nIntro text.\n\nInstall\n\n" + "Run the installer now. " * 30
    headings = [Heading(0, 0, "Guide"), Heading(text.index("Install"), 1, "Install")]
    chunks = chunk_text(text, ChunkOptions(chunk_size=40, heading_prefix=True, min_chunk_tokens=2),
                        headings=headings)
    later = [c for c in chunks if c.start > text.index("Install")]
    assert later and all(c.heading_path == ("Guide", "Install") for c in later)
    assert all(c.text.startswith("Guide > Install\n\n") and c.tokens <= 40 for c in later)
    assert all(c.text[len(c.prefix):] == text[c.start:c.end] for c in chunks)


def test_chunk_options_are_checked():
    with pytest.raises(InvalidOption):
        ChunkOptions(chunk_size=4)
    with pytest.raises(InvalidOption):
        ChunkOptions(chunk_size=64, overlap=64)


# ---------------------------------------------------------------- cited tables


def test_table_matrix_is_rectangular_with_spans_and_padding():
    matrix = parse_table("<table><tr><th rowspan='2'>A</th><th>B</th><th>C</th></tr><tr><td>d</td></tr>"
                         "<tr><td colspan=3>wide</td></tr></table>")
    assert (matrix.rows, matrix.columns) == (3, 3)
    grid = {(c.row, c.column): c for c in matrix.cells}
    assert grid[(0, 0)].row_span == 2 and grid[(0, 0)].header
    assert grid[(1, 1)].text == "d" and not grid[(1, 1)].padding
    assert grid[(1, 2)].padding and grid[(1, 2)].text == ""
    assert grid[(2, 0)].column_span == 3 and (2, 1) not in grid


def test_xlsx_table_cell_fact_traces_to_its_row_column_and_address(corpus_dir, corpus_cached_store):
    from openpyxl import load_workbook

    store = corpus_cached_store
    path = corpus_dir / "stanley-cups.xlsx"
    result = kg_decoder.decode(path, store=store)
    chunk_document(result.document, store=store, chunk_size=64, min_chunk_tokens=2)
    chunk = next(c for c in document_chunks(result.document, store=store) if "Maple Leafs" in c.text
                 and c.anchors[0].page_number == 1)
    fact = (EX + "MapleLeafs", EX + "cups", Literal("13"))
    add_facts(chunk.iri, [fact], [{"quote": "13"}], store=store)
    [source] = trace(fact=fact, store=store)
    [table] = [e for e in source.elements if e.category == "Table"]
    [cell] = table.cells
    sheet = load_workbook(path).worksheets[0]
    expected = next(c for row in sheet.iter_rows() for c in row if c.value == 13)
    header_row = next(r for r in sheet.iter_rows() if any(c.value == "Team" for c in r))
    assert cell.reference == expected.coordinate
    assert cell.row == expected.row - header_row[0].row + 1 and cell.text == "13"  # counted from 1
    assert cell.column == expected.column - next(c for c in header_row if c.value is not None).column + 1
    assert source.page_number == 1


def test_every_sheet_cell_address_holds_the_cell_s_text(tmp_path):
    """Tables of a sheet anywhere but A1, with empty cells (unstructured writes them <td/>) and a cell
    whose text has a line break: every cell's A1 address names the sheet cell that holds its text."""
    from openpyxl import Workbook

    book = Workbook()
    sheets = [book.active, book.create_sheet("Second")]
    blocks = {0: [(1, 5, 3, 2)], 1: [(2, 2, 4, 5), (9, 7, 3, 4), (20, 10, 5, 3)]}  # row, column, height, width
    for number, placed in blocks.items():
        for top, left, height, width in placed:
            for row in range(top, top + height):
                for column in range(left, left + width):
                    if (row * 7 + column * 3) % 5 != 1 or row == top:  # holes, not in the header row
                        sheets[number].cell(row, column, f"KGCELL s{number}r{row}c{column}")
    sheets[1].cell(10, 8, "Total\n2023")
    path = tmp_path / "placed.xlsx"
    book.save(path)
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store)
        placed = [(element.page_number, cell.reference, cell.text)
                  for element in store.document_elements(result.document) if element.category == "Table"
                  for cell in store.table_cells(element.element) if cell.text]
    assert len(placed) > 40
    wrong = [(number, reference, text) for number, reference, text in placed
             if " ".join(str(sheets[number - 1][reference].value).split()) != text]
    assert wrong == []
    assert (2, "H10", "Total 2023") in placed  # the line break read back as the sheet's, not "\\n"


def test_docx_tables_become_rectangular_cell_matrices(corpus_dir, corpus_cached_store):
    store = corpus_cached_store
    result = kg_decoder.decode(corpus_dir / "docx-tables.docx", store=store)
    tables = [e for e in store.document_elements(result.document) if e.category == "Table"]
    assert tables
    for table in tables:
        cells = store.table_cells(table.element)
        rows = max(c.row for c in cells) + 1
        columns = max(c.column for c in cells) + 1
        covered = set()
        for c in cells:
            covered |= {(r, k) for r in range(c.row, c.row + c.row_span)
                        for k in range(c.column, c.column + c.column_span)}
        assert covered == {(r, k) for r in range(rows) for k in range(columns)}
        assert all((c.text is not None) != c.padding for c in cells)


# ---------------------------------------------------------------- facts: bad input stores nothing


@pytest.fixture
def one_chunk(generated, store):
    result = kg_decoder.decode(generated["generated.md"].path, store=store)
    chunk_document(result.document, store=store, chunk_size=512)
    return store, document_chunks(result.document, store=store)[0]


@pytest.mark.parametrize("triples, spans, error", [
    ([("http://ex.org/a", "knows", "b")], None, InvalidFact),
    ([("_:b0", EX + "p", "o")], None, InvalidFact),
    ([(EX + "a", EX + "p")], None, InvalidFact),
    ([(EX + "a", EX + "p", "o")], [(0, 10 ** 6)], InvalidSpan),
    ([(EX + "a", EX + "p", "o")], [{"quote": "words that are nowhere"}], InvalidSpan),
    ([(EX + "a", EX + "p", "o")], [(5, 2)], InvalidSpan),
    ([(EX + "a", EX + "p", "o"), (EX + "a", EX + "p", "ok")], [None], InvalidSpan),
    ([], None, InvalidFact),
])
def test_bad_facts_raise_typed_errors_and_store_nothing(one_chunk, triples, spans, error):
    store, chunk = one_chunk
    before = store.quads()
    with pytest.raises(error):
        add_facts(chunk.iri, triples, spans, store=store)
    assert store.quads() == before


def test_facts_for_an_unknown_chunk_store_nothing(one_chunk):
    store, _ = one_chunk
    before = store.quads()
    with pytest.raises(UnknownEntity):
        add_facts("urn:chunk:00000000-0000-0000-0000-000000000000", [(EX + "a", EX + "p", "o")], store=store)
    with pytest.raises(UnknownEntity):
        trace(span=("urn:page:nope", 0, 1), store=store)
    assert store.quads() == before


def test_facts_land_in_the_default_graph_with_triple_term_provenance(one_chunk, tmp_path):
    store, chunk = one_chunk
    path = tmp_path / "facts.ttl"
    path.write_text(f"<{EX}doc> <{EX}mentions> <{EX}Thing> , \"KGSENTMDBODY\"@en .\n", encoding="utf-8")
    triples, spans = read_facts(path)
    result = add_facts(chunk.iri, triples, spans, store=store, extractor="test-extractor")
    assert result.status == "added" and result.facts == 2
    defaults = store.select_rows(f"SELECT ?p ?o WHERE {{ <{EX}doc> ?p ?o }}").rows
    assert (EX + "mentions", EX + "Thing") in defaults
    contained = store.select_rows(
        "SELECT ?o WHERE { GRAPH <urn:graph:source> { ?g <https://trustgraph.ai/ns/contains> <<( ?s ?p ?o )>> ;"
        f" <http://www.w3.org/ns/prov#wasDerivedFrom> <{chunk.iri}> }} }}")
    assert {o for (o,) in contained.rows} == {EX + "Thing", "KGSENTMDBODY"}
    assert add_facts(chunk.iri, triples, spans, store=store).status == "unchanged"


def test_re_decoding_detaches_facts_and_the_next_chunking_anchors_them_again(one_chunk, generated):
    """A decode of the same bytes with other settings replaces the chunks: the facts cited to them are
    detached (deriving from the document, the audit listing them), not orphaned; chunking again
    anchors each in the chunk that holds its words, and one with no words stays detached."""
    store, chunk = one_chunk
    words = " ".join(chunk.text.split()[3:7])
    add_facts(chunk.iri, [(EX + "quoted", EX + "p", "o")], [{"quote": words}], store=store)
    add_facts(chunk.iri, [(EX + "a", EX + "p", "o")], store=store)  # no span: no words to find again
    decoded = kg_decoder.decode(generated["generated.md"].path, store=store, section_strategy="heading")
    assert decoded.document == chunk.document
    assert store.table("audit-orphan-entities").records() == []
    detached = store.table("audit-facts-without-chunk").records()
    assert {row["subject"] for row in detached} == {EX + "quoted", EX + "a"}
    assert {row["chunk"] for row in detached} == {chunk.iri}
    assert trace(fact=(EX + "quoted", EX + "p", "o"), store=store) == []  # its chunk is gone
    with pytest.raises(UnknownEntity):
        trace(span=(chunk.iri, 0, 1), store=store)
    chunk_document(chunk.document, store=store, chunk_size=64)
    new_chunks = {c.iri for c in document_chunks(chunk.document, store=store)}
    assert chunk.iri not in new_chunks
    [still] = store.table("audit-facts-without-chunk").records()
    assert still["subject"] == EX + "a"
    [source] = trace(fact=(EX + "quoted", EX + "p", "o"), store=store)
    assert set(source.chunks) & new_chunks and " ".join(source.quote.split()) == words
    assert store.table("audit-orphan-entities").records() == []
    assert kg_decoder.validate(store=store).conforms


# ---------------------------------------------------------------- the command line


def test_cli_decode_chunk_facts_and_trace(tmp_path):
    make_placed_pdf(tmp_path / "placed.pdf")
    store = tmp_path / "store"
    done = run_cli("decode", tmp_path / "placed.pdf", "--store", store, "--chunk", "--chunk-size", "24",
                   "--min-chunk-tokens", "2", "--emit", "jsonl", "--no-progress")
    assert done.returncode == 0, done.stderr
    chunks = [json.loads(line) for line in done.stdout.splitlines()]
    assert chunks and all(c["tokens"] <= 24 and c["anchors"][0]["bbox"] for c in chunks)
    target = next(c for c in chunks if "kilo" in c["text"])
    facts = tmp_path / "facts.jsonl"
    facts.write_text(json.dumps({"s": EX + "kilo", "p": EX + "near", "o": "<" + EX + "lima>", "quote": "kilo"})
                     + "\n", encoding="utf-8")
    done = run_cli("facts", "add", "--chunk", target["iri"], facts, "--store", store)
    assert done.returncode == 0, done.stderr
    done = run_cli("trace", f"<{EX}kilo> <{EX}near> <{EX}lima>", "--store", store)
    assert done.returncode == 0 and "page      1" in done.stdout and "(characters, verified)" in done.stdout, done.stdout
    done = run_cli("trace", f"<{EX}kilo> <{EX}near> <{EX}lima>", "--store", store, "--format", "jsonld")
    annotation = json.loads(done.stdout)["first"]["items"][0]
    assert annotation["body"]["value"].startswith(f"<{EX}kilo>")
    done = run_cli("trace", "--segment", target["segment"], "--start", "0", "--end", "5", "--store", store,
                   "--format", "json")
    assert json.loads(done.stdout)[0]["start"] == 0
    bad = run_cli("facts", "add", "--chunk", "urn:chunk:missing", facts, "--store", store)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "no chunk" in bad.stderr
    bad = run_cli("trace", "--segment", target["segment"], "--start", "5", "--end", "1", "--store", store)
    assert bad.returncode == 2 and "not inside" in bad.stderr
