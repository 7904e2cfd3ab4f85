"""Bad input: a typed error, and the store exactly as it was (graph and library)."""

from __future__ import annotations

import io
import threading

import pytest

import kg_decoder
from fixtures import zip_bytes
from kg_decoder.decode.worker import PartitionWorker
from kg_decoder.graph.identifiers import document_iri
from kg_decoder.graph.library import sha256_hex


def _snapshot(store):
    files = sorted(p.relative_to(store.library.root) for p in store.library.root.rglob("*") if p.is_file()) \
        if store.library.root.exists() else []
    return store.quads(), files


def _encrypted_xlsx(generated) -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    with open(generated["generated.xlsx"].path, "rb") as plain:
        OOXMLFile(plain).encrypt("secret", out)
    return out.getvalue()


@pytest.fixture
def populated(store, generated):
    """A store that already holds a document: it must survive every failure untouched."""
    kg_decoder.decode(generated["generated.md"].path, store=store)
    return store


BAD_INPUTS = {
    "empty": (lambda g: b"", "empty.txt", kg_decoder.EmptyDocument),
    "truncated pdf": (lambda g: g["generated.pdf"].path.read_bytes()[:900], "t.pdf", kg_decoder.CorruptDocument),
    "corrupt pdf": (lambda g: b"%PDF-1.4\n" + bytes(range(256)) * 20, "c.pdf", kg_decoder.CorruptDocument),
    "garbage": (lambda g: bytes(range(256)) * 20, "garbage.dat", kg_decoder.UnsupportedFormat),
    "executable": (lambda g: open("/bin/true", "rb").read(), "true", kg_decoder.UnsupportedFormat),
    "corrupt docx": (lambda g: zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<oops"}),
                     "bad.docx", kg_decoder.CorruptDocument),
    "zip bomb docx": (lambda g: zip_bytes({"[Content_Types].xml": b"<Types/>",
                                      "word/document.xml": b"\0" * (80 * 1024 * 1024)}),
                      "bomb.docx", kg_decoder.UnsafeDocument),
    "encrypted xlsx": (_encrypted_xlsx, "locked.xlsx", kg_decoder.EncryptedDocument),
    "no text at all": (lambda g: b"\n\n   \n", "blank.txt", kg_decoder.EmptyDocument),
    "bad json lines": (lambda g: b'{"a": 1}\nnot json\n', "x.jsonl", kg_decoder.CorruptDocument),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_gets_a_typed_error_and_leaves_the_store(case, populated, generated):
    make, name, error = BAD_INPUTS[case]
    before = _snapshot(populated)
    with pytest.raises(error) as raised:
        kg_decoder.decode(make(generated), store=populated, file_name=name)
    message = str(raised.value)
    assert message and "\n" not in message
    assert _snapshot(populated) == before


def test_encrypted_xlsx_decodes_with_its_password(generated, store):
    result = kg_decoder.decode(_encrypted_xlsx(generated), store=store, file_name="locked.xlsx", password="secret")
    assert result.format == "xlsx" and result.pages == 2
    assert "KGSENTXLSXBETA" in "".join(t.text for t in result.text_documents)


def test_file_over_the_size_limit(populated, generated):
    before = _snapshot(populated)
    with pytest.raises(kg_decoder.DocumentTooLarge):
        kg_decoder.decode(generated["generated.pdf"].path, store=populated, max_bytes=1000)
    assert _snapshot(populated) == before


def test_unknown_mime_type_and_bad_options(populated, generated):
    with pytest.raises(kg_decoder.UnsupportedFormat):
        kg_decoder.decode(b"abc", store=populated, mime_type="application/x-nothing")
    with pytest.raises(kg_decoder.InvalidOption):
        kg_decoder.decode(b"abc", store=populated, strategy="magic")
    with pytest.raises(kg_decoder.InvalidOption):
        kg_decoder.decode(generated["words.png"].path, store=populated, strategy="fast")


def test_hi_res_without_its_model_says_so(populated, generated):
    before = _snapshot(populated)
    try:
        result = kg_decoder.decode(generated["generated.pdf"].path, store=populated, strategy="hi_res")
    except kg_decoder.ModelUnavailable as exc:
        assert "hi_res" in str(exc)
        assert _snapshot(populated) == before
    else:  # a machine that has the layout model: then hi_res is what was used
        assert result.strategy == "hi_res"


def test_a_slow_document_times_out_and_the_next_one_decodes(populated, generated, corpus_dir):
    worker = PartitionWorker()
    try:
        before = _snapshot(populated)
        with pytest.raises(kg_decoder.DecodeTimeout):
            kg_decoder.decode(corpus_dir / "loremipsum-flat.pdf", store=populated, worker=worker,
                              timeout_seconds=0.2, strategy="ocr_only")
        assert _snapshot(populated) == before
        result = kg_decoder.decode(generated["generated.csv"].path, store=populated, worker=worker)
        assert result.status == "decoded"
    finally:
        worker.close()


def test_a_recorded_time_limit_is_tried_again_not_answered_from_the_store(tmp_path, corpus_dir):
    worker = PartitionWorker()
    try:
        with kg_decoder.open_store(tmp_path / "store") as store:
            with pytest.raises(kg_decoder.DecodeTimeout):
                kg_decoder.decode(corpus_dir / "loremipsum-flat.pdf", store=store, worker=worker, timeout_seconds=0.2,
                                  strategy="ocr_only", record_failure=True)
            attempted = document_iri(sha256_hex((corpus_dir / "loremipsum-flat.pdf").read_bytes()))
            assert store.document_failure(attempted).code == "decode-timeout"  # recorded; the limit may pass
            result = kg_decoder.decode(corpus_dir / "loremipsum-flat.pdf", store=store, worker=worker,
                                       strategy="ocr_only", record_failure=True)
            assert result.status == "decoded"
    finally:
        worker.close()


def test_a_crashing_parser_is_a_typed_error(populated, generated, corpus_dir):
    worker = PartitionWorker()
    try:
        worker.start()
        worker._await_ready()
        process = worker._process
        # The worker dies mid-parse, as a native parser would on hostile bytes.
        threading.Timer(1.0, process.kill).start()
        before = _snapshot(populated)
        with pytest.raises(kg_decoder.CorruptDocument, match="crashed"):
            kg_decoder.decode(corpus_dir / "loremipsum-flat.pdf", store=populated, worker=worker,
                              strategy="ocr_only")
        assert _snapshot(populated) == before
        assert kg_decoder.decode(generated["generated.tsv"].path, store=populated, worker=worker).format == "tsv"
    finally:
        worker.close()


class _FullDisk:
    """The real Oxigraph store, except that its transactions fail."""

    def __init__(self, graph):
        self._graph = graph

    def __getattr__(self, name):
        return getattr(self._graph, name)

    def __len__(self):
        return len(self._graph)

    def extend(self, quads):
        raise OSError("disk full")

    def load(self, *args, **kwargs):
        raise OSError("disk full")


def test_a_failed_transaction_leaves_no_library_blob(store, generated, monkeypatch):
    monkeypatch.setattr(store, "graph", _FullDisk(store.graph))
    with pytest.raises(kg_decoder.StoreError, match="disk full"):
        kg_decoder.decode(generated["generated.md"].path, store=store)
    assert len(store) == 0
    assert not [p for p in store.library.root.rglob("*") if p.is_file() and p.name != ".gc-lock"]


def test_ocr_language_that_is_not_installed(populated, generated):
    before = _snapshot(populated)
    with pytest.raises(kg_decoder.InvalidOption, match="klingon"):
        kg_decoder.decode(generated["words.png"].path, store=populated, ocr_languages="klingon")
    assert _snapshot(populated) == before


def test_hebrew_ocr_language_is_available(generated, store):
    result = kg_decoder.decode(generated["words.png"].path, store=store, ocr_languages="eng+heb")
    assert "ZEBRA" in result.text_documents[0].text.upper()
