"""unstructured's text types of a PDF's texts, read by spaCy in one batch a page (``text_types``)."""

from __future__ import annotations

import pytest

from kg_decoder.decode import offline
from kg_decoder.decode.pdf import text_types
from kg_decoder.decode.pdf.backend import PDF, PdfBackend
from kg_decoder.model import DecodeOptions


def _forget_readings(tokenize) -> None:
    for cached in (tokenize._process_cached, tokenize.word_tokenize, tokenize.pos_tag, tokenize._tokenize_for_cache):
        cached.cache_clear()
    text_types.forget_kept()


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


def test_texts_read_before_are_not_read_again_and_are_typed_as_before(corpus_dir, monkeypatch):
    offline.prepare()
    import unstructured.nlp.tokenize as tokenize

    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "here")
    monkeypatch.setattr(text_types, "_reader", None)  # one an earlier test started would read them
    monkeypatch.setattr(text_types, "_reader_failed", True)
    first = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    typed_first = _typed(first)
    kept = dict(text_types._kept)
    assert kept and all(isinstance(reading, text_types.Reading) for reading in kept.values())
    read = []
    monkeypatch.setattr(text_types, "_read_here", lambda texts: read.extend(texts) or list(tokenize._get_nlp().pipe(texts)))
    before = text_types.reading_state()["texts_found_kept"]
    for cached in (tokenize._process_cached, tokenize.word_tokenize, tokenize.pos_tag, tokenize._tokenize_for_cache):
        cached.cache_clear()  # unstructured's own readings forgotten: each text is asked for
    partitioned = PdfBackend().partition(first, PDF, DecodeOptions(image_ocr="off"))
    assert [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements] == typed_first
    assert read == [] and text_types.reading_state()["texts_found_kept"] - before >= len(kept)
    assert tokenize._process_cached.cache_info().misses == 0  # every text typed found its kept reading
    # the same paper with two empty pages: only its texts not read before are read
    PdfBackend().partition((corpus_dir / "layout-parser-paper-with-empty-pages.pdf").read_bytes(), PDF,
                           DecodeOptions(image_ocr="off"))
    assert read and not set(read) & set(kept)


def test_the_readings_kept_are_the_last_used_within_their_letters(monkeypatch):
    monkeypatch.setattr(text_types, "_kept", text_types.OrderedDict())
    monkeypatch.setattr(text_types, "_kept_letters", 0)
    monkeypatch.setattr(text_types, "KEPT_LETTERS", 30)
    a, b, c, d, e = (letter * 10 for letter in "abcde")

    def read(text):
        return text_types.Reading([text_types.Token(text, "NN")], [text_types.Sentence(text)])

    text_types._keep(text_types.Pending([a, b, c], None), [read(a), read(b), None])
    text_types._keep(text_types.Pending([d], None, kept=((a, read(a)),)), [read(d)])
    assert list(text_types._kept) == [b, a, d] and text_types._kept_letters == 30  # c not read; a used last
    text_types._keep(text_types.Pending([e, c], None), [read(e), read(a)])  # c's reading is not of c
    assert list(text_types._kept) == [a, d, e] and text_types._kept_letters == 30


@pytest.fixture
def reading_process(monkeypatch):
    """The texts read by a reading process from a PDF's first page on; stopped afterwards."""
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "process")
    monkeypatch.setattr(text_types, "_reader", None)
    monkeypatch.setattr(text_types, "_reader_failed", False)
    yield
    if text_types._reader is not None:
        text_types._reader.stop()


def _answered(call, timeout: float = 60.0):
    """The value of a call run aside, once the reading process has answered it."""
    import time

    deadline = time.monotonic() + timeout
    while not text_types._reader.answered():
        assert time.monotonic() < deadline, "the reading process did not answer the call"
        time.sleep(0.01)
    return call.result()


def _waited_for_model(timeout: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not text_types._reader.ready():
        assert time.monotonic() < deadline, "the reading process did not load the model"
        time.sleep(0.1)


def test_a_pdfs_texts_read_by_the_reading_process_are_typed_as_when_read_here(corpus_dir, monkeypatch,
                                                                               reading_process):
    from kg_decoder.decode.pdf.text_layer import page_lines

    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    with monkeypatch.context() as here:
        here.setenv(text_types.PROCESS_VARIABLE, "here")
        read_here = _typed(data)
    text_types._reading_process()
    _waited_for_model()
    _answered(text_types.aside(page_lines, data, None, [1]))  # its modules loaded, as in a warm worker
    before = text_types.reading_state()
    received = []
    receive = text_types.ReadingProcess.receive
    monkeypatch.setattr(text_types.ReadingProcess, "receive", lambda self: received.append(receive(self)) or received[-1])
    assert _typed(data) == read_here
    # page 1's turned text (an arXiv stamp) read by the process first; a page is sent once it is answered
    assert text_types.reading_state()["calls_answered"] == before["calls_answered"] + 1
    assert 1 <= len(received) <= 2  # the pages sent once the lines were back
    assert not text_types._reader_failed and text_types._read == {}


def test_a_call_aside_is_answered_by_the_reading_process_and_pages_wait_for_its_answer(reading_process):
    import os
    import time

    from kg_decoder.decode.pdf.text_layer import page_lines

    offline.prepare()
    text_types._reading_process()
    _waited_for_model()
    call = text_types.aside(os.getpid)
    assert _answered(call) == text_types._reader.pid  # run there, not here
    with pytest.raises(RuntimeError):
        call.result()  # its answer is taken once

    failing = text_types.aside(page_lines, b"not a PDF", None, [1])
    with pytest.raises(RuntimeError, match="PdfiumError"):
        _answered(failing)  # the failure said, the process still reading
    assert not text_types._reader_failed and text_types.reading_state()["ready"]

    slow = text_types.aside(time.sleep, 2.0)
    assert text_types.aside(os.getpid) is None  # one call at a time
    with pytest.raises(RuntimeError, match="not answered"):
        slow.result()  # not back yet: the caller does the work itself
    texts = [f"Paragraph {n} of a page long enough to be cut in shares, read as the process is busy." for n in range(9)]
    assert text_types.read_texts_ahead(texts).readings is not None  # read here, not sent behind the call
    deadline = time.monotonic() + 30
    while not text_types._reader.answered():
        assert time.monotonic() < deadline, "the reading process did not answer the call"
        time.sleep(0.01)
    sent = text_types.read_texts_ahead(texts)
    assert sent.readings is None  # sent, once the call is answered
    text_types.take(sent)
    here = text_types._read_here(texts)
    assert [[(token.text, token.tag_) for token in text_types._read[text]] for text in texts] == \
        [[(token.text, token.tag_) for token in doc] for doc in here]
    assert not text_types._reader_failed
    text_types._read.clear()


def test_a_partition_interrupted_as_a_page_is_read_ahead_stops_at_once(corpus_dir, monkeypatch, reading_process):
    import time

    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    text_types._reading_process()
    _waited_for_model()
    to_type, seen = text_types.texts_to_type, []

    def interrupted_on_the_second_page(layout):
        seen.append(layout)
        if len(seen) == 2:
            raise KeyboardInterrupt
        return to_type(layout)

    monkeypatch.setattr(text_types, "texts_to_type", interrupted_on_the_second_page)
    monkeypatch.setattr(text_types, "REPLY_SECONDS", 30.0)
    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        _typed(data)
    assert time.monotonic() - started < 20  # the first page, taken already, is not waited for again
    assert text_types._reader is not None and not text_types._reader_failed  # nothing of it left in flight
    monkeypatch.setattr(text_types, "texts_to_type", to_type)
    assert [category for category, *_ in _typed(data)]  # the process reads the next partition's pages


def _tokens_left(reader) -> int:
    """How many shares' tokens wait in the reading process's claims pipe."""
    import array
    import fcntl
    import termios

    count = array.array("i", [0])
    fcntl.ioctl(reader._claims, termios.FIONREAD, count)
    return count[0]


def test_a_pages_shares_are_each_read_once_by_the_process_or_here_to_the_readings_of_one_batch(reading_process):
    import time

    offline.prepare()
    import unstructured.nlp.tokenize as tokenize

    texts = [f"Paragraph {n} of a long page, which the model reads as it reads every other sentence here."
             for n in range(400)]
    starts = text_types.shares(texts)
    assert starts[0] == 0 and starts[-1] == len(texts) and len(starts) > 3
    assert all(sum(map(len, texts[begin:end])) >= text_types.SHARE_LETTERS for begin, end in zip(starts, starts[1:]))
    text_types._reading_process()
    _waited_for_model()
    before = text_types.reading_state()
    reader = text_types._reader
    reader.send(texts, starts)
    deadline = time.monotonic() + 30
    while _tokens_left(reader) == len(starts) - 1:  # the process claims its first share (half the page)...
        assert time.monotonic() < deadline, "the reading process claimed no share"
        time.sleep(0.001)
    readings = text_types._received(text_types.Pending(texts, None, starts))  # ...the rest is claimed here
    after = text_types.reading_state()
    assert after["pages_read_aside"] == before["pages_read_aside"] + 1
    assert 1 <= after["shares_read_here"] - before["shares_read_here"] < len(starts) - 1
    assert _tokens_left(reader) == 0 and not after["failed"]
    one_batch = list(tokenize._get_nlp().pipe(texts))
    assert [[(token.text, token.tag_) for token in reading] for reading in readings] == \
        [[(token.text, token.tag_) for token in doc] for doc in one_batch]
    assert [[sentence.text for sentence in reading.sents] for reading in readings] == \
        [[sentence.text for sentence in doc.sents] for doc in one_batch]


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


def _ready_state(worker, timeout: float = 60.0) -> dict:
    """The worker's reading process once ready to read (it runs at the worker's idle priority)."""
    import time

    deadline = time.monotonic() + timeout
    while not (state := worker.call(READING_STATE))["ready"]:
        assert time.monotonic() < deadline, "the forked reading process never said it was ready"
        time.sleep(0.1)
    return state


def _gone(pid: int, timeout: float = 10.0) -> bool:
    import time

    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.1)
    return False


READING_STATE = "kg_decoder.decode.pdf.text_types:reading_state"


def _decoded_elements(worker, path, store_path) -> list:
    import kg_decoder

    with kg_decoder.open_store(store_path) as store:
        result = kg_decoder.decode(path, store=store, worker=worker, partition_cache=False)
        assert result.status == "decoded"
        return store.document_elements(result.document)


def test_a_decoding_worker_with_a_second_cpu_forks_its_reading_process_warm_and_types_as_when_read_here(
        tmp_path, corpus_dir, monkeypatch):
    import psutil

    from kg_decoder.decode.worker import PartitionWorker

    document = corpus_dir / "layout-parser-paper-fast.pdf"
    monkeypatch.setenv(text_types.PROCESS_VARIABLE, "here")  # read by the worker as it starts
    here = PartitionWorker(threads=2)
    assert here.call(READING_STATE)["pid"] is None
    monkeypatch.delenv(text_types.PROCESS_VARIABLE)
    aside = PartitionWorker(threads=2)
    try:
        warm = _ready_state(aside)
        worker = psutil.Process(aside._process.pid)
        assert warm["forked"] and warm["pid"] in {child.pid for child in worker.children()}
        assert warm["pages_read_aside"] == 0
        read_here = _decoded_elements(here, document, tmp_path / "here")
        assert _decoded_elements(aside, document, tmp_path / "aside") == read_here
        assert {row.category for row in read_here} >= {"NarrativeText", "Title"}
        after = aside.call(READING_STATE)
        assert after["pid"] == warm["pid"] and after["pages_read_aside"] >= 1  # a share at least, from the first page
    finally:
        here.close()
        aside.close()
    assert _gone(warm["pid"]), "the reading process outlived its worker"


def test_a_forked_reading_process_that_dies_between_documents_leaves_the_next_to_be_read_here(tmp_path, corpus_dir):
    import os
    import signal

    from kg_decoder.decode.worker import PartitionWorker

    document = corpus_dir / "layout-parser-paper-fast.pdf"
    worker = PartitionWorker(threads=2)
    try:
        first = _decoded_elements(worker, document, tmp_path / "first")
        state = _ready_state(worker)
        os.kill(state["pid"], signal.SIGKILL)
        assert _gone(state["pid"])
        worker.call("kg_decoder.decode.pdf.text_types:forget_kept")  # so its pages are read, not found kept
        assert _decoded_elements(worker, document, tmp_path / "second") == first  # its request fell in a dead pipe
        after = worker.call(READING_STATE)
        assert after["pid"] is None and after["failed"] and after["pages_read_aside"] == state["pages_read_aside"]
    finally:
        worker.close()
