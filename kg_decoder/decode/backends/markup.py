"""HTML, XML, Markdown, RST, Org and EPUB: text with unstructured (in the caller's character set
where one is given), pictures from ``<img>`` (a ``data:`` URI stored, a remote ``src`` kept as a
URL and never fetched; EPUB package files by name)."""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import replace
from urllib.parse import unquote

from ...model import DecodeOptions, Element, Page
from ..images import decode_markup, image_from_src, img_tags, match_in_order
from .base import Backend, Format

_PARTITIONERS = {"html": ("unstructured.partition.html", "partition_html"),
                 "xml": ("unstructured.partition.xml", "partition_xml"),
                 "markdown": ("unstructured.partition.md", "partition_md"),
                 "rst": ("unstructured.partition.rst", "partition_rst"),
                 "org": ("unstructured.partition.org", "partition_org"),
                 "epub": ("unstructured.partition.epub", "partition_epub")}
_TAKES_ENCODING = {"html", "xml", "markdown"}


class MarkupBackend(Backend):
    partitioners = _PARTITIONERS
    family = "markup"
    formats = (
        Format("html", "text/html", ("html", "htm", "xhtml"), text_based=True, aliases=("application/xhtml+xml",)),
        Format("xml", "application/xml", ("xml",), text_based=True, aliases=("text/xml",)),
        Format("markdown", "text/markdown", ("md", "markdown"), text_based=True, aliases=("text/x-markdown",)),
        Format("rst", "text/x-rst", ("rst",), text_based=True),
        Format("org", "text/x-org", ("org",), text_based=True),
        Format("epub", "application/epub+zip", ("epub",)),
    )

    def partition_arguments(self, fmt: Format, options: DecodeOptions) -> dict:
        return {"encoding": options.encoding} if options.encoding and fmt.name in _TAKES_ENCODING else {}

    def images(self, data: bytes, fmt: Format, elements: list[Element], pages: list[Page]) -> list[Element]:
        finder = {"html": _html_images, "markdown": _markdown_images, "epub": _epub_images}.get(fmt.name)
        return finder(data, elements, pages) if finder else elements


def _html_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    markup = decode_markup(data)
    return match_in_order(elements, [image_from_src(src, alt) for src, alt in img_tags(markup)])


def _markdown_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
    import markdown as markdown_lib

    rendered = markdown_lib.markdown(decode_markup(data), extensions=["tables", "fenced_code"])
    return match_in_order(elements, [image_from_src(src, alt) for src, alt in img_tags(rendered)])


def _epub_images(data: bytes, elements: list[Element], pages: list[Page]) -> list[Element]:
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
            images += [image_from_src(src, alt, package, chapter) for src, alt in img_tags(markup)]
        return elements + images
    merged = []
    for element in elements:
        url = element.image_url or ""
        if element.is_image and url and "://" not in url:
            name = url if url in package else by_name.get(posixpath.basename(unquote(url)))
            if name is not None:
                found = image_from_src(name, element.text, package, "")
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
