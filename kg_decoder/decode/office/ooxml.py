"""DOCX, PPTX, XLSX (Office Open XML): text with unstructured; slides and sheets as pages (an empty
one too); pictures from the media parts with their slide box or anchor cell; embedded files from
the ``embeddings/`` parts (OLE packages unwrapped), placed on their slide, sheet or paragraph;
pages drawn through LibreOffice."""

from __future__ import annotations

import io
import posixpath
import zipfile
import zlib
from dataclasses import replace
from typing import Iterable, Optional
from xml.etree import ElementTree

from ...model import PDF_POINTS, DecodeOptions, Element, Page, Partitioned, Problem, ProgressCallback
from ...model.errors import CorruptDocument, EmptyDocument
from ...patches.oxml import install_compiled_lookups
from ..embedded import OLE_MAGIC, EmbeddedFile, over_budget, unpack_ole
from ..images import EMU_PER_POINT, describe_image, merge_after_text
from ..tables.matrix import cell_address
from ..backends.base import Format, Rendered
from .docx_parts import docx_extras, readable_docx
from .backend import OfficeBackend, locate_sheet_tables
from .ooxml_package import insert_after_page, ordered_parts, relationship_targets
from .slide_parts import pptx_extras, xlsx_extras
from ..tables.office_cells import place_slide_table_cells
from ..backends.unstructured_glue import partition_file

DOCX = Format("docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ("docx",))
PPTX = Format("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", ("pptx",),
              page_based=True)
XLSX = Format("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", ("xlsx",),
              page_based=True)
_PARTITIONERS = {"docx": ("unstructured.partition.docx", "partition_docx"),
                 "pptx": ("unstructured.partition.pptx", "partition_pptx"),
                 "xlsx": ("unstructured.partition.xlsx", "partition_xlsx")}
# Where each OOXML format keeps its embedded files.
_EMBEDDING_FOLDERS = {"docx": "word/embeddings/", "xlsx": "xl/embeddings/", "pptx": "ppt/embeddings/"}


class OoxmlBackend(OfficeBackend):
    partitioners = _PARTITIONERS
    family = "ooxml"
    formats = (DOCX, PPTX, XLSX)

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        # A DOCX's page numbers are those of the layout Word last recorded in the file (its rendered
        # page breaks), where it recorded one: unstructured counts them. It reads a copy whose content
        # controls and other wrappers are unwrapped (see ``docx_parts``).
        install_compiled_lookups()
        readable = readable_docx(data) if fmt.name == "docx" else data
        pages = _pages(data, fmt.name)
        if fmt.name == "pptx" and not pages:
            raise EmptyDocument("the presentation has no slides")
        partitioned = partition_file(fmt.name, *_PARTITIONERS[fmt.name], readable, pages,
                                     keep_page_numbers=fmt.name == "docx", has_parts=True)
        if fmt.name == "docx" and any(e.page_number for e in partitioned.elements):
            partitioned.page_numbers_from = "the layout last recorded in the file (its rendered page breaks)"
        if fmt.name == "xlsx":
            locate_sheet_tables(data, partitioned.elements)
            _on_their_sheets(partitioned.elements, pages)
        read_parts_beside(data, fmt.name, partitioned)
        return partitioned

    def place(self, data: bytes, fmt: Format, partitioned: Partitioned, options: DecodeOptions,
              rendered: Rendered = None) -> None:
        super().place(data, fmt, partitioned, options, rendered)
        if fmt.name == "pptx":  # a slide's table states where its cells are
            place_slide_table_cells(data, partitioned.elements)

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        finder = {"docx": _docx_images, "pptx": _pptx_images, "xlsx": _xlsx_images}[fmt.name]
        return finder(data, elements, pages)

    def embedded_files(self, data: bytes, fmt: Format, budget: int) -> list[EmbeddedFile]:
        return _ooxml_embeddings(data, fmt.name, budget)


def read_parts_beside(data: bytes, format_name: str, partitioned: Partitioned) -> None:
    """Add what unstructured leaves out (text boxes, notes, comments, charts, SmartArt): see
    ``docx_parts`` and ``slide_parts``. A part that cannot be read is a problem, not a lost document."""
    try:
        if format_name == "docx":
            partitioned.elements = docx_extras(data, partitioned.elements)
        elif format_name == "pptx":
            partitioned.elements = pptx_extras(data, partitioned.elements)
        elif format_name == "xlsx":
            partitioned.elements = xlsx_extras(data, partitioned.elements, partitioned.pages)
    except Exception as exc:  # format libraries raise anything on odd parts: keep what was read
        partitioned.problems.append(Problem.of("parts-not-read", "notes, comments, charts or diagrams not read", exc))
    partitioned.elements = [replace(element, index=i) for i, element in enumerate(partitioned.elements)]


def _on_their_sheets(elements: list[Element], pages: list[Page]) -> None:
    """unstructured numbers the worksheets alone; a workbook's chart sheets are pages too."""
    numbers = {page.name: page.number for page in pages}
    for element in elements:
        if element.page_name in numbers:
            element.page_number = numbers[element.page_name]


def _pages(data: bytes, format_name: str) -> list[Page]:
    """Slides and sheets, so an empty slide or sheet is still a page."""
    try:
        if format_name == "pptx":
            from pptx import Presentation

            return [Page(number=i + 1) for i in range(len(Presentation(io.BytesIO(data)).slides))]
        if format_name == "xlsx":
            from openpyxl import load_workbook

            book = load_workbook(io.BytesIO(data), read_only=True)
            names = list(book.sheetnames)
            book.close()
            return [Page(number=i + 1, name=name) for i, name in enumerate(names)]
    except Exception as exc:  # python-pptx and openpyxl raise anything on damaged packages
        raise CorruptDocument(f"the file could not be read as {format_name.upper()}: {exc}") from None
    return []


# ---------------------------------------------------------------- pictures


def _docx_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """Pictures in the body (tables included), then headers, in document order: each after the
    element holding the text that came last before it."""
    from docx import Document

    document = Document(io.BytesIO(data))
    found: list[tuple[Optional[str], Element]] = []
    parts = [document.part] + [section.header.part for section in document.sections if section.header is not None]
    seen_parts = set()
    for part in parts:
        if id(part) in seen_parts:
            continue
        seen_parts.add(id(part))
        last_text: Optional[str] = None
        for node in part.element.iter():
            tag = node.tag.rsplit("}", 1)[-1]
            if tag == "p":
                text = "".join(t.text or "" for t in node.iter() if t.tag.endswith("}t")).strip()
                if text:
                    last_text = text
            elif tag == "blip":
                rel = node.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed")
                if rel and rel in part.related_parts:
                    payload = part.related_parts[rel].blob
                    alt = _drawing_alt(node)
                    mime, width, height = describe_image(payload)
                    found.append((last_text if part is document.part else None,
                                  Element(0, "Image", alt, image_data=payload, image_mime=mime, image_width=width,
                                          image_height=height)))
    return merge_after_text(elements, found)


def _drawing_alt(blip) -> str:
    node = blip
    while node is not None and not node.tag.endswith("}inline") and not node.tag.endswith("}anchor"):
        node = node.getparent()
    if node is None:
        return ""
    for child in node.iter():
        if child.tag.endswith("}docPr"):
            return child.get("descr") or ""
    return ""


def _pptx_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    presentation = Presentation(io.BytesIO(data))
    width = presentation.slide_width / EMU_PER_POINT
    height = presentation.slide_height / EMU_PER_POINT
    merged = [e for e in elements if not e.is_image]
    for number, slide in enumerate(presentation.slides, start=1):
        for page in pages:
            if page.number == number:
                page.width, page.height, page.coordinate_system = width, height, PDF_POINTS
        found: list[tuple[Optional[str], Element]] = []
        last_text: Optional[str] = None
        for shape in _walk_shapes(slide.shapes):
            if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
                payload = shape.image.blob
                mime, pixels_wide, pixels_high = describe_image(payload)
                box = None
                if shape.left is not None and shape.width is not None:
                    box = (shape.left / EMU_PER_POINT, shape.top / EMU_PER_POINT,
                           (shape.left + shape.width) / EMU_PER_POINT, (shape.top + shape.height) / EMU_PER_POINT)
                alt = shape._element.xpath("./p:nvPicPr/p:cNvPr/@descr")
                found.append((last_text, Element(0, "Image", alt[0] if alt else "", page_number=number, bbox=box,
                                                 image_data=payload, image_mime=mime or shape.image.content_type,
                                                 image_width=pixels_wide, image_height=pixels_high)))
            elif getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                last_text = shape.text_frame.text.strip().splitlines()[-1].strip()
        slide_start = next((k for k, e in enumerate(merged) if e.page_number == number), None)
        if slide_start is None:
            slide_start = next((k for k, e in enumerate(merged) if (e.page_number or 0) > number), len(merged))
        before, rest = merged[:slide_start], merged[slide_start:]
        on_slide = [e for e in rest if e.page_number == number]
        after = [e for e in rest if e.page_number != number]
        merged = before + merge_after_text(on_slide, found, page_number=number) + after
    return merged


def _walk_shapes(shapes) -> Iterable:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _walk_shapes(shape.shapes)
        else:
            yield shape


def _xlsx_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """Pictures anchored to cells: sheet, anchor cell; after the sheet's elements."""
    from openpyxl import load_workbook

    book = load_workbook(io.BytesIO(data))
    merged = [e for e in elements if not e.is_image]
    for number, sheet in enumerate(book.worksheets, start=1):
        found = []
        for picture in getattr(sheet, "_images", []):
            payload = picture._data()
            mime, width, height = describe_image(payload)
            anchor = getattr(picture.anchor, "_from", None)
            cell = cell_address(anchor.row, anchor.col) if anchor is not None else None
            found.append(Element(0, "Image", "", page_number=number, page_name=sheet.title, image_data=payload,
                                 image_mime=mime, image_width=width, image_height=height, anchor_cell=cell))
        if found:
            insert_after_page(merged, number, found)
    return merged


# ---------------------------------------------------------------- embedded files


def _ooxml_embeddings(data: bytes, format_name: str, budget: int) -> list[EmbeddedFile]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return []
    folder = _EMBEDDING_FOLDERS[format_name]
    parts = [info for info in archive.infolist() if info.filename.startswith(folder) and not info.is_dir()]
    if not parts:  # where each sits is read only for files there are (a long document's body: 0.65 s)
        return []
    placed = _embedding_pages(archive, format_name)
    anchors = _paragraph_anchors(archive) if format_name == "docx" else {}
    found = []
    for info in parts:
        item = EmbeddedFile(path=info.filename, name=posixpath.basename(info.filename), data=None,
                            page_number=placed.get(info.filename), anchor_text=anchors.get(info.filename))
        found.append(item)
        if info.file_size > budget:
            item.problem = over_budget(item, info.file_size, budget)
            continue
        try:
            raw = archive.read(info)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as exc:
            item.problem = CorruptDocument(f"{info.filename}: the part cannot be read: {exc}")
            continue
        if raw.startswith(OLE_MAGIC):
            unpacked = unpack_ole(raw)
            if unpacked is None:  # an OLE object that is not a file (an equation, a chart's cache)
                found.pop()
                continue
            item.name, raw = unpacked[0] or item.name, unpacked[1]
        budget -= len(raw)
        item.data = raw
    return found


def _embedding_pages(archive: zipfile.ZipFile, format_name: str) -> dict[str, int]:
    """Embedding part -> the page (slide or sheet, 1-based) whose part refers to it."""
    if format_name == "pptx":
        sources = ordered_parts(archive, "ppt/presentation.xml", "sldIdLst")
    elif format_name == "xlsx":
        sources = ordered_parts(archive, "xl/workbook.xml", "sheets")
    else:
        return {}
    pages = {}
    for number, part in enumerate(sources, start=1):
        for target in relationship_targets(archive, part).values():
            pages.setdefault(target, number)
    return pages


_WORD_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELATIONSHIP_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _paragraph_anchors(archive: zipfile.ZipFile) -> dict[str, str]:
    """Embedding part -> the text of the body paragraph that holds its object, or of the last
    paragraph with text before it when the object stands alone (as its icon usually does)."""
    targets = relationship_targets(archive, "word/document.xml")
    try:
        root = ElementTree.fromstring(archive.read("word/document.xml"))
    except (KeyError, ElementTree.ParseError):
        return {}
    anchors: dict[str, str] = {}
    before = ""
    for paragraph in root.iter(_WORD_NS + "p"):
        text = "".join(node.text or "" for node in paragraph.iter(_WORD_NS + "t")).strip()
        for node in paragraph.iter():
            part = targets.get(node.get(_RELATIONSHIP_ID) or "")
            if part and part.startswith(_EMBEDDING_FOLDERS["docx"]) and (text or before):
                anchors.setdefault(part, text or before)
        before = text or before
    return anchors
