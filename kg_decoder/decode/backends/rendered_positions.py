"""Positions for formats whose files state none (a DOCX paragraph, a slide's text): the document is
rendered to PDF (LibreOffice), each element's text is found among the rendered pages' characters in
reading order, and the element gets the page it landed on and the box of its characters there.

A position found so is the renderer's layout, not the file's: elements keep their own page number
where the format knows one (slides; the page breaks Word recorded), and their box is marked as
rendered (``RENDERED_PDF_POINTS``, ``Element.rendered_page``). The same rendering, kept beside the
store, is what a trace later aligns the quoted characters with.
"""

from __future__ import annotations

import contextlib
import ctypes
import difflib
import hashlib
import os
import pickle
import signal
import subprocess
import unicodedata
from functools import lru_cache
from typing import Callable, Optional

from ...model import BBox, Element, PageText, Partitioned, Problem, Rendering
from .box_checks import check_rendered_boxes
from ..tables import parse_table
from .pdf_fonts import declared_heights
from .pdf_geometry import PageGeometry
from .pdf_text_layer import page_text
from .table_cells import place_rendered_table_cells

_FUZZY_WINDOW = 400  # letters beyond an element's length searched when its exact text is not there
_FUZZY_SHARE = 0.8  # of an element's letters that must be found together for a fuzzy placement
_RUNNING = {"Header", "Footer", "PageHeader", "PageFooter"}  # repeated on pages: found without moving on
# Drawn away from the paragraph they are anchored in (a page's foot, the document's end, beside the text,
# a comment on the words it marks): found without moving on either.
_BESIDE_THE_FLOW = {"Footnote", "Endnote", "TextBox", "Comment"}
_SLIDES = ("pptx", "ppt")  # one rendered page per slide
_PAGES_PER_READER = 64  # a rendering read by one process per so many pages (a fork costs more than a few pages)
_ASPECT_TOLERANCE = 0.05  # a rendered picture is the document's when their width:height agree this well


def place_by_rendering(data: bytes, format_name: str, partitioned: Partitioned,
                       convert: Callable[[bytes, str], Optional[bytes]]) -> None:
    """Render the document and give each text element without a box the rendered page and box it has
    there. A document that cannot be rendered keeps its elements as they are, with a problem."""
    pdf = convert(data, format_name)
    if pdf is None:
        partitioned.problems.append(Problem.of("not-rendered", "the document could not be rendered to place its "
                                                                "elements on pages"))
        return
    import pypdfium2 as pdfium

    try:
        document = pdfium.PdfDocument(pdf)
    except pdfium.PdfiumError:
        partitioned.problems.append(Problem.of("not-rendered", "the rendering of the document could not be read"))
        return
    try:
        count = len(document)
        sizes = [tuple(round(v, 3) for v in document[i].get_size()) for i in range(count)]
        pictures = _rendered_pictures(document)
    finally:
        document.close()
    pages = _read_pages(pdf, count)
    placed = _place(partitioned.elements, pages, by_page=format_name in _SLIDES)
    check_rendered_boxes(partitioned.elements, pages)
    if format_name not in _SLIDES:  # a slide's tables state their cells' geometry
        place_rendered_table_cells(partitioned.elements, pages)
    placed += _place_pictures(partitioned.elements, pictures)
    partitioned.rendering = Rendering(renderer=renderer_name(), page_sizes=sizes, pdf=pdf, placed=placed)


def _read_pages(pdf: bytes, count: int) -> list[PageText]:
    """The characters of every page of the rendering; a long one in page ranges read side by side by
    forked processes, as many as this process's share of the CPUs (a page's reading is most of what
    placing a long document costs)."""
    # The fonts' heights of every page from one parse of the rendering: parsed again for each page, a
    # long document's rendering cost time in the square of its pages.
    key = f"rendering-{hashlib.sha256(pdf).hexdigest()}"
    heights = [declared_heights(pdf, number, key) for number in range(1, count + 1)]
    readers = min(_cpu_share(), count // _PAGES_PER_READER) if hasattr(os, "fork") else 1
    bounds = [count * k // max(readers, 1) for k in range(max(readers, 1) + 1)]
    forked = [_RangeReader(pdf, heights, range(bounds[k], bounds[k + 1])) for k in range(1, readers)]
    try:
        pages = _pages_of(pdf, heights, range(bounds[0], bounds[1]))
        for reader in forked:
            pages += reader.pages()
    finally:
        for reader in forked:
            reader.stop()
    return pages


def _pages_of(pdf: bytes, heights: list[dict], numbers: range) -> list[PageText]:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return [page_text(document[i], heights[i]) for i in numbers]
    finally:
        document.close()


def _cpu_share() -> int:
    """The CPUs this process may use: the worker's share when it was given one, else all it may run on."""
    from ..worker import THREADS_VARIABLE

    if os.environ.get(THREADS_VARIABLE, "").isdigit():
        return max(1, int(os.environ[THREADS_VARIABLE]))
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class _RangeReader:
    """A forked process reading a range of the rendering's pages, its answer pickled through a pipe. It
    dies with this process; a reader that fails has its pages read here instead."""

    def __init__(self, pdf: bytes, heights: list[dict], numbers: range) -> None:
        self._pdf, self._heights, self._numbers = pdf, heights, numbers
        read_end, write_end = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the reader: it leaves by os._exit, running none of the decode's exit handlers
            status = 1
            try:
                os.close(read_end)
                ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone when its parent is
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(_pages_of(pdf, heights, numbers), out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self._answer = os.fdopen(read_end, "rb")

    def pages(self) -> list[PageText]:
        try:
            answer = self._answer.read()
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
            if status == 0:
                return pickle.loads(answer)
        except (OSError, pickle.UnpicklingError, EOFError):
            pass
        return _pages_of(self._pdf, self._heights, self._numbers)

    def stop(self) -> None:
        if self._pid:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            self._pid = 0
        self._answer.close()


def _place(elements: list[Element], pages: list[PageText], by_page: bool) -> int:
    """Find each element's letters in the rendered letters, in order; ``by_page``: only on the page of
    the element's own number (a slide is its page)."""
    letters: list[str] = []
    where: list[tuple[int, int]] = []  # (page index, character index) of each letter
    starts = []
    for page_index, page in enumerate(pages):
        starts.append(len(letters))
        for char_index, char in enumerate(page.chars):
            for letter in _fold(char.char):
                letters.append(letter)
                where.append((page_index, char_index))
    starts.append(len(letters))
    stream = "".join(letters)
    cursor = 0
    placed = 0
    for element in elements:
        if element.is_image or element.bbox is not None:
            continue
        pieces = [wanted for wanted in ("".join(_fold(text)) for text in _drawn_texts(element)) if wanted]
        if by_page and (not element.page_number or element.page_number > len(pages)):
            continue
        low, high = (starts[element.page_number - 1], starts[element.page_number]) if by_page else (0, len(stream))
        spans = [span for span in (_locate(stream, wanted, low if by_page else cursor, low, high)
                                   for wanted in pieces) if span is not None]
        if not spans:
            continue
        page_index = where[spans[0][0]][0]
        if not by_page and element.category not in _RUNNING and element.category not in _BESIDE_THE_FLOW:
            cursor = max(cursor, max(end for _, end in spans))
        on_page = [char_index for start, end in spans for page, char_index in where[start:end] if page == page_index]
        boxes = [pages[page_index].chars[char_index].line_box for char_index in on_page]
        element.rendered_page = page_index + 1
        element.bbox = tuple(round(v, 3) for v in (min(b[0] for b in boxes), min(b[1] for b in boxes),
                                                    max(b[2] for b in boxes), max(b[3] for b in boxes)))
        placed += 1
    return placed


def _drawn_texts(element: Element) -> list[str]:
    """The words that show where an element is drawn, in the pieces they are drawn in: a comment's are
    those it marks; a chart's, its title and each category's label (its values are drawn as bars and
    lines, not as its table's text, and a renderer writes its labels in an order of its own)."""
    properties = element.properties or {}
    if element.category == "Comment":
        return [properties.get("anchorText", "")]
    if element.is_table and "chartType" in properties:
        labels = [cell.text for cell in parse_table(element.html or "").cells if cell.column == 0 and cell.row > 0]
        return [properties.get("chartTitle", "")] + labels
    return [element.text]


def _rendered_pictures(document) -> list[tuple[int, BBox]]:
    """The pictures drawn on the rendered pages, in reading order: (page number, box)."""
    import pypdfium2.raw as pdfium_c

    pictures = []
    for index in range(len(document)):
        page = document[index]
        geometry = PageGeometry.of(page)
        found = []
        for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=5):
            box = geometry.clip(geometry.box(obj.get_bounds()))
            if box is not None:
                found.append(tuple(round(v, 3) for v in box))
        pictures += [(index + 1, box) for box in sorted(found, key=lambda b: (round(b[1]), b[0]))]
    return pictures


def _place_pictures(elements: list[Element], pictures: list[tuple[int, BBox]]) -> int:
    """Give each picture without a box the next rendered picture of its shape, in document order (the
    renderer may draw pictures of its own, such as bullets, which are passed over)."""
    cursor = 0
    placed = 0
    for element in elements:
        if not element.is_image or element.bbox is not None or not element.image_width or not element.image_height:
            continue
        aspect = element.image_width / element.image_height
        for k in range(cursor, len(pictures)):
            number, (left, top, right, bottom) = pictures[k]
            if bottom > top and abs((right - left) / (bottom - top) / aspect - 1) <= _ASPECT_TOLERANCE:
                element.rendered_page, element.bbox = number, pictures[k][1]
                cursor = k + 1
                placed += 1
                break
    return placed


def _locate(stream: str, wanted: str, cursor: int, low: int, high: int) -> Optional[tuple[int, int]]:
    """Where ``wanted`` is in ``stream[low:high]``: exactly at or after ``cursor``, else exactly anywhere,
    else most of it together near the cursor (the renderer adds list numbers, drops a field)."""
    found = stream.find(wanted, cursor, high)
    if found < 0:
        found = stream.find(wanted, low, high)
    if found >= 0:
        return found, found + len(wanted)
    window_end = min(high, cursor + len(wanted) + _FUZZY_WINDOW)
    window = stream[cursor:window_end]
    matcher = difflib.SequenceMatcher(None, wanted, window, autojunk=False)
    blocks = [block for block in matcher.get_matching_blocks() if block.size >= 3]
    if sum(block.size for block in blocks) < _FUZZY_SHARE * len(wanted):
        return None
    return cursor + blocks[0].b, cursor + blocks[-1].b + blocks[-1].size


def _fold(text: str) -> str:
    """The letters of ``text`` as both sides are compared: compatibility forms, case and whitespace aside."""
    return "".join(letter for letter in unicodedata.normalize("NFKC", text).casefold() if not letter.isspace())


@lru_cache(maxsize=1)
def renderer_name() -> str:
    """LibreOffice and its version, as the rendering is recorded."""
    try:
        answer = subprocess.run(["soffice", "--headless", "--version"], capture_output=True, text=True, timeout=60)
        words = answer.stdout.split()
        return " ".join(words[:2]) if len(words) >= 2 else "LibreOffice"
    except (OSError, subprocess.TimeoutExpired):
        return "LibreOffice"


__all__ = ["place_by_rendering", "renderer_name"]
