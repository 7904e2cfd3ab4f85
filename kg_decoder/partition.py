"""Partition one document's bytes into elements with `unstructured`, offline.

Knows formats and unstructured; knows nothing of RDF or the store. Runs inside
the worker process (see ``worker.py``), so a hang or a crash here never takes
the caller down.
"""

from __future__ import annotations

import importlib
import io
import json
import shutil
import subprocess
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Callable, Optional

from .errors import (
    CorruptDocument,
    DecodeError,
    EmptyDocument,
    EncryptedDocument,
    InvalidOption,
    ModelUnavailable,
    UnsupportedFormat,
)
from .images import add_images
from .model import PDF_POINTS, PIXELS, DecodeOptions, Element, Page, Partitioned
from .progress import ProgressCallback, report

# format name -> (module, function) of unstructured's partitioner
_PARTITIONERS: dict[str, tuple[str, str]] = {
    "docx": ("unstructured.partition.docx", "partition_docx"),
    "doc": ("unstructured.partition.doc", "partition_doc"),
    "pptx": ("unstructured.partition.pptx", "partition_pptx"),
    "ppt": ("unstructured.partition.ppt", "partition_ppt"),
    "xlsx": ("unstructured.partition.xlsx", "partition_xlsx"),
    "xls": ("unstructured.partition.xlsx", "partition_xlsx"),
    "odt": ("unstructured.partition.odt", "partition_odt"),
    "epub": ("unstructured.partition.epub", "partition_epub"),
    "rtf": ("unstructured.partition.rtf", "partition_rtf"),
    "msg": ("unstructured.partition.msg", "partition_msg"),
    "eml": ("unstructured.partition.email", "partition_email"),
    "html": ("unstructured.partition.html", "partition_html"),
    "xml": ("unstructured.partition.xml", "partition_xml"),
    "markdown": ("unstructured.partition.md", "partition_md"),
    "rst": ("unstructured.partition.rst", "partition_rst"),
    "org": ("unstructured.partition.org", "partition_org"),
    "csv": ("unstructured.partition.csv", "partition_csv"),
    "tsv": ("unstructured.partition.tsv", "partition_tsv"),
    "text": ("unstructured.partition.text", "partition_text"),
}
_NEEDS_LIBREOFFICE = {"doc", "ppt"}
_TAKES_ENCODING = {"html", "xml", "text", "markdown", "csv", "tsv"}
_IMAGE_FORMATS = {"png", "jpeg", "tiff"}
_DROPPED_CATEGORIES = {"PageBreak"}


def partition_document(data: bytes, format_name: str, options: DecodeOptions,
                       progress: Optional[ProgressCallback] = None) -> Partitioned:
    """Partition ``data`` (already known to be ``format_name``) into elements, images included.

    ``progress`` hears about each PDF page as it is read ("partition 3/120 pages") or OCRed.
    """
    partitioned = _partition_text(data, format_name, options, progress)
    partitioned.elements = add_images(data, format_name, partitioned.elements, partitioned.pages)
    return partitioned


def _partition_text(data: bytes, format_name: str, options: DecodeOptions,
                    progress: Optional[ProgressCallback] = None) -> Partitioned:
    if format_name == "pdf":
        return _partition_pdf(data, options, progress)
    if format_name in _IMAGE_FORMATS:
        return _partition_image(data, format_name, options)
    if format_name in ("json", "jsonl"):
        return _partition_json(data, format_name, options.section_max_size)
    if format_name not in _PARTITIONERS:
        raise UnsupportedFormat(f"no partitioner for format {format_name!r}")
    if format_name in _NEEDS_LIBREOFFICE and shutil.which("soffice") is None:
        raise UnsupportedFormat(f"{format_name.upper()} needs LibreOffice (soffice), which is not installed")
    pages = _office_pages(data, format_name)
    # An e-mail's attachments are documents of their own (kg_decoder.embedded), not part of its text.
    extra = {"process_attachments": False} if format_name in ("eml", "msg") else {}
    if options.encoding and format_name in _TAKES_ENCODING:
        extra["encoding"] = options.encoding
    raw = _call(format_name, _partitioner(format_name), file=io.BytesIO(data), **extra)
    if format_name == "ppt" and raw:  # slides come back through LibreOffice: count what it gives
        pages = [Page(number=n) for n in range(1, max((e.metadata.page_number or 1) for e in raw) + 1)]
    elements = _convert_all(raw, {p.number: p for p in pages}, page_based=bool(pages))
    if format_name in ("xlsx", "xls"):
        _locate_sheet_tables(data, elements)
    return _checked(Partitioned(format=format_name, elements=elements, pages=pages, strategy="native"))


def _locate_sheet_tables(data: bytes, elements: list[Element]) -> None:
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
    except Exception:
        return
    for number, found in origins.items():
        tables = [e for e in elements if e.is_table and e.page_number == number]
        if len(tables) == len(found):
            for table, origin in zip(tables, found):
                table.table_origin = origin


def _partitioner(format_name: str) -> Callable[..., list]:
    module, function = _PARTITIONERS[format_name]
    return getattr(importlib.import_module(module), function)


def _call(format_name: str, partitioner: Callable[..., list], **kwargs: Any) -> list:
    """Run an unstructured partitioner; any failure of the parser means the bytes are damaged."""
    try:
        return partitioner(**kwargs)
    except DecodeError:
        raise
    except Exception as exc:  # parsers raise anything from KeyError to XMLSyntaxError on bad bytes
        message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        if "password" in message.lower() or "encrypt" in message.lower():
            raise EncryptedDocument(f"the {format_name.upper()} file is password-protected: {message}") from None
        raise CorruptDocument(f"the file could not be read as {format_name.upper()}: {message}") from None


def _checked(partitioned: Partitioned) -> Partitioned:
    if not partitioned.elements:
        raise EmptyDocument(f"no text or content found in the {partitioned.format.upper()} document")
    return partitioned


# ---------------------------------------------------------------- PDF


def _partition_pdf(data: bytes, options: DecodeOptions, progress: Optional[ProgressCallback] = None) -> Partitioned:
    pdf, pages, needs_ocr = _inspect_pdf(data, options.password)
    languages = options.ocr_languages.split("+")
    strategy = options.strategy
    if strategy == "hi_res":
        _require_layout_model()
    if strategy == "ocr_only" or (strategy == "auto" and needs_ocr):
        _require_ocr_languages(languages)
    from unstructured.partition.pdf import partition_pdf

    def run(strategy_name: str, payload: bytes, password: Optional[str]) -> list:
        return _call(
            "pdf",
            partition_pdf,
            file=io.BytesIO(payload),
            strategy=strategy_name,
            languages=languages,
            password=password,
        )

    if strategy == "ocr_only":
        raw = _ocr_pdf_pages(pdf, [p.number for p in pages], run, progress)
        for page in pages:
            page.strategy = strategy
        used = strategy
    elif strategy in ("fast", "hi_res"):
        with _pages_reported(progress, len(pages)):
            raw = run(strategy, data, options.password)
        for page in pages:
            page.strategy = strategy
        used = strategy
    else:  # auto: the text layer where there is one, OCR for the pages that have none
        text_pages = [p.number for p in pages if p.number not in needs_ocr]
        with _pages_reported(progress, len(pages)):
            raw = run("fast", data, options.password) if text_pages else []
        for page in pages:
            page.strategy = "ocr_only" if page.number in needs_ocr else "fast"
        if needs_ocr:
            raw = _merge_by_page(raw, _ocr_pdf_pages(pdf, sorted(needs_ocr), run, progress))
        used = "fast" if not needs_ocr else ("ocr_only" if not text_pages else "fast+ocr_only")
    pdf.close()
    elements = _convert_all(raw, {p.number: p for p in pages}, page_based=True)
    if not elements:
        raise EmptyDocument("the PDF has no text layer and OCR found no text on any page")
    return Partitioned(format="pdf", elements=elements, pages=pages, strategy=used)


def _inspect_pdf(data: bytes, password: Optional[str]):
    """Open the PDF with PDFium: page sizes, and which pages have no text layer but content to OCR."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    try:
        pdf = pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            if password:
                raise EncryptedDocument("the PDF is encrypted and the password given is wrong") from None
            raise EncryptedDocument("the PDF is encrypted; give its password to decode it") from None
        raise CorruptDocument(f"the file could not be read as PDF: {exc}") from None
    if len(pdf) == 0:
        raise CorruptDocument("the PDF has no pages")
    pages: list[Page] = []
    needs_ocr: set[int] = set()
    for index in range(len(pdf)):
        page = pdf[index]
        width, height = page.get_size()
        pages.append(Page(number=index + 1, width=round(width, 3), height=round(height, 3),
                          coordinate_system=PDF_POINTS))
        textpage = page.get_textpage()
        has_text = bool(textpage.get_text_bounded().strip())
        if not has_text:
            has_image = next(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=3), None)
            if has_image is not None:
                needs_ocr.add(index + 1)
    return pdf, pages, needs_ocr


def _ocr_pdf_pages(pdf, numbers: list[int], run, progress: Optional[ProgressCallback] = None) -> list:
    """OCR the given pages one by one (each copied into a PDF of its own), page numbers mapped back."""
    import pypdfium2 as pdfium

    raw = []
    for done, number in enumerate(numbers):
        report(progress, "ocr", done, len(numbers), f"OCR page {number} ({done + 1} of {len(numbers)})")
        single = pdfium.PdfDocument.new()
        single.import_pages(pdf, [number - 1])
        buffer = io.BytesIO()
        single.save(buffer)
        single.close()
        for element in run("ocr_only", buffer.getvalue(), None):
            element.metadata.page_number = number
            raw.append(element)
    report(progress, "ocr", len(numbers), len(numbers), f"OCR of {len(numbers)} pages done")
    return raw


@contextmanager
def _pages_reported(progress: Optional[ProgressCallback], total: int):
    """Report each page as unstructured's PDF reader (pdfminer) reaches it.

    unstructured has no progress hook; its PDF module walks pages through the generator it
    imported by name, so that name is wrapped while the partitioner runs (the worker runs one
    document at a time). If a later unstructured moves it, pages simply go unreported.
    """
    import unstructured.partition.pdf as unstructured_pdf

    original = getattr(unstructured_pdf, "open_pdfminer_pages_generator", None)
    if progress is None or original is None:
        yield
        return

    def counted(*args, **kwargs):
        for number, page in enumerate(original(*args, **kwargs), start=1):
            report(progress, "partition", number - 1, total, f"partition {number}/{total} pages")
            yield page

    unstructured_pdf.open_pdfminer_pages_generator = counted
    try:
        yield
    finally:
        unstructured_pdf.open_pdfminer_pages_generator = original


def _merge_by_page(first: list, second: list) -> list:
    """Merge two element lists in page order, keeping each list's order within a page."""
    merged = sorted(enumerate(first + second), key=lambda pair: ((pair[1].metadata.page_number or 0), pair[0]))
    return [element for _, element in merged]


@lru_cache(maxsize=1)
def installed_ocr_languages() -> frozenset[str]:
    """The languages tesseract has on this machine."""
    try:
        listing = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.strip() for line in listing.stdout.splitlines()[1:] if line.strip())


def _require_ocr_languages(languages: list[str]) -> None:
    installed = installed_ocr_languages()
    if not installed:
        raise UnsupportedFormat("OCR needs tesseract, which is not installed")
    missing = [language for language in languages if language not in installed]
    if missing:
        raise InvalidOption(f"tesseract has no language {', '.join(missing)} on this machine "
                            f"(installed: {', '.join(sorted(installed))})")


def _require_layout_model() -> None:
    try:
        from unstructured_inference.models.base import get_model

        get_model()
    except Exception:
        raise ModelUnavailable(
            "the hi_res layout model is not present on this machine and cannot be fetched offline; "
            "use --strategy auto, fast or ocr_only"
        ) from None


# ---------------------------------------------------------------- images


def _partition_image(data: bytes, format_name: str, options: DecodeOptions) -> Partitioned:
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            frames = getattr(image, "n_frames", 1)
            sizes = []
            for frame in range(frames):
                image.seek(frame)
                sizes.append(image.size)
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        raise CorruptDocument(f"the file could not be read as {format_name.upper()}: {exc}") from None
    if options.strategy == "hi_res":
        _require_layout_model()
    strategy = "hi_res" if options.strategy == "hi_res" else "ocr_only"
    if options.strategy == "fast":
        raise InvalidOption("an image has no text layer: use --strategy auto or ocr_only")
    _require_ocr_languages(options.ocr_languages.split("+"))
    from unstructured.partition.image import partition_image

    raw = _call(format_name, partition_image, file=io.BytesIO(data), strategy=strategy,
                languages=options.ocr_languages.split("+"))
    pages = [Page(number=i + 1, width=float(w), height=float(h), coordinate_system=PIXELS, strategy=strategy)
             for i, (w, h) in enumerate(sizes)]
    elements = _convert_all(raw, {p.number: p for p in pages}, page_based=True)
    # An image with no readable text is still a document of one page (its picture).
    return Partitioned(format=format_name, elements=elements, pages=pages, strategy=strategy)


# ---------------------------------------------------------------- JSON lines


def _partition_json(data: bytes, format_name: str, limit: int) -> Partitioned:
    """JSON and JSON lines by their structure: each object or array whole while its text fits
    ``limit`` characters, split into its members only when it does not; each element records
    its JSON Pointer (for JSON lines, prefixed by the line's position among the values)."""
    try:
        text = data.decode("utf-16") if data[:2] in (b"\xff\xfe", b"\xfe\xff") else data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise CorruptDocument(f"the {format_name.upper()} file is not UTF-8 or UTF-16: {exc}") from None
    values: list[tuple[str, object]] = []
    if format_name == "json":
        try:
            values.append(("", json.loads(text)))
        except ValueError as exc:
            raise CorruptDocument(f"the file is not JSON: {exc}") from None
    else:
        lines = [line for line in text.splitlines() if line.strip()]
        for number, line in enumerate(lines):
            try:
                values.append((f"/{number}", json.loads(line)))
            except ValueError as exc:
                raise CorruptDocument(f"line {number + 1} of the JSON lines file is not JSON: {exc}") from None
    elements: list[Element] = []
    for pointer, value in values:
        _json_elements(value, pointer, limit, elements)
    return _checked(Partitioned(format=format_name, elements=elements, strategy="native"))


def _json_elements(value: object, pointer: str, limit: int, out: list[Element]) -> None:
    if isinstance(value, (dict, list)) and not value:
        return
    rendered = json.dumps(value, ensure_ascii=False, indent=2)
    if len(rendered) <= limit or not isinstance(value, (dict, list)):
        out.append(Element(index=len(out), category="JSON", text=rendered, json_pointer=pointer))
        return
    members = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in members:
        _json_elements(child, f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}", limit, out)


# ---------------------------------------------------------------- pages of Office formats


def _office_pages(data: bytes, format_name: str) -> list[Page]:
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
        if format_name == "xls":
            import xlrd

            book = xlrd.open_workbook(file_contents=data, on_demand=True)
            return [Page(number=i + 1, name=name) for i, name in enumerate(book.sheet_names())]
    except Exception as exc:
        raise CorruptDocument(f"the file could not be read as {format_name.upper()}: {exc}") from None
    return []


# ---------------------------------------------------------------- conversion


def _convert_all(raw: list, pages: dict[int, Page], page_based: bool) -> list[Element]:
    elements: list[Element] = []
    for item in raw:
        if item.category in _DROPPED_CATEGORIES:
            continue
        element = _convert(item, len(elements), pages, page_based)
        if element.is_image or element.text.strip():
            elements.append(element)
    return elements


def _convert(item, index: int, pages: dict[int, Page], page_based: bool) -> Element:
    metadata = item.metadata
    page_number = metadata.page_number if page_based else None
    if page_based and page_number is None:
        page_number = 1
    page = pages.get(page_number) if page_number is not None else None
    html = metadata.text_as_html if item.category == "Table" else None
    return Element(
        index=index,
        category=item.category,
        text=item.text or "",
        html=html,
        element_id=item.id,
        parent_id=metadata.parent_id,
        depth=metadata.category_depth,
        page_number=page_number,
        page_name=getattr(metadata, "page_name", None) or (page.name if page else None),
        bbox=_bbox(metadata.coordinates, page),
        image_url=getattr(metadata, "image_url", None),
        image_mime=getattr(metadata, "image_mime_type", None),
    )


def _bbox(coordinates, page: Optional[Page]):
    """The element's box in the page's own units, origin top-left."""
    if coordinates is None or not coordinates.points or page is None or page.width is None:
        return None
    system = coordinates.system
    xs = [float(p[0]) for p in coordinates.points]
    ys = [float(p[1]) for p in coordinates.points]
    scale_x = page.width / system.width if system is not None and system.width else 1.0
    scale_y = page.height / system.height if system is not None and system.height else 1.0
    orientation = getattr(system, "orientation", None)
    if orientation is not None and orientation.value == (1, 1) and system.height:  # bottom-left origin
        ys = [system.height - y for y in ys]
    return (
        round(min(xs) * scale_x, 3),
        round(min(ys) * scale_y, 3),
        round(max(xs) * scale_x, 3),
        round(max(ys) * scale_y, 3),
    )


def warm_up() -> None:
    """Import the partitioners and load the spaCy model once, before the first document."""
    for module, _ in set(_PARTITIONERS.values()):
        importlib.import_module(module)
    importlib.import_module("unstructured.partition.pdf")
    import unstructured.nlp.tokenize as tokenize

    tokenize._get_nlp()
