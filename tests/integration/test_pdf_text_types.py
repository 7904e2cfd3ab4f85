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


def _typed(data: bytes) -> list[tuple]:
    """The PDF's elements as the worker partitions it (pictures not read), each text typed anew."""
    import unstructured.nlp.tokenize as tokenize

    _forget_readings(tokenize)
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off"))
    return [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements]


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
    with monkeypatch.context() as each_alone:
        each_alone.setattr(text_types, "read_ahead", lambda layout: text_types.Pending([], []))
        read_alone = _typed(data)
    assert alone and not from_batch
    alone.clear()
    assert _typed(data) == read_alone
    assert from_batch and alone == []  # every text unstructured typed was foreseen on its page
    assert {category for category, *_ in read_alone} >= {"NarrativeText", "Title"}
    assert text_types._read == {}  # nothing kept after the partition


@pytest.fixture
def reading_process(monkeypatch):
    """The texts read by a reading process from a PDF's first page on; stopped afterwards."""
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "process")
    monkeypatch.setattr(text_types, "_reader", None)
    monkeypatch.setattr(text_types, "_reader_failed", False)
    yield
    if text_types._reader is not None:
        text_types._reader.stop()


def _waited_for_model(timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not text_types._reader.ready():
        assert time.monotonic() < deadline, "the reading process did not load the model"
        time.sleep(0.1)


def test_a_pdfs_texts_read_by_the_reading_process_are_typed_as_when_read_here(corpus_dir, monkeypatch,
                                                                               reading_process):
    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    with monkeypatch.context() as here:
        here.setenv(text_types.PROCESS_VARIABLE, "here")
        read_here = _typed(data)
    text_types._reading_process()
    _waited_for_model()
    received = []
    receive = text_types.ReadingProcess.receive
    monkeypatch.setattr(text_types.ReadingProcess, "receive", lambda self: received.append(receive(self)) or received[-1])
    assert _typed(data) == read_here
    assert len(received) == 2 and all(received)  # both pages' texts read by the process
    assert not text_types._reader_failed and text_types._read == {}


def test_a_reading_process_that_dies_leaves_its_pages_to_be_read_here(corpus_dir, monkeypatch, reading_process):
    import os
    import signal

    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "here")
    read_here = _typed(data)
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "process")
    text_types._reading_process()
    _waited_for_model()
    os.kill(text_types._reader.pid, signal.SIGKILL)
    assert _typed(data) == read_here
    assert text_types._reader is None and text_types._reader_failed


def test_a_decoding_worker_with_a_second_cpu_forks_its_reading_process_warm_and_types_as_when_read_here(
        tmp_path, corpus_dir, monkeypatch):
    import time

    import psutil

    import kg_decoder
    from kg_decoder.decode.worker import PartitionWorker

    state_task = "kg_decoder.decode.backends.text_types:reading_state"
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "here")  # read by the worker as it starts
    here = PartitionWorker(threads=2)
    assert here.call(state_task)["pid"] is None
    monkeypatch.delenv(text_types.PROCESS_VARIABLE)
    aside = PartitionWorker(threads=2)
    try:
        warm = aside.call(state_task)
        worker = psutil.Process(aside._process.pid)
        assert warm["forked"] and warm["pid"] in {child.pid for child in worker.children()}
        assert warm["pages_read_aside"] == 0
        elements = []
        for name, each in (("here", here), ("aside", aside)):
            with kg_decoder.open_store(tmp_path / name) as store:
                result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store, worker=each,
                                           partition_cache=False)
                elements.append(store.document_elements(result.document))
        assert elements[0] == elements[1] and {row.category for row in elements[1]} >= {"NarrativeText", "Title"}
        after = aside.call(state_task)
        assert after["pid"] == warm["pid"] and after["pages_read_aside"] == 2  # both pages, from the first on
    finally:
        here.close()
        aside.close()
    deadline = time.monotonic() + 10
    while psutil.pid_exists(warm["pid"]) and psutil.Process(warm["pid"]).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the reading process outlived its worker"
        time.sleep(0.1)
