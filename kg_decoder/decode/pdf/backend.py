"""PDF: each page's text layer read by PDFium (``blocks``: typed blocks in reading order), or by
unstructured's ``fast`` with ``--pdf-reader unstructured`` (a page it reads nothing of, or a document
it refuses, read by PDFium instead: a PDF whose text any engine can read is never refused as empty);
OCR (tesseract) where a page has no text layer or one that reads implausible; image objects with their
placement (PDFium); pages drawn with PDFium. Every box is on the displayed page (see ``geometry``).
"""

from __future__ import annotations

import io
import re
import threading
from collections import OrderedDict
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Callable, Optional

from ...model import PDF_POINTS, DecodeOptions, Element, Page, PageText, Partitioned, Problem, ProgressCallback, report
from ...model.errors import CorruptDocument, EmptyDocument, EncryptedDocument
from ...patches import pdfminer as pdfminer_patches
from ...patches.pypdfium2 import sharing_its_text_page
from ...patches.unstructured import pdfminer_pages_generator, pdfminer_pages_replaced
from ..images import describe_image, merge_by_position
from . import spacing, text_types
from ..backends.base import Backend, Format, PdfConverter, PicturesAhead, drawing_scale
from ..rendering.box_checks import check_pdf_boxes
from .geometry import PageGeometry
from .page_ocr import can_ocr, doubted_elements, ocr_pages, read_doubted_layers
from .decryption import readable_pdf
from .readable import refuse_unreadable_pdf
from .forms import with_forms
from .unread import with_unread_lines
from ..tables.pdf_pages import TableReadings, find_tables
from .reading_order import reading_order
from .regions import replacing
from .blocks import pdfium_elements
from .characters import read_page
from .page_objects import image_objects
from .text_layer import PdfLines, has_turned_text, lines_outside, text_layer_elements, turned_text_elements
from .text_plausibility import doubted, plausibility
from .titles import document_title
from ..backends.unstructured_glue import call, convert_all, ocr_languages, require_layout_model, require_ocr_languages

PDF = Format("pdf", "application/pdf", ("pdf",), page_based=True)


class PdfBackend(Backend):
    family = "pdf"
    formats = (PDF,)

    def refuse_unreadable(self, data: bytes, fmt: Format, password: Optional[str] = None) -> None:
        """A PDF that does not end as one and that PDFium cannot open (a truncated file)."""
        refuse_unreadable_pdf(data, password)

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        data = readable_pdf(data, options.password)
        inspected = _inspect_pdf(data, options.password, _opened_ahead(data))
        try:
            return self._partition_inspected(data, options, progress, *inspected)
        finally:  # closed however the partition ends, an interrupt too
            inspected[0].close()

    def _partition_inspected(self, data: bytes, options: DecodeOptions, progress: Optional[ProgressCallback],
                             pdf: "LoadedPages", pages: list[Page], geometries: dict, with_text: set[int],
                             needs_ocr: set[int], turned: set[int], scores: dict[int, Optional[float]]) -> Partitioned:
        languages = ocr_languages(options)
        strategy = options.strategy
        if strategy == "hi_res":
            require_layout_model()
        if strategy == "ocr_only" or (strategy == "auto" and needs_ocr):
            require_ocr_languages(languages)
        from unstructured.partition.pdf import partition_pdf

        pdfminer_patches.install_all()
        pdfminer_patches.install_line_reading(spacing.drawn_twice, spacing.spaceless, spacing.word_breaks)

        def run(strategy_name: str, payload: bytes, password: Optional[str]) -> list:
            return call("pdf", partition_pdf, file=io.BytesIO(payload), strategy=strategy_name, languages=languages,
                        password=password)

        by_number = {p.number: p for p in pages}
        problems: list[Problem] = []
        doubted_layers: set[int] = set()  # pages whose text layer is kept though its words read implausible
        replaced: set[int] = set()  # pages whose implausible text layer OCR read better: read by OCR instead
        read_again: list[Element] = []  # what OCR read on pages whose implausible text layer it replaces
        if strategy in ("fast", "auto"):
            for number, score in scores.items():
                by_number[number].plausibility = score
            doubted_layers = {number for number in with_text if doubted(scores.get(number))}
            if doubted_layers and strategy == "auto" and can_ocr(languages):
                replaced, read_again = read_doubted_layers(pdf, [by_number[n] for n in sorted(doubted_layers)],
                                                            options.ocr_languages, problems, progress)
                with_text -= replaced
                doubted_layers -= replaced
        # the pages' lines through PDFium, each page read once by every step below
        layer = PdfLines(data, pdf)
        found: list[Element] = []  # elements of every source, each source in reading order
        if strategy == "ocr_only":
            ocr_numbers = [p.number for p in pages]
        elif strategy == "hi_res":
            with _pages_watched(progress, len(pages)):
                found = convert_all(run(strategy, data, options.password), by_number, page_based=True)
            ocr_numbers = []
        else:  # fast, or auto: the text layer where there is one, OCR (auto) for the pages that have none
            ocr_numbers = sorted(needs_ocr) if strategy == "auto" else []
            text_numbers = [p.number for p in pages if p.number not in ocr_numbers and p.strategy != "ocr_only"]
            found = _read_text_layers(data, pdf, layer, TextLayerPages(by_number, geometries, with_text, replaced, turned,
                                                                    text_numbers), options, problems, progress,
                                      lambda: run("fast", data, options.password))
        for number in ocr_numbers:
            by_number[number].strategy = "ocr_only"
        if strategy == "hi_res":
            for page in pages:
                page.strategy = "hi_res"
        if ocr_numbers:
            found += ocr_pages(pdf, [by_number[number] for number in ocr_numbers], options.ocr_languages, problems,
                                progress)
        found += read_again
        try:  # a doubted text layer's largest words are no title
            title = document_title(data, pdf, layer, 1 in with_text and 1 not in doubted_layers)
        except Exception:  # a title is worth less than the document: the first title element then
            title = None
        found = _blanks_as_spaces(found)
        # a doubted layer's boxes do hold its characters, but those are no reading to vouch for
        check_pdf_boxes(pdf, found, with_text - set(ocr_numbers) - doubted_layers)
        found = doubted_elements(found, [by_number[number] for number in doubted_layers])
        elements = _in_page_order(found)  # none: a PDF of pictures or drawings alone, kept with its pages
        elements = with_forms(data, pdf, elements, pages, geometries, options.password, problems)
        return Partitioned(format="pdf", elements=elements, pages=pages, strategy=_strategy_used(pages),
                           problems=problems, title=title)

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        """Image objects with their placement on the page (JPEG streams kept byte for byte)."""
        import pypdfium2 as pdfium

        pdf = LoadedPages(pdfium.PdfDocument(readable_pdf(data)))
        try:
            return merge_by_position(elements, _pictures(pdf).pictures)
        finally:
            pdf.close()

    def pictures_ahead(self, data: bytes, fmt: Format) -> Optional[PicturesAhead]:
        """The pictures, found in the document opened for the partition that follows (its pages loaded
        once for both)."""
        import pypdfium2 as pdfium

        readable = readable_pdf(data)
        pdf = LoadedPages(pdfium.PdfDocument(readable))
        try:
            found = _pictures(pdf)
        except BaseException:
            pdf.close()
            raise
        _AHEAD.opened = (readable, pdf)
        return found

    def renders_pages(self, fmt: Format) -> bool:
        return True

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        return render_pdf_page(readable_pdf(data), page_number, scale)

    def page_text(self, data: bytes, fmt: Format, page_number: int,
                  rendered: Optional[bytes] = None) -> Optional[PageText]:
        """The page's text layer through PDFium (None for a page without one, a scan, and for a page whose
        layer reads implausible: its characters vouch for no box, see ``text_plausibility``)."""
        page = read_page(readable_pdf(data), page_number)
        return page if page.chars and not doubted(plausibility(page.stream.text)[0]) else None

    def warm_up(self) -> None:
        import unstructured.partition.pdf  # noqa: F401


@dataclass
class TextLayerPages:
    """The pages ``fast`` reads: each page by number, their geometries, those with a text layer, those
    whose layer OCR replaced, those with turned text, and the numbers of those read for their text."""

    by_number: dict[int, Page]
    geometries: dict[int, PageGeometry]
    with_text: set[int]
    replaced: set[int]
    turned: set[int]
    text_numbers: list[int]


def _read_text_layers(data: bytes, pdf: "LoadedPages", layer: PdfLines, pages: TextLayerPages, options: DecodeOptions,
                      problems: list[Problem], progress: Optional[ProgressCallback],
                      read_fast_pages: Callable[[], list]) -> list[Element]:
    """``fast``'s reading of the pages with a text layer (the layout model started on each page as fast
    reaches it), PDFium's lines where fast read nothing, a closer look
    at turned text and tables, and the lines fast dropped; each page's strategy set."""
    found: list[Element] = []
    looked_at = sorted(pages.with_text) if options.pdf_tables else []
    with TableReadings(pdf, looked_at, layer) as readings:
        readings.look_ahead()
        if pages.with_text and options.pdf_reader == "unstructured":
            with _pages_watched(progress, len(pages.by_number), readings, typed_fast=True):
                raw = read_fast_pages()
            found = _on_displayed_page(convert_all(raw, _displayed_media_pages(pages.geometries), page_based=True),
                                       pages.geometries)
            found = [e for e in found if e.page_number not in pages.replaced]
        read = {e.page_number for e in found}
        with_layer = [number for number in pages.text_numbers if number in pages.with_text]
        unread = [number for number in with_layer if number not in read]
        total = len(pages.by_number)
        if unread and options.pdf_reader == "pdfium":  # each page reported as the reading passes it
            found += pdfium_elements(layer, unread, lambda number: report(
                progress, "partition", number - 1, total, f"partition {number}/{total} pages"), list(pages.by_number))
        elif unread:  # fast read nothing there although the page has a text layer
            found += text_layer_elements(layer, unread)
        for number in pages.text_numbers:
            fell_back = number in unread and options.pdf_reader == "unstructured"  # PDFium where fast read nothing
            pages.by_number[number].strategy = "text_layer" if fell_back else "fast"
        read_fast = [number for number in with_layer if number not in unread]
        found = _closer_look(data, pdf, layer, found, read_fast, with_layer, pages.turned, pages.geometries, options,
                             problems, progress, readings)
    return with_unread_lines(layer, found, read_fast, problems)


_AHEAD = threading.local()  # .opened: (the bytes, their document) opened by pictures_ahead for the partition


def _opened_ahead(data: bytes):
    """The document ``pictures_ahead`` opened from these very bytes (None: none), handed over once."""
    opened = getattr(_AHEAD, "opened", None)
    _AHEAD.opened = None
    return opened[1] if opened is not None and opened[0] is data else None


def _pictures(pdf: "LoadedPages") -> PicturesAhead:
    """The PDF's image objects with their placement on the page (JPEG streams kept byte for byte)."""
    found: list[Element] = []
    to_read: list[Element] = []  # on pages with a text layer not doubted (the others are read by OCR whole)
    for number in range(1, len(pdf) + 1):
        page = pdf[number - 1]
        with_text: Optional[bool] = None  # looked at for the first picture: most pages have none
        geometry = PageGeometry.of(page)
        for obj in image_objects(page, max_depth=5):
            if with_text is None:  # a doubted text layer's page is read by OCR whole (its layer replaced) or
                # its pictures are read after the partition: not ahead
                with_text = page.get_textpage().count_chars() > 0 and not doubted(pdf.text_layer(number - 1)[1])
            box = geometry.clip(geometry.box(obj.get_bounds()))
            width, height = obj.get_px_size()
            buffer = io.BytesIO()
            try:
                obj.extract(buffer)
                payload: Optional[bytes] = buffer.getvalue()
            except Exception:  # an image PDFium cannot extract keeps its place, without bytes
                payload = None
            mime = describe_image(payload)[0] if payload else None
            found.append(Element(0, "Image", "", page_number=number,
                                 bbox=_rounded(box),
                                 image_data=payload, image_mime=mime, image_width=width,
                                 image_height=height, image_turned=_shown_turned(obj, geometry)))
            if with_text:
                to_read.append(found[-1])
    return PicturesAhead(found, to_read)


def render_pdf_page(data: bytes, page_number: int, scale: float) -> Optional[bytes]:
    """One page of a PDF as a PNG at ``scale`` pixels per point (less for a huge page: see
    :func:`~kg_decoder.decode.backends.base.drawing_scale`), or None."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return None
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        page = pdf[page_number - 1]
        image = page.render(scale=drawing_scale(*page.get_size(), scale)).to_pil()
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        return buffer.getvalue()
    finally:
        pdf.close()


def _shown_turned(picture, geometry: PageGeometry) -> bool:
    """Whether a picture shows turned or mirrored on the displayed page (its matrix and the page's
    /Rotate together): then its pixels do not map upright onto its box."""
    import math

    try:
        matrix = picture.get_matrix()
    except Exception:  # PDFium cannot say: do not map it
        return True
    if matrix.a * matrix.d - matrix.b * matrix.c <= 0:
        return True
    shown = (math.degrees(math.atan2(matrix.b, matrix.a)) - geometry.rotation) % 360
    return min(shown, 360 - shown) > 1.0


def _closer_look(data: bytes, pdf, layer: PdfLines, found: list[Element], read_fast: list[int], with_layer: list[int],
                 turned: set[int], geometries: dict[int, PageGeometry], options: DecodeOptions, problems: list[Problem],
                 progress: Optional[ProgressCallback], readings: Optional[TableReadings] = None) -> list[Element]:
    """What a first reading of the text layer put on its pages, with turned lines read again along their
    baselines and tables put in place of the loose lines read there. Either failing on a page leaves
    the first reading there, with a problem."""
    turned_read = sorted(turned & set(read_fast))
    if turned_read:  # pdfminer reads turned lines as single letters, backwards: PDFium reads them
        try:
            found = replacing(found, turned_text_elements(layer, turned_read), together=True)
        except Exception as exc:
            problems.append(Problem.of("turned-text-not-read", "turned text not read again", exc))
    if not options.pdf_tables or not with_layer:
        return found
    report(progress, "tables", 0, 1, "find tables")
    tables = find_tables(data, pdf, with_layer, geometries, problems, readings)

    def beside_table(element: Element, table: Element) -> list[Element]:
        return lines_outside(layer, element.page_number, element.bbox, table.bbox)

    try:
        found = replacing(found, tables, rest=beside_table)
    except Exception as exc:
        problems.append(Problem.of("tables-not-read", "tables not put in place", exc, element_kind="Table"))
        tables = []
    report(progress, "tables", 1, 1, f"{len(tables)} tables found")
    return found


def _inspect_pdf(data: bytes, password: Optional[str], opened: Optional["LoadedPages"] = None):
    """Open the PDF with PDFium (unless ``opened`` is its document, open already): each page's size and
    geometry, the pages with a text layer, and the pages without one but with pictures to OCR."""
    import pypdfium2 as pdfium

    if opened is None:
        try:
            opened = LoadedPages(pdfium.PdfDocument(data, password=password))
        except pdfium.PdfiumError as exc:
            if "password" in str(exc).lower():
                if password:
                    raise EncryptedDocument("the PDF is encrypted and the password given is wrong") from None
                raise EncryptedDocument("the PDF is encrypted; give its password to decode it") from None
            raise CorruptDocument(f"the file could not be read as PDF: {exc}") from None
    pdf = opened
    try:
        if len(pdf) == 0:
            raise EmptyDocument("the PDF has no pages")
        pages: list[Page] = []
        geometries: dict[int, PageGeometry] = {}
        with_text: set[int] = set()
        needs_ocr: set[int] = set()
        turned: set[int] = set()
        scores: dict[int, Optional[float]] = {}  # each text layer's plausibility (text_plausibility)
        for index in range(len(pdf)):
            page = pdf[index]
            geometry = geometries[index + 1] = PageGeometry.of(page)
            width, height = geometry.size
            pages.append(Page(number=index + 1, width=round(width, 3), height=round(height, 3),
                              coordinate_system=PDF_POINTS))
            text, score = pdf.text_layer(index)
            if text.strip():
                with_text.add(index + 1)
                scores[index + 1] = score
                try:
                    if has_turned_text(page):
                        turned.add(index + 1)
                except Exception:  # a page object PDFium cannot read: the page is read as first read
                    pass
            elif next(image_objects(page, max_depth=3), None) is not None:
                needs_ocr.add(index + 1)
    except BaseException:
        pdf.close()
        raise
    return pdf, pages, geometries, with_text, needs_ocr, turned, scores


class LoadedPages:
    """A PDF open in PDFium whose pages are loaded once each for all the steps that look at them (its
    geometry, text layer, drawings, tables' pre-signal, the model's drawing, forms, the boxes' check):
    a page loaded again parses its content again, about 1 ms. Each page hands its steps one text page
    (PDFium builds one in about 1 ms; four steps built their own), which it owns: a step does not
    close it. The last ``kept`` pages stay loaded (a page a step still holds stays alive with it);
    anything else is the document's own."""

    def __init__(self, pdf, kept: int = 64) -> None:
        self._pdf, self._kept = pdf, kept
        self._pages: OrderedDict[int, object] = OrderedDict()
        self._layers: dict[int, tuple[str, Optional[float]]] = {}

    def __getitem__(self, index: int):
        page = self._pages.pop(index, None)
        if page is None:
            page = sharing_its_text_page(self._pdf[index])
        self._pages[index] = page
        while len(self._pages) > self._kept:
            self._pages.popitem(last=False)
        return page

    def text_layer(self, index: int) -> tuple[str, Optional[float]]:
        """The page's text as PDFium reads it and its plausibility, judged once for every step."""
        if index not in self._layers:
            text = self[index].get_textpage().get_text_bounded()
            self._layers[index] = text, plausibility(text)[0]
        return self._layers[index]

    def __len__(self) -> int:
        return len(self._pdf)

    def __getattr__(self, name: str):
        return getattr(self._pdf, name)

    def close(self) -> None:
        self._pages.clear()
        self._layers.clear()
        self._pdf.close()


def _displayed_media_pages(geometries: dict[int, PageGeometry]) -> dict[int, Page]:
    """Pages the size of the displayed MediaBox: the space pdfminer measures element boxes in."""
    pages = {}
    for number, geometry in geometries.items():
        media = PageGeometry.create(geometry.media, rotation=geometry.rotation)
        pages[number] = Page(number=number, width=media.size[0], height=media.size[1])
    return pages


def _on_displayed_page(elements: list[Element], geometries: dict[int, PageGeometry]) -> list[Element]:
    """Element boxes moved from the displayed MediaBox onto the displayed visible area (and clipped
    to it: an element outside it keeps its text and has no box)."""
    moved = []
    for element in elements:
        geometry = geometries.get(element.page_number) if element.page_number is not None else None
        if element.bbox is not None and geometry is not None:
            element = replace(element, bbox=_rounded(geometry.clip(geometry.from_displayed_media(element.bbox))))
        moved.append(element)
    return moved


_BLANKS = re.compile(r"[^\S\n]+")


def _blanks_as_spaces(elements: list[Element]) -> list[Element]:
    """The elements, every run of blanks in a text (a TAB the text layer draws between words, a
    no-break or ideographic space, several spaces) one space, as every other reader gives it; line
    breaks kept. A table's text stays as its cells give it."""
    spaced = []
    for element in elements:
        text = _BLANKS.sub(" ", element.text) if element.text and element.category != "Table" else element.text
        spaced.append(element if text == element.text else replace(element, text=text))
    return spaced


def _rounded(box):
    return tuple(round(v, 3) for v in box) if box is not None else None


def _in_page_order(elements: list[Element]) -> list[Element]:
    """Elements of several sources (text layer, PDFium, OCR) page by page, each page's in reading
    order (its columns read one after the other: ``reading_order``), numbered afresh."""
    pages: dict[int, list[Element]] = {}
    for element in elements:
        pages.setdefault(element.page_number or 0, []).append(element)
    ordered = [element for number in sorted(pages) for element in reading_order(pages[number])]
    return [replace(element, index=index) for index, element in enumerate(ordered)]


def _strategy_used(pages: list[Page]) -> str:
    """The strategies the pages were read with, in a fixed order: ``fast``, ``fast+ocr_only``, …"""
    used = {page.strategy for page in pages if page.strategy}
    order = ("fast", "text_layer", "hi_res", "ocr_only")
    return "+".join(name for name in order if name in used) or "fast"


@contextmanager
def _pages_watched(progress: Optional[ProgressCallback], total: int, readings: Optional[TableReadings] = None,
                   typed_fast: bool = False):
    """Report each page as unstructured's PDF reader (pdfminer) reaches it, tell the table finder's
    ``readings`` (the layout model starts on the page), and (``typed_fast``: the ``fast`` strategy
    types the texts) read the texts unstructured will type on it in one spaCy batch (``text_types``)
    before it is handed on.

    unstructured has no hook for any; its PDF module walks pages through the generator it
    imported by name, so that name is wrapped while the partitioner runs (the worker runs one
    document at a time). If a later unstructured moves it, pages simply go unreported, the layout
    model runs on each table page when the finder reaches it, and each text is typed alone.
    """
    original = pdfminer_pages_generator()
    if original is None:
        yield
        return

    def watched(*args, **kwargs):
        for number, (page, layout) in enumerate(original(*args, **kwargs), start=1):
            report(progress, "partition", number - 1, total, f"partition {number}/{total} pages")
            if readings is not None:
                readings.reached(number)
            if typed_fast:
                text_types.take(text_types.read_ahead(layout))
            yield page, layout

    with pdfminer_pages_replaced(watched), text_types.batches():
        yield
