"""Real files nobody here wrote (../shared/wild: pdf.js's and Apache POI's test corpora) whose words sit
where a reader of the text flow alone misses them: each decodes, holds the words a reader sees, keeps
every invariant, and decodes again to the same quads; a damaged or locked one is refused by its type."""

from __future__ import annotations

import pytest

import kg_decoder
from invariants import check_document
from kg_decoder.model import NO_TEXT_FOUND

pytestmark = pytest.mark.slow

# file -> (format, words the decoded text holds, categories it holds, a warning it has)
EXPECTED = {
    "pdfjs-issue15818.pdf": ("pdf", ["hello world"], {"FormField"}, None),  # a value only its appearance shows
    "pdfjs-bug2026037.pdf": ("pdf", ["A B"], {"FormField"}, None),  # a choice's label, on a page with no text
    "pdfjs-annotation-line.pdf": ("pdf", ["Line content"], {"Annotation"}, None),
    "pdfjs-pr6531_2.pdf": ("pdf", ["Bluebeam should be encrypting this."], {"Annotation"}, None),  # owner-only
    "pdfjs-issue2074.pdf": ("pdf", ["Powered by TCPDF"], set(), None),  # one-point type fast drops
    "pdfjs-colors.pdf": ("pdf", [], set(), NO_TEXT_FOUND),  # drawings alone
    "poi-document-Bug55142.docx": ("docx", ["Rich-text1 abcdefghi", "sdt_incell2"], set(), None),  # controls
    "poi-document-footnotes.docx": ("docx", ["snoska"], {"Footnote"}, None),
    "poi-openxml4j-TestPackageCoreProperiesGetters.docx": ("docx", [], set(), NO_TEXT_FOUND),
    "poi-slideshow-SampleShow.pptx": ("pptx", ["I am the notes of the first slide"], {"SpeakerNotes"}, None),
    "poi-slideshow-pie-chart.pptx": ("pptx", ["8.1999999999999993", "4th Qtr"], {"Table"}, None),
    "poi-slideshow-bug65551.pptx": ("pptx", [], set(), None),  # libmagic says only "Microsoft OOXML"
    "poi-spreadsheet-47813.xlsx": ("xlsx", ["1.7452406437283512E-2", "Some random junk."], {"Table"}, None),
    "poi-document-endingnote.doc": ("doc", [], {"Endnote"}, None),
}

# file -> the typed error it is refused with (a damaged file, one that needs a password)
REFUSED = {
    "pdfjs-issue3371.pdf": kg_decoder.EncryptedDocument,  # a user password
    "pdfjs-issue9105_other.pdf": kg_decoder.CorruptDocument,
    "poi-document-truncated62886.docx": kg_decoder.CorruptDocument,
}


@pytest.fixture(scope="module")
def wild_store(wild_dir, tmp_path_factory):
    store = kg_decoder.open_store(tmp_path_factory.mktemp("wild-store"))
    return store, {name: kg_decoder.decode(wild_dir / name, store=store) for name in EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wild_file_decodes_with_what_a_reader_sees(name, wild_store):
    store, results = wild_store
    fmt, words, categories, warning = EXPECTED[name]
    result = results[name]
    assert result.format == fmt and result.status == "decoded"
    state = check_document(store, result.document)
    for word in words:
        assert word in state["document_text"], word
    assert categories <= {e.category for e in state["elements"]}
    assert (warning is not None) == any(w.startswith(NO_TEXT_FOUND) for w in result.warnings)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_damaged_or_locked_wild_file_is_refused_by_its_type_and_leaves_nothing(name, wild_dir, wild_store):
    store, _ = wild_store
    before = store.quads()
    with pytest.raises(REFUSED[name]):
        kg_decoder.decode(wild_dir / name, store=store)
    assert store.quads() == before


def test_the_chart_sheet_is_a_page_and_the_sheet_after_it_keeps_its_text(wild_store):
    store, results = wild_store
    elements = store.document_elements(results["poi-spreadsheet-47813.xlsx"].document)
    assert [(e.category, e.page_number) for e in elements] == [("Table", 1), ("Table", 2), ("Title", 3)]


def test_the_wild_files_validate_and_decode_again_to_the_same_quads(wild_dir, wild_store):
    store, results = wild_store
    assert kg_decoder.validate(store=store).conforms
    before = store.quads()
    assert all(kg_decoder.decode(wild_dir / name, store=store).status == "unchanged" for name in results)
    assert store.quads() == before
