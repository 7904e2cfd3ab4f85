"""A table's rows, columns and cells from the words inside its region and the page's ruling lines.

Text lines are cut into pieces at wide gaps and vertical rules; columns are the gaps of the pieces'
projection crossed by few lines, plus vertical rules; rows are the bands between horizontal rules
when most lines are separated by rules, else one row per line with continuation lines joined to the
row above; then header lines stacked into one row, header cells spanned over their sub-columns and
down the empty header rows beside them, and side-by-side repeats of one column group unfolded into
one long table. Every threshold below sits on a plateau of the ICDAR 2013 score (the odd half,
``bench/tables.py``); no rule names a file.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from ...model import BBox, Cell
from .page_marks import (PIECE_GAP, LinePiece, Rule, Word, cell_text, distinct, line_pieces, reads_as_number,
                         text_lines, words_box)

COLUMN_CROSSINGS = 0.15  # a column gap may be crossed by this share of the lines (spanning cells)...
MIN_COLUMN_CROSSINGS = 1  # ... or by this many lines
MIN_COLUMN_GAP = 1.0  # points: the narrowest gap that parts two columns
BOTH_SIDES = 0.5  # between two vertical rules, a gap is a column only when this share of the lines there
#                   have text on both sides of it
RULED_ROWS = 0.4  # horizontal rules between this share of the pairs of lines: rows are the bands between rules
WIDE_LINE = 0.6  # a one-piece line this wide (share of the table) is a title or a note: it does not vote on
#                  columns, and at the top or the bottom it is no row
MAX_HEADER_LINES = 8
PLACEHOLDERS = {"na", "n/a", "n.a.", "-", "–", "—", "…", "...", "x", "*", "†", "#", "nil", "none", ".."}
_YEAR = re.compile(r"(1[89]|20)\d\d([/–-](\d\d|(1[89]|20)\d\d))?")


@dataclass
class RowCell:
    """A cell being built: the words of the pieces that start in one column and reach column ``last``;
    a header cell spanning rows says from which row (``top_row``) and over how many."""

    last: int
    words: list[Word]
    top_row: Optional[int] = None
    row_span: int = 1

    @property
    def text(self) -> str:
        """The words top to bottom (rounded to the point), left to right."""
        return " ".join(w.text for w in sorted(self.words, key=lambda w: (round(w.top), w.x0)))


@dataclass
class Row:
    """A row being built: its cells by first column, in reading order."""

    cells: dict[int, RowCell] = field(default_factory=dict)

    def add(self, first: int, last: int, words: Sequence[Word]) -> None:
        """Words from column ``first`` to ``last``: a cell of their own, or joined to the cell that starts there."""
        cell = self.cells.get(first)
        if cell is None:
            self.cells[first] = RowCell(last, list(words))
        else:
            cell.last = max(cell.last, last)
            cell.words.extend(words)

    def spans_columns(self) -> bool:
        return any(cell.last > first for first, cell in self.cells.items())


@dataclass
class TableGrid:
    """Rows of a table and how many columns it has."""

    rows: list[Row]
    columns: int


def build_table(words: Sequence[Word], region: BBox, horizontal_rules: Sequence[Rule],
                vertical_rules: Sequence[Rule]) -> Optional[TableGrid]:
    """Rows and columns of the words inside ``region``; None when there are no words."""
    left, top, right, bottom = region
    region_height = bottom - top
    rules = [rule for rule in vertical_rules if left - 2 <= rule.position <= right + 2
             and min(rule.end, bottom) - max(rule.start, top) >= 0.3 * region_height]
    rule_xs = distinct([rule.position for rule in rules], 2.0)
    word_lines = text_lines(words)
    if not word_lines:
        return None
    lines = [line_pieces(line, PIECE_GAP, rules) for line in word_lines]
    width = max(1.0, right - left)
    wide = [len(pieces) == 1 and pieces[0].x1 - pieces[0].x0 >= WIDE_LINE * width for pieces in lines]
    first, end = 0, len(lines)  # captions above and notes below the grid are not rows
    while end - first > 2 and wide[first]:
        first += 1
    while end - first > 2 and wide[end - 1]:
        end -= 1
    lines, word_lines, wide = lines[first:end], word_lines[first:end], wide[first:end]
    voters = [pieces for pieces, is_wide in zip(lines, wide) if not is_wide] or lines
    interior = [x for x in rule_xs if left + 2 < x < right - 2]
    separators = column_separators(voters, left, right, rule_xs)
    if interior:
        separators = _gaps_within_ruled_bands(separators, interior, voters, left, right)
    bounds = [-1e9] + separators + [1e9]
    n_columns = len(bounds) - 1

    def columns_of(piece: LinePiece) -> tuple[int, int]:
        covered = [c for c in range(n_columns) if min(piece.x1, bounds[c + 1]) - max(piece.x0, bounds[c]) > 0.5]
        if not covered:
            middle = (piece.x0 + piece.x1) / 2
            covered = [c for c in range(n_columns) if bounds[c] <= middle < bounds[c + 1]]
        return covered[0], covered[-1]

    rows = []
    for pieces in lines:
        row = Row()
        for piece in pieces:
            row.add(*columns_of(piece), piece.words)
        rows.append(row)
    line_tops = [min(w.top for w in line) for line in word_lines]
    line_bottoms = [max(w.bottom for w in line) for line in word_lines]
    if n_columns >= 3:  # notes below the grid: a last line whose first piece crosses half the columns
        need = max(2, n_columns // 2)
        while len(rows) > 2 and min(rows[-1].cells) == 0 and rows[-1].cells[0].last + 1 >= need:
            rows, line_tops, line_bottoms = rows[:-1], line_tops[:-1], line_bottoms[:-1]
    rows, ruled_above = join_lines(rows, line_tops, line_bottoms, horizontal_rules, left, right)
    rows = group_header(rows, ruled_above)
    return unfold_repeated(rows) or TableGrid(rows, n_columns)


def column_separators(lines: Sequence[Sequence[LinePiece]], left: float, right: float,
                      rule_xs: Sequence[float]) -> list[float]:
    """x positions between columns: gaps of the pieces' projection crossed by few lines (each put
    where the gap is least crossed, centred), and vertical rules inside the text."""
    step = 0.5
    n = int((right - left) / step) + 3
    crossings = np.zeros(n, dtype=int)
    for pieces in lines:
        covered = np.zeros(n, dtype=bool)
        for piece in pieces:
            covered[int((piece.x0 - left) / step): int((piece.x1 - left) / step) + 1] = True
        crossings += covered
    free = crossings <= max(MIN_COLUMN_CROSSINGS, int(COLUMN_CROSSINGS * len(lines)))
    separators = []
    i = 0
    while i < n:
        if free[i]:
            j = i
            while j < n and free[j]:
                j += 1
            if i > 0 and j < n and (j - i) * step >= MIN_COLUMN_GAP:  # strictly inside the text's extent
                gap = crossings[i:j]
                least = np.nonzero(gap == gap.min())[0]
                separators.append(left + (i + (least[0] + least[-1]) / 2) * step)
            i = j
        else:
            i += 1
    for x in rule_xs:
        if left + 2 < x < right - 2 and all(abs(x - s) > 3 for s in separators):
            separators.append(x)
    return sorted(separators)


def _gaps_within_ruled_bands(separators: list[float], rule_xs: list[float], lines: Sequence[Sequence[LinePiece]],
                             left: float, right: float) -> list[float]:
    """Between two vertical rules, a whitespace gap is a column only when at least BOTH_SIDES of the
    lines with text in that band have text on both sides of it (centred words of a header inside a
    ruled cell leave gaps that are no columns)."""
    edges = [left - 1] + sorted(rule_xs) + [right + 1]
    kept = []
    for separator in separators:
        if any(abs(separator - x) <= 3 for x in rule_xs):
            kept.append(separator)
            continue
        band = max(i for i in range(len(edges) - 1) if edges[i] <= separator)
        band_left, band_right = edges[band], edges[band + 1]
        with_text = both_sides = 0
        for pieces in lines:
            before = any(p.x1 > band_left and p.x0 < separator and p.x1 <= separator + 0.5 for p in pieces)
            after = any(p.x0 < band_right and p.x1 > separator and p.x0 >= separator - 0.5 for p in pieces)
            if before or after:
                with_text += 1
                both_sides += before and after
        if with_text and both_sides >= BOTH_SIDES * with_text:
            kept.append(separator)
    return kept


def join_lines(rows: list[Row], line_tops: list[float], line_bottoms: list[float], horizontal_rules: Sequence[Rule],
               left: float, right: float) -> tuple[list[Row], list[bool]]:
    """Text lines joined into rows: the bands between horizontal rules when rules part most lines;
    else one row per line, a line joining the row above when it continues it (see :func:`_continues`)
    or when it lies in a ruled band that reads as one record. Also says, per row, whether a rule
    parts it from the row above."""
    n = len(rows)
    if n <= 1:
        return rows, [False] * n
    width = right - left
    rule_ys = [rule.position for rule in horizontal_rules
               if min(rule.end, right) - max(rule.start, left) >= 0.5 * width]
    ruled = [any(line_bottoms[i] - 1 <= y <= line_tops[i + 1] + 1 for y in rule_ys) for i in range(n - 1)]
    rows_are_bands = sum(ruled) >= max(2, RULED_ROWS * (n - 1))
    one_record = [False] * n  # per line: its ruled band reads as one record
    if not rows_are_bands and sum(ruled) >= 2:
        start = 0
        for end in [i + 1 for i in range(n - 1) if ruled[i]] + [n]:
            band = range(start, end)
            # one record: at most one line starts a stub (column 0) text that is not a continuation
            starters = sum(1 for i in band if 0 in rows[i].cells and not rows[i].cells[0].text[:1].islower())
            if len(band) >= 2 and starters <= 1 and not any(_is_data_row(rows[i]) for i in band if i > start):
                for i in band:
                    one_record[i] = True
            start = end
    groups = [[0]]
    for i in range(1, n):
        if rows_are_bands:
            join = not ruled[i - 1]
        elif ruled[i - 1]:
            join = False
        else:
            join = one_record[i] or _continues(rows, groups[-1], i)
        if join:
            groups[-1].append(i)
        else:
            groups.append([i])
    ruled_above = [False] + [ruled[group[0] - 1] for group in groups[1:]]
    return [_joined(rows[i] for i in group) for group in groups], ruled_above


def _continues(rows: list[Row], group: list[int], i: int) -> bool:
    """Whether line ``i`` continues the row of the lines ``group``: its cells start only in columns
    the row has, none is a number, and one starts in lower case."""
    columns = set(rows[i].cells)
    if not columns <= {first for j in group for first in rows[j].cells}:
        return False
    texts = [rows[i].cells[first].text for first in columns]
    return not any(reads_as_number(text) for text in texts) and any(text[:1].islower() for text in texts)


def _joined(rows) -> Row:
    """One row of several, a cell's words joined to those of the cell that starts in the same column."""
    joined = Row()
    for row in rows:
        for first, cell in row.cells.items():
            joined.add(first, cell.last, cell.words)
    return joined


def _is_data_row(row: Row) -> bool:
    """Mostly numbers right of the stub column (placeholders such as NA or a dash do not count)."""
    texts = [cell_text(cell.words) for first, cell in row.cells.items() if first > 0]
    return _mostly_numbers([text for text in texts if text.strip().casefold() not in PLACEHOLDERS])


def _mostly_numbers(texts: list[str]) -> bool:
    """Whether half the texts or more are numbers, at least one, and not all of them years."""
    if not texts or _years(texts):
        return False
    numbers = sum(reads_as_number(text) for text in texts)
    return numbers >= 1 and numbers >= 0.5 * len(texts)


def group_header(rows: list[Row], ruled_above: Sequence[bool]) -> list[Row]:
    """The header zone is the rows above the first data row (mostly numbers right of the stub
    column; in a table of text, the first row with a stub cell). Inside it, consecutive rows
    without a column-spanning cell are stacked text of the same cells and become one row; rows with
    a spanning cell, or a rule above, stay rows of their own. Then header cells span their
    sub-columns (:func:`_span_columns`) and the header rows where their columns are empty."""
    body = next((i for i, row in enumerate(rows) if _is_data_row(row)), None)
    if body is None:
        body = next((i for i, row in enumerate(rows) if 0 in row.cells), None)
    if body is None:
        return rows
    while body > 0 and set(rows[body - 1].cells) == {0}:  # section labels just above the data belong to it
        body -= 1
    if body < 2 or body > MAX_HEADER_LINES:
        return rows
    spanning = [row.spans_columns() for row in rows[:body]]
    groups: list[list[int]] = []
    for i in range(body):
        if spanning[i] or not groups or spanning[groups[-1][-1]] or ruled_above[i]:
            groups.append([i])
        else:
            groups[-1].append(i)
    header = [_joined(rows[i] for i in group) for group in groups]
    _span_columns(header, rows[body:])
    if len(header) > 1:
        _span_rows(header)
    return header + rows[body:]


def _span_columns(header: list[Row], body: list[Row]) -> None:
    """A header cell followed by empty positions, with the header row below it filled in those
    positions, spans them: a group title over its sub-columns ("Sales" over "2022", "2023")."""
    last_column = max((cell.last for row in header + body for cell in row.cells.values()), default=0)
    for r, row in enumerate(header[:-1]):
        below = header[r + 1].cells
        covered_below = set(below) | {c for first, cell in below.items() for c in range(first, cell.last + 1)}
        starts = sorted(row.cells)
        for i, first in enumerate(starts):
            if first == 0:  # the stub column's header
                continue
            cell = row.cells[first]
            end = (starts[i + 1] - 1) if i + 1 < len(starts) else last_column
            free = range(cell.last + 1, end + 1)
            if free and all(c in covered_below for c in free) and all(c in below for c in range(first, end + 1)):
                cell.last = end


def _span_rows(header: list[Row]) -> None:
    """A header cell spans the header rows above and below it where its columns are empty (a stub
    header beside stacked column headers)."""
    occupied = [{c for first, cell in row.cells.items() for c in range(first, cell.last + 1)} for row in header]
    for r, row in enumerate(header):
        for first, cell in row.cells.items():
            columns = set(range(first, cell.last + 1))
            low = r
            while low > 0 and not (occupied[low - 1] & columns):
                low -= 1
            high = r
            while high < len(header) - 1 and not (occupied[high + 1] & columns):
                high += 1
            if low != r or high != r:
                cell.top_row, cell.row_span = low, high - low + 1
                for spanned in range(low, high + 1):
                    occupied[spanned].update(columns)


def unfold_repeated(rows: list[Row]) -> Optional[TableGrid]:
    """A table printed as k side-by-side copies of one column group (the same header texts repeated)
    is one table: the copies stacked. None when the first row repeats no group."""
    if len(rows) < 3:
        return None
    head = rows[0].cells
    starts = sorted(head)
    texts = [_letters(cell_text(head[c].words)) for c in starts]
    count = len(texts)
    period = next((k for k in range(2, count // 2 + 1)
                   if count % k == 0 and all(texts[i] == texts[i % k] for i in range(count))), None)
    if period is None or not all(texts[:period]):
        return None
    bounds = starts + [10**6]

    def locate(column: int) -> tuple[int, int]:  # column -> (copy, column inside the copy)
        i = max(j for j in range(count) if bounds[j] <= column) if column >= bounds[0] else 0
        return i // period, i % period

    unfolded = [Row({i: RowCell(i, head[starts[i]].words) for i in range(period)})]
    for copy in range(count // period):
        for row in rows[1:]:
            stacked = Row()
            for first, cell in row.cells.items():
                first_copy, first_inside = locate(first)
                if first_copy != copy:
                    continue
                last_copy, last_inside = locate(cell.last)
                stacked.add(first_inside, last_inside if last_copy == copy else period - 1, cell.words)
            if stacked.cells:
                unfolded.append(stacked)
    return TableGrid(unfolded, period)


def grid_cells(grid: TableGrid) -> list[Cell]:
    """The non-empty cells of a built table (empty grid positions have none), headers marked."""
    cells = []
    for r, row in enumerate(grid.rows):
        for first, cell in sorted(row.cells.items()):
            top_row = cell.top_row if cell.top_row is not None else r
            cells.append(Cell(top_row, first, cell.row_span, cell.last - first + 1, cell_text(cell.words), False,
                              bbox=words_box(cell.words)))
    mark_header(cells, len(grid.rows))
    return cells


def mark_header(cells: list[Cell], n_rows: int) -> None:
    """Header rows: the rows above the first data row (mostly numbers right of the stub column);
    without numbers, the rows above the first row with a stub (column 0) cell; a first row without
    a stub cell above rows that have one (a row of years, say) is a header too. At most half the
    rows, at least one."""
    by_row: dict[int, list[Cell]] = {}
    for cell in cells:
        by_row.setdefault(cell.row, []).append(cell)

    def has_stub(r: int) -> bool:
        return any(cell.column == 0 for cell in by_row.get(r, []))

    first_data = next((r for r in range(n_rows) if _mostly_numbers(
        [c.text for c in by_row.get(r, []) if c.column > 0 and c.text.strip().casefold() not in PLACEHOLDERS])), None)
    if first_data is None:
        first_data = next((r for r in range(n_rows) if has_stub(r)), 1)
    if first_data == 0 and not has_stub(0) and any(has_stub(r) for r in range(1, n_rows)):
        first_data = 1
    n_header = min(first_data, max(1, n_rows // 2))
    for cell in cells:
        cell.header = cell.row < n_header


def _years(texts: Sequence[str]) -> bool:
    """Whether texts are all years ("2021", "2022/23"): a row of years heads the columns below it.

    >>> _years(["2021", "2022/23"]), _years(["2021", "1,204"])
    (True, False)
    """
    return bool(texts) and all(_YEAR.fullmatch(t.strip()) for t in texts)


def _letters(text: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


__all__ = ["Row", "RowCell", "TableGrid", "build_table", "grid_cells", "mark_header"]
