"""A page's elements in the order a person reads them: its columns found from the page's own geometry.

A PDF's reader hands a page's blocks over in an order of its own: pdfminer's (unstructured's ``fast``)
sorts them by height, so on a two-column page the right column's first paragraph comes between the
left column's first and second, and a chunk made of them reads sentences no page holds. Here the
elements' boxes are cut as a reader's eye goes over the page (a recursive XY-cut): where white runs
down the whole of a part of the page, its columns are read left to right; else where white runs
across it, its bands top to bottom, a band cut off only where the columns change (a title over two
columns), not at each line of white two columns happen to share, which would read them in turns.
Where no cut can be made, the elements keep the order they came in, as do the elements of a page
whose text mostly runs up or down it (a page shown turned: read along its lines already). A page's
running head comes first and its running foot last, as they came; an element without a box stays
after the element it came after.
"""

from __future__ import annotations

from typing import Optional, Sequence

from ...model import Element

_GUTTER = 4.0  # white between columns, in points at least (a line's words are one element's box)
_MOST = 2000  # a page of more elements (words read one by one) keeps the order they came in
_RUNNING_HEAD = {"Header", "PageHeader"}
_RUNNING_FOOT = {"Footer", "PageFooter", "PageNumber"}

Item = tuple[int, tuple[float, float, float, float]]  # an element's place in the list it came in, its box


def reading_order(elements: Sequence[Element]) -> list[Element]:
    """One page's ``elements``, in the order they came, in reading order.

    >>> from kg_decoder.model import Element
    >>> def block(text, box): return Element(0, "NarrativeText", text, page_number=1, bbox=box)
    >>> page = [block("title", (50, 40, 550, 60)), block("left 1", (50, 80, 290, 300)),
    ...         block("right 1", (310, 80, 550, 250)), block("left 2", (50, 310, 290, 700)),
    ...         block("right 2", (310, 260, 550, 700))]
    >>> [e.text for e in reading_order(page)]
    ['title', 'left 1', 'left 2', 'right 1', 'right 2']
    """
    heads = [e for e in elements if e.category in _RUNNING_HEAD]
    feet = [e for e in elements if e.category in _RUNNING_FOOT]
    body = [e for e in elements if e.category not in _RUNNING_HEAD and e.category not in _RUNNING_FOOT]
    placed = [(i, box) for i, box in enumerate(map(_box, body)) if box is not None]
    if len(placed) < 3 or len(placed) > _MOST or 2 * sum(_runs_up_or_down(body[i], box) for i, box in placed) >= len(placed):
        return heads + body + feet  # a page read turned: its lines came in the order they are read turned
    order = [i for i, _ in _cut(placed)]
    after: dict[Optional[int], list[int]] = {}  # an element without a box, after the one it came after
    last = None
    for i, element in enumerate(body):
        if _box(element) is None:
            after.setdefault(last, []).append(i)
        else:
            last = i
    ordered = [body[i] for i in after.get(None, [])]
    for i in order:
        ordered.append(body[i])
        ordered += [body[j] for j in after.get(i, [])]
    return heads + ordered + feet


def _runs_up_or_down(element: Element, box: tuple[float, float, float, float]) -> bool:
    """Whether an element's text is written up or down the page (a box of words far taller than wide)."""
    return len(element.text or "") >= 8 and box[3] - box[1] > 2 * (box[2] - box[0])


def _box(element: Element) -> Optional[tuple[float, float, float, float]]:
    box = element.bbox
    if box is None or len(box) != 4 or not (box[2] > box[0] and box[3] > box[1]):
        return None
    return box


def _cut(region: list[Item]) -> list[Item]:
    """The region's items in reading order: cut into parts, each part cut in turn (a stack of parts, not
    recursion: a page of many boxes in a staircase cuts one box off at a time)."""
    ordered: list[Item] = []
    parts = [region]
    while parts:
        part = parts.pop()
        pieces = _pieces(part) if len(part) > 1 else None
        if pieces is None:
            ordered += sorted(part)  # one item, or no white to cut along: as they came
        else:
            parts += reversed(pieces)
    return ordered


def _pieces(region: list[Item]) -> Optional[list[list[Item]]]:
    """A region cut once: its columns, left to right, where white runs down it; else its bands, top to
    bottom, a band going on below while the columns above go on (the white between them stays); None
    where no cut can be made."""
    columns = _apart(region, axis=0, gap=_GUTTER)
    if len(columns) > 1:
        return columns
    bands: list[list[Item]] = []
    spans: list[list[tuple[float, float]]] = []  # each band's boxes' x-extent, as disjoint runs
    for band in _apart(region, axis=1, gap=0.0):
        runs = _runs([(box[0], box[2]) for _, box in band])
        if bands and len(joined := _runs(spans[-1] + runs)) > 1:
            bands[-1] += band  # the columns above go on below: one part of the page
            spans[-1] = joined
        else:
            bands.append(band)
            spans.append(runs)
    return bands if len(bands) > 1 else None


def _runs(extents: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Extents along a line as the runs they cover, apart where white wider than the gutter parts them."""
    runs: list[tuple[float, float]] = []
    for low, high in sorted(extents):
        if runs and low - runs[-1][1] <= _GUTTER:
            runs[-1] = (runs[-1][0], max(runs[-1][1], high))
        else:
            runs.append((low, high))
    return runs


def _apart(region: list[Item], axis: int, gap: float) -> list[list[Item]]:
    """The region's items in groups that white wider than ``gap`` sets apart along ``axis`` (0: x, left
    to right; 1: y, top to bottom); one group where none does."""
    items = sorted(region, key=lambda item: (item[1][axis], item[1][axis + 2]))
    groups = [[items[0]]]
    reach = items[0][1][axis + 2]
    for item in items[1:]:
        if item[1][axis] - reach > gap:
            groups.append([item])
        else:
            groups[-1].append(item)
        reach = max(reach, item[1][axis + 2])
    return [sorted(group) for group in groups]


__all__ = ["reading_order"]
