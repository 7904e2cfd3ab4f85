"""Word, PowerPoint and Excel 97-2003 (DOC, PPT, XLS), RTF and ODT: DOC and PPT converted to DOCX and
PPTX by LibreOffice and read as those are (text boxes, notes, comments, charts, SmartArt and pictures
included); XLS, RTF and ODT with unstructured (RTF and ODT through pandoc); slides and sheets as pages;
pages drawn through LibreOffice."""

from __future__ import annotations

import hashlib
import shutil
from typing import Optional

from ...model import DecodeOptions, Element, Page, Partitioned, ProgressCallback
from ...model.errors import CorruptDocument, UnsupportedFormat
from ..backends.base import Format
from .backend import RENDER_SECONDS, OfficeBackend, libreoffice_pdfs, locate_sheet_tables, refusal
from .ooxml import DOCX, PPTX, OoxmlBackend
from ..backends.unstructured_glue import partition_file

_PARTITIONERS = {"doc": ("unstructured.partition.doc", "partition_doc"),
                 "ppt": ("unstructured.partition.ppt", "partition_ppt"),
                 "xls": ("unstructured.partition.xlsx", "partition_xlsx"),
                 "rtf": ("unstructured.partition.rtf", "partition_rtf"),
                 "odt": ("unstructured.partition.odt", "partition_odt")}
_NEEDS_LIBREOFFICE = {"doc", "ppt"}
# What LibreOffice converts each format to (its filter), read then as that format is.
_CONVERTED = {"doc": (DOCX, "docx:MS Word 2007 XML"), "ppt": (PPTX, "pptx:Impress MS PowerPoint 2007 XML")}
_HAS_PARTS = {"xls", "odt"}
_OOXML = OoxmlBackend()


class LegacyOfficeBackend(OfficeBackend):
    partitioners = _PARTITIONERS
    family = "legacy-office"
    formats = (
        Format("doc", "application/msword", ("doc",)),
        Format("ppt", "application/vnd.ms-powerpoint", ("ppt",), page_based=True),
        Format("xls", "application/vnd.ms-excel", ("xls",), page_based=True),
        Format("odt", "application/vnd.oasis.opendocument.text", ("odt",)),
        Format("rtf", "text/rtf", ("rtf",), aliases=("application/rtf",)),
    )

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        if fmt.name in _NEEDS_LIBREOFFICE and shutil.which("soffice") is None:
            raise UnsupportedFormat(f"{fmt.name.upper()} needs LibreOffice (soffice), which is not installed")
        if fmt.name in _NEEDS_LIBREOFFICE and refusal(fmt.name) is not None:
            raise UnsupportedFormat(refusal(fmt.name))
        if fmt.name in _CONVERTED:
            target = _CONVERTED[fmt.name][0]
            partitioned = _OOXML.partition(_converted(data, fmt.name, options.timeout_seconds), target, options,
                                           progress)
            partitioned.format = fmt.name
            return partitioned
        pages = _sheets(data) if fmt.name == "xls" else []
        partitioned = partition_file(fmt.name, *_PARTITIONERS[fmt.name], data, pages, page_based=fmt.page_based,
                                     has_parts=fmt.name in _HAS_PARTS)
        if fmt.name == "xls":
            locate_sheet_tables(data, partitioned.elements)
        return partitioned

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        if fmt.name not in _CONVERTED:
            return elements
        return _OOXML.images(_converted(data, fmt.name), _CONVERTED[fmt.name][0], elements, pages)


_last_conversion: dict[tuple[str, str], bytes] = {}  # the document being decoded, converted once


def _converted(data: bytes, format_name: str, timeout_seconds: Optional[float] = None) -> bytes:
    """The document as LibreOffice converts it to OOXML (kept for the document's next step), or a
    CorruptDocument when LibreOffice cannot read it."""
    key = (hashlib.sha256(data).hexdigest(), format_name)
    if key not in _last_conversion:
        limit = min(RENDER_SECONDS, timeout_seconds / 2) if timeout_seconds else RENDER_SECONDS
        converted = libreoffice_pdfs([(data, format_name)], limit, target=_CONVERTED[format_name][1])[0]
        if not converted:
            raise CorruptDocument(f"the file could not be read as {format_name.upper()}: LibreOffice could not "
                                  "convert it")
        _last_conversion.clear()
        _last_conversion[key] = converted
    return _last_conversion[key]


def _sheets(data: bytes) -> list[Page]:
    """The workbook's sheets, so an empty sheet is still a page."""
    try:
        import xlrd

        book = xlrd.open_workbook(file_contents=data, on_demand=True)
        return [Page(number=i + 1, name=name) for i, name in enumerate(book.sheet_names())]
    except Exception as exc:  # xlrd raises its own errors and struct errors on damaged files
        raise CorruptDocument(f"the file could not be read as XLS: {exc}") from None
