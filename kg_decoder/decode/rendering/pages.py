"""A rendering's pages as placing elements on them reads them: each drawn character's letter, glyph box
and line box, packed in one string and one array per page. A long document's rendering draws about a
million characters; as a PageText of character objects each (with its turn, type size and two orders
of reading, which placing does not use) it held over a gigabyte, twice while forked readers handed
it over. The characters and boxes are PDFium's, as ``pdf.characters.page_text`` reads them.

A long rendering is read by helper processes (``processes.Helper``) as soon as LibreOffice is done,
beside the partition (:class:`ReadAhead`); else when its elements are placed, a very long one by forked
helpers. Either
way in page ranges side by side, as many as this process's share of the CPUs. A page's size and the
boxes of its pictures are read with its characters, while the page is loaded.
"""

from __future__ import annotations

import hashlib
import os
import threading
from typing import Optional

import numpy as np

from ...model import BBox
from ..processes import Helper, HelperFailed, cpu_share
from ..pdf.fonts import declared_heights
from ..pdf.geometry import PageGeometry
from ..pdf.characters import drawn_boxes

_PAGES_PER_READER = 256  # a rendering read by one process per so many pages (a fork costs more than a few pages)
# A rendering of this many pages is read ahead (a reader process's start, about 0.8 s of imports, beside
# the partition, costs less than reading them after it, about 2.5 ms a page).
_PAGES_AHEAD = 64
# A conversion still under way after this long is of a long document (a short one takes about 2 s): its
# readers are started then, and import while LibreOffice finishes, fed the rendering when it is done.
_READERS_AFTER_SECONDS = 2.5


class RenderedPage:
    """The characters drawn on a rendered page in the drawing's order: ``text`` has one letter for each
    (a line-ending hyphen as ``-``); :meth:`box` and :meth:`line_box` give the boxes of the ``i``-th
    (see ``PageChar``), on the displayed page. ``size``: the page's (width, height); ``pictures``: the
    boxes of the pictures drawn on it, in reading order."""

    __slots__ = ("text", "_numbers", "size", "pictures")

    def __init__(self, text: str, numbers: "np.ndarray", size: tuple[float, float] = (0.0, 0.0),
                 pictures: tuple[BBox, ...] = ()) -> None:
        self.text, self._numbers, self.size, self.pictures = text, numbers, size, pictures

    def __len__(self) -> int:
        return len(self.text)

    def box(self, index: int) -> BBox:
        return tuple(self._numbers[index, :4].tolist())

    def line_box(self, index: int) -> BBox:
        return tuple(self._numbers[index, 4:].tolist())

    def numbers(self) -> "np.ndarray":
        """The boxes, one row per character: columns 0-3 the glyph box, 4-7 the line box."""
        return self._numbers

    def middle_heights(self) -> "np.ndarray":
        """Twice the height of the middle of each character's glyph box (its top plus its bottom)."""
        numbers = self.numbers()
        return numbers[:, 1] + numbers[:, 3]

    def text_inside(self, indices: "np.ndarray", region: BBox, slack: float) -> str:
        """The letters, in page order, of those of the characters ``indices`` whose glyph box's middle
        lies in ``region`` grown by ``slack`` (``model.middle_within``)."""
        indices = np.sort(indices)
        boxes = self.numbers()[indices]
        across, down = (boxes[:, 0] + boxes[:, 2]) / 2, (boxes[:, 1] + boxes[:, 3]) / 2
        inside = ((region[0] - slack <= across) & (across <= region[2] + slack)
                  & (region[1] - slack <= down) & (down <= region[3] + slack))
        return "".join(map(self.text.__getitem__, indices[inside].tolist()))

    def line_box_around(self, indices: "np.ndarray") -> BBox:
        """The box around the line boxes of the characters ``indices`` (at least one)."""
        boxes = self.numbers()[indices]
        return (float(boxes[:, 4].min()), float(boxes[:, 5].min()), float(boxes[:, 6].max()), float(boxes[:, 7].max()))


def rendered_page(page, heights: dict[str, tuple[float, float]]) -> RenderedPage:
    """The drawn characters, size and pictures of a pypdfium2 page; ``heights``: its fonts'
    (``pdf.fonts.declared_heights``)."""
    return RenderedPage(*drawn_boxes(page, heights), size=tuple(round(v, 3) for v in page.get_size()),
                        pictures=_pictures(page))


def _pictures(page) -> tuple[BBox, ...]:
    """The boxes of the pictures drawn on a page, top to bottom, then left to right."""
    import pypdfium2.raw as pdfium_c

    geometry = PageGeometry.of(page)
    found = []
    for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=5):
        box = geometry.clip(geometry.box(obj.get_bounds()))
        if box is not None:
            found.append(tuple(round(v, 3) for v in box))
    return tuple(sorted(found, key=lambda b: (round(b[1]), b[0])))


def read_rendered_pages(pdf: bytes) -> list[RenderedPage]:
    """Every page of a rendering; a long one in page ranges read side by side by forked processes, the
    first range by this one. A PDF PDFium cannot open raises ``PdfiumError``."""
    count = _page_count(pdf)
    readers = min(cpu_share(), count // _PAGES_PER_READER) if hasattr(os, "fork") else 1
    bounds = _bounds(count, readers)
    ranges = [range(start, end) for start, end in zip(bounds, bounds[1:])]
    forked = [Helper.fork(_pages_of, pdf, numbers) for numbers in ranges[1:]]
    try:
        pages = _pages_of(pdf, ranges[0])
        for reader, numbers in zip(forked, ranges[1:]):
            try:
                pages += reader.result()
            except HelperFailed:  # its pages are read here
                pages += _pages_of(pdf, numbers)
    finally:
        for reader in forked:
            reader.stop()
    return pages


def _bounds(count: int, readers: int) -> list[int]:
    """Where each of ``readers`` page ranges of ``count`` pages begins, and the end."""
    return [count * k // max(readers, 1) for k in range(max(readers, 1) + 1)]


def _pages_of(pdf: bytes, numbers: range) -> list[RenderedPage]:
    import pypdfium2 as pdfium

    # The fonts' heights of the pages from one parse of the rendering (``key``): parsed again for each
    # page, a long document's rendering cost time in the square of its pages.
    key = f"rendering-{hashlib.sha256(pdf).hexdigest()}"
    document = pdfium.PdfDocument(pdf)
    try:
        return [rendered_page(document[i], declared_heights(pdf, i + 1, key)) for i in numbers]
    finally:
        document.close()


class ReadAhead:
    """A rendering under way beside the document's partition (a :class:`PendingRendering`), whose pages
    are read as soon as it is done, while the partition goes on: a long rendering (``_PAGES_AHEAD``
    pages at least) by reader processes, in page ranges side by side where this process has a share of
    more than one CPU, started while LibreOffice works on a long document. A thread waits for
    LibreOffice and the readers (started afresh: forking a process whose other thread runs the partition
    is not safe); a short rendering, or a reader that fails, leaves :meth:`pages` None, and the pages are
    read when the elements are placed."""

    def __init__(self, conversion) -> None:
        self._conversion = conversion
        self._pdf: Optional[bytes] = None
        self._pages: Optional[list[RenderedPage]] = None
        self._readers: list[Helper] = []
        self._stopped = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, name="rendering-read-ahead", daemon=True)
        self._thread.start()

    def result(self) -> Optional[bytes]:
        self._thread.join()
        return self._pdf

    def pages(self) -> Optional[list[RenderedPage]]:
        """The rendering's pages read ahead, or None."""
        self._thread.join()
        return self._pages

    def cancel(self) -> None:
        with self._lock:
            self._stopped = True
        if self._thread.is_alive():  # the conversion is the thread's until it is done
            self._conversion.cancel()
        self._stop_readers(0)

    def _read(self) -> None:
        try:
            if not self._conversion.over_within(_READERS_AFTER_SECONDS):
                self._start_readers(cpu_share())
            self._pdf = pdf = self._conversion.result()
            count = _page_count(pdf) if pdf is not None else 0
            if count < _PAGES_AHEAD:
                return
            bounds = _bounds(count, min(cpu_share(), max(1, count // _PAGES_PER_READER)))
            ranges = [range(start, end) for start, end in zip(bounds, bounds[1:])]
            readers = self._start_readers(len(ranges))
            self._stop_readers(len(ranges))
            if len(readers) < len(ranges):  # cancelled
                return
            for reader, numbers in zip(readers, ranges):
                reader.send(READ_PAGES, pdf, numbers)
            pages: list[RenderedPage] = []
            for reader in readers:
                pages += reader.result()
            self._pages = pages
        except Exception:  # a reader failed, cancelled under way, or anything else: the pages are read when placing
            self._pages = None
        finally:
            self._stop_readers(0)

    def _start_readers(self, count: int) -> list[Helper]:
        """``count`` readers, those already started first; none once cancelled."""
        with self._lock:
            while not self._stopped and len(self._readers) < count:
                self._readers.append(Helper.spawn())
            return [] if self._stopped else self._readers[:count]

    def _stop_readers(self, kept: int) -> None:
        """The readers after the first ``kept`` stopped."""
        with self._lock:
            stopped, self._readers = self._readers[kept:], self._readers[:kept]
        for reader in stopped:
            reader.stop()


def _page_count(pdf: bytes) -> int:
    """The rendering's pages (``PdfiumError`` where PDFium cannot open it)."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(pdf)
    try:
        return len(document)
    finally:
        document.close()


# What a spawned reader calls: a page range of a rendering (its modules alone, ``processes.python_command``).
READ_PAGES = "kg_decoder.decode.rendering.pages:_pages_of"


__all__ = ["ReadAhead", "RenderedPage", "read_rendered_pages", "rendered_page"]
