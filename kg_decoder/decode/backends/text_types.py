"""unstructured's text types at the cost of one spaCy batch per page.

unstructured types each text it reads (narrative text, title...) by running spaCy's pipeline
(tagger and parser) on that text alone, one call per text: on born-digital PDFs, about a fifth of
partitioning. spaCy reads a batch of texts in about 0.4 of the time it takes to read them one by
one, with the same tokens, tags and sentences (2 517 of 2 517 texts of the corpus and ICDAR PDFs).

So, as pdfminer hands over a page, the texts unstructured will type on it are read in one batch
(``read_ahead``), and unstructured's tokenizer finds each there instead of running the pipeline
(``install``). A text not foreseen is read alone, as before: the types stay unstructured's own,
whatever this module foresees or misses. Decoding workers read one document at a time; the
readings of one page are dropped when the next page's are taken, and when the partition ends.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterator

BATCH = 64  # spaCy's batch: little faster beyond (2 517 texts: 16 → 6.9 s, 64 → 5.9 s, 256 → 6.1 s)

_read: dict[str, Any] = {}  # text → spaCy's Doc of it, for the page being typed
_installed = False


def install() -> None:
    """unstructured's tokenizer takes a text's reading from the page's batch when there is one."""
    global _installed
    if _installed:
        return
    import unstructured.nlp.tokenize as tokenize

    run_alone = tokenize._process

    def from_batch_or_alone(text):
        doc = _read.get(text)
        return doc if doc is not None else run_alone(text)

    tokenize._process = from_batch_or_alone
    _installed = True


@contextmanager
def batches() -> Iterator[None]:
    """Within: pages' texts read ahead by ``read_ahead``; after: none kept."""
    install()
    try:
        yield
    finally:
        _read.clear()


def read_ahead(layout: Any) -> None:
    """Read in one batch the texts of this pdfminer page (an ``LTPage``) that unstructured's ``fast``
    will type with spaCy, in place of the last page's."""
    _read.clear()
    try:
        texts = _texts_to_type(layout)
        if texts:
            import unstructured.nlp.tokenize as tokenize

            _read.update(zip(texts, tokenize._get_nlp().pipe(texts, batch_size=BATCH)))
    except Exception:  # noqa: BLE001 — foreseeing is a saving only: every text is then read alone
        _read.clear()


def _texts_to_type(layout: Any) -> list[str]:
    """The texts of the page that reach spaCy in unstructured's ``element_from_text``, built as
    ``unstructured.partition.pdf._pdfminer_page_elements`` builds them (its own helpers): every
    text box's text, whitespace cleaned, less those typed before spaCy is asked (header or footer
    by position, bullet, e-mail address, US city and zip code, numbered list, a number)."""
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


def _reaches_spacy(text: str, text_module: Any) -> bool:
    return not (text_module.is_bulleted_text(text) or text_module.is_email_address(text)
                or text_module.is_us_city_state_zip(text) or text_module.is_possible_numbered_list(text)
                or text.isnumeric())
