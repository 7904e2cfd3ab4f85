"""Elements replaced by blocks found over them (a table, a turned block of text): what a first
reading of a page put there gives way to what a closer look found."""

from __future__ import annotations

from typing import Callable, Optional

from ...model import BBox, Element, middle_within


def replacing(elements: list[Element], blocks: list[Element], together: bool = False,
              rest: Optional[Callable[[Element, Element], list[Element]]] = None) -> list[Element]:
    """The elements with what a first reading put inside each block (a turned block of text, a table)
    replaced by the block: an element whose middle lies in a block goes, and the block takes the place
    of the first element it replaces (blocks that replace nothing end their page's elements).
    ``together``: a page's blocks keep their own order, all where the first replaced element was (turned
    lines, whose first reading had them backwards). ``rest(element, block)``: for an element that
    reaches well beyond its block (a caption and a note read as one paragraph with the table), what
    it holds outside the block, kept before or after the block by where it is; without it, only an
    element mostly inside a block gives way (upright text beside turned lines stays)."""
    result: list[Element] = []
    placed: set[int] = set()
    for element in elements:
        holder = next((k for k, block in enumerate(blocks) if block.page_number == element.page_number
                       and block.bbox is not None and element.bbox is not None
                       and middle_within(element.bbox, block.bbox)
                       and (rest is not None or not _beyond(element.bbox, block.bbox, 0.5))), None)
        if holder is None:
            result.append(element)
            continue
        outside = rest(element, blocks[holder]) if rest is not None and _beyond(element.bbox, blocks[holder].bbox) \
            else []
        result += [kept for kept in outside if _middle_y(kept) < blocks[holder].bbox[1]]
        batch = [k for k, block in enumerate(blocks) if block.page_number == element.page_number] if together \
            else [holder]
        for k in batch:
            if k not in placed:
                result.append(blocks[k])
                placed.add(k)
        result += [kept for kept in outside if _middle_y(kept) >= blocks[holder].bbox[1]]
    for k, block in enumerate(blocks):
        if k not in placed:
            last = max((i for i, e in enumerate(result) if (e.page_number or 0) <= (block.page_number or 0)),
                       default=-1)
            result.insert(last + 1, block)
            placed.add(k)
    return result


def _beyond(inner: BBox, block: BBox, share: float = 0.1) -> bool:
    """Whether more than ``share`` of a box's area lies outside the block."""
    area = max((inner[2] - inner[0]) * (inner[3] - inner[1]), 1e-6)
    overlap = max(0.0, min(inner[2], block[2]) - max(inner[0], block[0])) * \
        max(0.0, min(inner[3], block[3]) - max(inner[1], block[1]))
    return overlap < (1 - share) * area


def _middle_y(element: Element) -> float:
    return (element.bbox[1] + element.bbox[3]) / 2 if element.bbox else 0.0


__all__ = ["replacing"]
