"""What a PDF's fonts declare: the glyphs whose Unicode a PDF gets wrong, read as poppler and PDF
viewers read them (:func:`install`), and each font's ascent and descent (:func:`declared_heights`).

Two faults seen in real PDFs (pdfTeX output, and tools that re-encode its fonts) make
pdfminer, and so unstructured's ``fast``, read ``difficulties`` as ``di`` + an unknown glyph +
``culties``, while poppler, PDFium and viewers read the ligature:

- a ``/ToUnicode`` map sends the glyph to U+0000: the font's encoding (``/Differences``
  naming it ``/ffi``) is used instead;
- the declared encoding (``/MacRomanEncoding``) leaves the code undefined: the encoding inside
  the embedded Type 1 font program (``dup 14 /ffi put``) fills the gap. The declared encoding
  still wins for every code it defines.
"""

from __future__ import annotations

import logging
import re
from collections import OrderedDict
from contextlib import contextmanager
from io import BytesIO
from threading import Lock
from typing import Iterator, Optional

_INSTALLED = False
_READERS: OrderedDict = OrderedDict()  # document key (sha256, or its bytes) -> pypdf reader, the most recent last
_READERS_KEPT = 4
_READERS_LOCK = Lock()
DEFAULT_HEIGHTS = (0.95, -0.35)  # em: poppler's ascent and descent for a font that declares none
_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_MAX_FORM_DEPTH = 8
_NOTHING = {"", "\x00", "\ufffd", "\ufffe"}


def install() -> None:
    """Teach pdfminer's simple fonts both fallbacks (once per process)."""
    global _INSTALLED
    if _INSTALLED:
        return
    from pdfminer.pdffont import PDFSimpleFont, PDFType1Font, PDFUnicodeNotDefined

    original_init = PDFType1Font.__init__
    original_to_unichr = PDFSimpleFont.to_unichr

    def init_with_builtin_fallback(self, rsrcmgr, spec) -> None:
        original_init(self, rsrcmgr, spec)
        # The font program's own encoding, read when a code first needs it (None: not read yet): most
        # fonts never do, and reading it runs pdfminer's PostScript parser over the program's header.
        self.kg_builtin_encoding = None if "Encoding" in spec else {}

    def builtin(font) -> dict[int, str]:
        if getattr(font, "kg_builtin_encoding", {}) is None:
            font.kg_builtin_encoding = _builtin_encoding(font.descriptor)
        return getattr(font, "kg_builtin_encoding", {})

    def to_unichr_past_null_mappings(self, cid: int) -> str:
        try:
            char = original_to_unichr(self, cid)
        except PDFUnicodeNotDefined:
            char = None
        if char is None or char in _NOTHING:
            # The declared encoding wins for every code it defines; the font program's fills the rest.
            fallback = self.cid2unicode[cid] if cid in self.cid2unicode else builtin(self).get(cid)
            if fallback is not None and (char is None or fallback not in _NOTHING):
                return fallback
            if char is None:
                raise PDFUnicodeNotDefined(None, cid)
        return char

    PDFType1Font.__init__ = init_with_builtin_fallback
    PDFSimpleFont.to_unichr = to_unichr_past_null_mappings
    _INSTALLED = True


def _builtin_encoding(descriptor) -> dict[int, str]:
    """The encoding inside an embedded Type 1 font program; empty when there is none or it cannot be read."""
    from pdfminer.pdffont import Type1FontHeaderParser
    from pdfminer.pdftypes import int_value, resolve1, stream_value

    try:
        font_file = resolve1(descriptor.get("FontFile")) if descriptor else None
        if font_file is None:
            return {}
        stream = stream_value(font_file)
        header = stream.get_data()[:int_value(resolve1(stream.get("Length1")))]
        return dict(Type1FontHeaderParser(BytesIO(header)).get_encoding())
    except Exception:  # a damaged font program: pdfminer's own reading stands
        return {}


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


__all__ = ["DEFAULT_HEIGHTS", "declared_heights", "install", "parsed"]
