"""What every backend that partitions with ``unstructured`` shares: calling a partitioner with its
failures typed, and turning its elements into the model's. Offline (see ``decode/offline.py``)."""

from __future__ import annotations

import html as html_lib
import importlib
import io
import re
import subprocess
from functools import lru_cache
from typing import Any, Callable, Optional

from ...model import DecodeOptions, Element, Page, Partitioned
from ...model.errors import (CorruptDocument, DecodeError, EmptyDocument, EncryptedDocument, InvalidOption,
                             ModelUnavailable, UnsafeDocument, UnsupportedFormat)
from ..images import pixels_refused, too_many_pixels

_DROPPED_CATEGORIES = {"PageBreak"}


def partitioner(module: str, function: str) -> Callable[..., list]:
    return getattr(importlib.import_module(module), function)


def call(format_name: str, partition: Callable[..., list], **kwargs: Any) -> list:
    """Run an unstructured partitioner; any failure of the parser means the bytes are damaged."""
    try:
        return partition(**kwargs)
    except DecodeError:
        raise
    except Exception as exc:  # parsers raise anything from KeyError to XMLSyntaxError on bad bytes
        message = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else type(exc).__name__
        if too_many_pixels(exc):
            raise UnsafeDocument(f"{format_name.upper()} file: {pixels_refused(exc)}") from None
        if "password" in message.lower() or "encrypt" in message.lower():
            raise EncryptedDocument(f"the {format_name.upper()} file is password-protected: {message}") from None
        raise CorruptDocument(f"the file could not be read as {format_name.upper()}: {message}") from None


def partition_file(format_name: str, module: str, function: str, data: bytes, pages: list[Page],
                   page_based: Optional[bool] = None, keep_page_numbers: bool = False, has_parts: bool = False,
                   **kwargs: Any) -> Partitioned:
    """Partition ``data`` with unstructured's ``module.function``; ``pages`` known beforehand (slides,
    sheets); ``page_based`` (default: whether there are such pages) keeps the elements' page numbers
    (page 1 where one has none); ``keep_page_numbers`` keeps those the partitioner gives, and no others.
    ``has_parts``: the format holds more than text (an Office document's pages, pictures, drawings), so
    one without text is kept; otherwise it is refused as empty."""
    raw = call(format_name, partitioner(module, function), file=io.BytesIO(data), **kwargs)
    elements = convert_all(raw, {p.number: p for p in pages}, page_based=bool(pages) if page_based is None
                           else page_based, keep_page_numbers=keep_page_numbers)
    partitioned = Partitioned(format=format_name, elements=elements, pages=pages, strategy="native")
    return partitioned if has_parts else checked(partitioned)


def checked(partitioned: Partitioned) -> Partitioned:
    """A document of a format of text alone with nothing in it is refused as empty."""
    if not partitioned.elements:
        raise EmptyDocument(f"no text or content found in the {partitioned.format.upper()} document")
    return partitioned


def convert_all(raw: list, pages: dict[int, Page], page_based: bool, keep_page_numbers: bool = False) -> list[Element]:
    elements: list[Element] = []
    for item in raw:
        if item.category in _DROPPED_CATEGORIES:
            continue
        element = convert(item, len(elements), pages, page_based, keep_page_numbers)
        if element.is_image or element.text.strip():
            elements.append(element)
    return elements


def convert(item, index: int, pages: dict[int, Page], page_based: bool, keep_page_numbers: bool = False) -> Element:
    metadata = item.metadata
    page_number = metadata.page_number if page_based or keep_page_numbers else None
    if page_based and page_number is None:
        page_number = 1
    page = pages.get(page_number) if page_number is not None else None
    html = metadata.text_as_html if item.category == "Table" else None
    if html and not _holds_its_text(html, item.text or ""):
        html = None  # markup that lost the table's words (a table python-docx cannot walk): its text instead
    return Element(
        index=index,
        category=unstructured_category(item.category, item.text or ""),
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
        confidence=_probability(getattr(metadata, "detection_class_prob", None)),  # a layout model's score
    )


# An e-mail address alone, or a group of them written "{name, other}@host" as papers' author blocks do.
_EMAIL = re.compile(r"\{?[\w.+-]+(?:\s*,\s*[\w.+-]+)*\}?@[\w-]+(?:\.[\w-]+)+")


def unstructured_category(category: str, text: str) -> str:
    """unstructured's category, but an e-mail address it calls a ``Title`` (a short line without a full
    stop) an ``EmailAddress``, unstructured's own element for one: no heading, no section starts there."""
    if category == "Title" and _EMAIL.fullmatch(text.strip()):
        return "EmailAddress"
    return category


def _holds_its_text(markup: str, text: str) -> bool:
    """Whether a table's markup holds at least half the letters of its text.

    >>> _holds_its_text("<table><tr><td/></tr></table>", "Region North"), _holds_its_text("<td>a</td>", "a")
    (False, True)
    """
    inside = html_lib.unescape(re.sub(r"<[^>]*>", " ", markup))
    return sum(ch.isalnum() for ch in inside) * 2 >= sum(ch.isalnum() for ch in text)


def _probability(value) -> Optional[float]:
    try:
        return round(float(value), 4) if value is not None and 0 <= float(value) <= 1 else None
    except (TypeError, ValueError):
        return None


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


@lru_cache(maxsize=1)
def installed_ocr_languages() -> frozenset[str]:
    """The languages tesseract has on this machine."""
    try:
        listing = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.strip() for line in listing.stdout.splitlines()[1:] if line.strip())


def require_ocr_languages(languages: list[str]) -> None:
    installed = installed_ocr_languages()
    if not installed:
        raise UnsupportedFormat("OCR needs tesseract, which is not installed")
    missing = [language for language in languages if language not in installed]
    if missing:
        raise InvalidOption(f"tesseract has no language {', '.join(missing)} on this machine "
                            f"(installed: {', '.join(sorted(installed))})")


def require_layout_model() -> None:
    try:
        from unstructured_inference.models.base import get_model

        get_model()
    except Exception:
        raise ModelUnavailable(
            "the hi_res layout model is not present on this machine and cannot be fetched offline; "
            "use --strategy auto, fast or ocr_only"
        ) from None


def ocr_languages(options: DecodeOptions) -> list[str]:
    return options.ocr_languages.split("+")
