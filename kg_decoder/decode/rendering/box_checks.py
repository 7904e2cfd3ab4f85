"""Each element's box, checked when the document is decoded by a second reading of its page: the
characters the page shows inside the box must hold the element's text (most runs of three of its
letters). A PDF page's text layer is read by PDFium inside each box; a document placed
on its rendering, by the rendering's characters. ``Element.verification`` then says ``verified`` or
``element`` (the box is where the partitioner put the element, which the page does not bear out);
an element no reading can check keeps None. A chunk's citation anchor is verified when every box it
is the union of is.
"""

from __future__ import annotations

import re
import unicodedata

import numpy as np

from ...model import Element, Verification
from ..pdf.geometry import PageGeometry
from .pages import RenderedPage

_SHARE = 0.8  # of the runs of three letters of an element's text the page must show inside its box
_UNMAPPED = re.compile(r"\(cid:\d+\)")
_SLACK = 2.0  # page units a box is grown by: the partitioner's boxes and the page's glyphs differ slightly


def holds(inside: str, text: str) -> bool:
    """Whether the characters read inside a box hold ``text``: most runs of three letters of it (its
    letters in a row, spaces aside, compared as sets: the box's reading may split a word at a
    superscript, leave out the spaces between words, or draw a bold line twice where pdfminer reads
    it once). Glyphs pdfminer could not map (``(cid:12)``) are left out; an element of nothing else
    is held by any box with something drawn in it.

    >>> holds("Total 12 5 Notes", "Total 12.5"), holds("Net 7", "Total 12.5"), holds("•", "(cid:2)")
    (True, False, True)
    >>> holds("CHAPTER1", "CHAPTER 1"), holds("Shen 1 , Zhang 2", "Shen1, Zhang2"), holds("0 .2 .4", ".4")
    (True, True, True)
    """
    letters, drawn = _letters(_UNMAPPED.sub(" ", text)), _letters(inside)
    if len(letters) < 3:
        return letters in drawn if letters else bool(inside.strip())
    if letters in drawn:  # every run of three is there (the usual case, found without the sets)
        return True
    wanted = _runs(letters)
    return len(wanted & _runs(drawn)) >= _SHARE * len(wanted)


def _letters(text: str) -> str:
    return "".join(re.findall(r"\w+", unicodedata.normalize("NFKC", text).casefold()))


def _runs(letters: str) -> set[str]:
    return {letters[k:k + 3] for k in range(len(letters) - 2)}


def check_pdf_boxes(pdf, elements: list[Element], numbers: set[int]) -> None:
    """Check the boxes of the elements on the given pages of an open PDF (pypdfium2) with PDFium's own
    text inside each box."""
    by_page: dict[int, list[Element]] = {}
    for element in elements:
        if element.page_number in numbers and _unchecked(element) and element.rendered_page is None:
            by_page.setdefault(element.page_number, []).append(element)
    for number, members in by_page.items():
        page = pdf[number - 1]
        geometry = PageGeometry.of(page)
        textpage = page.get_textpage()
        for element in members:
            left, top, right, bottom = element.bbox
            x0, y0, x1, y1 = geometry.user_rect((left - _SLACK, top - _SLACK, right + _SLACK, bottom + _SLACK))
            inside = textpage.get_text_bounded(x0, y0, x1, y1)
            element.verification = Verification.VERIFIED if holds(inside, element.text) else Verification.ELEMENT


def check_rendered_boxes(elements: list[Element], pages: list[RenderedPage], slides: bool = False) -> None:
    """Check the boxes of the elements placed on a rendering with the rendering's characters; ``slides``:
    also the boxes a slide's file states (a table, a chart's data), on the rendered page of their slide,
    which has the slide's own coordinates."""
    heights: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # page index -> its characters by the height of their middle
    for element in elements:
        number = element.rendered_page if element.rendered_page is not None or not slides else element.page_number
        if not _unchecked(element) or number is None or not 0 < number <= len(pages):
            continue
        page = pages[number - 1]
        if number not in heights:
            middles = page.middle_heights()
            order = np.argsort(middles, kind="stable")
            heights[number] = (middles[order], order)
        middles, order = heights[number]
        # Only the characters whose middle is as high as the box grown by the slack can be inside it (in page order).
        rows = order[np.searchsorted(middles, 2 * (element.bbox[1] - _SLACK) - 1e-6, side="left"):
                     np.searchsorted(middles, 2 * (element.bbox[3] + _SLACK) + 1e-6, side="right")]
        inside = page.text_inside(rows, element.bbox, _SLACK)
        element.verification = Verification.VERIFIED if holds(inside, element.text) else Verification.ELEMENT


def _unchecked(element: Element) -> bool:
    return element.bbox is not None and not element.is_image and element.verification is None


__all__ = ["check_pdf_boxes", "check_rendered_boxes", "holds"]
