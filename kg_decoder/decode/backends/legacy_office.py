"""Word, PowerPoint and Excel 97-2003 (DOC, PPT, XLS), RTF and ODT: text with unstructured (DOC and
PPT through LibreOffice, RTF and ODT through pandoc); slides and sheets as pages; pages drawn
through LibreOffice."""

from __future__ import annotations

import shutil
from typing import Optional

from ...model import DecodeOptions, Page, Partitioned, ProgressCallback
from ...model.errors import CorruptDocument, UnsupportedFormat
from .base import Format
from .office import OfficeBackend, locate_sheet_tables
from .unstructured_glue import partition_file

_PARTITIONERS = {"doc": ("unstructured.partition.doc", "partition_doc"),
                 "ppt": ("unstructured.partition.ppt", "partition_ppt"),
                 "xls": ("unstructured.partition.xlsx", "partition_xlsx"),
                 "rtf": ("unstructured.partition.rtf", "partition_rtf"),
                 "odt": ("unstructured.partition.odt", "partition_odt")}
_NEEDS_LIBREOFFICE = {"doc", "ppt"}


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
        pages = _sheets(data) if fmt.name == "xls" else []
        partitioned = partition_file(fmt.name, *_PARTITIONERS[fmt.name], data, pages, page_based=fmt.page_based)
        if fmt.name == "ppt":  # slides come back through LibreOffice: count what it gives
            last = max((e.page_number or 1) for e in partitioned.elements)
            partitioned.pages = [Page(number=n) for n in range(1, last + 1)]
        if fmt.name == "xls":
            locate_sheet_tables(data, partitioned.elements)
        return partitioned


def _sheets(data: bytes) -> list[Page]:
    """The workbook's sheets, so an empty sheet is still a page."""
    try:
        import xlrd

        book = xlrd.open_workbook(file_contents=data, on_demand=True)
        return [Page(number=i + 1, name=name) for i, name in enumerate(book.sheet_names())]
    except Exception as exc:  # xlrd raises its own errors and struct errors on damaged files
        raise CorruptDocument(f"the file could not be read as XLS: {exc}") from None
