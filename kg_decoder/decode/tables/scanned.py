"""Ruled tables on pages that are pictures (scans, image files): the grid's lines found with OpenCV,
each cell read by tesseract on its own (all of a table's cells in one run), spans where a separating line is missing.

Lines are runs of dark pixels longer than a thirtieth of the page (morphological opening along
rows and along columns), so letters never count; a table is a connected set of at least three
horizontal and three vertical lines. A cell is the box between consecutive lines; two neighbouring
cells whose shared line is mostly absent are one cell spanning both, when the merged cells form a
rectangle. Each cell is read on its own (small print read cell by cell comes out exact where a page
read whole splits columns into one paragraph), with its confidence the mean of its words'.
"""

from __future__ import annotations

from typing import Optional

from ...model import Cell, Element, Matrix
from ..image_text import read_words_of
from .pdf_pages import INFERRED_CELL, table_element
from .finder import FoundTable
from .structure import mark_header

_LINE_SHARE = 30  # a line is at least this many times shorter than the page: width / 30, height / 30
_MIN_LINES = 3
_MERGE = 4  # pixels: line positions closer than this are one line
_PRESENT = 0.5  # a separator is there when this share of its length is dark in the line mask
_INSET = 3  # pixels kept off a cell's edges when reading it (its lines are not text)


def ruled_tables(grey, scale: float, languages: str, page_number: int) -> list[Element]:
    """The ruled tables in a greyscale page picture drawn ``scale`` pixels per page unit, as Table
    elements with boxes in page units."""
    import cv2
    import numpy as np

    pixels = np.asarray(grey)
    ink = cv2.adaptiveThreshold(255 - pixels, 255, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY, 15, -2)
    height, width = ink.shape
    across = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (width // _LINE_SHARE, 1)))
    down = cv2.morphologyEx(ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (1, height // _LINE_SHARE)))
    grid = cv2.dilate(cv2.bitwise_or(across, down), np.ones((3, 3), np.uint8))
    count, _, stats, _ = cv2.connectedComponentsWithStats(grid)
    tables = []
    for label in range(1, count):
        x, y, w, h, _ = stats[label]
        if w < width // 10 or h < height // 40:
            continue
        rows = _positions(across[y:y + h, x:x + w].sum(axis=1), w) + y
        columns = _positions(down[y:y + h, x:x + w].sum(axis=0), h) + x
        if len(rows) < _MIN_LINES or len(columns) < _MIN_LINES:
            continue
        element = _table(grey, across, down, list(rows), list(columns), scale, languages, page_number)
        if element is not None:
            tables.append(element)
    return tables


def _positions(profile, length: int):
    """Where the lines are along one axis: positions whose line pixels span half the table, merged."""
    import numpy as np

    hits = np.nonzero(profile >= 0.5 * 255 * length)[0]
    merged: list[list[int]] = []
    for position in hits:
        if merged and position - merged[-1][-1] <= _MERGE:
            merged[-1].append(int(position))
        else:
            merged.append([int(position)])
    return np.array([round(sum(group) / len(group)) for group in merged], dtype=int)


def _table(grey, across, down, rows: list[int], columns: list[int], scale: float, languages: str,
           page_number: int) -> Optional[Element]:
    """The grid between the lines as a table: cells merged where their separator is missing, each
    read on its own."""
    n_rows, n_columns = len(rows) - 1, len(columns) - 1
    owner = {(r, c): (r, c) for r in range(n_rows) for c in range(n_columns)}

    def root(cell):
        while owner[cell] != cell:
            cell = owner[cell]
        return cell

    for r in range(n_rows):
        for c in range(n_columns):
            if c + 1 < n_columns and not _present(down[rows[r]:rows[r + 1], columns[c + 1] - 2:columns[c + 1] + 3], 1):
                owner[root((r, c + 1))] = root((r, c))
            if r + 1 < n_rows and not _present(across[rows[r + 1] - 2:rows[r + 1] + 3, columns[c]:columns[c + 1]], 0):
                owner[root((r + 1, c))] = root((r, c))
    groups: dict[tuple[int, int], list[tuple[int, int]]] = {}
    for cell in owner:
        groups.setdefault(root(cell), []).append(cell)
    spans: list[tuple[int, int, int, int]] = []
    for members in groups.values():
        top, left = min(r for r, _ in members), min(c for _, c in members)
        bottom, right = max(r for r, _ in members), max(c for _, c in members)
        if len(members) != (bottom - top + 1) * (right - left + 1):  # not a rectangle: keep the cells apart
            spans += [(r, c, r, c) for r, c in members]
        else:
            spans.append((top, left, bottom, right))
    boxes = [(columns[c0], rows[r0], columns[c1 + 1], rows[r1 + 1]) for r0, c0, r1, c1 in spans]
    cells: list[Cell] = []
    confidences: dict[tuple[int, int], float] = {}
    for (r0, c0, r1, c1), box, (text, confidence) in zip(spans, boxes, _read_cells(grey, boxes, languages)):
        page_box = tuple(round(v / scale, 3) for v in box)
        cells.append(Cell(r0, c0, r1 - r0 + 1, c1 - c0 + 1, text, False, bbox=page_box))
        if confidence is not None:
            confidences[(r0, c0)] = confidence
    if sum(1 for cell in cells if cell.text) < 2:
        return None
    mark_header(cells, n_rows)
    read = list(confidences.values())
    found = FoundTable(page_number, tuple(round(v / scale, 3) for v in (columns[0], rows[0], columns[-1], rows[-1])),
                       round(sum(read) / len(read), 4) if read else INFERRED_CELL, Matrix(n_rows, n_columns, cells))
    return table_element(found, confidences=confidences)


def _present(strip, across: int) -> bool:
    """Whether a separator runs along most of its length in this strip of the line mask (``across``:
    the strip's axis across the line: 1 for a vertical line, 0 for a horizontal one)."""
    if strip.size == 0:
        return False
    return (strip.max(axis=across) > 0).mean() >= _PRESENT


def _read_cells(grey, boxes: list[tuple[int, int, int, int]], languages: str) -> list[tuple[str, Optional[float]]]:
    """Each cell's text and mean word confidence (None: nothing read), the cells with ink read by one
    tesseract run (its start-up paid once a table, not once a cell)."""
    from PIL import ImageOps, ImageStat

    crops: dict[int, object] = {}
    for k, (left, top, right, bottom) in enumerate(boxes):
        if right - left <= 2 * _INSET or bottom - top <= 2 * _INSET:
            continue
        inner = grey.crop((left + _INSET, top + _INSET, right - _INSET, bottom - _INSET))
        if ImageStat.Stat(inner).extrema[0][0] > 128:  # no ink: an empty cell, not worth reading
            continue
        crops[k] = ImageOps.expand(inner, 10, fill=255)
    read = dict(zip(crops, read_words_of([(crop, 1.0) for crop in crops.values()], languages, psm=6))) if crops else {}
    texts: list[tuple[str, Optional[float]]] = []
    for k in range(len(boxes)):
        words = read.get(k)
        texts.append((" ".join(word[1] for word in words), round(sum(word[3] for word in words) / len(words), 4))
                     if words else ("", None))
    return texts


__all__ = ["ruled_tables"]
