"""PDF: the text layer with unstructured's ``fast`` where a page has one, OCR (tesseract) page by page
where it has none; image objects with their placement (PDFium); pages drawn with PDFium."""

from __future__ import annotations

import io
from contextlib import contextmanager
from typing import Optional

from ...model import PDF_POINTS, DecodeOptions, Element, Page, Partitioned, ProgressCallback, report
from ...model.errors import CorruptDocument, EmptyDocument, EncryptedDocument
from ..images import describe_image, merge_by_position
from .base import Backend, Format, PdfConverter
from .unstructured_glue import call, convert_all, ocr_languages, require_layout_model, require_ocr_languages

PDF = Format("pdf", "application/pdf", ("pdf",), page_based=True)


class PdfBackend(Backend):
    family = "pdf"
    formats = (PDF,)

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        pdf, pages, needs_ocr = _inspect_pdf(data, options.password)
        languages = ocr_languages(options)
        strategy = options.strategy
        if strategy == "hi_res":
            require_layout_model()
        if strategy == "ocr_only" or (strategy == "auto" and needs_ocr):
            require_ocr_languages(languages)
        from unstructured.partition.pdf import partition_pdf

        def run(strategy_name: str, payload: bytes, password: Optional[str]) -> list:
            return call("pdf", partition_pdf, file=io.BytesIO(payload), strategy=strategy_name, languages=languages,
                        password=password)

        warnings: list[str] = []
        if strategy == "ocr_only":
            raw = _ocr_pages(pdf, [p.number for p in pages], run, warnings, progress)
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
                raw = _merge_by_page(raw, _ocr_pages(pdf, sorted(needs_ocr), run, warnings, progress))
            used = "fast" if not needs_ocr else ("ocr_only" if not text_pages else "fast+ocr_only")
        pdf.close()
        elements = convert_all(raw, {p.number: p for p in pages}, page_based=True)
        if not elements:
            raise EmptyDocument("the PDF has no text layer and OCR found no text on any page")
        return Partitioned(format="pdf", elements=elements, pages=pages, strategy=used, warnings=warnings)

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        """Image objects with their placement on the page (JPEG streams kept byte for byte)."""
        import pypdfium2 as pdfium
        import pypdfium2.raw as pdfium_c

        pdf = pdfium.PdfDocument(data)
        found: list[Element] = []
        try:
            for number in range(1, len(pdf) + 1):
                page = pdf[number - 1]
                left_edge, _, _, top_edge = page.get_bbox()
                for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=5):
                    left, bottom, right, top = obj.get_bounds()
                    width, height = obj.get_px_size()
                    buffer = io.BytesIO()
                    try:
                        obj.extract(buffer)
                        payload: Optional[bytes] = buffer.getvalue()
                    except Exception:  # an image PDFium cannot extract keeps its place, without bytes
                        payload = None
                    mime = describe_image(payload)[0] if payload else None
                    found.append(Element(0, "Image", "", page_number=number,
                                         bbox=(round(left - left_edge, 3), round(top_edge - top, 3),
                                               round(right - left_edge, 3), round(top_edge - bottom, 3)),
                                         image_data=payload, image_mime=mime, image_width=width,
                                         image_height=height))
        finally:
            pdf.close()
        return merge_by_position(elements, found)

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        return render_pdf_page(data, page_number, scale)

    def warm_up(self) -> None:
        import unstructured.partition.pdf  # noqa: F401


def render_pdf_page(data: bytes, page_number: int, scale: float) -> Optional[bytes]:
    """One page of a PDF as a PNG at ``scale`` pixels per point, or None."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return None
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        image = pdf[page_number - 1].render(scale=scale).to_pil()
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        return buffer.getvalue()
    finally:
        pdf.close()


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


def _ocr_pages(pdf, numbers: list[int], run, warnings: list[str],
               progress: Optional[ProgressCallback] = None) -> list:
    """OCR the given pages one by one (each copied into a PDF of its own), page numbers mapped back.

    A page OCR fails on is a warning (its text stays empty); the other pages are read all the same.
    """
    import pypdfium2 as pdfium

    raw = []
    for done, number in enumerate(numbers):
        report(progress, "ocr", done, len(numbers), f"OCR page {number} ({done + 1} of {len(numbers)})")
        single = pdfium.PdfDocument.new()
        single.import_pages(pdf, [number - 1])
        buffer = io.BytesIO()
        single.save(buffer)
        single.close()
        try:
            found = run("ocr_only", buffer.getvalue(), None)
        except CorruptDocument as error:
            warnings.append(f"page {number}: OCR failed: {error.message}")
            continue
        for element in found:
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
