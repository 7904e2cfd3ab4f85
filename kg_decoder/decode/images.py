"""What every backend's picture finder shares: reading an image's type and size from its bytes,
and merging found pictures into the element list in reading order.

Each backend finds its format's pictures where the format keeps them (PDF image objects with
their placement, DOCX/PPTX/XLSX media parts, ``<img>`` in HTML, Markdown and EPUB); they become
``Image`` elements. A remote ``src`` is recorded as a URL and never fetched.
"""

from __future__ import annotations

import base64
import binascii
import io
import os
import posixpath
import re
import warnings
from dataclasses import replace
from html.parser import HTMLParser
from typing import Optional
from urllib.parse import unquote

from ..model import Element

EMU_PER_POINT = 12700  # Office drawings measure in English Metric Units
PIXELS_VARIABLE = "KG_DECODER_MAX_IMAGE_PIXELS"
DEFAULT_MAX_IMAGE_PIXELS = 100_000_000  # 100 megapixels: 300-400 MB decoded, a 10 000 x 10 000 scan
_IMG_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "TIFF": "image/tiff", "GIF": "image/gif",
             "BMP": "image/bmp", "WEBP": "image/webp", "JPEG2000": "image/jp2", "MPO": "image/jpeg"}


def max_image_pixels() -> int:
    """The most pixels any picture may have to be decoded in a kg-decoder process: ``--max-image-pixels``,
    passed on to every process it starts as ``$KG_DECODER_MAX_IMAGE_PIXELS``."""
    try:
        return max(1, int(os.environ.get(PIXELS_VARIABLE) or DEFAULT_MAX_IMAGE_PIXELS))
    except ValueError:
        return DEFAULT_MAX_IMAGE_PIXELS


def limit_image_pixels(limit: Optional[int] = None) -> int:
    """Hold PIL to ``limit`` pixels (default :func:`max_image_pixels`) in this process: a picture over
    it is refused with DecompressionBombError (PIL's warning is made an error) before its pixels are
    decoded. unstructured raises PIL's limit to 500 million pixels when imported: call this after.
    Returns the limit; the environment carries it to the processes this one starts."""
    from PIL import Image

    limit = limit or max_image_pixels()
    os.environ[PIXELS_VARIABLE] = str(limit)
    Image.MAX_IMAGE_PIXELS = limit
    warnings.simplefilter("error", Image.DecompressionBombWarning)
    return limit


def too_many_pixels(exc: BaseException) -> bool:
    """Whether PIL refused a picture for its pixel count (a decompression bomb)."""
    return type(exc).__name__ in ("DecompressionBombError", "DecompressionBombWarning")


def pixels_refused(exc: BaseException) -> str:
    """Why a picture PIL refused is not decoded, with the limit this process holds it to (PIL's own
    message names twice the limit past which it raises by itself, not the one set).

    >>> from PIL import Image
    >>> limit_image_pixels(1000)
    1000
    >>> pixels_refused(Image.DecompressionBombError("Image size (5000 pixels) exceeds limit of 2000 pixels"))
    'a picture of 5,000 pixels is over the limit of 1,000 pixels a picture may have (--max-image-pixels)'
    >>> _ = limit_image_pixels(DEFAULT_MAX_IMAGE_PIXELS)
    """
    from PIL import Image

    found = re.search(r"\((\d+) pixels\)", str(exc))
    size = f"of {int(found.group(1)):,} pixels " if found else ""
    return (f"a picture {size}is over the limit of {Image.MAX_IMAGE_PIXELS or max_image_pixels():,} pixels a "
            f"picture may have (--max-image-pixels)")


def describe_image(data: bytes) -> tuple[Optional[str], Optional[int], Optional[int]]:
    """MIME type (from the bytes), width and height in pixels; Nones when PIL cannot read it.

    >>> from PIL import Image
    >>> buffer = io.BytesIO(); Image.new("RGB", (3, 2)).save(buffer, "PNG")
    >>> describe_image(buffer.getvalue())
    ('image/png', 3, 2)
    """
    from PIL import Image, UnidentifiedImageError

    guard = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = None  # only the header is read; kg-decoder's own pixel limit then applies
    try:
        with Image.open(io.BytesIO(data)) as image:
            return _IMG_MIME.get(image.format or "", None), image.size[0], image.size[1]
    except (UnidentifiedImageError, OSError, ValueError):
        return _svg_or_none(data), None, None
    finally:
        Image.MAX_IMAGE_PIXELS = guard


def _svg_or_none(data: bytes) -> Optional[str]:
    head = data[:512].lstrip().lower()
    return "image/svg+xml" if head.startswith(b"<svg") or (head.startswith(b"<?xml") and b"<svg" in head) else None


# ---------------------------------------------------------------- PDF


def merge_by_position(elements: list[Element], images: list[Element]) -> list[Element]:
    """Put each image after the last element of its page that starts above it (else first on its page)."""
    text = [e for e in elements if not e.is_image]
    merged = list(text)
    for image in sorted(images, key=lambda i: (i.page_number or 0, i.bbox[1] if i.bbox else 0)):
        page = image.page_number or 0
        page_start = 0  # after the last element of the pages before the image's
        after_above = None  # after the last element of its page that starts above it
        for k, element in enumerate(merged):
            if (element.page_number or 0) < page:
                page_start = k + 1
            elif element.page_number == image.page_number and (
                    element.bbox is None or image.bbox is None or element.bbox[1] <= image.bbox[1]):
                after_above = k + 1
        position = after_above if after_above is not None else page_start
        merged.insert(position, image)
    return merged


# ---------------------------------------------------------------- HTML, Markdown, EPUB


class _ImgFinder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.images: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag.lower() == "img":
            values = dict(attrs)
            self.images.append((values.get("src") or "", values.get("alt") or ""))


def img_tags(markup: str) -> list[tuple[str, str]]:
    finder = _ImgFinder()
    finder.feed(markup)
    return finder.images


def image_from_src(src: str, alt: str, package: Optional[dict[str, bytes]] = None, base: str = "") -> Element:
    """An image element for an ``<img src>``: decoded data URI, a file in the package, or a URL only."""
    payload = None
    url = None
    if src.startswith("data:"):
        header, _, body = src.partition(",")
        try:
            payload = base64.b64decode(body, validate=False) if ";base64" in header else unquote(body).encode()
        except (binascii.Error, ValueError):
            payload = None
    elif package is not None and src and "://" not in src:
        path = posixpath.normpath(posixpath.join(posixpath.dirname(base), unquote(src.split("#")[0])))
        payload = package.get(path)
        url = None if payload is not None else src
    else:
        url = src or None
    mime, width, height = describe_image(payload) if payload else (None, None, None)
    return Element(0, "Image", alt, image_url=url, image_data=payload, image_mime=mime, image_width=width,
                   image_height=height)


def match_in_order(elements: list[Element], images: list[Element]) -> list[Element]:
    """Replace the partitioner's Image elements, in order, by the images found in the markup.

    When the counts differ the partitioner's own elements stay and the found images follow
    the last text element (a best effort: their order among the text is then unknown).
    """
    own = [k for k, e in enumerate(elements) if e.is_image]
    merged = list(elements)
    if len(own) == len(images):
        for k, image in zip(own, images):
            merged[k] = replace(image, text=image.text or merged[k].text, element_id=merged[k].element_id,
                                image_url=image.image_url or merged[k].image_url)
        return merged
    return merged + images


def decode_markup(data: bytes) -> str:
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- Office (DOCX, PPTX, XLSX)


def merge_after_text(elements: list[Element], found: list[tuple[Optional[str], Element]],
                      page_number: Optional[int] = None) -> list[Element]:
    """Insert each image after the element whose text contains the text that preceded it."""
    merged = [e for e in elements if not e.is_image]
    cursor = 0
    for preceding, image in found:
        position = None
        if preceding:
            for k in range(cursor, len(merged)):
                candidate = merged[k]
                if not candidate.is_image and preceding[:80] in candidate.text and (
                        page_number is None or candidate.page_number == page_number):
                    position = k + 1
                    break
        if position is None:
            position = cursor if preceding is None else len(merged)
        merged.insert(position, image)
        cursor = position + 1
    return merged
