"""What a PDF's fonts declare: each font's ascent and descent (:func:`declared_heights`), read by qpdf
(pikepdf: a page's font dictionaries in about a tenth of pypdf's time, which parses each font's widths
in Python); and the document parsed by pypdf (:func:`parsed`) for the title and the form fields.

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
from typing import Any, Callable, Iterator, Optional

_READERS: OrderedDict = OrderedDict()  # (library, document key: sha256, or its bytes) -> parsed, the most recent last
_READERS_KEPT = 8  # four documents, each parsed by both
_READERS_LOCK = Lock()
DEFAULT_HEIGHTS = (0.95, -0.35)  # em: poppler's ascent and descent for a font that declares none
_SUBSET_TAG = re.compile(r"^[A-Z]{6}\+")
_MAX_FORM_DEPTH = 8
_UNREAD = object()


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
        with _kept(data, key, "qpdf", _opened_by_qpdf) as document:
            if document is not None:
                _collect_heights(document.pages[page_number - 1].obj.get("/Resources"), heights, 0, set())
        if document is None:  # qpdf gives up on some damage pypdf reads through (no /Root found)
            with parsed(data, key) as reader:
                _collect_heights(reader.pages[page_number - 1].get("/Resources"), heights, 0, set())
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

    with _kept(data, key, "pypdf", lambda data: pypdf.PdfReader(BytesIO(data))) as reader:
        yield reader


@contextmanager
def opened_by_qpdf(data: bytes, key: Optional[str] = None) -> Iterator:
    """The document opened by qpdf (pikepdf; None where qpdf cannot open it), this thread's alone while
    within, kept for its next use as :func:`parsed` keeps pypdf's."""
    with _kept(data, key, "qpdf", _opened_by_qpdf) as document:
        yield document


@contextmanager
def _kept(data: bytes, key: Optional[str], library: str, parse: Callable[[bytes], Any]) -> Iterator:
    """The document as ``parse`` (``library``'s reading) gives it, this thread's alone while within, kept
    for its next use by ``key`` (see :func:`parsed`)."""
    key = data if key is None else key
    with _READERS_LOCK:
        document = _READERS.pop((library, key), _UNREAD)
        if document is _UNREAD:
            document = parse(data)
        try:
            yield document
        finally:
            if isinstance(key, bytes):  # one document kept by its bytes (the one being decoded), not more
                for other in [kept for kept in _READERS if kept[0] == library and isinstance(kept[1], bytes)]:
                    del _READERS[other]
            _READERS[(library, key)] = document  # kept for the document's next use: parsing its structure costs most
            while len(_READERS) > _READERS_KEPT:
                _READERS.popitem(last=False)


def _opened_by_qpdf(data: bytes):
    """The document opened by qpdf, inherited attributes (a page's /Resources) copied onto each page;
    None where qpdf cannot open it."""
    import pikepdf

    try:
        return pikepdf.open(BytesIO(data))
    except Exception:  # noqa: BLE001 — damage qpdf does not repair: pypdf's reading then
        return None


def _collect_heights(resources, heights: dict[str, tuple[float, float]], depth: int, seen: set) -> None:
    """The heights of the fonts of ``resources`` (pikepdf's objects, or pypdf's), and of the forms it
    draws. Subsets of one font share its name, which is all PDFium tells of a character's font: the
    first one the dictionary lists (by name in qpdf, in the file's order in pypdf) gives the heights."""
    resources = _resolved(resources)
    if not _is_dictionary(resources) or depth > _MAX_FORM_DEPTH:
        return
    identity = _identity(resources)
    if identity in seen:
        return
    if identity is not None:
        seen.add(identity)
    for font in _values(resources.get("/Font")):
        if not _is_dictionary(font):
            continue
        try:
            name = _SUBSET_TAG.sub("", str(font.get("/BaseFont", "")).lstrip("/"))
        except UnicodeDecodeError:  # not UTF-8: PDFium's name of it (Latin-1) would not match anyway
            continue
        if not name or name in heights or str(font.get("/Subtype", "")) == "/Type3":
            continue
        heights[name] = _font_heights(font, name)
    for form in _values(resources.get("/XObject")):
        if _is_dictionary(form) and str(form.get("/Subtype", "")) == "/Form":
            _collect_heights(form.get("/Resources"), heights, depth + 1, seen)


def _resolved(value):
    from pypdf.generic import IndirectObject

    return value.get_object() if isinstance(value, IndirectObject) else value  # qpdf resolves its own


def _is_dictionary(value) -> bool:
    """A dictionary or a stream, pypdf's (dict's kin) or qpdf's."""
    import pikepdf

    return isinstance(value, (dict, pikepdf.Dictionary, pikepdf.Stream))


def _values(dictionary) -> list:
    dictionary = _resolved(dictionary)
    return [_resolved(value) for value in dictionary.values()] if _is_dictionary(dictionary) else []


def _identity(dictionary):
    """What tells a dictionary met again: its object number in qpdf (None for a direct one, never met
    again; qpdf's Python objects are made anew at each look, so their ids tell nothing), the object
    itself in pypdf, which keeps each one it resolved."""
    objgen = getattr(dictionary, "objgen", None)
    if objgen is not None:
        return objgen if objgen != (0, 0) else None
    return id(dictionary)


def _font_heights(font, name: str) -> tuple[float, float]:
    from pdfminer.fontmetrics import FONT_METRICS

    descriptor = _resolved(font.get("/FontDescriptor"))
    if descriptor is None and font.get("/DescendantFonts"):
        descriptor = _resolved(_resolved(_resolved(font["/DescendantFonts"])[0]).get("/FontDescriptor"))
    ascent, descent = DEFAULT_HEIGHTS
    if descriptor is not None:
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
