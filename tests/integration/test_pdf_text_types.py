"""unstructured's text types of a PDF's texts, read by spaCy in one batch a page, or a group of pages in the
PDFium reading (``text_types``)."""

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
    """The PDF's elements as the worker partitions it with unstructured's ``fast`` (pictures not read), each
    text typed anew."""
    import unstructured.nlp.tokenize as tokenize

    _forget_readings(tokenize)
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader="unstructured"))
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

    first = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    typed_first = _typed(first)
    kept = dict(text_types._kept)
    assert kept and all(isinstance(reading, text_types.Reading) for reading in kept.values())
    read = []
    monkeypatch.setattr(text_types, "_read_in_batch", lambda texts: read.extend(texts) or list(tokenize._get_nlp().pipe(texts)))
    before = text_types.texts_found_kept()
    for cached in (tokenize._process_cached, tokenize.word_tokenize, tokenize.pos_tag, tokenize._tokenize_for_cache):
        cached.cache_clear()  # unstructured's own readings forgotten: each text is asked for
    partitioned = PdfBackend().partition(first, PDF, DecodeOptions(image_ocr="off", pdf_reader="unstructured"))
    assert [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements] == typed_first
    assert read == [] and text_types.texts_found_kept() - before >= len(kept)
    assert tokenize._process_cached.cache_info().misses == 0  # every text typed found its kept reading
    # the same paper with two empty pages: only its texts not read before are read
    PdfBackend().partition((corpus_dir / "layout-parser-paper-with-empty-pages.pdf").read_bytes(), PDF,
                           DecodeOptions(image_ocr="off", pdf_reader="unstructured"))
    assert read and not set(read) & set(kept)


def test_the_readings_kept_are_the_last_used_within_their_letters(monkeypatch):
    monkeypatch.setattr(text_types, "_kept", text_types.OrderedDict())
    monkeypatch.setattr(text_types, "_kept_letters", 0)
    monkeypatch.setattr(text_types, "KEPT_LETTERS", 30)
    a, b, c, d, e = (letter * 10 for letter in "abcde")

    def read(text):
        return text_types.Reading([text_types.Token(text, "NN")], [text_types.Sentence(text)])

    text_types._keep(text_types.Pending([a, b, c], [read(a), read(b), None]))
    text_types._keep(text_types.Pending([d], [read(d)], kept=((a, read(a)),)))
    assert list(text_types._kept) == [b, a, d] and text_types._kept_letters == 30  # c not read; a used last
    text_types._keep(text_types.Pending([e, c], [read(e), read(a)]))  # c's reading is not of c
    assert list(text_types._kept) == [a, d, e] and text_types._kept_letters == 30


def _pdfium_typed(data: bytes) -> list[tuple]:
    """The PDF's elements as the worker reads it with PDFium (the default reading), each text typed anew."""
    import unstructured.nlp.tokenize as tokenize

    _forget_readings(tokenize)
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader="pdfium"))
    return [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements]


def test_the_pdfium_reading_parses_only_the_texts_their_tags_leave_open(corpus_dir, monkeypatch):
    offline.prepare()
    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    parsed = []
    parse = text_types._parsed
    monkeypatch.setattr(text_types, "_parsed", lambda tagged: parsed.extend(doc.text for doc in tagged) or parse(tagged))
    typed = _pdfium_typed(data)
    parsed_with_tags = list(parsed)
    kept_without_sentences = [text for text, reading in text_types._kept.items() if reading.sents is None]
    with monkeypatch.context() as every_text_parsed:
        every_text_parsed.setattr(text_types, "narrative_without_sentences", lambda text, tagged: False)
        every_text_parsed.setattr(text_types, "text_without_reading", lambda text: False)
        parsed.clear()
        assert _pdfium_typed(data) == typed  # the same types as where unstructured types every text
    narrative = {text for category, text, *_ in typed if category == "NarrativeText"}
    assert narrative and set(parsed) > set(parsed_with_tags)
    assert sum(map(len, parsed_with_tags)) < 0.5 * sum(map(len, parsed))  # most of a page of prose is not parsed
    assert kept_without_sentences and set(kept_without_sentences) <= narrative
    # beside readings kept without sentences, the pdfminer reading is typed as ever (each text read anew)
    import unstructured.nlp.tokenize as tokenize

    read_anew = _typed(data)
    _pdfium_typed(data)
    for cached in (tokenize._process_cached, tokenize.word_tokenize, tokenize.pos_tag, tokenize._tokenize_for_cache):
        cached.cache_clear()
    partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader="unstructured"))
    assert [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements] == read_anew


def test_a_tables_figures_are_typed_without_spacy_as_unstructured_types_them(corpus_dir, monkeypatch):
    """The table's rows are typed as blocks (the table finder puts the table in their place after)."""
    offline.prepare()
    data = (corpus_dir / "embedded-images-tables.pdf").read_bytes()
    read, known = [], []
    read_tagged, category = text_types._read_tagged, text_types.category
    monkeypatch.setattr(text_types, "_read_tagged", lambda texts: read.extend(texts) or read_tagged(texts))
    monkeypatch.setattr(text_types, "category", lambda text, *args: known.append((text, category(text, *args)))
                        or known[-1][1])
    typed = _pdfium_typed(data)
    read_first = list(read)
    figures = {text for text, kind in known if kind == "UncategorizedText"}
    with monkeypatch.context() as every_text_read:
        every_text_read.setattr(text_types, "text_without_reading", lambda text: False)
        every_text_read.setattr(text_types, "narrative_without_sentences", lambda text, tagged: False)
        assert _pdfium_typed(data) == typed
    assert len(figures) >= 3 and any("0.0335 1.9460" in text for text in figures)
    assert figures.isdisjoint(read_first) and figures <= set(read)  # read only where asked to
    from unstructured.partition.text import element_from_text

    assert {element_from_text(text).category for text in figures} == {"UncategorizedText"}


def test_the_pdfium_reading_types_every_text_from_its_pages_batch(corpus_dir):
    """A text whose unmapped glyphs are read again (a paragraph with a ligature on page 4) is read ahead
    as it is typed: unstructured runs its pipeline on no text alone (that paragraph once took a fifth of
    the paper's typing)."""
    offline.prepare()
    import unstructured.nlp.tokenize as tokenize

    typed = _pdfium_typed((corpus_dir / "layout-parser-paper-with-empty-pages.pdf").read_bytes())
    assert any("diﬃculties" in text for _, text, *_ in typed)  # the ligature read again
    assert tokenize._process_cached.cache_info().misses == 0


def test_a_long_narrative_text_is_typed_from_its_opening_tokens_tags(corpus_dir, monkeypatch):
    """spaCy's tagger reads a window encoder that sees four tokens either side, so a paragraph's first
    tokens' tags are the whole text's: a verb there types it, its other tokens never tagged. The openings
    are tagged in the pass that tags the other texts."""
    offline.prepare()
    assert text_types._encoder_reach() == 4 < text_types.OPENING
    opened: list[dict] = []
    read_tagged, tagged = text_types._read_tagged, text_types._tagged
    passes: list[int] = []

    def recorded(texts):
        openings, whole = read_tagged(texts)
        opened.append(openings)
        return openings, whole

    monkeypatch.setattr(text_types, "_read_tagged", recorded)
    monkeypatch.setattr(text_types, "_tagged", lambda documents: passes.append(len(documents)) or tagged(documents))
    typed = _pdfium_typed((corpus_dir / "layout-parser-paper-fast.pdf").read_bytes())
    narrative = {text for category, text, *_ in typed if category == "NarrativeText"}
    from_openings = {" ".join(text.split()): reading for found in opened for text, reading in found.items()}
    assert len(from_openings) >= 5 and set(from_openings) <= narrative  # the paragraphs of two pages
    assert all(len(reading) == text_types.OPENING for reading in from_openings.values())
    # the openings and the other texts in one pass; a text its opening leaves open in a second
    assert len(passes) <= 2 and passes[0] > len(from_openings)


def test_the_pdfium_reading_types_a_group_of_pages_from_one_batch_as_page_by_page(corpus_dir, monkeypatch):
    """The texts of several pages are read in one spaCy batch (each pass has a cost of its own beside its
    tokens): the types are those of a batch a page, and every page is reported, once, in order."""
    offline.prepare()
    import unstructured.nlp.tokenize as tokenize
    from kg_decoder.decode.pdf import blocks

    data = (corpus_dir / "layout-parser-paper-with-empty-pages.pdf").read_bytes()  # text on pages 1 and 4
    batches: list[int] = []
    read_ahead = text_types.read_texts_ahead
    monkeypatch.setattr(text_types, "read_texts_ahead",
                        lambda texts, typed_here=False: batches.append(len(texts)) or read_ahead(texts, typed_here))

    def typed() -> tuple[list[tuple], list[int]]:
        _forget_readings(tokenize)
        reported: list[int] = []
        partitioned = PdfBackend().partition(data, PDF, DecodeOptions(image_ocr="off", pdf_reader="pdfium"),
                                             lambda step: reported.append(step.current + 1))
        return [(e.category, e.text, e.page_number, e.bbox) for e in partitioned.elements], reported

    together, reported = typed()
    assert len(batches) == 1 and batches[0] >= 10 and reported[:4] == [1, 2, 3, 4]
    assert {category for category, *_ in together} >= {"NarrativeText", "Title"}
    batches.clear()
    monkeypatch.setattr(blocks, "_PAGES_TYPED_TOGETHER", 1)
    assert typed() == (together, reported)
    assert len(batches) == 2


def test_a_failed_pass_of_a_batchs_openings_tags_its_texts_whole(corpus_dir, monkeypatch):
    """Where spaCy fails on the pass that tags the openings with the other texts, every text is tagged
    whole in a pass of its own: the same types, and unstructured reads no text alone."""
    offline.prepare()
    import unstructured.nlp.tokenize as tokenize

    data = (corpus_dir / "layout-parser-paper-fast.pdf").read_bytes()
    typed = _pdfium_typed(data)
    passes: list[int] = []
    tagged = text_types._tagged

    def failing_first(documents):
        passes.append(len(documents))
        if len(passes) == 1:
            raise RuntimeError("spaCy failed")
        return tagged(documents)

    monkeypatch.setattr(text_types, "_tagged", failing_first)
    assert _pdfium_typed(data) == typed
    assert len(passes) == 2 and passes[1] == passes[0]  # the same texts, whole
    assert tokenize._process_cached.cache_info().misses == 0
