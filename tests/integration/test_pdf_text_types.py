"""unstructured's text types of a PDF's texts, read by spaCy in one batch a page (``text_types``)."""

from __future__ import annotations

import pytest

from kg_decoder.decode import offline
from kg_decoder.decode.backends import text_types
from kg_decoder.decode.backends.pdf import PDF, PdfBackend
from kg_decoder.model import DecodeOptions


def _forget_readings(tokenize) -> None:
    for cached in (tokenize._process_cached, tokenize.word_tokenize, tokenize.pos_tag, tokenize._tokenize_for_cache):
        cached.cache_clear()


@pytest.mark.parametrize("name", ["layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"])
def test_a_pdfs_texts_are_typed_from_one_spacy_batch_a_page_as_when_read_alone(corpus_dir, monkeypatch, name):
    offline.prepare()  # as a worker does
    import unstructured.nlp.tokenize as tokenize

    text_types.install()
    from_batch, alone = [], []
    install_process = tokenize._process

    def counted(text):
        (from_batch if text in text_types._read else alone).append(text)
        return install_process(text)

    monkeypatch.setattr(tokenize, "_process", counted)
    data = (corpus_dir / name).read_bytes()
    options = DecodeOptions(image_ocr="off")

    def typed() -> list[tuple]:
        _forget_readings(tokenize)
        partitioned = PdfBackend().partition(data, PDF, options)
        return [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements]

    with monkeypatch.context() as each_alone:
        each_alone.setattr(text_types, "read_ahead", lambda layout: None)
        read_alone = typed()
    assert alone and not from_batch
    alone.clear()
    assert typed() == read_alone
    assert from_batch and alone == []  # every text unstructured typed was foreseen on its page
    assert {category for category, *_ in read_alone} >= {"NarrativeText", "Title"}
    assert text_types._read == {}  # nothing kept after the partition
