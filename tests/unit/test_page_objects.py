"""A page's objects walked through PDFium's handles (``decode.pdf.page_objects``) are what pypdfium2's
``get_objects`` gives, without its Python object for every other object: the same pictures in the same
order (inside forms down to the depth asked, not below), the same text matrices."""

from __future__ import annotations

import io

import pikepdf
import pypdfium2 as pdfium
import pypdfium2.raw as pdfium_c

from kg_decoder.decode.pdf.page_objects import image_objects, text_matrices
from kg_decoder.decode.pdf.text_layer import has_turned_text


def _picture(pdf: pikepdf.Pdf, grey: int) -> pikepdf.Stream:
    return pdf.make_stream(bytes([grey]) * 4, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Image, Width=2,
                           Height=2, ColorSpace=pikepdf.Name.DeviceGray, BitsPerComponent=8)


def _page_of_pictures_in_forms() -> bytes:
    """A page with a picture, a form holding a picture and a form (holding a picture), and turned text."""
    pdf = pikepdf.new()
    font = pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=pikepdf.Name.Helvetica)

    def form(content: bytes, xobjects: dict) -> pikepdf.Stream:
        return pdf.make_stream(content, Type=pikepdf.Name.XObject, Subtype=pikepdf.Name.Form, BBox=[0, 0, 200, 200],
                               Resources=pikepdf.Dictionary(XObject=pikepdf.Dictionary(xobjects)))

    inner = form(b"q 10 0 0 10 30 30 cm /Im3 Do Q", {"/Im3": _picture(pdf, 90)})
    outer = form(b"q 20 0 0 20 50 50 cm /Im2 Do Q /Inner Do", {"/Im2": _picture(pdf, 60), "/Inner": inner})
    content = (b"BT /F1 12 Tf 20 180 Td (upright) Tj ET BT /F1 12 Tf 0 1 -1 0 190 20 Tm (turned) Tj ET "
               b"q 40 0 0 40 100 100 cm /Im1 Do Q /Outer Do")
    resources = pikepdf.Dictionary(Font=pikepdf.Dictionary({"/F1": font}), XObject=pikepdf.Dictionary(
        {"/Im1": _picture(pdf, 30), "/Outer": outer}))
    pdf.pages.append(pikepdf.Page(pikepdf.Dictionary(Type=pikepdf.Name.Page, MediaBox=[0, 0, 200, 200],
                                                     Contents=pdf.make_stream(content), Resources=resources)))
    saved = io.BytesIO()
    pdf.save(saved)
    return saved.getvalue()


def test_pictures_are_get_objects_pictures_down_to_the_depth_asked():
    page = pdfium.PdfDocument(_page_of_pictures_in_forms())[0]
    for depth in (1, 2, 3, 5):
        theirs = list(page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_IMAGE,), max_depth=depth))
        ours = list(image_objects(page, max_depth=depth))
        assert [(type(o), o.level, o.get_bounds()) for o in ours] == \
               [(type(o), o.level, o.get_bounds()) for o in theirs]
        assert len(ours) == min(depth, 3)  # one picture on the page, one a form down, one two forms down


def test_text_matrices_are_get_objects_matrices_and_tell_turned_text():
    page = pdfium.PdfDocument(_page_of_pictures_in_forms())[0]
    theirs = [obj.get_matrix() for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_TEXT,), max_depth=1)]
    assert list(text_matrices(page, max_depth=1)) == [(m.a, m.b, m.c, m.d) for m in theirs]
    assert [abs(b) for _, b, _, _ in text_matrices(page, max_depth=1)] == [0.0, 1.0]
    assert has_turned_text(page)

