"""Images of a document, from the document itself: bytes, pixel size, place on the page.

Runs in the partition worker after the text partitioner; knows nothing of RDF. Each
format's pictures are found where the format keeps them (PDF image objects with their
placement, DOCX/PPTX/XLSX media parts, ``<img>`` in HTML, Markdown and EPUB) and merged
into the element list in reading order as ``Image`` elements. A remote ``src`` is
recorded as a URL and never fetched.
"""

from __future__ import annotations

import base64
import binascii
import io
import posixpath
import re
import zipfile
from dataclasses import replace
from html.parser import HTMLParser
from typing import Iterable, Optional
from urllib.parse import unquote

from .model import PDF_POINTS, Element, Page

EMU_PER_POINT = 12700  # Office drawings measure in English Metric Units
_IMG_MIME = {"PNG": "image/png", "JPEG": "image/jpeg", "TIFF": "image/tiff", "GIF": "image/gif",
             "BMP": "image/bmp", "WEBP": "image/webp", "JPEG2000": "image/jp2", "MPO": "image/jpeg"}


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


def add_images(data: bytes, format_name: str, elements: list[Element], pages: list[Page]) -> list[Element]:
    """``elements`` with the document's images in reading order, renumbered."""
    finder = _FINDERS.get(format_name)
    if finder is None:
        return elements
    try:
        merged = finder(data, elements, pages)
    except Exception:  # a picture that cannot be read must not cost the document its text
        return elements
    return [replace(element, index=i) for i, element in enumerate(merged)]


# ---------------------------------------------------------------- standalone images


def _standalone(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """The file is its page's one picture: the whole page, before the words OCR read in it."""
    mime, width, height = describe_image(data)
    page = pages[0] if pages else Page(number=1)
    box = (0.0, 0.0, float(width), float(height)) if width and height else None
    image = Element(0, "Image", "", page_number=page.number, bbox=box, image_data=data, image_mime=mime,
                    image_width=width, image_height=height)
    return [image] + [e for e in elements if not e.is_image]


# ---------------------------------------------------------------- PDF


def _pdf(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
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
                except Exception:
                    payload = None
                mime = describe_image(payload)[0] if payload else None
                found.append(Element(0, "Image", "", page_number=number,
                                     bbox=(round(left - left_edge, 3), round(top_edge - top, 3),
                                           round(right - left_edge, 3), round(top_edge - bottom, 3)),
                                     image_data=payload, image_mime=mime, image_width=width, image_height=height))
    finally:
        pdf.close()
    return _merge_by_position(elements, found)


def _merge_by_position(elements: list[Element], images: list[Element]) -> list[Element]:
    """Put each image after the last element of its page that starts above it (else first on its page)."""
    text = [e for e in elements if not e.is_image]
    merged = list(text)
    for image in sorted(images, key=lambda i: (i.page_number or 0, i.bbox[1] if i.bbox else 0)):
        position = None
        for k, element in enumerate(merged):
            if element.page_number == image.page_number and not element.is_image:
                if element.bbox is None or image.bbox is None or element.bbox[1] <= image.bbox[1]:
                    position = k + 1
            elif position is None and (element.page_number or 0) < (image.page_number or 0):
                position = k + 1
        if position is None:
            position = next((k for k, e in enumerate(merged) if (e.page_number or 0) > (image.page_number or 0)),
                            len(merged))
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


def _img_tags(markup: str) -> list[tuple[str, str]]:
    finder = _ImgFinder()
    finder.feed(markup)
    return finder.images


def _from_src(src: str, alt: str, package: Optional[dict[str, bytes]] = None, base: str = "") -> Element:
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


def _match_in_order(elements: list[Element], images: list[Element]) -> list[Element]:
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


def _html(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    markup = _decode_markup(data)
    return _match_in_order(elements, [_from_src(src, alt) for src, alt in _img_tags(markup)])


def _markdown(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    import markdown as markdown_lib

    rendered = markdown_lib.markdown(_decode_markup(data), extensions=["tables", "fenced_code"])
    return _match_in_order(elements, [_from_src(src, alt) for src, alt in _img_tags(rendered)])


def _epub(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """The partitioner's Image elements (in reading order) get the bytes of the package file they name;
    without any, the ``<img>`` of the spine's content documents follow the text."""
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        package = {name: archive.read(name) for name in archive.namelist() if not name.endswith("/")}
    by_name = {posixpath.basename(name): name for name in package}
    own = [e for e in elements if e.is_image]
    if not own:
        images = []
        for chapter in _epub_spine(package):
            markup = package[chapter].decode("utf-8", errors="replace")
            images += [_from_src(src, alt, package, chapter) for src, alt in _img_tags(markup)]
        return elements + images
    merged = []
    for element in elements:
        url = element.image_url or ""
        if element.is_image and url and "://" not in url:
            name = url if url in package else by_name.get(posixpath.basename(unquote(url)))
            if name is not None:
                found = _from_src(name, element.text, package, "")
                element = replace(element, image_url=None, image_data=found.image_data, image_mime=found.image_mime,
                                  image_width=found.image_width, image_height=found.image_height)
        merged.append(element)
    return merged


def _epub_spine(package: dict[str, bytes]) -> list[str]:
    """The content documents of an EPUB in reading order (spine of its OPF package)."""
    container = package.get("META-INF/container.xml", b"").decode("utf-8", errors="replace")
    match = re.search(r'full-path="([^"]+)"', container)
    if not match or match.group(1) not in package:
        return sorted(n for n in package if n.endswith((".xhtml", ".html", ".htm")))
    opf_path = match.group(1)
    opf = package[opf_path].decode("utf-8", errors="replace")
    manifest = {m.group(1): m.group(2) for m in re.finditer(r'<item\b[^>]*\bid="([^"]+)"[^>]*\bhref="([^"]+)"', opf)}
    manifest.update({m.group(2): m.group(1) for m in re.finditer(r'<item\b[^>]*\bhref="([^"]+)"[^>]*\bid="([^"]+)"', opf)})
    spine = [m.group(1) for m in re.finditer(r'<itemref\b[^>]*\bidref="([^"]+)"', opf)]
    base = posixpath.dirname(opf_path)
    return [p for p in (posixpath.normpath(posixpath.join(base, unquote(manifest[i]))) for i in spine if i in manifest)
            if p in package]


def _decode_markup(data: bytes) -> str:
    for encoding in ("utf-8", "cp1252"):
        try:
            return data.decode(encoding)
        except UnicodeDecodeError:
            continue
    return data.decode("utf-8", errors="replace")


# ---------------------------------------------------------------- Office (DOCX, PPTX, XLSX)


def _docx(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """Pictures in the body (tables included), then headers, in document order: each after the
    element holding the text that came last before it."""
    from docx import Document

    document = Document(io.BytesIO(data))
    found: list[tuple[Optional[str], Element]] = []
    parts = [document.part] + [section.header.part for section in document.sections if section.header is not None]
    seen_parts = set()
    for part in parts:
        if id(part) in seen_parts:
            continue
        seen_parts.add(id(part))
        last_text: Optional[str] = None
        for node in part.element.iter():
            tag = node.tag.rsplit("}", 1)[-1]
            if tag == "p":
                text = "".join(t.text or "" for t in node.iter() if t.tag.endswith("}t")).strip()
                if text:
                    last_text = text
            elif tag == "blip":
                rel = node.get("{http://schemas.openxmlformats.org/officeDocument/2006/relationships}embed")
                if rel and rel in part.related_parts:
                    payload = part.related_parts[rel].blob
                    alt = _drawing_alt(node)
                    mime, width, height = describe_image(payload)
                    found.append((last_text if part is document.part else None,
                                  Element(0, "Image", alt, image_data=payload, image_mime=mime, image_width=width,
                                          image_height=height)))
    return _merge_after_text(elements, found)


def _drawing_alt(blip) -> str:
    node = blip
    while node is not None and not node.tag.endswith("}inline") and not node.tag.endswith("}anchor"):
        node = node.getparent()
    if node is None:
        return ""
    for child in node.iter():
        if child.tag.endswith("}docPr"):
            return child.get("descr") or ""
    return ""


def _merge_after_text(elements: list[Element], found: list[tuple[Optional[str], Element]],
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


def _pptx(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    from pptx import Presentation
    from pptx.enum.shapes import MSO_SHAPE_TYPE

    presentation = Presentation(io.BytesIO(data))
    width = presentation.slide_width / EMU_PER_POINT
    height = presentation.slide_height / EMU_PER_POINT
    merged = [e for e in elements if not e.is_image]
    for number, slide in enumerate(presentation.slides, start=1):
        for page in pages:
            if page.number == number:
                page.width, page.height, page.coordinate_system = width, height, PDF_POINTS
        found: list[tuple[Optional[str], Element]] = []
        last_text: Optional[str] = None
        for shape in _walk_shapes(slide.shapes):
            if shape.shape_type == MSO_SHAPE_TYPE.PICTURE:
                payload = shape.image.blob
                mime, pixels_wide, pixels_high = describe_image(payload)
                box = None
                if shape.left is not None and shape.width is not None:
                    box = (shape.left / EMU_PER_POINT, shape.top / EMU_PER_POINT,
                           (shape.left + shape.width) / EMU_PER_POINT, (shape.top + shape.height) / EMU_PER_POINT)
                alt = shape._element.xpath("./p:nvPicPr/p:cNvPr/@descr")
                found.append((last_text, Element(0, "Image", alt[0] if alt else "", page_number=number, bbox=box,
                                                 image_data=payload, image_mime=mime or shape.image.content_type,
                                                 image_width=pixels_wide, image_height=pixels_high)))
            elif getattr(shape, "has_text_frame", False) and shape.text_frame.text.strip():
                last_text = shape.text_frame.text.strip().splitlines()[-1].strip()
        slide_start = next((k for k, e in enumerate(merged) if e.page_number == number), None)
        if slide_start is None:
            slide_start = next((k for k, e in enumerate(merged) if (e.page_number or 0) > number), len(merged))
        before, rest = merged[:slide_start], merged[slide_start:]
        on_slide = [e for e in rest if e.page_number == number]
        after = [e for e in rest if e.page_number != number]
        merged = before + _merge_after_text(on_slide, found, page_number=number) + after
    return merged


def _walk_shapes(shapes) -> Iterable:
    for shape in shapes:
        if hasattr(shape, "shapes"):  # a group
            yield from _walk_shapes(shape.shapes)
        else:
            yield shape


def _xlsx(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    """Pictures anchored to cells: sheet, anchor cell; after the sheet's elements."""
    from openpyxl import load_workbook
    from openpyxl.utils import get_column_letter

    book = load_workbook(io.BytesIO(data))
    merged = [e for e in elements if not e.is_image]
    for number, sheet in enumerate(book.worksheets, start=1):
        found = []
        for picture in getattr(sheet, "_images", []):
            payload = picture._data()
            mime, width, height = describe_image(payload)
            anchor = getattr(picture.anchor, "_from", None)
            cell = f"{get_column_letter(anchor.col + 1)}{anchor.row + 1}" if anchor is not None else None
            found.append(Element(0, "Image", "", page_number=number, page_name=sheet.title, image_data=payload,
                                 image_mime=mime, image_width=width, image_height=height, anchor_cell=cell))
        if found:
            last = max((k for k, e in enumerate(merged) if e.page_number == number), default=None)
            position = last + 1 if last is not None else next(
                (k for k, e in enumerate(merged) if (e.page_number or 0) > number), len(merged))
            merged[position:position] = found
    return merged


_FINDERS = {
    "png": _standalone, "jpeg": _standalone, "tiff": _standalone,
    "pdf": _pdf,
    "html": _html, "markdown": _markdown, "epub": _epub,
    "docx": _docx, "pptx": _pptx, "xlsx": _xlsx,
}
