"""Lines of a PDF page's text layer that unstructured's ``fast`` reading dropped (type a point high at
a page's foot, a line its layout pass lost), added as elements in their place so that nothing a
reader of the page sees is lost.

Only where nothing was read: a line counts as read when most of its words are among the letters of
the page's elements (in any order), or when much of it lies inside an element's box (a table, a
block read in another order), so a line is never read twice. A cheap look first: the page's lines
as PDFium breaks them, letters only; only a page with a line none of its elements holds is read
again with boxes.
"""

from __future__ import annotations

import unicodedata

from ...model import Element, Problem
from ..images import merge_by_position
from .text_layer import PdfLines, lines_beside


def with_unread_lines(layer: PdfLines, elements: list[Element], numbers: list[int],
                      problems: list[Problem]) -> list[Element]:
    """``elements`` with the lines of the given pages (read by ``fast``) that no element holds."""
    added: list[Element] = []
    try:
        for number in numbers:
            on_page = [e for e in elements if e.page_number == number and not e.is_image]
            letters = _letters(" ".join(e.text for e in on_page))
            shown = layer.page(number).get_textpage().get_text_range()  # the page's own: it closes it
            if all(_read(line, letters) for line in shown.splitlines()):
                continue
            boxes = [e.bbox for e in on_page if e.bbox is not None]
            added += lines_beside(layer, number, boxes, lambda text, letters=letters: _read(text, letters))
    except Exception as exc:  # PDFium on a damaged page: keep the first reading
        problems.append(Problem.of("dropped-lines-not-read", "lines the first reading dropped not looked for", exc))
        return elements
    return merge_by_position(elements, added) if added else elements


def _read(line: str, letters: str) -> bool:
    """Whether most words of a line are among the letters read (in any order: a reading down columns
    holds a row's words, not the row)."""
    words = [word for word in (_letters(token) for token in line.split()) if word]
    return sum(word not in letters for word in words) * 2 <= len(words)


def _letters(text: str) -> str:
    """Letters and digits alone, in their compatibility forms (a ligature as its letters), folded."""
    return "".join(letter for letter in unicodedata.normalize("NFKC", text).casefold() if letter.isalnum())


__all__ = ["with_unread_lines"]
