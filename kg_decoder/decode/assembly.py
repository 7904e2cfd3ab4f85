"""Text assembly: each segment's text from its elements, with every offset recorded.

Pure functions over the data model. Text elements are joined by a blank line;
a table contributes its HTML (``<table>...</table>``) so that downstream readers
see cells; images contribute nothing.
"""

from __future__ import annotations

import html as html_lib

from ..model import Element, ElementSpan, Segment

SEPARATOR = "\n\n"


def element_text(element: Element) -> str:
    """The text an element contributes to its segment.

    >>> element_text(Element(0, "Table", "a b", html="<table><tr><td>a</td></tr></table>"))
    '<table><tr><td>a</td></tr></table>'
    >>> element_text(Element(0, "Table", "a & b"))
    '<table><tr><td>a &amp; b</td></tr></table>'
    >>> element_text(Element(0, "Image", "alt text"))
    ''
    """
    if element.is_image:
        return ""
    if element.is_table:
        markup = (element.html or "").strip()
        if markup.lower().startswith("<table") and markup.lower().endswith("</table>"):
            return markup
        return f"<table><tr><td>{html_lib.escape(element.text)}</td></tr></table>"
    return element.text


def assemble(segments: list[Segment], elements: list[Element]) -> str:
    """Fill every segment's text, element spans and offsets; return the document text.

    ``segments`` must be in pre-order (a parent before its children). Text-carrying
    segments are joined by SEPARATOR into the document text; a page that holds
    sections gets the span of its sections.

    >>> from kg_decoder.model import Segment
    >>> els = [Element(0, "Title", "A"), Element(1, "NarrativeText", "b c")]
    >>> segs = [Segment(0, "section", elements=[0]), Segment(1, "section", elements=[1])]
    >>> assemble(segs, els)
    'A\\n\\nb c'
    >>> (segs[1].char_offset, len(segs[1].text))
    (3, 3)
    """
    by_index = {element.index: element for element in elements}
    parts: list[str] = []
    length = 0
    for segment in segments:
        if segment.carries_text:
            _fill_segment_text(segment, by_index)
            if parts:
                parts.append(SEPARATOR)
                length += len(SEPARATOR)
            segment.char_offset = length
            parts.append(segment.text)
            length += len(segment.text)
        else:
            segment.char_offset = length
    document_text = "".join(parts)
    _fill_extents(segments, document_text)
    return document_text


def _fill_segment_text(segment: Segment, by_index: dict[int, Element]) -> None:
    pieces: list[str] = []
    spans: list[ElementSpan] = []
    offset = 0
    for number in segment.elements:
        text = element_text(by_index[number])
        if pieces:
            pieces.append(SEPARATOR)
            offset += len(SEPARATOR)
        spans.append(ElementSpan(element=number, offset=offset, length=len(text)))
        pieces.append(text)
        offset += len(text)
    segment.text = "".join(pieces)
    segment.spans = spans


def _fill_extents(segments: list[Segment], document_text: str) -> None:
    """A segment's extent runs to the end of its last descendant; a container's text is that extent.

    Segments are in pre-order with ``index`` equal to their position, so walking
    backwards visits every child before its parent, and siblings last-to-first.
    """
    starts = [s.char_offset for s in segments]
    ends = [s.char_offset + (len(s.text) if s.carries_text else 0) for s in segments]
    for segment in reversed(segments):
        parent = segment.parent
        if parent is None:
            continue
        ends[parent] = max(ends[parent], ends[segment.index])
        if not segments[parent].carries_text:
            starts[parent] = starts[segment.index]
    for segment in segments:
        segment.char_offset = starts[segment.index]
        segment.extent_length = ends[segment.index] - starts[segment.index]
        if not segment.carries_text:
            segment.text = document_text[segment.char_offset : segment.char_offset + segment.extent_length]
