"""The words of a PDF page as its content stream spells them through its fonts' encodings
(``decode.pdf.content_words``), on pages made here with pikepdf."""

from __future__ import annotations

import io

import pikepdf

from kg_decoder.decode.pdf.content_words import page_words


def _page(content: bytes, fonts: dict, forms: dict | None = None) -> bytes:
    pdf = pikepdf.new()
    resources = pikepdf.Dictionary(Font=pikepdf.Dictionary({name: pdf.make_indirect(font) if indirect else font
                                                            for name, (font, indirect) in fonts.items()}))
    if forms:
        resources.XObject = pikepdf.Dictionary({name: pdf.make_stream(stream, Type=pikepdf.Name.XObject,
                                                                      Subtype=pikepdf.Name.Form, BBox=[0, 0, 100, 100])
                                                for name, stream in forms.items()})
    pdf.pages.append(pikepdf.Page(pikepdf.Dictionary(Type=pikepdf.Name.Page, MediaBox=[0, 0, 200, 200],
                                                     Contents=pdf.make_stream(content), Resources=resources)))
    saved = io.BytesIO()
    pdf.save(saved)
    return saved.getvalue()


def _font(encoding=pikepdf.Name.WinAnsiEncoding, base=pikepdf.Name.Helvetica, flags=None) -> pikepdf.Dictionary:
    font = pikepdf.Dictionary(Type=pikepdf.Name.Font, Subtype=pikepdf.Name.Type1, BaseFont=base)
    if encoding is not None:
        font.Encoding = encoding
    if flags is not None:
        font.FontDescriptor = pikepdf.Dictionary(Type=pikepdf.Name.FontDescriptor, Flags=flags)
    return font


def _differences(code: int, glyph: str) -> pikepdf.Dictionary:
    return pikepdf.Dictionary(Type=pikepdf.Name.Encoding, BaseEncoding=pikepdf.Name.WinAnsiEncoding,
                              Differences=[code, pikepdf.Name("/" + glyph)])


def test_words_part_at_spaces_gaps_and_moves_and_go_on_across_a_change_of_font():
    fonts = {"/F1": (_font(), True), "/F2": (_font(_differences(33, "ffi")), True)}
    content = (b"BT /F1 12 Tf [(ab) -100 (cd) -200 (ef) 50.5 (gh) -150.5 (ij)] TJ 0 -14 Td (one two) Tj "
               b"14 TL (three) ' 1 2 (four) \" 0 -14 Td (di) Tj /F2 12 Tf (!) Tj /F1 12 Tf (culties) Tj ET")
    assert page_words(_page(content, fonts), 1) == {"abcd", "efgh", "ij", "one", "two", "three", "four",
                                                    "di\ufb03culties"}


def test_the_font_is_the_graphics_states_restored_by_q_and_Q_and_a_forms_callers():
    fonts = {"/F1": (_font(_differences(97, "x")), True), "/F2": (_font(_differences(97, "y")), True)}
    content = b"BT /F1 12 Tf q /F2 9 Tf Q (aa) Tj ET q BT /F2 12 Tf ET /Fm1 Do Q"
    assert page_words(_page(content, fonts, {"/Fm1": b"BT (aaa) Tj ET"}), 1) == {"xx", "yyy"}


def test_fonts_written_inline_keep_their_own_encodings():
    fonts = {"/FA": (_font(_differences(97, "x")), False), "/FB": (_font(_differences(97, "y")), False)}
    lines = b" 0 -14 Td ".join(b"/F%s 12 Tf (aa%s) Tj" % (name, name) for name in (b"A", b"B") * 3)
    assert page_words(_page(b"BT " + lines + b" ET", fonts), 1) == {"xxA", "yyB"}


def test_a_symbol_font_without_an_encoding_spells_no_words():
    fonts = {"/F1": (_font(None, pikepdf.Name.Symbol), True), "/F2": (_font(None, flags=4), True),
             "/F3": (_font(None), True)}
    assert page_words(_page(b"BT /F1 12 Tf (abc) Tj /F2 12 Tf (def) Tj 0 -14 Td /F3 12 Tf (ghi) Tj ET", fonts), 1) \
        == {"ghi"}  # the standard encoding for a font that declares none and is not symbolic


def test_a_page_qpdf_cannot_read_gives_none():
    assert page_words(b"%PDF-1.4 not a PDF", 1) is None
