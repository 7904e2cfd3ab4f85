"""A page's objects of one kind, walked through PDFium's own calls: pypdfium2's ``get_objects`` makes a
Python object of every object it passes, and a page's text objects run to thousands (on the corpus
and ICDAR pages, finding the pictures took 144 ms this way and 45 ms walking the handles)."""

from __future__ import annotations

import ctypes
from typing import Iterator


def _handles(page, kind: int, max_depth: int, form=None, level: int = 0) -> Iterator[tuple[object, object, int]]:
    """(handle, the form it is in or None, its depth) of each object of ``kind`` on the page, inside
    forms down to ``max_depth`` levels, in pypdfium2's ``get_objects`` order."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    if form is None:
        count, get, parent = pdfium_c.FPDFPage_CountObjects, pdfium_c.FPDFPage_GetObject, page
    else:
        count, get, parent = pdfium_c.FPDFFormObj_CountObjects, pdfium_c.FPDFFormObj_GetObject, form
    objects = count(parent)
    if objects < 0:
        raise pdfium.PdfiumError("Failed to get number of pageobjects.")
    for index in range(objects):
        handle = get(parent, index)
        if not handle:
            raise pdfium.PdfiumError("Failed to get pageobject.")
        found = pdfium_c.FPDFPageObj_GetType(handle)
        if found == kind:
            yield handle, form, level
        if found == pdfium_c.FPDF_PAGEOBJ_FORM and level < max_depth - 1:
            inner = pdfium.PdfObject(handle, page=page, pdf=page.pdf, container=form, level=level)
            yield from _handles(page, kind, max_depth, inner, level + 1)


def image_objects(page, max_depth: int) -> Iterator[object]:
    """``page.get_objects(filter=(FPDF_PAGEOBJ_IMAGE,), max_depth=max_depth)``: the page's pictures as
    pypdfium2's ``PdfImage``, without a Python object for anything else."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    for handle, form, level in _handles(page, pdfium_c.FPDF_PAGEOBJ_IMAGE, max_depth):
        yield pdfium.PdfObject(handle, page=page, pdf=page.pdf, container=form, level=level)


def text_matrices(page, max_depth: int) -> Iterator[tuple[float, float, float, float]]:
    """(a, b, c, d) of each text object's matrix on the page (``get_objects`` of text objects, then
    ``get_matrix``), read through the handles."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    matrix = pdfium_c.FS_MATRIX()
    for handle, _, _ in _handles(page, pdfium_c.FPDF_PAGEOBJ_TEXT, max_depth):
        if not pdfium_c.FPDFPageObj_GetMatrix(handle, ctypes.byref(matrix)):
            raise pdfium.PdfiumError("Failed to get matrix of pageobject.")
        yield matrix.a, matrix.b, matrix.c, matrix.d


__all__ = ["image_objects", "text_matrices"]
