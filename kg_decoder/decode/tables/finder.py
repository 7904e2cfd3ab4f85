"""Tables on born-digital PDF pages: where they are and their rows, columns and cells.

Per page:
  1. the pre-signal (text layer only, about 1 ms): a ruled grid, or three consecutive text lines split
     by a wide gap; pages without either skip everything below (they cannot hold a table it would
     find) — :func:`.regions.table_signal` on :func:`.page_marks.marks_from_pdfium`;
  2. regions: the bundled layout model on the page drawn by PDFium, completed from the page's vector
     graphics (:mod:`.regions`);
  3. structure from the text layer (the decode's words of the page and the ruling lines its paths
     draw: :func:`.page_marks.marks_of_page`): rows, columns, spans and header rows (:mod:`.structure`).

Coordinates everywhere: PDF points, top-left origin of the displayed page (the visible area, /Rotate
applied: where the layout model sees the page drawn). The rules and their thresholds were chosen by measurement on the ICDAR 2013 table
competition's odd half (``../shared/tables-icdar2013``; ``bench/tables.py`` prints the scores beside
pdfplumber's and camelot's, and says which half is in-sample): every threshold sits on a plateau of
the score, and no rule names a file. :mod:`.pdf_pages` ties it to the decode.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ...model import BBox, Matrix
from .page_marks import PageMarks, words_in
from .regions import Detection, find_regions
from .structure import build_table, grid_cells

MIN_ROWS = 2  # smaller results are not tables
MIN_COLUMNS = 2


@dataclass
class FoundTable:
    """A table found on a page: its box and its cells' boxes on the displayed page, in PDF points;
    ``score``: how sure the finder is of it (the layout model's score for its region)."""

    page_number: int
    box: BBox
    score: float
    matrix: Matrix  # cells where there is text (the element's markup pads the other grid positions)


def tables_on_page(marks: PageMarks, detections: Sequence[Detection], page_number: int) -> list[FoundTable]:
    """The tables of a page, from its words and rules and the layout model's boxes on it."""
    found = []
    for region in find_regions(detections, marks):
        grid = build_table(words_in(region.box, marks.words), region.box, marks.horizontal_rules,
                           marks.vertical_rules)
        if grid is None:
            continue
        cells = grid_cells(grid)
        if len(grid.rows) < MIN_ROWS or len({cell.column for cell in cells}) < MIN_COLUMNS:
            continue
        box = (min(c.bbox[0] for c in cells), min(c.bbox[1] for c in cells), max(c.bbox[2] for c in cells),
               max(c.bbox[3] for c in cells))
        found.append(FoundTable(page_number, box, region.score, Matrix(len(grid.rows), grid.columns, cells)))
    return found


__all__ = ["FoundTable", "tables_on_page"]
