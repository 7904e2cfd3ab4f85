"""Where a trace's words are drawn: the boxes that name an element and how far they were checked, the
later pages a flowing document's element runs on to, the text a table's markup shows."""

from __future__ import annotations

import html
import re
from typing import Optional

from ..graph.rows import TextElement
from ..model import Box, PageText, Verification, folded_letters
from .glyphs import DrawnDocument, page_characters
from .verification import laid_out_lines, spells


# Formats whose rendering flows an element over pages (a long paragraph runs on): its box is where it
# begins, and a quote from its end may be drawn pages later. (A slide's text stays on its slide.)
FLOWING = {"docx", "doc", "odt", "rtf"}
_FLOW_PAGES = 30  # pages after an element's first that a quote from it is looked for on, at most
_WHOLE_PAGE = (0.0, 0.0, 1e9, 1e9)
_RUN_ON_LINES = 3  # a page continues an element when one of its first lines is the element's text
_RUN_ON_LETTERS = 12  # ... of at least this many letters (a short line is too common to tell)


def on_a_later_page(document: DrawnDocument, page_number: int, text: str, start: int,
                    end: int) -> Optional[tuple[int, list]]:
    """The page after ``page_number`` onto which the element's ``text`` runs on and that draws
    ``text[start:end]`` (found with as much of the element's text around it as the page holds, in one
    place), and the boxes of its lines; None when the element stops or no such page does. Only the
    pages the element continues onto are read: the same words elsewhere are another element's."""
    letters = folded_letters(text)
    for later in range(page_number + 1, page_number + _FLOW_PAGES + 1):
        page = page_characters(document, later)
        if page is None or not _runs_on(page, letters):
            return None
        lines = laid_out_lines(page, _WHOLE_PAGE, text, start, end, context_only=True)
        if lines and spells(page, lines, text[start:end]):
            return later, lines
    return None


def _runs_on(page: PageText, letters: str) -> bool:
    """Whether the page begins with more of an element's text (one of its first lines is in it)."""
    first = [folded_letters(line) for line in page.stream.text.splitlines() if line.strip()][:_RUN_ON_LINES]
    return any(len(line) >= _RUN_ON_LETTERS and line in letters for line in first)


# Elements whose box is their text's own place, by the reading that found them, as a trace names it: a
# word OCR read in a picture, a form field's widget (where a viewer draws its value), an annotation's
# rectangle. The page's text layer does not hold their text; their box is the answer.
OWN_BOX = {"OcrWord": "ocr", "FormField": "element", "Annotation": "element"}


def fill_gaps(indices: list[int], owner: dict[int, tuple[TextElement, int]], page: PageText, text: str) -> None:
    """A page character the alignment left out, between two it placed, is the stored character right
    after its predecessor's when that is the same letter (an alignment of text stored in another order,
    a table's cells, can miss single letters)."""
    for previous, index in zip(indices, indices[1:]):
        if index in owner or previous not in owner:
            continue
        row, offset = owner[previous]
        if offset + 1 < len(text) and text[offset + 1].casefold() == page.chars[index].char.casefold():
            owner[index] = (row, offset + 1)


def markup_text(markup: str) -> tuple[str, list[int]]:
    """The text a table's markup shows (tags dropped, a space between cells, entities read) and, for
    each of its characters, where it is in the markup.

    >>> text, where = markup_text("<tr><td>A &amp; B</td><td>7</td></tr>")
    >>> text, where[2], where[4], where[6]
    ('  A & B  7  ', 8, 10, 16)
    """
    chars: list[str] = []
    where: list[int] = []
    for match in _MARKUP.finditer(markup):
        if match.group(1) is not None:  # a tag: the cells it parts stay apart
            chars.append(" ")
            where.append(match.start())
            continue
        piece = html.unescape(match.group(0))
        chars.extend(piece)
        where.extend([match.start()] * len(piece) if match.group(0).startswith("&") else
                     range(match.start(), match.start() + len(piece)))
    return "".join(chars), where


_MARKUP = re.compile(r"(<[^<>]*>)|&[#a-zA-Z0-9]+;|[^<&]+|[<&]")


def placed_boxes(element: TextElement, page_number: Optional[int], rectangles: list, source: str,
            verification: Verification) -> list[Box]:
    """Rectangles on an element's page as boxes that name the element, the page's size and how far
    they were checked."""
    return [Box(left=left, top=top, right=right, bottom=bottom, source=source, page_number=page_number,
                page_width=element.page_width, page_height=element.page_height,
                coordinate_system=element.coordinate_system, element=element.element, verification=verification)
            for left, top, right, bottom in rectangles]


__all__ = ["FLOWING", "OWN_BOX", "fill_gaps", "markup_text", "on_a_later_page", "placed_boxes"]
