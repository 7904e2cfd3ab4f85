"""What the Office backends (OOXML and the older formats) share: the spreadsheet tables' place in
their sheet, and pages drawn through LibreOffice's conversion to PDF."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from ...model import Element
from .base import Backend, Format, PdfConverter
from .pdf import render_pdf_page


def locate_sheet_tables(data: bytes, elements: list[Element]) -> None:
    """Give each spreadsheet table its top-left cell, found as unstructured finds the tables.

    unstructured reads each sheet with pandas and emits one Table per connected block of
    cells, leading single-cell rows apart; its elements do not say where the block was.
    This walks the same blocks in the same order. Best effort: a workbook this cannot
    read simply gets no cell addresses.
    """
    try:
        import pandas as pd
        from unstructured.partition.xlsx import _ConnectedComponents, _SubtableParser

        sheets = pd.read_excel(io.BytesIO(data), sheet_name=None, header=None, keep_default_na=False,
                               na_values=[""])
        origins: dict[int, list[tuple[int, int]]] = {}
        for number, frame in enumerate(sheets.values(), start=1):
            for component in _ConnectedComponents.from_worksheet_df(frame):
                core = _SubtableParser(component.subtable).core_table
                if core is not None:
                    origins.setdefault(number, []).append(
                        (int(frame.index.get_loc(core.index[0])), int(frame.columns.get_loc(core.columns[0]))))
    except Exception:  # pandas and unstructured's helpers raise anything on odd workbooks: no addresses then
        return
    for number, found in origins.items():
        tables = [e for e in elements if e.is_table and e.page_number == number]
        if len(tables) == len(found):
            for table, origin in zip(tables, found):
                table.table_origin = origin


class OfficeBackend(Backend):
    """What the Office families share: pages drawn through LibreOffice's PDF."""

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        converted = as_pdf(data, fmt.name)
        return render_pdf_page(converted, page_number, scale) if converted is not None else None


def libreoffice_pdf(data: bytes, format_name: str, timeout: float = 180.0) -> Optional[bytes]:
    """The document converted to PDF by LibreOffice (offline, in a throwaway profile), or None."""
    soffice = shutil.which("soffice")
    if soffice is None:
        return None
    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / f"document.{format_name}"
        source.write_bytes(data)
        try:
            subprocess.run([soffice, "--headless", f"-env:UserInstallation=file://{folder}/profile", "--convert-to",
                            "pdf", "--outdir", folder, str(source)], capture_output=True, timeout=timeout)
        except (OSError, subprocess.TimeoutExpired):
            return None
        produced = Path(folder) / "document.pdf"
        return produced.read_bytes() if produced.is_file() else None
