"""pdfminer's reading of content streams through qpdf (``pdf_content``): the objects pdfminer's own
parser gives, in its order, on real PDFs nobody here wrote."""

from __future__ import annotations

import io

import pytest
from conftest import REPO

from kg_decoder.decode.backends import pdf_content

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

    with open(path, "rb") as file:
        for page in PDFPage.get_pages(io.BytesIO(file.read())):
            yield page.contents
            forms = resolve1((resolve1(page.resources) or {}).get("XObject")) or {}
            for form in forms.values():
                form = stream_value(form)
                if str(form.get("Subtype")) == "/'Form'":
                    yield [form]


def test_qpdf_hands_pdfminer_the_objects_its_own_parser_reads(corpus_dir, wild_dir):
    from pdfminer.pdfparser import PDFSyntaxError

    qpdf_parser = pdf_content.content_parser(pdf_content.pdfminer_parser())
    pdfs = [path for folder in (corpus_dir, ICDAR, wild_dir) for path in sorted(folder.glob("*.pdf"))]
    compared = objects = through_qpdf = 0
    for path in pdfs:
        try:
            contents = list(_content_streams(path))
        except (PDFSyntaxError, Exception):  # noqa: BLE001 — a file pdfminer cannot open has no streams to compare
            continue
        for streams in contents:
            try:
                expected = _objects(pdf_content.pdfminer_parser(), streams)
            except Exception:  # noqa: BLE001 — a stream pdfminer fails on is not a reading to match
                continue
            assert _objects(qpdf_parser, streams) == expected, f"{path.name}: a stream read otherwise"
            through_qpdf += bool(streams) and qpdf_parser(streams)._fallback is None
            compared += 1
            objects += len(expected)
    print(f"{compared} streams, {through_qpdf} through qpdf, {objects} objects")
    assert compared > 250 and through_qpdf > 0.8 * compared and objects > 500_000


def test_a_stream_qpdf_would_read_otherwise_is_left_to_pdfminer():
    from pdfminer.pdftypes import PDFStream

    qpdf_parser = pdf_content.content_parser(pdf_content.pdfminer_parser())
    for content in (b"1 2 3.4.5 m 0 0 l S",  # a malformed number qpdf reads as an operator
                    b"BT (odd hex) Tj <414> Tj ET",  # pdfminer keeps the lone digit, qpdf pads it
                    b"q BI /W 1 /H 1 /BPC 8 /CS /G ID \x00 EI Q",  # pdfminer keeps the abbreviations
                    b"BT /F1 12 Tf (a) Tj [(b) -250 (c)] TJ ET 0.5 g << /K null /L [1 null] >> 1 0 0 1 .5 -2 cm"):
        stream = PDFStream({}, content)
        stream.objid = 1
        assert _objects(qpdf_parser, [stream]) == _objects(pdf_content.pdfminer_parser(), [stream]), content


@pytest.mark.parametrize("name", ["layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"])
def test_a_decode_reads_pdf_pages_through_qpdf_with_the_same_elements(corpus_dir, name):
    from pdfminer import pdfinterp

    from kg_decoder.decode.backends.pdf import PDF, PdfBackend
    from kg_decoder.model import DecodeOptions

    data = (corpus_dir / name).read_bytes()
    options = DecodeOptions(image_ocr="off")
    pdf_content.install()
    assert pdfinterp.PDFContentParser is not pdf_content.pdfminer_parser()
    through_qpdf = PdfBackend().partition(data, PDF, options)
    pdfinterp.PDFContentParser = pdf_content.pdfminer_parser()
    try:
        own = PdfBackend().partition(data, PDF, options)
    finally:
        pdfinterp.PDFContentParser = pdf_content.content_parser(pdf_content.pdfminer_parser())

    def seen(partitioned) -> list[tuple]:
        return sorted((e.page_number, e.category, e.text, e.bbox) for e in partitioned.elements)

    assert seen(through_qpdf) == seen(own) and len(own.elements) > 10
