"""The PDF table finder's structure builder on synthetic word sets: columns from whitespace and vertical
rules, rows from lines, continuation lines and ruled bands, header rows stacked, group titles spanning
their sub-columns, stub headers spanning the header rows, side-by-side copies unfolded, notes and
captions left out; the pre-signal and the regions from ruled grids; the PDFium reading of a turned page
against pdfplumber's."""

from __future__ import annotations

import pytest

from kg_decoder.decode.tables.finder import tables_on_page
from kg_decoder.decode.tables.page_marks import PageMarks, Rule, Word, marks_from_pdfium
from kg_decoder.decode.tables.regions import Detection, table_signal
from kg_decoder.decode.tables.structure import build_table, grid_cells, mark_header
from kg_decoder.model import Cell

HEIGHT = 10.0  # every word's height; lines 15 points apart unless a test says otherwise
LETTER = 5.0
SPACE = 3.0  # between the words of one cell: closer than half their height, so one piece


def line(y: float, *cells: tuple[float, str]) -> list[Word]:
    """The words of one text line at ``y``: each cell ``(x, text)`` laid out left to right from x."""
    words = []
    for x, text in cells:
        for part in text.split():
            words.append(Word(part, x, y, x + LETTER * len(part), y + HEIGHT, HEIGHT))
            x += LETTER * len(part) + SPACE
    return words


def build(*lines: list[Word], horizontal=(), vertical=()):
    """The table the builder makes of these lines, its region the words' extent (as regions are
    snapped): (rows, columns, {(row, column): cell})."""
    words = [w for words in lines for w in words]
    region = (min(w.x0 for w in words), min(w.top for w in words), max(w.x1 for w in words),
              max(w.bottom for w in words))
    grid = build_table(words, region, list(horizontal), list(vertical))
    cells = grid_cells(grid)
    return len(grid.rows), grid.columns, {(c.row, c.column): c for c in cells}


def texts(cells) -> dict[tuple[int, int], str]:
    return {place: cell.text for place, cell in cells.items()}


def test_columns_from_whitespace_and_a_header_row_of_years():
    rows, columns, cells = build(line(0, (0, "Region"), (100, "2022"), (160, "2023")),
                                 line(15, (0, "North"), (100, "1,204"), (160, "1,310")),
                                 line(30, (0, "South"), (100, "877"), (160, "905")))
    assert (rows, columns) == (3, 3)
    assert texts(cells) == {(0, 0): "Region", (0, 1): "2022", (0, 2): "2023", (1, 0): "North", (1, 1): "1,204",
                            (1, 2): "1,310", (2, 0): "South", (2, 1): "877", (2, 2): "905"}
    assert [place for place, cell in cells.items() if cell.header] == [(0, 0), (0, 1), (0, 2)]
    assert cells[(1, 1)].bbox == (100, 15, 125, 25)  # the cell's words
    assert all((c.row_span, c.column_span) == (1, 1) for c in cells.values())


def test_a_continuation_line_joins_the_row_above():
    rows, _, cells = build(line(0, (0, "Product"), (120, "2022"), (180, "2023")),
                           line(15, (0, "Agricultural"), (120, "1,204"), (180, "1,310")),
                           line(27, (0, "products")),  # lower case, no number, in a column the row has
                           line(42, (0, "Mining"), (120, "877"), (180, "905")))
    assert rows == 3
    assert cells[(1, 0)].text == "Agricultural products" and cells[(1, 0)].bbox == (0, 15, 60, 37)
    assert cells[(2, 0)].text == "Mining"


def test_a_line_of_numbers_or_in_upper_case_is_a_row_of_its_own():
    rows, _, cells = build(line(0, (0, "Product"), (120, "2022"), (180, "2023")),
                           line(15, (0, "Agricultural"), (120, "1,204"), (180, "1,310")),
                           line(27, (0, "Products")),
                           line(42, (0, "mining"), (120, "877"), (180, "905")))
    assert rows == 4 and cells[(2, 0)].text == "Products" and cells[(3, 0)].text == "mining"


def test_stacked_header_lines_become_one_header_row():
    rows, columns, cells = build(line(0, (0, "Country"), (100, "Population"), (180, "Area")),
                                 line(12, (100, "(thousands)"), (180, "(km2)")),
                                 line(27, (0, "Austria"), (100, "9,104"), (180, "83,879")),
                                 line(42, (0, "Belgium"), (100, "11,697"), (180, "30,528")))
    assert (rows, columns) == (3, 3)
    assert cells[(0, 1)].text == "Population (thousands)" and cells[(0, 2)].text == "Area (km2)"
    assert [cell.header for cell in cells.values()] == [True] * 3 + [False] * 6


def test_a_group_title_spans_its_sub_columns_and_the_stub_header_spans_the_header_rows():
    rule_under_title = Rule(12.5, 0, 185)  # a rule keeps the title's row apart from the years' row
    rows, columns, cells = build(line(0, (100, "Sales")),
                                 line(15, (0, "Region"), (100, "2022"), (160, "2023")),
                                 line(30, (0, "North"), (100, "1,204"), (160, "1,310")),
                                 line(45, (0, "South"), (100, "877"), (160, "905")),
                                 horizontal=[rule_under_title])
    assert (rows, columns) == (4, 3)
    sales, region = cells[(0, 1)], cells[(0, 0)]
    assert (sales.text, sales.row_span, sales.column_span) == ("Sales", 1, 2)
    assert (region.text, region.row_span, region.column_span) == ("Region", 2, 1)
    assert (1, 0) not in cells  # covered by "Region"
    assert {place for place, cell in cells.items() if cell.header} == {(0, 0), (0, 1), (1, 1), (1, 2)}


def test_a_piece_across_a_column_gap_spans_both_columns():
    rows, _, cells = build(line(0, (0, "Region"), (110, "Sales in units")),  # 110 to 176: over the gap
                           line(15, (0, "Part"), (100, "2022"), (160, "2023")),
                           line(30, (0, "North"), (100, "1,204"), (160, "1,310")),
                           line(45, (0, "South"), (100, "877"), (160, "905")))
    assert (cells[(0, 1)].text, cells[(0, 1)].column_span) == ("Sales in units", 2)
    assert cells[(1, 1)].text == "2022" and cells[(0, 1)].header and cells[(1, 1)].header


def test_rules_between_most_lines_make_rows_of_the_bands_between_them():
    rules = [Rule(12.5, 0, 145), Rule(39.5, 0, 145), Rule(54.5, 0, 145)]
    rows, columns, cells = build(line(0, (0, "Item"), (120, "Value")),
                                 line(15, (0, "Total"), (120, "1,204")),
                                 line(27, (0, "Exports")),  # upper case, yet inside the band of "Total"
                                 line(42, (0, "Imports"), (120, "877")),
                                 line(57, (0, "Balance"), (120, "327")),
                                 horizontal=rules)
    assert (rows, columns) == (4, 2)
    assert [cells[(r, 0)].text for r in range(4)] == ["Item", "Total Exports", "Imports", "Balance"]


def test_a_vertical_rule_parts_words_that_whitespace_would_join():
    lines = [line(y, (0, "A"), (8, "B")) for y in (0, 15, 30)]  # 3 points apart: one piece of text
    assert build(*lines)[1] == 1
    rows, columns, cells = build(*lines, vertical=[Rule(6.5, 0, 40)])
    assert (rows, columns) == (3, 2) and cells[(0, 0)].text == "A" and cells[(0, 1)].text == "B"


def test_side_by_side_copies_of_one_column_group_are_one_long_table():
    rows, columns, cells = build(line(0, (0, "Name"), (60, "Value"), (120, "Name"), (180, "Value")),
                                 line(15, (0, "alpha"), (60, "1"), (120, "gamma"), (180, "3")),
                                 line(30, (0, "beta"), (60, "2"), (120, "delta"), (180, "4")))
    assert (rows, columns) == (5, 2)
    assert [cells[(r, 0)].text for r in range(5)] == ["Name", "alpha", "beta", "gamma", "delta"]
    assert [cells[(r, 1)].text for r in range(5)] == ["Value", "1", "2", "3", "4"]


def test_a_caption_above_and_a_note_below_are_no_rows():
    rows, columns, cells = build(line(-15, (0, "Table 3: Sales by region and year, in units sold")),
                                 line(0, (0, "Region"), (100, "2022"), (160, "2023")),
                                 line(15, (0, "North"), (100, "1,204"), (160, "1,310")),
                                 line(30, (0, "South"), (100, "877"), (160, "905")),
                                 line(45, (0, "Source: national statistics office estimates")))
    assert (rows, columns) == (3, 3) and cells[(0, 0)].text == "Region" and cells[(2, 0)].text == "South"


@pytest.mark.parametrize("rows, header", [
    # years above stub rows: the years head the columns
    ([["", "2021", "2022"], ["Exports", "12", "14"], ["Imports", "9", "11"]], [True, False, False]),
    # text only: the rows above the first row with a stub cell
    ([["", "Name", "Role"], ["1", "Ada", "analyst"], ["2", "Bo", "builder"]], [True, False, False]),
    # numbers from the first row on: no header
    ([["a", "1", "2"], ["b", "3", "4"], ["c", "5", "6"]], [False, False, False]),
    # placeholders are no numbers: the first data row is the one with numbers
    ([["Item", "Q1", "Q2"], ["Fees", "n/a", "-"], ["Tax", "12", "13"], ["Net", "7", "8"]],
     [True, True, False, False]),
])
def test_header_rows_are_the_rows_above_the_first_row_of_numbers(rows, header):
    cells = [Cell(r, c, 1, 1, text, False) for r, row in enumerate(rows) for c, text in enumerate(row) if text]
    mark_header(cells, len(rows))
    assert [any(cell.header for cell in cells if cell.row == r) for r in range(len(rows))] == header
    assert all(cell.header == header[cell.row] for cell in cells)


def marks(words: list[Word], horizontal=(), vertical=()) -> PageMarks:
    return PageMarks(600, 800, words, list(horizontal), list(vertical))


def test_the_pre_signal_sees_columns_or_a_ruled_grid_and_not_prose():
    columns = [w for y in (0, 15, 30) for w in line(y, (0, "Region"), (100, "1,204"), (160, "1,310"))]
    prose = [w for y in (0, 15, 30) for w in line(y, (0, "Tables carry most of the facts in a report"))]
    grid = ([Rule(y, 0, 200) for y in (0, 20, 40)], [Rule(x, 0, 40) for x in (0, 100, 200)])
    assert table_signal(marks(columns)) == "columns"
    assert table_signal(marks(prose)) == ""
    assert table_signal(marks(prose, *grid)) == "grid"


def test_a_ruled_grid_the_model_missed_is_a_table_and_a_chart_grid_is_not():
    words = [w for y, row in ((5, ("Item", "Value")), (25, ("Fees", "12")), (45, ("Tax", "13")))
             for w in line(y, (10, row[0]), (110, row[1]))]
    ruled = marks(words, [Rule(y, 0, 200) for y in (0, 20, 40, 60)], [Rule(x, 0, 60) for x in (0, 100, 200)])
    [table] = tables_on_page(ruled, [], 1)
    assert (table.page_number, table.score, table.matrix.rows, table.matrix.columns) == (1, 0.5, 3, 2)
    assert table.box == (10, 5, 135, 55)  # the words' extent, not the rules'
    chart = marks(words, ruled.horizontal_rules, ruled.vertical_rules)
    chart.slanted = [(20 + k, 10, 30 + k, 50) for k in range(10)]  # a plotted line inside the grid
    assert tables_on_page(chart, [], 1) == []


def test_the_row_labels_the_model_left_out_join_the_table():
    labels = ["Agriculture", "Mining", "Manufacturing", "Trade"]  # one start, ragged ends: a stub column
    words = line(0, (120, "2022"), (180, "2023")) + [
        w for k, label in enumerate(labels) for w in line(15 * (k + 1), (0, label), (120, f"{k + 1},204"),
                                                          (180, f"{k + 2},310"))]
    numbers_only = Detection("table", 0.9, (115, -2, 215, 75))
    [table] = tables_on_page(marks(words), [numbers_only], 3)
    assert (table.box, table.score) == ((0, 0, 205, 70), 0.9)  # from the labels on
    assert (table.matrix.rows, table.matrix.columns) == (5, 3)
    assert [c.text for c in table.matrix.cells if c.column == 0] == labels
    assert [c.text for c in table.matrix.cells if c.header] == ["2022", "2023"]


@pytest.mark.parametrize("turn", [0, 90, 180, 270])
def test_pdfium_words_of_a_turned_page_lie_where_pdfplumber_reads_them(tmp_path, turn):
    import drawn_tables
    import pdfplumber
    import pypdf
    import pypdfium2 as pdfium
    from plumbed_marks import marks_from_pdfplumber

    path, _ = drawn_tables.tables_pdf(tmp_path / "tables.pdf")
    writer = pypdf.PdfWriter()
    for page in pypdf.PdfReader(path).pages:
        writer.add_page(page.rotate(turn))
    turned = tmp_path / f"turned-{turn}.pdf"
    writer.write(turned)
    with pdfplumber.open(turned) as plumbed:
        reference = marks_from_pdfplumber(plumbed.pages[0])
    pdf = pdfium.PdfDocument(str(turned))
    try:
        cheap = marks_from_pdfium(pdf[0])
    finally:
        pdf.close()
    assert (cheap.width, cheap.height) == pytest.approx((reference.width, reference.height))
    assert len(cheap.words) >= 20

    def near(word: Word) -> bool:
        x, y = (word.x0 + word.x1) / 2, (word.top + word.bottom) / 2
        return any(w.x0 - 2 <= x <= w.x1 + 2 and w.top - 2 <= y <= w.bottom + 2 for w in reference.words)

    assert all(near(word) for word in cheap.words)
    assert table_signal(cheap) == table_signal(reference) != ""


def test_words_in_passes_over_words_beside_the_box_and_keeps_the_same_words():
    """``words_in`` skips the share of a word wholly beside the box (none): the same words as working out
    every word's share, for degenerate boxes and a share of 0 too."""
    import random

    from kg_decoder.decode.tables.page_marks import Word, box_area, box_overlap, words_in

    rng = random.Random(7)
    corners = lambda: sorted(rng.uniform(0, 100) for _ in range(2))  # noqa: E731
    words = []
    for k in range(300):
        (x0, x1), (top, bottom) = corners(), corners()
        if k % 10 == 0:
            x1 = x0  # no width
        if k % 15 == 0:
            top, bottom = bottom, top  # upside down
        words.append(Word(str(k), x0, top, x1, bottom, 10.0))
    for _ in range(200):
        (left, right), (top, bottom) = corners(), corners()
        box = (left, top, right, bottom)
        for share in (0.5, 0.1, 0.0, -1.0):
            every = [w for w in words if box_overlap(box, w.box) / (box_area(w.box) or 1e-6) >= share]
            assert words_in(box, words, share) == every
