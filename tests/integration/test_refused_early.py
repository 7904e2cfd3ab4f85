"""A truncated PDF is refused before a worker is started for it (issue 54, item 9: it took as long as a
worker takes to start), and a PDF that only lacks its end, which PDFium rebuilds, is still decoded."""

from __future__ import annotations

import io

import pytest

import kg_decoder
from kg_decoder.decode.pipeline import needs_worker
from kg_decoder.model import DecodeOptions

SENTENCE = "Quarterly revenue rose in the harbour branch."


def drawn_pdf() -> bytes:
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    drawing = canvas.Canvas(out)
    drawing.drawString(72, 700, SENTENCE)
    drawing.showPage()
    drawing.save()
    return out.getvalue()


class NoWorker:
    """A worker that must not be asked."""

    def build_document(self, *args, **keywords):
        raise AssertionError("a worker was asked to decode the file")


def test_a_truncated_pdf_is_refused_without_a_worker_and_the_refusal_recorded(tmp_path):
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(drawn_pdf()[:900])
    with kg_decoder.open_store(tmp_path / "store") as store:
        assert not needs_worker(truncated, store, DecodeOptions())
        with pytest.raises(kg_decoder.CorruptDocument, match="could not be read as PDF"):
            kg_decoder.decode(truncated, store=store, worker=NoWorker(), record_failure=True)
        [failure] = [a for a in kg_decoder.run_audits(store) if a.name == "audit-failed-or-fallback"][0].table.records()
        assert failure["fileName"] == "truncated.pdf" and failure["problem"] == "failed"


def test_an_intact_pdf_and_one_pdfium_rebuilds_still_go_to_the_worker(tmp_path):
    data = drawn_pdf()
    intact, unended = tmp_path / "intact.pdf", tmp_path / "unended.pdf"
    intact.write_bytes(data)
    unended.write_bytes(data[:data.index(b"startxref")])  # no startxref, no %%EOF: PDFium rebuilds its xref
    with kg_decoder.open_store(tmp_path / "store") as store:
        assert needs_worker(intact, store, DecodeOptions()) and needs_worker(unended, store, DecodeOptions())
        decoded = kg_decoder.decode(unended, store=store)
        assert SENTENCE in decoded.text_documents[0].text
