"""Positions for formats whose files state none (a DOCX paragraph, a slide's text): the document is
rendered to PDF (LibreOffice), each element's text is found among the rendered pages' characters in
reading order, and the element gets the page it landed on and the box of its characters there.

A position found so is the renderer's layout, not the file's: a slide keeps its number (it is its
page), and a flowing document's elements are numbered by the rendered page they begin on, the one
its pictures and boxes show (Word's recorded page breaks may disagree with another layout); their
box is marked as rendered (``RENDERED_PDF_POINTS``, ``Element.rendered_page``). The same rendering, kept beside the
store, is what a trace later aligns the quoted characters with.
"""

from __future__ import annotations

import bisect
import difflib
import subprocess
import unicodedata
from functools import lru_cache
from typing import Callable, Optional

import numpy as np

from ...model import BBox, Element, Partitioned, Problem, Rendering
from .box_checks import check_rendered_boxes
from ..tables.matrix import parse_table
from .pages import RenderedPage, read_rendered_pages
from ..tables.office_cells import place_rendered_table_cells

_FUZZY_WINDOW = 400  # letters beyond an element's length searched when its exact text is not there
_FUZZY_SHARE = 0.8  # of an element's letters that must be found together for a fuzzy placement
_RUNNING = {"Header", "Footer", "PageHeader", "PageFooter"}  # repeated on pages: found without moving on
# Drawn away from the paragraph they are anchored in (a page's foot, the document's end, beside the text,
# a comment on the words it marks): found without moving on either.
_BESIDE_THE_FLOW = {"Footnote", "Endnote", "TextBox", "Comment", "ChartText"}  # a chart draws in its own order
# Drawn inside a graphic frame whose box is all the file states (a chart's texts, SmartArt's nodes): found on
# the rendering where it draws them, the frame's box kept where they are not found.
_IN_A_FRAME = {"ChartText", "SmartArt"}
_SLIDES = ("pptx", "ppt")  # one rendered page per slide
_ASPECT_TOLERANCE = 0.05  # a rendered picture is the document's when their width:height agree this well


def place_by_rendering(data: bytes, format_name: str, partitioned: Partitioned,
                       convert: Callable[[bytes, str], Optional[bytes]],
                       read_ahead: Optional[Callable[[], Optional[list[RenderedPage]]]] = None) -> None:
    """Render the document and give each text element without a box the rendered page and box it has
    there. A document that cannot be rendered keeps its elements as they are, with a problem.
    ``read_ahead``: the rendering's pages where they were read while the document was partitioned
    (:class:`.pages.ReadAhead`), or None."""
    pdf = convert(data, format_name)
    if pdf is None:
        partitioned.problems.append(Problem.of("not-rendered", "the document could not be rendered to place its "
                                                                "elements on pages"))
        return
    import pypdfium2 as pdfium

    pages = read_ahead() if read_ahead is not None else None
    if pages is None:
        try:
            pages = read_rendered_pages(pdf)
        except pdfium.PdfiumError:
            partitioned.problems.append(Problem.of("not-rendered", "the rendering of the document could not be read"))
            return
    placed = _place(partitioned.elements, pages, by_page=format_name in _SLIDES)
    check_rendered_boxes(partitioned.elements, pages, slides=format_name in _SLIDES)
    if format_name not in _SLIDES:  # a slide's tables state their cells' geometry
        place_rendered_table_cells(partitioned.elements, pages)
    placed += _place_pictures(partitioned.elements, [(number, box) for number, page in enumerate(pages, 1)
                                                     for box in page.pictures])
    if format_name not in _SLIDES and placed:
        _number_by_rendering(partitioned.elements)
        partitioned.page_numbers_from = PAGES_OF_THE_RENDERING
    partitioned.rendering = Rendering(renderer=renderer_name(), page_sizes=[page.size for page in pages], pdf=pdf,
                                      placed=placed)


# A flowing document's page numbers, once its rendering placed its elements (tg:pageNumbersFrom).
PAGES_OF_THE_RENDERING = "the rendering: the page LibreOffice draws each element on"


def _number_by_rendering(elements: list[Element]) -> None:
    """One page number per place: a flowing document's elements are numbered by the rendered page they
    begin on, the page its pictures and boxes show (not the page breaks Word last recorded, which
    another layout moves); a text element the rendering did not place has no page."""
    for element in elements:
        if element.rendered_page is not None:
            element.page_number = element.rendered_page
        elif element.bbox is None and not element.is_image:
            element.page_number = None


def _place(elements: list[Element], pages: list[RenderedPage], by_page: bool) -> int:
    """Find each element's letters in the rendered letters, in order; ``by_page``: only on the page of
    the element's own number (a slide is its page)."""
    folds: dict[str, str] = {}  # each character's letters, worked out once for the whole rendering
    folded = [_page_letters(page, folds) for page in pages]
    starts = [0]
    for letters, _ in folded:
        starts.append(starts[-1] + len(letters))
    stream = "".join(letters for letters, _ in folded)
    cursor = 0
    placed = 0
    for element in elements:
        if element.is_image or element.bbox is not None and element.category not in _IN_A_FRAME:
            continue
        frame = element.bbox  # where the file says a graphic frame is: what is found must be inside it
        pieces = [wanted for wanted in map(_fold, _drawn_texts(element)) if wanted]
        if by_page and (not element.page_number or element.page_number > len(pages)):
            continue
        low, high = (starts[element.page_number - 1], starts[element.page_number]) if by_page else (0, len(stream))
        found = None
        for _ in range(_FRAME_TRIES if frame is not None else 1):
            spans = [span for span in (_locate(stream, wanted, low if by_page else cursor, low, high)
                                       for wanted in pieces) if span is not None]
            if not spans:
                break
            page_index, around = _drawn_box(spans, starts, folded, pages)
            if frame is None or _inside(around, frame):
                found = spans, page_index, around
                break
            low = spans[0][0] + 1  # the same words elsewhere on the slide (its title): the next ones
        if found is None:
            continue
        spans, page_index, around = found
        if not by_page and element.category not in _RUNNING and element.category not in _BESIDE_THE_FLOW:
            cursor = max(cursor, max(end for _, end in spans))
        element.rendered_page = page_index + 1
        element.bbox = tuple(round(v, 3) for v in around)
        placed += 1
    return placed


_FRAME_TRIES = 8  # places of an element's words on its page looked at for the one inside its frame
_FRAME_SLACK = 2.0  # points a frame is grown by: a renderer draws a label a little over its edge


def _drawn_box(spans: list[tuple[int, int]], starts: list[int], folded: list, pages: list[RenderedPage]):
    """The page (index) where the first span of letters begins, and the box of the characters of the
    letters found on it."""
    page_index = bisect.bisect_right(starts, spans[0][0]) - 1
    first, last, owners = starts[page_index], starts[page_index + 1], folded[page_index][1]
    on_page = np.concatenate([np.arange(max(start, first), min(end, last)) - first for start, end in spans
                              if min(end, last) > max(start, first)])  # a character twice is the same box
    return page_index, pages[page_index].line_box_around(on_page if owners is None else owners[on_page])


def _inside(box: BBox, frame: BBox) -> bool:
    return (box[0] >= frame[0] - _FRAME_SLACK and box[1] >= frame[1] - _FRAME_SLACK
            and box[2] <= frame[2] + _FRAME_SLACK and box[3] <= frame[3] + _FRAME_SLACK)


def _page_letters(page: RenderedPage, folds: dict[str, str]) -> tuple[str, Optional[np.ndarray]]:
    """A page's letters as they are compared (:func:`_fold`), and the character each is of (None: the
    letter at a place is the character at that place: each character folds to one letter, as on a page
    of plain letters). ``folds``: the letters of the characters met so far, added to."""
    drawn = set(page.text)
    for char in drawn.difference(folds):
        folds[char] = _fold(char)
    letters = page.text.translate({ord(char): folds[char] for char in drawn})
    if all(len(folds[char]) == 1 for char in drawn):
        return letters, None
    return letters, np.repeat(np.arange(len(page.text)), [len(folds[char]) for char in page.text])


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
    return "".join(unicodedata.normalize("NFKC", text).casefold().split())  # split(): at what isspace() says


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
