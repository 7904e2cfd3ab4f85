"""A rendering's pages as placing elements on them reads them: each drawn character's letter, glyph box
and line box, packed in one string and one array per page. A long document's rendering draws about a
million characters; as a PageText of character objects each (with its turn, type size and two orders
of reading, which placing does not use) it held over a gigabyte, twice while forked readers handed
it over. The characters and boxes are PDFium's, as ``pdf.text_layer.page_text`` reads them.

A long rendering is read by processes of its own as soon as LibreOffice is done, beside the partition
(:class:`ReadAhead`); else when its elements are placed, a very long one by forked readers. Either
way in page ranges side by side, as many as this process's share of the CPUs. A page's size and the
boxes of its pictures are read with its characters, while the page is loaded.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import pickle
import signal
import subprocess
import threading
from typing import Optional

import numpy as np

from ...model import BBox
from ..processes import cpu_share
from ..child_python import python_command
from ..pdf.fonts import declared_heights
from ..pdf.geometry import PageGeometry
from ..pdf.text_layer import drawn_boxes

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
    forked = [_RangeReader(pdf, range(bounds[k], bounds[k + 1])) for k in range(1, len(bounds) - 1)]
    try:
        pages = _pages_of(pdf, range(bounds[0], bounds[1]))
        for reader in forked:
            pages += reader.pages()
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


class _RangeReader:
    """A forked process reading a range of the rendering's pages, its answer pickled through a pipe. It
    dies with this process; a reader that fails has its pages read here instead."""

    def __init__(self, pdf: bytes, numbers: range) -> None:
        self._pdf, self._numbers = pdf, numbers
        read_end, write_end = os.pipe()
        self._pid = os.fork()
        if self._pid == 0:  # the reader: it leaves by os._exit, running none of the decode's exit handlers
            status = 1
            try:
                os.close(read_end)
                ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone when its parent is
                with os.fdopen(write_end, "wb") as out:
                    pickle.dump(_pages_of(pdf, numbers), out, protocol=pickle.HIGHEST_PROTOCOL)
                status = 0
            finally:
                os._exit(status)
        os.close(write_end)
        self._answer = os.fdopen(read_end, "rb")

    def pages(self) -> list[RenderedPage]:
        try:
            answer = self._answer.read()
            _, status = os.waitpid(self._pid, 0)
            self._pid = 0
            if status == 0:
                return pickle.loads(answer)
        except (OSError, pickle.UnpicklingError, EOFError):
            pass
        return _pages_of(self._pdf, self._numbers)

    def stop(self) -> None:
        if self._pid:
            with contextlib.suppress(OSError):
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            self._pid = 0
        self._answer.close()


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
        self._readers: list[_SpawnedReader] = []
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
                reader.send(pdf, numbers)
            pages: list[RenderedPage] = []
            for reader in readers:
                found = reader.pages()
                if found is None:
                    return
                pages += found
            self._pages = pages
        except Exception:  # cancelled under way, or anything else: the pages are read when placing
            self._pages = None
        finally:
            self._stop_readers(0)

    def _start_readers(self, count: int) -> list[_SpawnedReader]:
        """``count`` readers, those already started first; none once cancelled."""
        with self._lock:
            while not self._stopped and len(self._readers) < count:
                self._readers.append(_SpawnedReader())
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


# A reader process: its page range ("start stop") on the first line of its standard input, then the
# rendering; the pages pickled on its standard output. It dies with the decode's thread that started it.
_READER = """
import ctypes, pickle, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: gone when the thread that started it is
from kg_decoder.decode.rendering.pages import _pages_of
start, stop = map(int, sys.stdin.buffer.readline().split())
pages = _pages_of(sys.stdin.buffer.read(), range(start, stop))
sys.stdout.buffer.write(pickle.dumps(pages, protocol=pickle.HIGHEST_PROTOCOL))
"""


class _SpawnedReader:
    """A fresh Python process reading a range of a rendering's pages (:data:`_READER`, its modules alone:
    ``child_python``); started at once, fed a page range and the rendering by :meth:`send`."""

    def __init__(self) -> None:
        self._process = subprocess.Popen(python_command(_READER), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.DEVNULL)

    def send(self, pdf: bytes, numbers: range) -> None:
        """The pages to read of the rendering ``pdf`` (``OSError`` where the reader is gone)."""
        with self._process.stdin:
            self._process.stdin.write(f"{numbers.start} {numbers.stop}\n".encode() + pdf)

    def pages(self) -> Optional[list[RenderedPage]]:
        try:
            answer = self._process.stdout.read()
            return pickle.loads(answer) if self._process.wait() == 0 else None
        except (OSError, ValueError, pickle.UnpicklingError, EOFError):
            return None

    def stop(self) -> None:
        if self._process.poll() is None:
            with contextlib.suppress(OSError):
                self._process.kill()
            self._process.wait()
        for pipe in (self._process.stdin, self._process.stdout):
            with contextlib.suppress(OSError):
                pipe.close()


__all__ = ["ReadAhead", "RenderedPage", "read_rendered_pages", "rendered_page"]
