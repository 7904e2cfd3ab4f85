"""A table's HTML as a rectangular matrix of cells. Pure.

Each source cell keeps its row, column, row and column span, text, header flag
and where its markup sits in the table HTML (so a span of a segment's text can
be mapped to the cell). Grid positions no source cell covers become padding
cells, so every row has the same number of columns.
"""

from __future__ import annotations

import html as html_lib
import re
from typing import Optional

from ...model import Cell, Element, Matrix

_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9]*)([^<>]*)>")
_SPAN = re.compile(r"""\b(rowspan|colspan)\s*=\s*["']?(\d+)""", re.IGNORECASE)
_WHITESPACE = re.compile(r"\s+")
_MAX_SPAN = 1000  # a malformed span must not blow up the grid


def column_letters(index: int) -> str:
    """Spreadsheet column letters of a 0-based column index.

    >>> [column_letters(i) for i in (0, 25, 26, 701, 702)]
    ['A', 'Z', 'AA', 'ZZ', 'AAA']
    """
    letters = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        letters = chr(65 + remainder) + letters
    return letters


def cell_address(row: int, column: int) -> str:
    """The A1 address of a sheet cell from its 0-based row and column: every cell address of a
    decode is written here.

    >>> cell_address(5, 9)
    'J6'
    """
    return f"{column_letters(column)}{row + 1}"


def parse_table(markup: str) -> Matrix:
    """The cell matrix of ``<table>`` markup.

    A cell written ``<td/>`` (as unstructured writes an empty one) is a cell; one left open (HTML
    lets ``</td>`` out) ends where the next cell or row starts.

    >>> m = parse_table("<table><tr><th>a</th><th>b</th></tr><tr><td colspan='2'>c &amp; d</td></tr><tr><td>e</td></tr></table>")
    >>> (m.rows, m.columns)
    (3, 2)
    >>> [(c.row, c.column, c.text, c.header, c.padding) for c in m.cells if c.row > 0]
    [(1, 0, 'c & d', False, False), (2, 0, 'e', False, False), (2, 1, '', False, True)]
    >>> [(c.column, c.text, c.padding) for c in parse_table("<table><tr><td/><td>b</td><td>c</tr></table>").cells]
    [(0, '', False), (1, 'b', False), (2, 'c', False)]
    """
    sources: list[Cell] = []
    occupied: set[tuple[int, int]] = set()
    row = -1
    column = 0
    open_cell: Optional[tuple[int, int, int, bool]] = None  # row span, column span, inner start, header
    open_cell_name = "td"
    in_header_section = False

    def close(end: int) -> None:  # the open cell ends at ``end`` of the markup
        nonlocal open_cell, column
        row_span, column_span, inner_start, header = open_cell
        open_cell = None
        while (row, column) in occupied:
            column += 1
        text = _WHITESPACE.sub(" ", html_lib.unescape(_TAG.sub(" ", markup[inner_start:end]))).strip()
        sources.append(Cell(row, column, row_span, column_span, text, header, False, inner_start, end))
        for r in range(row, row + row_span):
            for c in range(column, column + column_span):
                occupied.add((r, c))
        column += column_span

    for match in _TAG.finditer(markup):
        closing, name = match.group(1) == "/", match.group(2).lower()
        if open_cell is not None and (name in ("td", "th", "tr", "table", "thead", "tbody", "tfoot")
                                      and (not closing or name != open_cell_name)):
            close(match.start())  # a cell HTML left open
        if name == "thead":
            in_header_section = not closing
        elif name == "tr" and not closing:
            row += 1
            column = 0
        elif name in ("td", "th") and not closing:
            if row < 0:
                row = 0
            spans = {k.lower(): min(int(v), _MAX_SPAN) for k, v in _SPAN.findall(match.group(3))}
            open_cell = (max(1, spans.get("rowspan", 1)), max(1, spans.get("colspan", 1)), match.end(),
                         name == "th" or in_header_section)
            open_cell_name = name
            if match.group(3).rstrip().endswith("/"):  # <td/>: an empty cell
                close(match.end())
        elif name in ("td", "th") and closing and open_cell is not None:
            close(match.start())
    if open_cell is not None:
        close(len(markup))
    rows = max((r for r, _ in occupied), default=-1) + 1
    columns = max((c for _, c in occupied), default=-1) + 1
    padding = [Cell(r, c, 1, 1, "", False, True) for r in range(rows) for c in range(columns)
               if (r, c) not in occupied]
    cells = sorted(sources + padding, key=lambda cell: (cell.row, cell.column))
    return Matrix(rows, columns, cells)


def table_matrix(element: Element, markup: str) -> Matrix:
    """The cell matrix of a table element whose assembled text is ``markup``; a sheet's table
    (one with a ``table_origin``) gives each cell its A1 address.

    >>> table = Element(0, "Table", "a", table_origin=(2, 1))
    >>> [c.reference for c in table_matrix(table, "<table><tr><td>a</td><td>b</td></tr></table>").cells]
    ['B3', 'C3']
    """
    matrix = parse_table(markup)
    if element.table_origin is not None:
        row, column = element.table_origin
        for cell in matrix.cells:
            cell.reference = cell_address(row + cell.row, column + cell.column)
    return matrix
