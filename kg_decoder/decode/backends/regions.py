"""Elements replaced by blocks found over them (a table, a turned block of text): what a first
reading of a page put there gives way to what a closer look found."""

from __future__ import annotations

from ...model import BBox, Element


def replacing(elements: list[Element], blocks: list[Element]) -> list[Element]:
    """The elements with what a first reading put inside each block (a turned block of text, a table)
    replaced by the block: an element whose middle lies in a block goes, and the block takes the place
    of the first element it replaces (blocks that replace nothing end their page's elements)."""
    result: list[Element] = []
    placed: set[int] = set()
    for element in elements:
        holder = next((k for k, block in enumerate(blocks) if block.page_number == element.page_number
                       and block.bbox is not None and element.bbox is not None
                       and _holds(block.bbox, element.bbox)), None)
        if holder is None:
            result.append(element)
        elif holder not in placed:
            result.append(blocks[holder])
            placed.add(holder)
    for k, block in enumerate(blocks):
        if k not in placed:
            last = max((i for i, e in enumerate(result) if (e.page_number or 0) <= (block.page_number or 0)),
                       default=-1)
            result.insert(last + 1, block)
            placed.add(k)
    return result


def _holds(outer: BBox, inner: BBox, slack: float = 1.0) -> bool:
    middle_x, middle_y = (inner[0] + inner[2]) / 2, (inner[1] + inner[3]) / 2
    return outer[0] - slack <= middle_x <= outer[2] + slack and outer[1] - slack <= middle_y <= outer[3] + slack


__all__ = ["replacing"]
