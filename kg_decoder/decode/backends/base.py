"""What a format backend is: the formats it reads and what it can do with their bytes.

One backend per format family (docling's model; unstructured's ``FileType`` table holds the
same facts in one place): its formats with their MIME types and extensions, how to partition
them, where their pictures and embedded files are, how a page is drawn and what characters it
shows. Defaults say "nothing of the kind": a backend overrides what its formats have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Protocol, Union

from ...model import DecodeOptions, Element, Page, PageText, Partitioned, ProgressCallback
from ..embedded import EmbeddedFile

# A page drawn for a person to look at (the trace view) has at most this many pixels, whatever the
# page's size: 4000 x 4000, 64 MB in memory. A bigger page is drawn at a smaller scale.
MAX_DRAWING_PIXELS = 16_000_000


def drawing_scale(width: float, height: float, scale: float) -> float:
    """The scale (pixels per page unit) to draw a page of this size at: ``scale``, or less for a page
    that would pass :data:`MAX_DRAWING_PIXELS`.

    >>> drawing_scale(612, 792, 2.0), round(drawing_scale(14400, 14400, 2.0), 3)
    (2.0, 0.278)
    """
    if width <= 0 or height <= 0:
        return scale
    return min(scale, (MAX_DRAWING_PIXELS / (width * height)) ** 0.5)

# A function that turns a document of an Office format into a PDF (LibreOffice), cached by its caller.
PdfConverter = Callable[[bytes, str], Optional[bytes]]


@dataclass
class PicturesAhead:
    """Pictures found before the partition: every one (``pictures``, placed on their pages), and those
    worth reading before the partition says which pages are read by OCR whole (``to_read``)."""

    pictures: list[Element]
    to_read: list[Element]


class PendingRendering(Protocol):
    """A rendering of the document under way beside its partition (see :meth:`Backend.start_rendering`)."""

    def result(self) -> Optional[bytes]:
        """The rendering once done (None: it could not be made)."""

    def cancel(self) -> None:
        """Stop it if it still goes on (nothing once done)."""


# What :meth:`Backend.place` places elements on: a rendering made ahead, one under way, or none yet.
Rendered = Union[bytes, PendingRendering, None]


@dataclass(frozen=True)
class Format:
    """A format kg-decoder reads: its name, MIME type, file extensions and nature."""

    name: str
    mime: str
    extensions: tuple[str, ...]
    page_based: bool = False
    text_based: bool = False
    # Other MIME types that name the same format.
    aliases: tuple[str, ...] = ()


class Backend:
    """A format family. Subclasses set ``family`` and ``formats`` and override what applies."""

    family: str = ""
    formats: tuple[Format, ...] = ()
    # unstructured's partitioner of each format: format name -> (module, function).
    partitioners: dict[str, tuple[str, str]] = {}

    def partition(self, data: bytes, fmt: Format, options: DecodeOptions,
                  progress: Optional[ProgressCallback] = None) -> Partitioned:
        """The document's text elements and pages (images are found by :meth:`images`); by default
        unstructured's partitioner of the format, given :meth:`partition_arguments`."""
        from .unstructured_glue import partition_file

        return partition_file(fmt.name, *self.partitioners[fmt.name], data, [],
                              **self.partition_arguments(fmt, options))

    def refuse_unreadable(self, data: bytes, fmt: Format, password: Optional[str] = None) -> None:
        """Raise a DecodeError for a file its readers certainly cannot open, found at little cost in the
        caller's process, before a worker is started for it; by default nothing is refused here."""

    def partition_arguments(self, fmt: Format, options: DecodeOptions) -> dict:
        """Keyword arguments for unstructured's partitioner beyond the file."""
        return {}

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        """``elements`` with the document's pictures merged in reading order."""
        return elements

    def pictures_ahead(self, data: bytes, fmt: Format) -> Optional[PicturesAhead]:
        """The document's pictures, found before it is partitioned so that their OCR goes on while it is
        (then :meth:`images` is not called: they are merged by position); None: found by :meth:`images`."""
        return None

    def start_rendering(self, data: bytes, fmt: Format, options: DecodeOptions) -> Optional[PendingRendering]:
        """Start the rendering :meth:`place` will place elements on, to go on while the document is
        partitioned; None when the format is not placed on one."""
        return None

    def place(self, data: bytes, fmt: Format, partitioned: Partitioned, options: DecodeOptions,
              rendered: Rendered = None) -> None:
        """Give elements whose format states no position a page and a box (by rendering the document,
        or on ``rendered``: its rendering made ahead, or the one :meth:`start_rendering` started)."""

    def embedded_files(self, data: bytes, fmt: Format, budget: int) -> list[EmbeddedFile]:
        """The files inside the document (attachments, embedded objects), reading at most ``budget`` bytes."""
        return []

    def renders_pages(self, fmt: Format) -> bool:
        """Whether :meth:`render_page` can draw this format's pages."""
        return False

    def render_page(self, data: bytes, fmt: Format, page_number: int, as_pdf: PdfConverter,
                    scale: float) -> Optional[bytes]:
        """A PNG of one page (1-based), or None when there is no such page."""
        return None

    def page_text(self, data: bytes, fmt: Format, page_number: int,
                  rendered: Optional[bytes] = None) -> Optional[PageText]:
        """The characters drawn on one page (1-based) with their boxes, read apart from the partitioner:
        what a trace checks its boxes against. ``rendered``: the document's rendering, for a format
        whose elements were placed on one (then ``page_number`` is the rendering's). None when there
        is nothing to read there (a format without pages, a page without text, no rendering)."""
        return None

    def warm_up(self) -> None:
        """Import what the backend needs (in the worker, before the first document)."""
        import importlib

        for module, _ in self.partitioners.values():
            importlib.import_module(module)
