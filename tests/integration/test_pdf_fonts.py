"""pdfminer's simple fonts with kg-decoder's fallbacks (``patches.pdfminer.install_type1_fallbacks``):
a code the declared encoding leaves undefined is read from the encoding inside the embedded Type 1
font program, which is read only when a code needs it."""

from __future__ import annotations

import io

import pytest


def _pdf_with_type1_font(text_codes: bytes) -> bytes:
    """One page showing ``text_codes`` in a Type 1 font declaring /MacRomanEncoding (which leaves code
    14 undefined) whose embedded program's own encoding puts /ffi at 14 (as pdfTeX's fonts do)."""
    header = (b"%!PS-AdobeFont-1.0: Test 001\n/FontName /Test def\n/Encoding 256 array\n"
              b"0 1 255 {1 index exch /.notdef put} for\ndup 14 /ffi put\ndup 65 /A put\nreadonly def\n"
              b"currentdict end\ncurrentfile eexec\n")
    content = b"BT /F1 12 Tf 72 700 Td (" + text_codes + b") Tj ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /ABCDEF+Test /FirstChar 0 /LastChar 255 "
        b"/Widths [" + b" ".join([b"500"] * 256) + b"] /Encoding /MacRomanEncoding /FontDescriptor 6 0 R >>",
        b"<< /Type /FontDescriptor /FontName /ABCDEF+Test /Flags 32 /FontBBox [0 0 500 700] /ItalicAngle 0 "
        b"/Ascent 700 /Descent -200 /CapHeight 700 /StemV 80 /FontFile 7 0 R >>",
        b"<< /Length %d /Length1 %d /Length2 0 /Length3 0 >>\nstream\n" % (len(header), len(header))
        + header + b"\nendstream",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


def _text_and_program_reads(data: bytes, monkeypatch) -> tuple[str, int]:
    from pdfminer.high_level import extract_text

    from kg_decoder.patches import pdfminer as pdfminer_patches

    pdfminer_patches.install_type1_fallbacks()
    reads = []
    original = pdfminer_patches._builtin_encoding
    monkeypatch.setattr(pdfminer_patches, "_builtin_encoding",
                        lambda descriptor: reads.append(1) or original(descriptor))
    return extract_text(io.BytesIO(data)).strip(), len(reads)


@pytest.mark.parametrize("codes, text, program_reads", [
    (b"A\\016A", "A\ufb03A", 1),  # code 14: undefined in MacRoman, /ffi in the font program (read once)
    (b"A\\016\\016A", "A\ufb03\ufb03A", 1),
    (b"AAA", "AAA", 0),  # every code defined by the declared encoding: the font program is never read
])
def test_a_code_the_declared_encoding_leaves_out_is_read_from_the_font_program(codes, text, program_reads,
                                                                                 monkeypatch):
    read, reads = _text_and_program_reads(_pdf_with_type1_font(codes), monkeypatch)
    assert read == text
    assert reads == program_reads
