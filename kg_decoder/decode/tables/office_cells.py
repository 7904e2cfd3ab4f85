"""Where each cell of an Office document's table is, so a quote in a cell traces to the cell's box.

A slide's table states its geometry: the graphic frame's offset, each column's width (``a:gridCol``)
and each row's height (``a:tr/@h``), in EMU, inside the transforms of the groups around it; a cell's
box is its grid rectangle (a merged cell's spans all it covers), on the slide, which is the slide's
rendered page too. A word-processing table (DOCX, ODT, RTF, DOC) states none: its cells are found on
the document's rendering, each cell's text among the characters drawn inside the table's box, in
order, and the cell's box is that text's. Either way each box is keyed by the cell's (row, column)
in the table's matrix (``Element.cell_places``), which the decode gives the cells; the cells' text is
read from the file, so their confidence stays the table's.
"""

from __future__ import annotations

import io
from typing import Iterator

from ...model import BBox, Element, folded_letters, middle_within
from ..assembly import element_text
from ..images import EMU_PER_POINT
from .matrix import parse_table
from ..rendering.pages import RenderedPage

_SLACK = 2.0  # points a table's box is grown by when its characters are gathered


def place_slide_table_cells(data: bytes, elements: list[Element]) -> None:
    """Give each table of a PPTX's slides its cells' boxes from the table's geometry, in slide points
    (the table's own box too, where no rendering placed it). A deck python-pptx cannot read, or a
    slide whose tables do not pair with its table elements, is left as it is."""
    try:
        from pptx import Presentation

        slides = list(Presentation(io.BytesIO(data)).slides)
    except Exception:  # python-pptx raises anything on damaged decks: the cells then have no boxes
        return
    for number, slide in enumerate(slides, start=1):
        tables = [e for e in elements if e.is_table and e.page_number == number]
        frames = sorted(_table_frames(slide.shapes, _IDENTITY), key=lambda found: found[0])
        if not tables or len(frames) != len(tables):
            continue
        for table, (_, frame, transform) in zip(tables, frames):
            places, box = _grid_cells(frame, transform)
            table.cell_places = places
            if table.bbox is None:
                table.bbox = box


# A group's transform of its children's coordinates onto the slide: x' = x * sx + dx (EMU).
_IDENTITY = (1.0, 0.0, 1.0, 0.0)


def _table_frames(shapes, transform) -> Iterator[tuple[tuple[int, int], object, tuple]]:
    """The graphic frames holding a table with text, with their place in unstructured's order (top,
    then left, as it sorts a slide's shapes) and the transform onto the slide."""
    from pptx.shapes.group import GroupShape

    for shape in shapes:
        if isinstance(shape, GroupShape):
            yield from _table_frames(shape.shapes, _compose(transform, _group_transform(shape)))
        elif getattr(shape, "has_table", False) and any(cell.text.strip() for row in shape.table.rows
                                                         for cell in row.cells):
            yield (shape.top or 0, shape.left or 0), shape, transform


def _group_transform(group) -> tuple:
    """How a group maps its children's coordinates (its child offset and extent) onto its own box."""
    xfrm = group._element.grpSpPr.find("{http://schemas.openxmlformats.org/drawingml/2006/main}xfrm")
    if xfrm is None:
        return _IDENTITY
    values = {}
    for tag in ("off", "ext", "chOff", "chExt"):
        node = xfrm.find(f"{{http://schemas.openxmlformats.org/drawingml/2006/main}}{tag}")
        if node is None:
            return _IDENTITY
        values[tag] = [int(value) for value in node.attrib.values()]
    (x, y), (cx, cy), (chx, chy), (chcx, chcy) = values["off"], values["ext"], values["chOff"], values["chExt"]
    sx, sy = (cx / chcx if chcx else 1.0), (cy / chcy if chcy else 1.0)
    return (sx, x - chx * sx, sy, y - chy * sy)


def _compose(outer: tuple, inner: tuple) -> tuple:
    sx, dx, sy, dy = inner
    osx, odx, osy, ody = outer
    return (sx * osx, dx * osx + odx, sy * osy, dy * osy + ody)


def _grid_cells(frame, transform) -> tuple[dict[tuple[int, int], tuple[BBox, None]], BBox]:
    """Each cell's box by (row, column) of the table's matrix (one ``td`` per ``a:tc``, as unstructured
    writes a slide table's markup), and the table's box, in points on the slide."""
    sx, dx, sy, dy = transform
    table = frame.table
    xs = [frame.left]
    for column in table.columns:
        xs.append(xs[-1] + column.width)
    ys = [frame.top]
    for row in table.rows:
        ys.append(ys[-1] + row.height)

    def box(x0: float, y0: float, x1: float, y1: float) -> BBox:
        return tuple(round(v / EMU_PER_POINT, 3) for v in (x0 * sx + dx, y0 * sy + dy, x1 * sx + dx, y1 * sy + dy))

    places = {}
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            if cell.is_spanned or c + 1 >= len(xs) or r + 1 >= len(ys):
                continue  # covered by a merged cell: its box is the merged cell's
            right, bottom = min(c + cell.span_width, len(xs) - 1), min(r + cell.span_height, len(ys) - 1)
            places[(r, c)] = (box(xs[c], ys[r], xs[right], ys[bottom]), None)
    return places, box(xs[0], ys[0], xs[-1], ys[-1])


def place_rendered_table_cells(elements: list[Element], pages: list[RenderedPage]) -> None:
    """Give each table placed on a rendering (and not given its cells' boxes otherwise) the box of each
    cell's text there: the cells' texts found one after another among the characters drawn inside
    the table's box on its rendered page. A cell not found there (on the table's next page, or drawn
    otherwise) has no box."""
    for table in elements:
        if not table.is_table or table.cell_places or table.rendered_page is None or table.bbox is None \
                or table.rendered_page > len(pages):
            continue
        page = pages[table.rendered_page - 1]
        letters: list[tuple[int, str]] = [(index, letter) for index, char in enumerate(page.text)
                                          if middle_within(page.box(index), table.bbox, _SLACK)
                                          for letter in folded_letters(char)]
        drawn = "".join(letter for _, letter in letters)
        cursor = 0
        places = {}
        for cell in parse_table(element_text(table)).cells:
            wanted = folded_letters(cell.text)
            found = drawn.find(wanted, cursor) if wanted else -1
            if found < 0:
                continue
            boxes = [page.line_box(index) for index, _ in letters[found:found + len(wanted)]]
            places[(cell.row, cell.column)] = (_union(boxes), None)
            cursor = found + len(wanted)
        table.cell_places = places or None


def _union(boxes: list[BBox]) -> BBox:
    return tuple(round(v, 3) for v in (min(b[0] for b in boxes), min(b[1] for b in boxes),
                                        max(b[2] for b in boxes), max(b[3] for b in boxes)))


__all__ = ["place_rendered_table_cells", "place_slide_table_cells"]
