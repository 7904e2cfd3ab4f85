"""What the Office backends (OOXML and the older formats) share: the spreadsheet tables' place in
their sheet, and pages drawn through LibreOffice's conversion to PDF."""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path
from typing import Optional

from ...model import DecodeOptions, Element, PageText, Partitioned
from .base import Backend, Format, PdfConverter
from .pdf import render_pdf_page
from .pdf_text_layer import read_page
from .rendered_positions import place_by_rendering


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


# Formats placed on LibreOffice's rendering. Spreadsheets are not: their cells' A1 addresses are
# their place, and LibreOffice's spreadsheet component is not part of this installation.
RENDERED_FOR_POSITIONS = ("docx", "doc", "odt", "rtf", "pptx", "ppt")
RENDER_SECONDS = 120.0


class OfficeBackend(Backend):
    """What the Office families share: pages drawn through LibreOffice's PDF, elements placed on it."""

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def place(self, data: bytes, fmt: Format, partitioned: Partitioned, options: DecodeOptions,
              rendered: Optional[bytes] = None) -> None:
        if not options.rendered_positions or fmt.name not in RENDERED_FOR_POSITIONS:
            return
        if rendered is not None:  # rendered ahead, with other documents in one LibreOffice run
            place_by_rendering(data, fmt.name, partitioned, lambda raw, name: rendered)
            return
        # Half the document's time limit at most, so a renderer that hangs cannot cost the decode.
        limit = min(RENDER_SECONDS, options.timeout_seconds / 2) if options.timeout_seconds else RENDER_SECONDS
        place_by_rendering(data, fmt.name, partitioned, lambda raw, name: libreoffice_pdf(raw, name, limit))

    def page_text(self, data: bytes, fmt: Format, page_number: int,
                  rendered: Optional[bytes] = None) -> Optional[PageText]:
        """The characters of a page of the document's rendering (the one its elements were placed on)."""
        page = read_page(rendered, page_number) if rendered is not None else None
        return page if page is not None and page.chars else None

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        converted = as_pdf(data, fmt.name)
        return render_pdf_page(converted, page_number, scale) if converted is not None else None


def libreoffice_pdf(data: bytes, format_name: str, timeout: float = 180.0) -> Optional[bytes]:
    """The document converted to PDF by LibreOffice (offline, in a throwaway profile), or None."""
    return libreoffice_pdfs([(data, format_name)], timeout)[0]


def libreoffice_pdfs(documents: list[tuple[bytes, str]], timeout: float = 180.0,
                     target: str = "pdf") -> list[Optional[bytes]]:
    """Documents (bytes, format name) converted to PDF (or ``target``, a LibreOffice output type such
    as ``docx:MS Word 2007 XML``) by one LibreOffice run, each or None.

    One run for many documents pays LibreOffice's start-up (most of a small document's
    conversion) once. LibreOffice runs in a process group of its own, all of it killed past
    ``timeout`` (its launcher starts the real office process as a child that outlives a plain kill)."""
    soffice = shutil.which("soffice")
    if soffice is None or not documents:
        return [None] * len(documents)
    with tempfile.TemporaryDirectory() as folder:
        sources = []
        for number, (data, format_name) in enumerate(documents):
            source = Path(folder) / f"document-{number}.{format_name}"
            source.write_bytes(data)
            sources.append(str(source))
        try:
            process = subprocess.Popen([soffice, "--headless", f"-env:UserInstallation=file://{folder}/profile",
                                        "--convert-to", target, "--outdir", folder, *sources],
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, start_new_session=True)
        except OSError:
            return [None] * len(documents)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        extension = target.split(":", 1)[0]
        produced = [Path(folder) / f"document-{number}.{extension}" for number in range(len(documents))]
        return [path.read_bytes() if path.is_file() else None for path in produced]
