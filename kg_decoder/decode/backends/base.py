"""What a format backend is: the formats it reads and what it can do with their bytes.

One backend per format family (docling's model; unstructured's ``FileType`` table holds the
same facts in one place): its formats with their MIME types and extensions, how to partition
them, where their pictures and embedded files are, how a page is drawn and what characters it
shows. Defaults say "nothing of the kind": a backend overrides what its formats have.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from ...model import DecodeOptions, Element, Page, PageText, Partitioned, ProgressCallback
from ..embedded import EmbeddedFile

# A function that turns a document of an Office format into a PDF (LibreOffice), cached by its caller.
PdfConverter = Callable[[bytes, str], Optional[bytes]]


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

    def partition_arguments(self, fmt: Format, options: DecodeOptions) -> dict:
        """Keyword arguments for unstructured's partitioner beyond the file."""
        return {}

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        """``elements`` with the document's pictures merged in reading order."""
        return elements

    def place(self, data: bytes, fmt: Format, partitioned: Partitioned, options: DecodeOptions,
              rendered: Optional[bytes] = None) -> None:
        """Give elements whose format states no position a page and a box (by rendering the document,
        or on ``rendered``, its rendering made ahead)."""

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
