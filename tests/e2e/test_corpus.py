"""Every document of the shared real-world corpus: it decodes, or fails with the typed error it deserves."""

from __future__ import annotations

import json
import unicodedata

import pytest

import kg_decoder
from invariants import check_chunks, check_document
from kg_decoder.cite.chunks import chunk_document

pytestmark = pytest.mark.slow

# file -> (format, pages or None, must contain a table)
EXPECTED = {
    "README.md": ("markdown", None, False),
    "README.rst": ("rst", None, False),
    "SOURCES.tsv": ("tsv", None, True),
    "codeblock.md": ("markdown", None, False),
    "docx-tables.docx": ("docx", None, True),
    "embedded-images-tables.pdf": ("pdf", 1, True),
    "example-10k-1p.html": ("html", None, True),
    "fake-doc.rtf": ("rtf", None, True),
    "fake-email-attachment.eml": ("eml", None, False),
    "fake-email.msg": ("msg", None, False),
    "fake-html-cp1252.html": ("html", None, False),
    "fake-power-point-table.pptx": ("pptx", 1, True),
    "fake-power-point.pptx": ("pptx", 1, False),
    "fake-text.txt": ("text", None, False),
    "fake.odt": ("odt", None, True),
    "handbook-1p.docx": ("docx", None, False),
    "layout-parser-paper-fast.pdf": ("pdf", 2, False),
    "layout-parser-paper-with-empty-pages.pdf": ("pdf", 4, False),
    "loremipsum-flat.pdf": ("pdf", 1, False),
    "simple-table.md": ("markdown", None, True),
    "stanley-cups.csv": ("csv", None, True),
    "stanley-cups.tsv": ("tsv", None, True),
    "stanley-cups.xlsx": ("xlsx", 2, True),
    "tests-example.xls": ("xls", 3, True),
    "winter-sports.epub": ("epub", None, True),
}
FAILS = {"password.pdf": kg_decoder.EncryptedDocument, "empty.txt": kg_decoder.EmptyDocument}


def test_the_corpus_is_what_the_expectations_cover(corpus_dir):
    assert sorted(p.name for p in corpus_dir.iterdir()) == sorted(set(EXPECTED) | set(FAILS))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_decodes(name, corpus_store):
    store, results, errors = corpus_store
    assert name not in errors, f"{name}: {errors.get(name)!r}"
    fmt, pages, table = EXPECTED[name]
    result = results[name]
    assert result.format == fmt
    if pages is not None:
        assert result.pages == pages
        assert [t.page_number for t in result.text_documents if t.kind == "page"] == list(range(1, pages + 1))
    text = "\n".join(t.text for t in result.text_documents if t.kind != "image")  # pictures' words apart
    assert text.strip()
    assert ("<table" in text) == table, name
    assert (result.tables > 0) == table, (name, result.tables)
    state = check_document(store, result.document)
    assert state["elements"]
    chunked = chunk_document(result.document, store=store, chunk_size=256, overlap=16)
    assert chunked.chunks == len(check_chunks(store, result.document, 256)) > 0


@pytest.mark.parametrize("name", sorted(FAILS))
def test_corpus_file_fails_with_its_typed_error(name, corpus_store):
    _, _, errors = corpus_store
    assert isinstance(errors.get(name), FAILS[name])


def test_encrypted_pdf_decodes_with_its_password(corpus_dir, store, tmp_path):
    with pytest.raises(kg_decoder.EncryptedDocument):
        kg_decoder.decode(corpus_dir / "password.pdf", store=store, password="wrong")
    assert len(store) == 0
    result = kg_decoder.decode(corpus_dir / "password.pdf", store=store, password="password")
    assert result.elements > 0
    check_document(store, result.document)


def test_scanned_pdf_is_ocred_and_blank_pages_exist(corpus_store):
    store, results, _ = corpus_store
    assert results["loremipsum-flat.pdf"].strategy == "ocr_only"
    assert "lorem" in results["loremipsum-flat.pdf"].text_documents[0].text.lower()
    empty = [r["pageNumber"] for r in store.table("audit-segments-without-text").records()
             if r.get("fileName") == "layout-parser-paper-with-empty-pages.pdf"]
    assert empty == [2]  # page 3 shows a free-text annotation: "This page is intentionally left blank"
    [note] = [e for e in store.document_elements(results["layout-parser-paper-with-empty-pages.pdf"].document)
              if e.category == "Annotation"]
    assert note.page_number == 3 and note.text == "This page is intentionally left blank" and note.bbox


def test_ligatures_a_font_maps_to_nothing_are_read_as_poppler_reads_them(corpus_store):
    """The paper's Computer Modern fonts map their ligatures to U+0000 (a broken ToUnicode) or leave
    them out of the declared encoding; the font's own encoding names them."""
    _, results, _ = corpus_store
    text = "".join(t.text for t in results["layout-parser-paper-with-empty-pages.pdf"].text_documents)
    # PDFium's reading takes the word as pdfminer reads it, its ligature as letters (pdfplumber's words)
    assert "practical difficulties" in unicodedata.normalize("NFKC", text)
    assert "\x00" not in text and "(cid:" not in text


def test_cp1252_html_keeps_its_characters(corpus_store):
    _, results, _ = corpus_store
    assert "schöne" in results["fake-html-cp1252.html"].text_documents[0].text


def test_decoding_the_corpus_again_leaves_identical_quads(corpus_dir, corpus_store):
    store, results, _ = corpus_store
    before = store.quads()
    for name in results:
        assert kg_decoder.decode(corpus_dir / name, store=store).status == "unchanged"
    assert store.quads() == before


def test_every_next_step_the_main_job_prints_works_on_its_store(corpus_dir, corpus_store, tmp_path):
    """The main job (scripts/run.sh: the corpus decoded and chunked into a store by the CLI), then each
    command it prints as a next step, as printed: serve answers its first page, the trace finds its
    quote, the audit ends (bounded here by the subprocess's time limit) with every audit answered."""
    import shlex
    import subprocess
    import urllib.request

    from conftest import run_cli, seed_caches, serve_process

    store = tmp_path / "kg-store"
    seed_caches(store, corpus_store[0])  # the corpus is not partitioned again: this is about its store
    done = run_cli("decode", corpus_dir, "--store", store, "--chunk", "--no-progress")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    steps = {line.split(":", 1)[0].strip(): shlex.split(line.split(":", 1)[1].split("(then")[0])
             for line in lines[lines.index("Next:") + 1:]}
    assert set(steps) == {"browse and query it", "trace a quote", "audit its coverage"}

    words = steps["browse and query it"]
    assert words[words.index("serve"):] == ["serve", "--store", str(store)]
    base, server = serve_process(store)  # as printed, on a free port instead of 8000
    try:
        with urllib.request.urlopen(base + "/", timeout=60) as answer:
            page = answer.read().decode()
        rows = [line.split() for line in lines[2:lines.index("Next:")] if line.rstrip().endswith(" decoded")]
        assert answer.status == 200 and f'id="count-documents">{len(rows)}<' in page
        assert f'id="count-chunks">{sum(int(row[-2]) for row in rows)}<' in page
    finally:
        server.terminate()
        server.wait(timeout=30)

    def run(step: str, *more: str):  # the whole command as printed, program included
        return subprocess.run(steps[step] + list(more), capture_output=True, text=True, timeout=300)

    traced = run("trace a quote", "--format", "json")
    assert traced.returncode == 0, traced.stderr
    quote = steps["trace a quote"][steps["trace a quote"].index("--quote") + 1]
    [place, *_] = json.loads(traced.stdout)
    assert place["page_number"] >= 1 and place["quote"] == quote and place["boxes"]
    assert len(place["chunks"]) >= 1  # the main job chunked it

    audited = run("audit its coverage")
    assert audited.returncode == 0, audited.stderr
    names = [line.split(":")[0].removeprefix("== ") for line in audited.stdout.splitlines() if line.startswith("== ")]
    assert len(names) == len(set(names)) > 20 and "audit-chunk-gaps" in names
    assert "not finished" not in audited.stdout
