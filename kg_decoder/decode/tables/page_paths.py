"""The lines a PDF page's paths draw, as the table finder reads them (:mod:`.page_marks` gathers them
with the page's words): ruling lines and slanted strokes, segment by segment, in form objects too,
on the displayed page (PDF points, origin at the top-left corner, ``/Rotate`` applied).
"""

from __future__ import annotations

import ctypes
from typing import NamedTuple, Sequence

from ...model import BBox
from ..pdf.geometry import PageGeometry


class Rule(NamedTuple):
    """A ruling line: horizontal at y = ``position`` from x = ``start`` to ``end``, or vertical at
    x = ``position`` from y = ``start`` to ``end``."""

    position: float
    start: float
    end: float


_IDENTITY = (1.0, 0.0, 0.0, 1.0, 0.0, 0.0)
FORM_DEPTH = 8  # form objects inside form objects looked into


def drawn_marks(page, geometry: PageGeometry) -> tuple[list[Rule], list[Rule], list[BBox]]:
    """The ruling lines (horizontal, vertical) and slanted strokes a pypdfium2 page's paths draw, on
    the displayed page, read segment by segment as pdfminer splits a path (at each move) and
    pdfplumber reads the pieces: a straight segment is a line, four sides closing on an axis-aligned
    box a rectangle, anything else a curve. Lines and every side of a rectangle or a curve 1 point
    thin or less (and over 2 long) are rules, and so is a filled rectangle 2.5 points thin or less;
    slanted lines and curves are strokes (a chart's). A grid drawn as one path gives every rule of it,
    not just its outer box."""
    import pypdfium2.raw as pdfium_c

    # pdfplumber's order, which decides where rules a hair apart are merged (merge_collinear keeps the
    # first): lines' edges, rectangles' sides (top, bottom, left, right), curves' pieces, thin rectangles
    edges: dict[str, list[tuple[float, float, float, float]]] = {"line": [], "rect": [], "curve": []}
    thin: list[tuple[float, float, float, float]] = []
    slanted: list[BBox] = []
    for shape, user_points in _subpaths(page, pdfium_c):
        points = [geometry.point(x, y) for x, y in user_points]
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        box = (min(xs), min(ys), max(xs), max(ys))
        if shape in ("mlh", "ml"):  # a line
            line_box = (min(xs[:2]), min(ys[:2]), max(xs[:2]), max(ys[:2]))
            edges["line"].append(line_box)
            if line_box[2] - line_box[0] > 1 and line_box[3] - line_box[1] > 1:
                slanted.append(line_box)
        elif shape in ("mlllh", "mllll") and _rectangle(user_points):
            x0, top, x1, bottom = box
            edges["rect"] += [(x0, top, x1, top), (x0, bottom, x1, bottom), (x0, top, x0, bottom),
                              (x1, top, x1, bottom)]
            thin.append(box)
        else:  # a curve: its box a stroke, its straight pieces (end point to end point) edges
            edges["curve"] += [(min(p0[0], p1[0]), min(p0[1], p1[1]), max(p0[0], p1[0]), max(p0[1], p1[1]))
                               for p0, p1 in zip(points, points[1:])]
            slanted.append(box)
    horizontal: list[Rule] = []
    vertical: list[Rule] = []
    for x0, top, x1, bottom in edges["line"] + edges["rect"] + edges["curve"]:
        if bottom - top <= 1 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 1 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    for x0, top, x1, bottom in thin:  # a filled rectangle drawn as a rule
        if bottom - top <= 2.5 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 2.5 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    return horizontal, vertical, slanted


def _rectangle(points: Sequence[tuple[float, float]]) -> bool:
    """Whether five points close an axis-aligned box, side by side (pdfminer's test for a rectangle)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3), last = points
    return last == points[0] and ((x0 == x1 and y1 == y2 and x2 == x3 and y3 == y0)
                                  or (y0 == y1 and x1 == x2 and y2 == y3 and x3 == x0))


def _subpaths(page, pdfium_c):
    """Each painted subpath of a page's path objects (form objects' too) as pdfminer reads it: its
    shape (m, l, c for a curve's end, h for a close) and each operation's end point in user space
    (a close's: the subpath's start)."""
    x, y = ctypes.c_float(), ctypes.c_float()
    filled, stroked = ctypes.c_int(), ctypes.c_int()
    get_segment, get_kind, get_point, get_close = (pdfium_c.FPDFPath_GetPathSegment, pdfium_c.FPDFPathSegment_GetType,
                                                   pdfium_c.FPDFPathSegment_GetPoint, pdfium_c.FPDFPathSegment_GetClose)
    move, curve = pdfium_c.FPDF_SEGMENT_MOVETO, pdfium_c.FPDF_SEGMENT_BEZIERTO
    for path, (a, b, c, d, e, f), _ in path_objects(page, pdfium_c):
        if pdfium_c.FPDFPath_GetDrawMode(path, filled, stroked) and not filled.value and not stroked.value:
            continue  # paints nothing (pdfminer sees no path then)
        shape: list[str] = []
        points: list[tuple[float, float]] = []
        curve_part = 0  # PDFium gives a curve as three points, its two control points and its end
        for index in range(pdfium_c.FPDFPath_CountSegments(path)):
            segment = get_segment(path, index)
            kind = get_kind(segment)
            if kind == curve:
                curve_part = (curve_part + 1) % 3
                if curve_part:  # a control point
                    continue
            if not get_point(segment, x, y):
                continue
            point = (a * x.value + c * y.value + e, b * x.value + d * y.value + f)
            if kind == move:
                if len(shape) > 1:
                    yield "".join(shape), points
                shape, points, curve_part = ["m"], [point], 0
                continue
            if not shape:  # a path must begin with a move: pdfminer drops one that does not
                continue
            shape.append("c" if kind == curve else "l")
            closes = get_close(segment)
            if closes and shape[-1] == "l" and point == points[0]:
                shape[-1] = "h"  # the side back to the start PDFium adds for a close: pdfminer's h
                points.append(points[0])
            else:
                points.append(point)
                if closes:
                    shape.append("h")
                    points.append(points[0])
        if len(shape) > 1:
            yield "".join(shape), points


def path_objects(page, pdfium_c):
    """A page's path objects, those inside form objects too, each with its matrix to user space and
    the matrix of the form it is in (the identity on the page itself): PDFium gives an object's bounds
    in its form's space."""
    raw = page.raw
    matrix = pdfium_c.FS_MATRIX()

    def matrix_of(obj, outer):
        if not pdfium_c.FPDFPageObj_GetMatrix(obj, matrix):
            return outer
        a, b, c, d, e, f = matrix.a, matrix.b, matrix.c, matrix.d, matrix.e, matrix.f
        A, B, C, D, E, F = outer
        return (a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D, e * A + f * C + E, e * B + f * D + F)

    def objects(count, get, outer, depth):
        for index in range(count):
            obj = get(index)
            kind = pdfium_c.FPDFPageObj_GetType(obj)
            if kind == pdfium_c.FPDF_PAGEOBJ_PATH:
                yield obj, matrix_of(obj, outer), outer
            elif kind == pdfium_c.FPDF_PAGEOBJ_FORM and depth < FORM_DEPTH:
                yield from objects(pdfium_c.FPDFFormObj_CountObjects(obj),
                                   lambda i, form=obj: pdfium_c.FPDFFormObj_GetObject(form, i),
                                   matrix_of(obj, outer), depth + 1)

    yield from objects(pdfium_c.FPDFPage_CountObjects(raw), lambda i: pdfium_c.FPDFPage_GetObject(raw, i), _IDENTITY, 0)


__all__ = ["FORM_DEPTH", "Rule", "drawn_marks", "path_objects"]
