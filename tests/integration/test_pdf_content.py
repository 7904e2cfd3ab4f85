"""pdfminer's reading of a page at less cost (``patches.pdfminer.install_content_reading``): the
objects pdfminer's own parser gives, in its order, and the same pages laid out, on real PDFs nobody
here wrote."""

from __future__ import annotations

import io
from contextlib import contextmanager

import pytest
from conftest import REPO

from kg_decoder.patches import pdfminer as pdfminer_patches

ICDAR = REPO.parent / "shared" / "tables-icdar2013"  # the table benchmark's PDFs


def _objects(parser_class, streams) -> list:
    from pdfminer.pdftypes import PDFStream
    from pdfminer.psexceptions import PSEOF

    try:
        parser = parser_class(streams)
    except PSEOF:
        return ["no content"]
    objects = []
    while True:
        try:
            found = parser.nextobject()[1]
            objects.append(("stream", found.attrs, found.rawdata) if isinstance(found, PDFStream) else found)
        except PSEOF:
            return objects


def _content_streams(path):
    """The content streams of each page and of each form it draws (by pdfminer's reading of the file)."""
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdftypes import resolve1, stream_value

    for page in PDFPage.get_pages(io.BytesIO(path.read_bytes())):
        yield page.contents
        forms = resolve1((resolve1(page.resources) or {}).get("XObject")) or {}
        for form in forms.values():
            form = stream_value(form)
            if str(form.get("Subtype")) == "/'Form'":
                yield [form]


@contextmanager
def _pdfminer_own():
    """pdfminer as it comes, within."""
    from pdfminer import pdfinterp
    from pdfminer.converter import PDFLayoutAnalyzer

    pdfminer_patches.install_content_reading()
    installed = pdfinterp.PDFContentParser, PDFLayoutAnalyzer.render_string_horizontal
    own = pdfminer_patches.pdfminer_own()
    assert installed != (own["parser"], own["render"])
    pdfinterp.PDFContentParser, PDFLayoutAnalyzer.render_string_horizontal = own["parser"], own["render"]
    try:
        yield
    finally:
        pdfinterp.PDFContentParser, PDFLayoutAnalyzer.render_string_horizontal = installed


def test_qpdf_hands_pdfminer_the_objects_its_own_parser_reads(corpus_dir, wild_dir):
    own_parser = pdfminer_patches.pdfminer_own()["parser"]
    qpdf_parser = pdfminer_patches.content_parser(own_parser)
    pdfs = [path for folder in (corpus_dir, ICDAR, wild_dir) for path in sorted(folder.glob("*.pdf"))]
    compared = objects = through_qpdf = 0
    for path in pdfs:
        try:
            contents = list(_content_streams(path))
        except Exception:  # noqa: BLE001 — a file pdfminer cannot open has no streams to compare
            continue
        for streams in contents:
            try:
                expected = _objects(own_parser, streams)
            except Exception:  # noqa: BLE001 — a stream pdfminer fails on is not a reading to match
                continue
            assert _objects(qpdf_parser, streams) == expected, f"{path.name}: a stream read otherwise"
            through_qpdf += bool(streams) and qpdf_parser(streams)._fallback is None
            compared += 1
            objects += len(expected)
    assert compared > 250 and through_qpdf > 0.8 * compared and objects > 500_000


def test_a_stream_qpdf_would_read_otherwise_is_left_to_pdfminer():
    from pdfminer.pdftypes import PDFStream

    own_parser = pdfminer_patches.pdfminer_own()["parser"]
    qpdf_parser = pdfminer_patches.content_parser(own_parser)
    for content in (b"1 2 3.4.5 m 0 0 l S",  # a malformed number qpdf reads as an operator
                    b"BT (odd hex) Tj <414> Tj ET",  # pdfminer keeps the lone digit, qpdf pads it
                    b"q BI /W 1 /H 1 /BPC 8 /CS /G ID \x00 EI Q",  # pdfminer keeps the abbreviations
                    b"BT /F1 12 Tf (a) Tj [(b) -250 (c)] TJ ET 0.5 g << /K null /L [1 null] >> 1 0 0 1 .5 -2 cm"):
        stream = PDFStream({}, content)
        stream.objid = 1
        assert _objects(qpdf_parser, [stream]) == _objects(own_parser, [stream]), content


def _laid_out(data: bytes) -> list[list[str]]:
    """Each page pdfminer lays out as unstructured reads it, object by object (boxes, text, fonts,
    matrices, colours, points), sorted: pdfminer ranks some text boxes by their objects' addresses."""
    from pdfminer.layout import LTAnno, LTChar, LTContainer, LTCurve, LTImage
    from unstructured.partition.pdf_image.pdfminer_utils import open_pdfminer_pages_generator

    def described(items, depth: int, rows: list[str]) -> list[str]:
        for item in items:
            row = [depth, type(item).__name__, getattr(item, "bbox", None)]
            if isinstance(item, LTChar):
                row += [item.get_text(), item.fontname, item.adv, item.matrix, item.upright, item.size,
                        item.ncs.name, item.graphicstate.ncolor, getattr(item, "rendermode", None)]
            elif isinstance(item, LTAnno):
                row += [item.get_text()]
            elif isinstance(item, LTCurve):
                row += [item.pts, item.linewidth, item.stroke, item.fill, item.non_stroking_color]
            elif isinstance(item, LTImage):
                row += [item.srcsize, item.bits]
            rows.append(repr(row))
            if isinstance(item, LTContainer):
                described(item._objs, depth + 1, rows)
        return rows

    return [sorted(described(layout._objs, 0, [])) for _, layout in open_pdfminer_pages_generator(io.BytesIO(data))]


@pytest.mark.slow
def test_pdfminer_lays_out_the_same_pages_at_less_cost(corpus_dir):
    pdfminer_patches.install_type1_fallbacks()
    pdfs = [path.read_bytes() for folder in (corpus_dir, ICDAR) for path in sorted(folder.glob("*.pdf"))
            if path.name != "password.pdf"]
    with _pdfminer_own():
        own = [_laid_out(data) for data in pdfs]
    assert [_laid_out(data) for data in pdfs] == own
    assert sum(len(pages) for pages in own) > 100 and sum(row.count("'LTChar'") for pages in own
                                                         for page in pages for row in page) > 200_000


@pytest.mark.parametrize("name", ["layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"])
def test_a_decode_reads_pdf_pages_at_less_cost_to_the_same_elements(corpus_dir, name):
    from kg_decoder.decode.pdf.backend import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    data = (corpus_dir / name).read_bytes()
    options = DecodeOptions(image_ocr="off", pdf_reader="unstructured")  # pdfminer's reading, patched and not
    at_less_cost = PdfBackend().partition(data, PDF, options)
    with _pdfminer_own():
        own = PdfBackend().partition(data, PDF, options)

    def seen(partitioned) -> list[tuple]:
        return sorted((e.page_number, e.category, e.text, e.bbox) for e in partitioned.elements)

    assert seen(at_less_cost) == seen(own) and len(own.elements) > 10
