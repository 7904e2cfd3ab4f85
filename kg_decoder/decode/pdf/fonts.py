"""What a PDF's fonts declare: each font's ascent and descent (:func:`declared_heights`), read by pypdf.

(pdfminer's reading of the glyphs whose Unicode a PDF gets wrong is a patch of pdfminer's:
``kg_decoder.patches.pdfminer.install_type1_fallbacks``.)
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from contextlib import contextmanager
from io import BytesIO
from threading import Lock
from typing import Iterator, Optional

_READERS: OrderedDict = OrderedDict()  # document key (sha256, or its bytes) -> pypdf reader, the most recent last
_READERS_KEPT = 4
_READERS_LOCK = Lock()
DEFAULT_HEIGHTS = (0.95, -0.35)  # em: poppler's ascent and descent for a font that declares none
_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_MAX_FORM_DEPTH = 8


def declared_heights(data: bytes, page_number: int, key: Optional[str] = None) -> dict[str, tuple[float, float]]:
    """Ascent and descent, in em, of each font a page (and the forms it draws) uses, by base font name
    without its subset tag: as the font descriptor declares them (the PDF's "maximum height above
    the baseline reached by glyphs" and depth below it), the standard 14 fonts' from their metrics,
    read with poppler's repairs (a negative ascent, a positive descent, zero or absurd values give
    the defaults). Type 3 fonts, whose glyph space is their own, are left out. Empty when the page
    cannot be read. ``key`` as :func:`parsed` takes it."""
    heights: dict[str, tuple[float, float]] = {}
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)  # a damaged PDF's repairs are not the reader's business here
    try:
        with parsed(data, key) as reader:
            page = reader.pages[page_number - 1]
            _collect_heights(page.get("/Resources"), heights, 0, set())
    except Exception:
        return {}
    finally:
        logger.setLevel(level)
    return heights


@contextmanager
def parsed(data: bytes, key: Optional[str] = None) -> Iterator:
    """The document parsed by pypdf, this thread's alone while within (a pypdf reader is not safe for
    two threads at once). ``key`` (the document's sha256; else its bytes, whose hash Python keeps)
    keeps the parsed document for its next use: a decode asks for a page's heights at several steps,
    then the title and the annotations, and parsing the whole document each time made a long
    document's cost grow with its pages squared. Raises what pypdf raises on a document it cannot parse."""
    import pypdf

    key = data if key is None else key
    with _READERS_LOCK:
        reader = _READERS.pop(key, None) or pypdf.PdfReader(BytesIO(data))
        try:
            yield reader
        finally:
            if isinstance(key, bytes):  # one document kept by its bytes (the one being decoded), not more
                for other in [k for k in _READERS if isinstance(k, bytes)]:
                    del _READERS[other]
            _READERS[key] = reader  # kept for the document's next use: parsing its structure costs most
            while len(_READERS) > _READERS_KEPT:
                _READERS.popitem(last=False)


def _collect_heights(resources, heights: dict[str, tuple[float, float]], depth: int, seen: set[int]) -> None:
    resources = resources.get_object() if resources is not None else None
    if not hasattr(resources, "get") or depth > _MAX_FORM_DEPTH or id(resources) in seen:
        return
    seen.add(id(resources))
    fonts = resources.get("/Font")
    for font in (fonts.get_object().values() if fonts is not None else ()):
        font = font.get_object()
        name = _SUBSET_TAG.sub("", str(font.get("/BaseFont", "")).lstrip("/"))
        if not name or name in heights or font.get("/Subtype") == "/Type3":
            continue
        heights[name] = _font_heights(font, name)
    forms = resources.get("/XObject")
    for form in (forms.get_object().values() if forms is not None else ()):
        form = form.get_object()
        if form.get("/Subtype") == "/Form":
            _collect_heights(form.get("/Resources"), heights, depth + 1, seen)


def _font_heights(font, name: str) -> tuple[float, float]:
    from pdfminer.fontmetrics import FONT_METRICS

    descriptor = font.get("/FontDescriptor")
    if descriptor is None and font.get("/DescendantFonts"):
        descriptor = font["/DescendantFonts"].get_object()[0].get_object().get("/FontDescriptor")
    ascent, descent = DEFAULT_HEIGHTS
    if descriptor is not None:
        descriptor = descriptor.get_object()
        declared_ascent, declared_descent = descriptor.get("/Ascent"), descriptor.get("/Descent")
    elif name in FONT_METRICS:
        declared_ascent, declared_descent = FONT_METRICS[name][0].get("Ascent"), FONT_METRICS[name][0].get("Descent")
    else:
        return ascent, descent
    try:
        value = abs(float(declared_ascent)) / 1000
        if 0 < value < 3:
            ascent = value
    except (TypeError, ValueError):
        pass
    try:
        value = -abs(float(declared_descent)) / 1000
        if -3 < value < 0:
            descent = value
    except (TypeError, ValueError):
        pass
    return ascent, descent


__all__ = ["DEFAULT_HEIGHTS", "declared_heights", "parsed"]
