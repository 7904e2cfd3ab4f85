"""unstructured's text types at the cost of one spaCy batch per page (per group of pages, read by PDFium).

unstructured types each text it reads (narrative text, title...) by running spaCy's pipeline
(tagger and parser) on that text alone, one call per text: on born-digital PDFs, about a fifth of
partitioning. spaCy reads a batch of texts in about 0.4 of the time it takes to read them one by
one, with the same tokens, tags and sentences (2 517 of 2 517 texts of the corpus and ICDAR PDFs).

So, as pdfminer hands over a page, the texts unstructured will type on it are read in one batch
(:func:`read_ahead`), and unstructured's tokenizer finds each there instead of running the pipeline
(``install``). A text not foreseen is read alone, as before: the types stay unstructured's own,
whatever this module foresees or misses.

The readings of the texts read last are kept (``KEPT_LETTERS``, a worker from document to document),
and a text found there is not read again: a running title, a disclaimer, a document decoded again.
unstructured's own caches answer such a text without asking when it is among its last 128 texts, so
raw unstructured reads it once too; beyond those, this keeps more.

Where the caller types texts itself (the PDFium reading, ``typed_here``), a text mostly of other
characters than letters (a table's figures, ``12.5 %``) is typed as unstructured would whatever spaCy
reads (``text_without_reading``: "UncategorizedText") and not read at all; the others are tagged
without spaCy's parser, and a text the tags show to be narrative text whatever its sentences
(``narrative_without_sentences``: most of a page of prose, by letters) is typed so there. Only the
rest are parsed (about half of spaCy's time saved on prose pages; the parser reads the same tagged
``Doc``, so their sentences are those of the whole pipeline). A long text's opening is tagged first: a
verb there, where its tags are the whole text's, types a paragraph from its first words
(``_read_tagged``: the openings and the other texts tagged in one pass).

(A process of its own once read each page's batch while pdfminer read the next page. It ran only
where a decoding worker had a second CPU of its own, which neither the batch job, one worker a CPU,
nor ``serve``, its worker pinned to one CPU, gives: it served one document's latency at the cost of a
protocol of its own, and went.)
"""

from __future__ import annotations

import sys
from collections import OrderedDict
from contextlib import contextmanager
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Iterator, Mapping, NamedTuple, Optional

from ...patches.unstructured import (install_text_lookup, narrative_if_verb, narrative_without_sentences, reaches_spacy,
                                     spacy_pipeline, text_without_reading, texts_reaching_spacy, texts_to_type)

OPENING = 16  # tokens: a longer text's opening is tagged first (see _read_tagged)
BATCH = 64  # spaCy's batch: little faster beyond (2 517 texts: 16 → 6.9 s, 64 → 5.9 s, 256 → 6.1 s)
# Readings kept for texts read again (a running title, boilerplate, a document decoded again): about 40
# pages of prose; 7 MB of readings of paragraphs, up to 14 MB of table cells' (measured with
# tracemalloc). unstructured's own caches keep its last 128 texts' readings.
KEPT_LETTERS = 200_000

_read: dict[str, Any] = {}  # text → its reading (spaCy's Doc, or a kept Reading), for the page being typed
_kept: "OrderedDict[str, Reading]" = OrderedDict()  # text → its reading, the last read or found last
_kept_letters = 0
_texts_found_kept = 0  # texts of pages typed whose reading was kept, so not read again


class Token(NamedTuple):
    text: str
    tag_: str


class Sentence(NamedTuple):
    text: str


class Reading:
    """What unstructured's tokenizer takes from spaCy's ``Doc`` of a text (``word_tokenize``,
    ``pos_tag``, ``sent_tokenize``): its tokens with their tags, and its sentences (None: a text known
    narrative without them, never handed to unstructured; its tokens may be its opening's only)."""

    __slots__ = ("tokens", "sents")

    def __init__(self, tokens: list[Token], sentences: Optional[list[Sentence]]) -> None:
        self.tokens, self.sents = tokens, sentences

    def __iter__(self):
        return iter(self.tokens)


class Pending(NamedTuple):
    """A page's texts (a group of pages') with their readings (None where a text was not read), those whose
    readings were kept (``kept``: text, reading), not read again, and the types known without asking
    unstructured (``typed``: text → category; a narrative text's reading has no sentences, a text typed
    without a reading is not among ``texts``)."""
    texts: list[str]
    readings: list
    kept: tuple = ()
    typed: Mapping[str, str] = MappingProxyType({})


def install() -> None:
    """unstructured's tokenizer takes a text's reading from the page's batch when there is one."""
    install_text_lookup(_read.get)


@contextmanager
def batches() -> Iterator[None]:
    """Within: pages' texts read ahead by ``read_ahead``, each page's in place as it is typed; after:
    none in place (the kept ones stay kept)."""
    install()
    try:
        yield
    finally:
        _read.clear()


def read_ahead(layout: Any) -> Pending:
    """Read in one batch the texts of this pdfminer page (an ``LTPage``) that unstructured's ``fast``
    will type with spaCy; :func:`take` puts the readings in place for unstructured."""
    try:
        texts = texts_to_type(layout)
    except Exception:  # noqa: BLE001 — foreseeing is a saving only: every text is then read alone
        texts = []
    return read_texts_ahead(texts)


def reaching_spacy(placed: list, system: Any) -> list[str]:
    """Of a page's texts with their corner points (``system``: the page's ``PixelSpace``), those
    unstructured's ``element_from_text`` will read with spaCy (see ``read_texts_ahead``)."""
    try:
        return texts_reaching_spacy(placed, system)
    except Exception:  # noqa: BLE001 — foreseeing is a saving only: every text is then read alone
        return []


def read_texts_ahead(texts: list[str], typed_here: bool = False) -> Pending:
    """Read a page's ``texts`` (a group of pages') in one batch (see :func:`read_ahead`), less those whose
    readings are kept.
    ``typed_here``: the caller types the texts of ``Pending.typed`` itself (:func:`category`): those are
    not read, or not parsed."""
    global _texts_found_kept
    kept = tuple((text, _kept[text]) for text in texts
                 if text in _kept and (typed_here or _kept[text].sents is not None))
    if kept:
        _texts_found_kept += len(kept)
        found = {text for text, _ in kept}
        texts = [text for text in texts if text not in found]
    if not typed_here:
        return Pending(texts, _read_in_batch(texts), kept=kept)
    typed = {text: "UncategorizedText" for text in texts if text_without_reading(text)}
    texts = [text for text in texts if text not in typed]
    openings, tagged = _read_tagged(texts)
    typed.update((text, "NarrativeText") for text in openings)
    typed.update((text, "NarrativeText") for text, reading in tagged.items()
                 if narrative_without_sentences(text, [(token.text, token.tag_) for token in reading]))
    parsed = iter(_parsed([reading for text, reading in tagged.items() if text not in typed]))
    readings = [openings[text] if text in openings else None if text not in tagged
                else tagged[text] if text in typed else next(parsed, None) for text in texts]
    typed.update((text, "NarrativeText") for text, reading in kept if reading.sents is None)
    return Pending(texts, readings, kept=tuple((text, reading) for text, reading in kept if reading.sents is not None),
                   typed=MappingProxyType(typed))


def category(text: str, points: Any, system: Any, pending: Pending) -> Optional[str]:
    """The category ``element_from_text`` gives ``text`` at ``points`` where ``pending`` knows it and the
    text reaches spaCy there (not in a running head's band, not a list item...); else None, for
    unstructured to type."""
    known = pending.typed.get(text)
    return known if known is not None and reaches_spacy(text, points, system) else None


def take(pending: Pending) -> None:
    """The page's readings (a group of pages') in place of the last ones, for unstructured to find as it
    types the page."""
    _read.clear()
    _read.update(pending.kept)
    _read.update((text, reading) for text, reading in zip(pending.texts, pending.readings)
                 if reading is not None and text not in pending.typed)
    _keep(pending)


def _keep(pending: Pending) -> None:
    """The page's readings kept for its texts read again, the least recently used dropped beyond
    ``KEPT_LETTERS``: each as a :class:`Reading` (a spaCy ``Doc`` holds its tokens' tensor too), its tags
    shared, and only where its sentences hold the text's letters (a reading is never kept for another
    text)."""
    global _kept_letters
    for text, _ in pending.kept:
        if text in _kept:
            _kept.move_to_end(text)
    for text, reading in zip(pending.texts, pending.readings):
        if reading is None or text in _kept or len(text) > KEPT_LETTERS:
            continue
        sentences = None if text in pending.typed else [Sentence(sent.text) for sent in reading.sents]
        if sentences is not None and "".join(text.split()) != "".join("".join(sentence.text
                                                                               for sentence in sentences).split()):
            continue
        _kept[text] = Reading([Token(token.text, sys.intern(token.tag_)) for token in reading], sentences)
        _kept_letters += len(text)
    while _kept_letters > KEPT_LETTERS:
        text, _ = _kept.popitem(last=False)
        _kept_letters -= len(text)


def forget_kept() -> None:
    """No reading kept: every text is read anew (a task, for tests and tools)."""
    global _kept_letters
    _kept.clear()
    _kept_letters = 0


def texts_found_kept() -> int:
    """How many texts of the pages typed in this process had their readings kept, so were not read again."""
    return _texts_found_kept


def _read_in_batch(texts: list[str]) -> list:
    """spaCy's readings of ``texts`` by the whole pipeline."""
    if not texts:
        return []
    try:
        return list(spacy_pipeline().pipe(texts, batch_size=BATCH))
    except Exception:  # noqa: BLE001 — each text is then read alone
        return []


def _tagged(documents: list) -> list:
    """spaCy's tokenized ``documents`` tagged, component by component, the parser left out (select_pipes
    would take it from the pipeline every thread of the process types with, for the while)."""
    for name, component in spacy_pipeline().pipeline:
        if name != "parser":
            documents = list(component.pipe(documents, batch_size=BATCH) if hasattr(component, "pipe")
                             else map(component, documents))
    return documents


def _read_tagged(texts: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``texts`` tagged in one pass, as openings where that tells them: those longer than ``OPENING``
    tokens whose opening tokens alone show them narrative whatever their sentences
    (``narrative_without_sentences``), each with its opening's reading; and the others, each with its
    whole text's reading, in the order of ``texts`` (a text read in neither failed to read).

    spaCy's tagger reads the vectors of a convolutional encoder that sees a few tokens either side
    (:func:`_encoder_reach`): a token's tag depends on no token farther off, so the tags of an opening's
    tokens but its last few are the whole text's. A verb among them is the text's, and its other
    checks need its tokens only: a paragraph is known narrative from its first words (a fifth of its
    tagging, or less). A text its opening leaves open is tagged whole in a second pass."""
    if not texts:
        return {}, {}
    reach = _encoder_reach()
    nlp = spacy_pipeline()
    try:
        documents = [nlp.make_doc(text) for text in texts]
    except Exception:  # noqa: BLE001 — each text is then read alone
        return {}, {}
    opened = [reach is not None and reach < OPENING and len(document) > OPENING and _may_open(text, document)
              for text, document in zip(texts, documents)]
    try:
        first = _tagged([document[:OPENING].as_doc() if opens else document
                         for document, opens in zip(documents, opened)])
    except Exception:  # noqa: BLE001 — a saving only: the texts are then tagged whole
        opened = [False] * len(texts)
        try:
            first = _tagged(documents)
        except Exception:  # noqa: BLE001 — each text is then read alone
            return {}, {}
    openings, whole, again = {}, {}, []
    for text, document, opens, reading in zip(texts, documents, opened, first):
        if not opens:
            whole[text] = reading
            continue
        known = [token.tag_ for token in reading][:OPENING - reach]
        if narrative_without_sentences(text, [(token.text, known[index] if index < len(known) else "")
                                              for index, token in enumerate(document)]):
            openings[text] = reading
        else:
            again.append((text, document))
    if again:
        try:
            whole.update(zip([text for text, _ in again], _tagged([document for _, document in again])))
        except Exception:  # noqa: BLE001 — those texts are then read alone
            pass
    return openings, {text: whole[text] for text in texts if text in whole}


def _may_open(text: str, document: Any) -> bool:
    """Whether a text may be typed from its opening (``narrative_if_verb``; not where that fails)."""
    try:
        return narrative_if_verb(text, [token.text for token in document])
    except Exception:  # noqa: BLE001 — the text is then tagged whole
        return False


@lru_cache(maxsize=1)
def _encoder_reach() -> Optional[int]:
    """How many tokens either side of a token spaCy's tagger reads (the window encoder's depth times its
    window); None where the pipeline is not the one this knows (a tagger on a shared window encoder)."""
    try:
        config = spacy_pipeline().config["components"]
        encoder = config["tok2vec"]["model"]["encode"]
        listens = config["tagger"]["model"]["tok2vec"]["@architectures"].startswith("spacy.Tok2VecListener")
        if not (listens and encoder["@architectures"].startswith("spacy.MaxoutWindowEncoder")):
            return None
        return int(encoder["depth"]) * int(encoder["window_size"])
    except (KeyError, TypeError, ValueError):
        return None


def _parsed(tagged: list) -> list:
    """Tagged readings (:func:`_read_tagged`) with their sentences: the parser reads
    the token vectors the tagger's pass left on each ``Doc``, as it would in the whole pipeline."""
    nlp = spacy_pipeline()
    if not tagged or "parser" not in nlp.pipe_names:
        return tagged
    try:
        return list(nlp.get_pipe("parser").pipe(tagged, batch_size=BATCH))
    except Exception:  # noqa: BLE001 — each text is then read alone
        return []
