"""PPTX and XLSX as a reader sees them, beyond what unstructured reads: a slide's charts (the table of
their data, after the texts it draws: ``ooxml_graphics.chart_texts``) and SmartArt nodes with the
frame's box on the slide (a chart's text or a node found on the slide's rendering gets the box of its
words there: ``rendering.positions``), placed among the slide's elements as
unstructured orders its shapes (top to bottom, left to right), and its speaker notes after them; a
sheet's charts and SmartArt (a chart sheet's too) after the sheet's elements, with their anchor cell.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Iterable, Optional

from ...model import Element, Page
from ..images import EMU_PER_POINT
from ..tables.matrix import cell_address
from .ooxml_graphics import CellReader, graphic_elements
from .ooxml_package import A, R, Package, insert_after_page, local, merge_after_anchor

_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_XDR = "http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing"


def pptx_extras(data: bytes, elements: list[Element]) -> list[Element]:
    """``elements`` with each slide's charts and SmartArt among its elements and its notes after them."""
    from pptx import Presentation

    presentation = Presentation(io.BytesIO(data))
    package = Package(zipfile.ZipFile(io.BytesIO(data)))
    merged = list(elements)
    for number, slide in enumerate(presentation.slides, start=1):
        found = _slide_graphics(package, slide, number)
        notes = _speaker_notes(slide, number)
        if not found and notes is None:
            continue
        start = next((k for k, e in enumerate(merged) if e.page_number == number), None)
        if start is None:
            start = next((k for k, e in enumerate(merged) if (e.page_number or 0) > number), len(merged))
        end = start
        while end < len(merged) and merged[end].page_number == number:
            end += 1
        on_slide = merge_after_anchor(merged[start:end], found) + ([notes] if notes is not None else [])
        merged[start:end] = on_slide
    return merged


def _slide_graphics(package: Package, slide, number: int) -> list[tuple[Optional[str], Element]]:
    """The slide's charts and SmartArt in unstructured's order of shapes, each after the text read last."""
    found: list[tuple[Optional[str], Element]] = []
    last_text: Optional[str] = None
    partname = str(slide.part.partname).lstrip("/")
    relationships = package.relationships(partname)
    for shape in sorted(_flattened(slide.shapes), key=lambda s: (s.top or 0, s.left or 0)):
        if getattr(shape, "has_text_frame", False):
            lines = [p.text.strip() for p in shape.text_frame.paragraphs if p.text.strip()]
            last_text = lines[-1] if lines else last_text
        elif getattr(shape, "has_table", False):
            cells = [cell.text.strip() for row in shape.table.rows for cell in row.cells if cell.text.strip()]
            last_text = cells[-1] if cells else last_text
        elif local(shape._element) == "graphicFrame":
            box = _slide_box(shape._element)
            for element in _frame_graphics(package, shape._element, relationships, drawn_texts=True):
                element.page_number, element.bbox = number, box
                found.append((last_text, element))
    return found


def _frame_graphics(package: Package, frame, relationships: dict[str, str],
                    cells: Optional[CellReader] = None, drawn_texts: bool = False) -> list[Element]:
    """A frame's chart or SmartArt (``drawn_texts``: a chart's texts too, see ``graphic_elements``)."""
    data = frame.find(f"{{{A}}}graphic/{{{A}}}graphicData")
    return graphic_elements(package, data, relationships, cells, drawn_texts) if data is not None else []


def _flattened(shapes) -> Iterable:
    for shape in shapes:
        if hasattr(shape, "shapes") and local(shape._element) == "grpSp":
            yield from _flattened(shape.shapes)
        else:
            yield shape


def _slide_box(frame) -> Optional[tuple[float, float, float, float]]:
    """A frame's box on the slide in points: its own offset and size, through the groups around it."""
    transform = frame.find(f"{{{_P}}}xfrm")
    if transform is None:
        transform = frame.find(f"{{{A}}}xfrm")
    offset = transform.find(f"{{{A}}}off") if transform is not None else None
    extent = transform.find(f"{{{A}}}ext") if transform is not None else None
    if offset is None or extent is None:
        return None
    try:
        left, top = float(offset.get("x")), float(offset.get("y"))
        right, bottom = left + float(extent.get("cx")), top + float(extent.get("cy"))
        for group in frame.iterancestors(f"{{{_P}}}grpSp"):
            left, top, right, bottom = _through_group(group, (left, top, right, bottom))
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    box = tuple(round(v / EMU_PER_POINT, 3) for v in (left, top, right, bottom))
    return box if box[2] > box[0] and box[3] > box[1] else None


def _through_group(group, box):
    """A box in a group's child space, in the space the group sits in."""
    transform = group.find(f"{{{_P}}}grpSpPr/{{{A}}}xfrm")
    if transform is None:
        return box
    parts = {local(child): child for child in transform}
    if not all(name in parts for name in ("off", "ext", "chOff", "chExt")):
        return box
    x, y = float(parts["off"].get("x")), float(parts["off"].get("y"))
    cx, cy = float(parts["ext"].get("cx")), float(parts["ext"].get("cy"))
    chx, chy = float(parts["chOff"].get("x")), float(parts["chOff"].get("y"))
    chcx, chcy = float(parts["chExt"].get("cx")), float(parts["chExt"].get("cy"))
    sx, sy = cx / chcx if chcx else 1.0, cy / chcy if chcy else 1.0
    left, top, right, bottom = box
    return x + (left - chx) * sx, y + (top - chy) * sy, x + (right - chx) * sx, y + (bottom - chy) * sy


def _speaker_notes(slide, number: int) -> Optional[Element]:
    """The slide's speaker notes (the notes page's body text), one element."""
    if not slide.has_notes_slide:
        return None
    frame = slide.notes_slide.notes_text_frame
    text = "\n".join(p.text.strip() for p in frame.paragraphs if p.text.strip()) if frame is not None else ""
    return Element(0, "SpeakerNotes", text, page_number=number) if text else None


# ---------------------------------------------------------------- sheets


def xlsx_extras(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """``elements`` with each sheet's charts and SmartArt (chart sheets' too) after the sheet's elements,
    each with the cell its frame is anchored at."""
    package = Package(zipfile.ZipFile(io.BytesIO(data)))
    names = {page.number: page.name for page in pages}
    cells = _WorkbookCells(data)
    merged = list(elements)
    for number, sheet in enumerate(package.ordered_parts("xl/workbook.xml", "sheets"), start=1):
        found = []
        sheet_relationships = package.relationships(sheet)
        root = package.xml(sheet)
        for drawing in (root.iter() if root is not None else ()):
            if local(drawing) != "drawing" or drawing.get(f"{{{R}}}id") not in sheet_relationships:
                continue
            part = sheet_relationships[drawing.get(f"{{{R}}}id")]
            found += _sheet_drawing(package, part, cells)
        if not found:
            continue
        for element in found:
            element.page_number, element.page_name = number, names.get(number)
        insert_after_page(merged, number, found)
    cells.close()
    return merged


def _sheet_drawing(package: Package, part: str, cells: CellReader) -> list[Element]:
    """The charts and SmartArt of a sheet's drawing part, in the order it lists them, with their anchor cell."""
    root = package.xml(part)
    relationships = package.relationships(part)
    found = []
    for anchor in (root if root is not None else ()):
        start = anchor.find(f"{{{_XDR}}}from")
        cell = None
        if start is not None:
            try:
                row, column = int(start.findtext(f"{{{_XDR}}}row")), int(start.findtext(f"{{{_XDR}}}col"))
                cell = cell_address(row, column)
            except (TypeError, ValueError):
                cell = None
        for frame in anchor.iter(f"{{{_XDR}}}graphicFrame"):
            for element in _frame_graphics(package, frame, relationships, cells):
                element.anchor_cell = cell
                found.append(element)
    return found


_REFERENCE = re.compile(r"^(?:'((?:[^']|'')+)'|([^!]+))!\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$")
_MAX_CELLS = 100_000


class _WorkbookCells:
    """The values of the cells a chart's reference names, read from the workbook (once, when first
    asked: most charts cache their values and never ask)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.book = None

    def close(self) -> None:
        if self.book is not None:
            self.book.close()

    def __call__(self, reference: str) -> dict[int, str]:
        match = _REFERENCE.match(reference.strip().lstrip("="))
        if match is None:
            return {}
        sheet_name = (match.group(1) or "").replace("''", "'") or match.group(2)
        first = (_column_index(match.group(3)), int(match.group(4)))
        last = (_column_index(match.group(5) or match.group(3)), int(match.group(6) or match.group(4)))
        if (last[0] - first[0] + 1) * (last[1] - first[1] + 1) > _MAX_CELLS:
            return {}
        if self.book is None:
            from openpyxl import load_workbook

            self.book = load_workbook(io.BytesIO(self.data), read_only=True, data_only=True)
        if sheet_name not in self.book.sheetnames:
            return {}
        rows = self.book[sheet_name].iter_rows(min_row=first[1], max_row=last[1], min_col=first[0] + 1,
                                               max_col=last[0] + 1, values_only=True)
        values = [value for row in rows for value in row]
        return {k: _cell_text(value) for k, value in enumerate(values) if value is not None}


def _column_index(letters: str) -> int:
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def _cell_text(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


__all__ = ["pptx_extras", "xlsx_extras"]
