"""A PDF's title: the one its Info or XMP states, unless that is a file name, else the text set in the
largest type on its first page."""

from __future__ import annotations

import re
from typing import Optional

from . import fonts
from .text_layer import PdfLines, largest_text


def document_title(data: bytes, pdf, layer: PdfLines, first_page_has_text: bool) -> Optional[str]:
    """The title the PDF states (Info, else XMP), unless it is a file name; else the text set in the
    largest type on page 1 (never turned text: a margin stamp is not a title); else None."""
    stated = [info_title(pdf)]
    if not stated[0]:
        try:
            with fonts.parsed(data) as reader:
                xmp = reader.xmp_metadata
            titles = (xmp.dc_title or {}) if xmp is not None else {}
            stated.append(str(titles.get("x-default") or next(iter(titles.values()), "")).strip())
        except Exception:  # damaged XMP is not worth a document
            pass
    for title in stated:
        if title and not _FILE_NAME.fullmatch(title):
            return " ".join(title.split())[:300]
    if first_page_has_text:
        return largest_text(layer, 1)
    return None


_FILE_NAME = re.compile(r"(?i)(.*[\\/])?[^\\/]*\.(pdf|docx?|rtf|odt|tex|dvi|ps|jpe?g|png|tiff?|txt|html?|pptx?|xlsx?)"
                        r"|untitled|microsoft word - .*")


def info_title(pdf) -> str:
    """The title the PDF's Info states (empty: none)."""
    return (pdf.get_metadata_dict().get("Title") or "").strip()


__all__ = ["document_title", "info_title"]
