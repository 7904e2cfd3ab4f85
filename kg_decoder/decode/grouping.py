"""Grouping: elements into pages and sections. Pure functions over the data model.

Page-based formats (PDF, slides, sheets, images) group by page; every page
exists, even an empty one. Other formats group into sections by one of the
strategies (JSON by its own structure unless another is asked for); with ``section_within_pages`` the strategy runs inside each page and
the sections derive from their page.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from .assembly import SEPARATOR, element_text
from ..model import DecodeOptions, Element, Page, Segment


@dataclass
class _Section:
    elements: list[Element] = field(default_factory=list)
    images: list[Element] = field(default_factory=list)
    parent: Optional[int] = None  # position in the same section list
    level: Optional[int] = None
    title: Optional[str] = None
    json_pointer: Optional[str] = None


def group(elements: list[Element], pages: list[Page], page_based: bool, options: DecodeOptions) -> list[Segment]:
    """Segments in pre-order (each parent before its children), ``index`` = position.

    >>> els = [Element(0, "Title", "Intro", depth=0), Element(1, "NarrativeText", "x"),
    ...        Element(2, "Title", "Detail", depth=1), Element(3, "NarrativeText", "y")]
    >>> segs = group(els, [], False, DecodeOptions(section_strategy="heading"))
    >>> [(s.title, s.parent, s.elements) for s in segs]
    [('Intro', None, [0, 1]), ('Detail', 0, [2, 3])]
    """
    segments: list[Segment] = []
    if not page_based:
        _append_sections(segments, split_sections(elements, options), parent=None, page_number=None)
        return segments
    for page in complete_pages(elements, pages):
        members = [e for e in elements if e.page_number == page.number]
        page_segment = Segment(index=len(segments), kind="page", page_number=page.number)
        segments.append(page_segment)
        if options.section_within_pages:
            page_segment.carries_text = False
            page_segment.images = [e.index for e in members if e.is_image]
            _append_sections(segments, split_sections(members, options) if members else [],
                             parent=page_segment.index, page_number=page.number)
        else:
            page_segment.elements = [e.index for e in members if not e.is_image]
            page_segment.images = [e.index for e in members if e.is_image]
    return segments


def complete_pages(elements: list[Element], pages: list[Page]) -> list[Page]:
    """The known pages plus any page an element names that the page list missed, in order."""
    by_number = {p.number: p for p in pages}
    for element in elements:
        if element.page_number is not None and element.page_number not in by_number:
            by_number[element.page_number] = Page(number=element.page_number, name=element.page_name)
    if not by_number:
        by_number[1] = Page(number=1)
    return [by_number[n] for n in sorted(by_number)]


def _append_sections(segments: list[Segment], sections: list[_Section], parent: Optional[int],
                     page_number: Optional[int]) -> None:
    base = len(segments)
    for section in sections:
        segments.append(
            Segment(
                index=len(segments),
                kind="section",
                elements=[e.index for e in section.elements],
                images=[e.index for e in section.images],
                page_number=page_number,
                parent=base + section.parent if section.parent is not None else parent,
                level=section.level,
                title=section.title,
                json_pointer=section.json_pointer,
            )
        )


def split_sections(elements: list[Element], options: DecodeOptions) -> list[_Section]:
    """Split elements into sections by ``options.section_strategy``; always at least one section."""
    strategy = options.section_strategy
    if strategy == "whole-document" and any(e.json_pointer is not None for e in elements):
        strategy = "structure"  # JSON's own structure is its sections unless another strategy is asked for
    if strategy == "structure":
        sections = [_Section(elements=[e], json_pointer=e.json_pointer, title=e.json_pointer or None)
                    for e in elements if not e.is_image]
    elif strategy == "heading":
        sections = _by_heading(elements)
    elif strategy == "element-type":
        sections = _by_boundary(elements, lambda current, e: _kind(current.elements[-1]) != _kind(e))
    elif strategy == "count":
        limit = options.section_element_count
        sections = _by_boundary(elements, lambda current, e: len(current.elements) >= limit)
    elif strategy == "size":
        limit = options.section_max_size
        sections = _by_boundary(elements, lambda current, e: _size(current) + len(SEPARATOR)
                                + len(element_text(e)) > limit)
    else:
        sections = _by_boundary(elements, lambda current, e: False)
    return sections or [_Section()]


def _kind(element: Element) -> str:
    return "table" if element.is_table else "text"


def _size(section: _Section) -> int:
    return sum(len(element_text(e)) for e in section.elements) + len(SEPARATOR) * (len(section.elements) - 1)


def _by_boundary(elements: list[Element], starts_new) -> list[_Section]:
    """Start a new section before a text element when ``starts_new(current, element)``.

    Images never start or count toward a section; they stay with the section they sit in.
    """
    sections: list[_Section] = []
    for element in elements:
        if not sections:
            sections.append(_Section())
        current = sections[-1]
        if element.is_image:
            current.images.append(element)
            continue
        if current.elements and starts_new(current, element):
            current = _Section()
            sections.append(current)
        current.elements.append(element)
    return sections


def _by_heading(elements: list[Element]) -> list[_Section]:
    """A title opens a section that runs to the next title of equal or higher level.

    Deeper titles open nested sections (their parent is the enclosing section).
    Elements before the first title form a preamble section. No titles: one section.
    """
    sections: list[_Section] = []
    open_sections: list[int] = []  # stack of positions of enclosing titled sections
    for element in elements:
        if element.category == "Title" and not element.is_image:
            level = element.depth if element.depth is not None else 0
            while open_sections and sections[open_sections[-1]].level is not None \
                    and sections[open_sections[-1]].level >= level:
                open_sections.pop()
            parent = open_sections[-1] if open_sections else None
            sections.append(_Section(parent=parent, level=level, title=element.text))
            open_sections.append(len(sections) - 1)
        elif not sections:
            sections.append(_Section())  # the preamble before the first title
        target = sections[-1]
        (target.images if element.is_image else target.elements).append(element)
    return sections
