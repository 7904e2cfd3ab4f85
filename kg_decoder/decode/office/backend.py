"""What the Office backends (OOXML and the older formats) share: the spreadsheet tables' place in
their sheet, and pages drawn through LibreOffice's conversion to PDF."""

from __future__ import annotations

import contextlib
import html
import io
import os
import shutil
import signal
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Optional

from ...model import DecodeOptions, Element, PageText, Partitioned
from ...patches.unstructured import sheet_core_tables
from ..tables.matrix import parse_table
from ..sandbox import confined, confinement
from ..backends.base import Backend, Format, PdfConverter, PendingRendering, Rendered
from .external_references import without_external_references
from ..pdf.backend import render_pdf_page
from ..pdf.characters import read_page
from ..rendering.pages import ReadAhead
from ..rendering.positions import place_by_rendering


def locate_sheet_tables(data: bytes, elements: list[Element]) -> None:
    """Give each spreadsheet table its top-left cell, found as unstructured finds the tables, and
    its cells their text as the sheet holds it.

    unstructured reads each sheet with pandas and emits one Table per connected block of
    cells, leading single-cell rows apart; its elements do not say where the block was.
    This walks the same blocks in the same order. Best effort: a workbook this cannot
    read simply gets no cell addresses. pandas writes a cell's line break, tab or carriage
    return as a backslash and a letter (``Total\\n2023``): where the sheet's cell holds the
    character, the table's cell gets it back.
    """
    try:
        import pandas as pd

        sheets = pd.read_excel(io.BytesIO(data), sheet_name=None, header=None, keep_default_na=False,
                               na_values=[""])
        origins: dict[int, list[tuple[int, int]]] = {}
        frames = dict(enumerate(sheets.values(), start=1))
        for number, frame in frames.items():
            for core in sheet_core_tables(frame):
                origins.setdefault(number, []).append(
                    (int(frame.index.get_loc(core.index[0])), int(frame.columns.get_loc(core.columns[0]))))
    except Exception:  # pandas and unstructured's helpers raise anything on odd workbooks: no addresses then
        return
    for number, found in origins.items():
        tables = [e for e in elements if e.is_table and e.page_number == number]
        if len(tables) == len(found):
            for table, origin in zip(tables, found):
                table.table_origin = origin
                _unescape_cells(table, frames[number])


_ESCAPED = str.maketrans({"\t": "\\t", "\n": "\\n", "\r": "\\r"})  # as pandas writes a cell's text


def _unescape_cells(table: Element, frame) -> None:
    """The table's cells whose sheet cell holds a line break, tab or carriage return, with it again."""
    if not table.html or table.table_origin is None:
        return
    row, column = table.table_origin
    markup, pieces, last = table.html, [], 0
    for cell in parse_table(markup).cells:
        if cell.padding or cell.end is None:
            continue
        try:
            value = frame.iat[row + cell.row, column + cell.column]
        except IndexError:
            continue
        if not isinstance(value, str) or value.translate(_ESCAPED) == value:
            continue
        inner = markup[cell.start:cell.end]
        if html.unescape(inner) == value.translate(_ESCAPED):
            pieces += [markup[last:cell.start], html.escape(value, quote=False)]
            last = cell.end
            table.text = table.text.replace(value.translate(_ESCAPED), value, 1)
    if pieces:
        table.html = "".join(pieces) + markup[last:]


# Formats placed on LibreOffice's rendering. Spreadsheets are not: their cells' A1 addresses are
# their place, and LibreOffice's spreadsheet component is not part of this installation.
RENDERED_FOR_POSITIONS = ("docx", "doc", "odt", "rtf", "pptx", "ppt")
RENDER_SECONDS = 120.0


class OfficeBackend(Backend):
    """What the Office families share: pages drawn through LibreOffice's PDF, elements placed on it."""

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def start_rendering(self, data: bytes, fmt: Format, options: DecodeOptions) -> Optional[PendingRendering]:
        if not options.rendered_positions or fmt.name not in RENDERED_FOR_POSITIONS:
            return None
        # Half the document's time limit at most, so a renderer that hangs cannot cost the decode.
        limit = min(RENDER_SECONDS, options.timeout_seconds / 2) if options.timeout_seconds else RENDER_SECONDS
        return ReadAhead(Conversion([(data, fmt.name)], limit))

    def place(self, data: bytes, fmt: Format, partitioned: Partitioned, options: DecodeOptions,
              rendered: Rendered = None) -> None:
        if not options.rendered_positions or fmt.name not in RENDERED_FOR_POSITIONS:
            return
        pending = rendered if rendered is not None else self.start_rendering(data, fmt, options)
        if isinstance(pending, bytes):  # rendered ahead, with other documents in one LibreOffice run
            place_by_rendering(data, fmt.name, partitioned, lambda raw, name: pending)
            return
        try:
            place_by_rendering(data, fmt.name, partitioned, lambda raw, name: pending.result(),
                               pending.pages if isinstance(pending, ReadAhead) else None)
        finally:
            pending.cancel()

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
    conversion) once."""
    return Conversion(documents, timeout, target).results()


# Formats whose references outside them all lie where the package cleaner reads (relationships, ODF
# links): LibreOffice may lay them out with no file system confinement, its profile blocking links.
# An RTF's or a binary Office file's field may name a file of the machine, which LibreOffice then
# reads whatever its profile says: those only under bubblewrap, unless the machine's owner opts in.
CLEANED_FORMATS = frozenset({"docx", "pptx", "xlsx", "odt"})
UNCONFINED_VARIABLE = "KG_DECODER_UNCONFINED_OFFICE"


def refusal(format_name: str) -> Optional[str]:
    """Why LibreOffice may not read a file of this format on this machine (None: it may)."""
    if format_name in CLEANED_FORMATS or confinement() == "bwrap" or os.environ.get(UNCONFINED_VARIABLE) == "1":
        return None
    return (f"LibreOffice reads {format_name.upper()} files only confined by bubblewrap, which cannot run here "
            f"(a field of the file may name a file of this machine); {UNCONFINED_VARIABLE}=1 lets it read them "
            "unconfined")


def laid_out_bytes(data: bytes, format_name: str) -> Optional[bytes]:
    """The bytes LibreOffice may lay out for a document of this format (its package cleaned), None
    for none. Unconfined, a cleaned format must be a ZIP package: LibreOffice reads a file by its
    bytes, not its name, so an RTF named .docx would be read with its fields, uncleaned."""
    if refusal(format_name) is not None:
        return None
    if confinement() != "bwrap" and os.environ.get(UNCONFINED_VARIABLE) != "1" and not _office_package(data):
        return None
    return without_external_references(data)


def _office_package(data: bytes) -> bool:
    """Whether ``data`` is an OOXML or ODF package from its first byte on (a ZIP's directory is at its
    end: an RTF with a ZIP appended passes zipfile's own test, and LibreOffice reads it as RTF)."""
    if not data.startswith(b"PK\x03\x04"):
        return False
    try:
        names = set(zipfile.ZipFile(io.BytesIO(data)).namelist())
    except Exception:  # noqa: BLE001 - zipfile raises more than BadZipFile on odd bytes
        return False
    return "[Content_Types].xml" in names or "mimetype" in names or "META-INF/manifest.xml" in names


class Conversion:
    """A LibreOffice run converting documents (bytes, format name), started at once and going on
    beside whatever the caller does next (a long document renders while unstructured partitions
    it); :meth:`results` waits for it. LibreOffice runs in a process group of its own, all of it
    killed past ``timeout`` seconds from the start (its launcher starts the real office process as
    a child that outlives a plain kill) or by :meth:`cancel`."""

    def __init__(self, documents: list[tuple[bytes, str]], timeout: float = 180.0, target: str = "pdf") -> None:
        self._count, self._extension = len(documents), target.split(":", 1)[0]
        self._deadline = time.monotonic() + timeout
        self._process: Optional[subprocess.Popen] = None
        self._folder: Optional[tempfile.TemporaryDirectory] = None
        soffice = shutil.which("soffice")
        if soffice is None or not documents:
            return
        self._folder = tempfile.TemporaryDirectory()
        folder = self._folder.name
        sources = []
        for number, (data, format_name) in enumerate(documents):
            cleaned = laid_out_bytes(data, format_name)
            if cleaned is None:  # not laid out: it gets no conversion
                continue
            source = Path(folder) / f"document-{number}.{format_name}"
            source.write_bytes(cleaned)
            sources.append(str(source))
        if not sources:
            self.cancel()
            return
        _write_profile(Path(folder) / "profile")
        command = [soffice, "--headless", f"-env:UserInstallation=file://{folder}/profile", "--convert-to", target,
                   "--outdir", folder, *sources]
        try:
            self._process = subprocess.Popen(confined(command, folder), stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                             start_new_session=True)
        except OSError:
            self.cancel()

    def over_within(self, seconds: float) -> bool:
        """Whether the run is over (or never started) within ``seconds``."""
        process = self._process  # cancel() may drop it meanwhile
        if process is None:
            return True
        try:
            process.wait(timeout=seconds)
            return True
        except subprocess.TimeoutExpired:
            return False

    def result(self) -> Optional[bytes]:
        """The first document's conversion, or None (a run of one document)."""
        return self.results()[0]

    def results(self) -> list[Optional[bytes]]:
        """Each document's conversion, or None; the run's files are gone afterwards."""
        process, folder = self._process, self._folder  # a cancel() from another thread may drop them meanwhile
        if process is None or folder is None:
            self.cancel()
            return [None] * self._count
        try:
            process.wait(timeout=max(0.0, self._deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill(process)
        produced = [Path(folder.name) / f"document-{number}.{self._extension}" for number in range(self._count)]
        converted = [path.read_bytes() if path.is_file() else None for path in produced]
        self.cancel()
        return converted

    def cancel(self) -> None:
        """Stop the run if it still goes on and remove its files (nothing if already done). Safe from
        another thread than the one waiting for :meth:`results`."""
        process, self._process = self._process, None
        folder, self._folder = self._folder, None
        if process is not None and process.poll() is None:
            _kill(process)
        if folder is not None:
            folder.cleanup()


# The throwaway profile's settings: no link of a document is followed ("Block any links from
# documents not among the trusted locations"; none is trusted), a safeguard beside the cleaning and
# the confinement.
_PROFILE_SETTINGS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" \
oor:op="fuse"><value>true</value></prop></item>
</oor:items>
"""


def _write_profile(profile: Path) -> None:
    (profile / "user").mkdir(parents=True)
    (profile / "user" / "registrymodifications.xcu").write_text(_PROFILE_SETTINGS, encoding="utf-8")


def _kill(process: subprocess.Popen) -> None:
    """LibreOffice's whole process group (its launcher starts the office process as a child)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
