"""Every generated fixture, through the whole pipeline into a real on-disk store."""

from __future__ import annotations

import pytest

import kg_decoder
from fixtures import PDF_FONT_SIZE, PDF_SENTINEL_POSITION
from invariants import check_document, timeless

GENERATED = ["generated.pdf", "scanned.pdf", "words.png", "words.jpg", "words.tiff", "generated.docx",
             "generated.pptx", "generated.xlsx", "generated.doc", "generated.ppt", "generated.odt", "generated.epub",
             "generated.md", "generated.html", "text-utf-8.txt", "text-utf-16.txt", "text-gb18030.txt",
             "text-big5.txt", "text-windows-1255.txt", "text-windows-1256.txt", "text-shift_jis.txt",
             "generated.csv", "generated.tsv", "generated.rst", "generated.org", "generated.rtf", "generated.eml",
             "generated.xml", "generated.json", "generated.jsonl"]


def test_every_fixture_is_listed(generated):
    assert sorted(generated) == sorted(GENERATED)


@pytest.mark.parametrize("name", GENERATED)
def test_fixture_decodes_with_its_sentinels_and_invariants(name, generated, generated_store):
    fixture = generated[name]
    store, results = generated_store
    result = results[name]
    assert result.status == "decoded"
    assert result.format == fixture.format
    text = "\n".join(t.text for t in result.text_documents)
    for sentinel in fixture.sentinels:
        assert sentinel.lower() in text.lower(), f"{sentinel!r} missing from {name}"
    if fixture.pages is not None:
        assert result.pages == fixture.pages
        numbers = sorted(t.page_number for t in result.text_documents)
        assert numbers == list(range(1, fixture.pages + 1))
    if fixture.table:
        assert result.tables >= 1 and "<table" in text and "</table>" in text
    state = check_document(store, result.document)
    categories = {e.category for e in state["elements"]}
    assert fixture.categories <= categories
    # The original bytes come back from the library by the document's IRI.
    assert store.content(result.document) == fixture.path.read_bytes()


def test_pdf_strategy_and_empty_page_recorded(generated_store):
    store, results = generated_store
    assert results["generated.pdf"].strategy == "fast"
    assert results["scanned.pdf"].strategy == "ocr_only"
    empty = store.table("audit-segments-without-text").records()
    assert [(r["fileName"], r["pageNumber"]) for r in empty if r["fileName"] == "generated.pdf"] == [
        ("generated.pdf", 2)]


def test_pdf_element_box_is_where_the_text_was_drawn(generated_store):
    store, results = generated_store
    elements = store.document_elements(results["generated.pdf"].document)
    box = next(e for e in elements if "KGSENTPDFONE" in (e.text or ""))
    width, height = box.page_width, box.page_height
    assert (width, height) == (612.0, 792.0)
    x, baseline = PDF_SENTINEL_POSITION  # PDF user space: origin bottom-left
    top_left_baseline = height - baseline
    assert abs(box.left - x) <= 0.01 * width
    assert abs(box.bottom - top_left_baseline) <= 0.01 * height + PDF_FONT_SIZE * 0.3
    assert abs(box.top - (top_left_baseline - PDF_FONT_SIZE)) <= 0.01 * height + PDF_FONT_SIZE * 0.3
    assert box.page_number == 1


def test_ocr_box_is_scaled_to_the_image_pixels(generated_store):
    store, results = generated_store
    elements = store.document_elements(results["words.png"].document)
    box = next(e for e in elements if "ZEBRA" in (e.text or "").upper())
    assert (box.page_width, box.page_height) == (1400.0, 400.0)
    assert 30 <= box.left <= 120 and 100 <= box.top <= 260  # drawn at (60, 140), 72 px high


def test_sheets_and_slides_are_pages_with_their_names(generated_store):
    store, results = generated_store
    pages = store.document_pages(results["generated.xlsx"].document)
    assert [page.sheet_name for page in pages] == ["Alpha", "Beta"]
    slide_elements = store.document_elements(results["generated.pptx"].document)
    assert {e.page_number for e in slide_elements} == {1, 2}


@pytest.mark.parametrize("name", ["generated.docx", "generated.md"])
def test_heading_strategy_nests_sections(name, generated, store):
    result = kg_decoder.decode(generated[name].path, store=store, section_strategy="heading")
    check_document(store, result.document)
    segments = store.document_segments(result.document)
    parents = {row.segment: row.parent for row in segments}
    nested = [seg for seg, parent in parents.items() if parent in parents]
    assert nested, "the subheading must open a section nested in the title's section"
    assert result.sections == len(segments) >= 2


@pytest.mark.parametrize("strategy", ["element-type", "count", "size"])
def test_other_section_strategies_keep_invariants(strategy, generated, store):
    result = kg_decoder.decode(generated["generated.docx"].path, store=store, section_strategy=strategy,
                               section_element_count=2, section_max_size=60)
    check_document(store, result.document)
    assert result.sections >= 2


def test_sections_within_pages_derive_from_their_page(generated, store):
    result = kg_decoder.decode(generated["generated.pptx"].path, store=store, section_strategy="count",
                               section_element_count=1, section_within_pages=True)
    state = check_document(store, result.document)
    pages = {r.segment: r for r in state["segments"] if r.kind == "page"}
    sections = [r for r in state["segments"] if r.kind == "section"]
    assert len(pages) == 3 and len(sections) >= 4
    assert all(s.parent in pages and s.page_number == pages[s.parent].page_number for s in sections)
    # Only sections go downstream; a page's text is the span of its sections.
    assert {t.kind for t in result.text_documents} == {"section"}


def test_decoding_the_same_bytes_again_changes_no_quad(generated, generated_store):
    store, results = generated_store
    before = store.quads()
    for name in ("generated.pdf", "generated.docx", "generated.xlsx"):
        again = kg_decoder.decode(generated[name].path, store=store)
        assert again.status == "unchanged"
        assert [t.to_json() for t in again.text_documents] == [t.to_json() for t in results[name].text_documents]
    assert store.quads() == before


@pytest.mark.parametrize("name", ["generated.pdf", "generated.docx", "generated.xlsx", "generated.md",
                                  "generated.json", "generated.eml"])
def test_the_same_bytes_give_the_same_quads_in_two_fresh_stores(name, generated, tmp_path):
    """Determinism for real: two decodes from scratch (no parse cache, nothing held), the same quads
    once the run's own timestamps are set aside."""
    def decoded(folder):
        with kg_decoder.open_store(tmp_path / folder) as fresh:
            kg_decoder.decode(generated[name].path, store=fresh, partition_cache=False, **generated[name].options)
            return timeless(fresh.quads())

    first, second = decoded("one"), decoded("two")
    assert first and first == second


def test_new_settings_replace_the_earlier_decode(generated, store):
    path = generated["generated.md"].path
    first = kg_decoder.decode(path, store=store)
    first_quads = {q for q in store.quads() if "Time" not in q.predicate.value}
    heading = kg_decoder.decode(path, store=store, section_strategy="heading")
    assert heading.document == first.document and heading.sections > first.sections
    assert len(store.document_segments(first.document)) == heading.sections
    check_document(store, first.document)
    kg_decoder.decode(path, store=store)
    assert {q for q in store.quads() if "Time" not in q.predicate.value} == first_quads
