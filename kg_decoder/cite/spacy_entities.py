"""The extractor kg-decoder ships: spaCy's named entities and the sentences that join two of them.

Offline: the bundled en_core_web_sm pipeline (``decode/offline.py``), loaded once a process. For every
sentence that names two or more entities, each pair in the order they are named gives a fact: the
first entity, the lemma of the verb whose subject holds the first and whose object or complement holds the second (``urn:spacy:verb:acquire``), else
``urn:spacy:cooccursWith``, the second entity; its quote is the sentence, so the fact is grounded ``exact``
and traced to the sentence's words. Each entity also gets its ``rdfs:label`` (quoted by its mention).
Entities are IRIs of their kind and folded text (``urn:spacy:org:acme-corp``), so the same entity in
two chunks is one node. Numbers (cardinals, ordinals, quantities) are not entities here: they join
too much. Good enough to show the loop end to end, not a relation extractor.

    >>> triples = extract("Acme Corp. acquired Widget Inc. in Paris.", "urn:chunk:x")
    >>> [t for t in triples if t["p"].startswith("urn:spacy:verb:")][0]["p"]
    'urn:spacy:verb:acquire'
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any, Optional

COOCCURS_WITH = "urn:spacy:cooccursWith"
RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
VERB = "urn:spacy:verb:"
LEFT_OUT = frozenset({"CARDINAL", "ORDINAL", "QUANTITY"})
MAX_PAIRS = 12  # pairs a sentence gives at most (a list of twenty names would give 190)


@lru_cache(maxsize=1)
def _pipeline() -> Any:
    import spacy

    from ..decode.offline import spacy_model_path

    return spacy.load(spacy_model_path())


def _version() -> str:
    """This extractor's version with spaCy's and the model's (read from their metadata, not loaded)."""
    import importlib.metadata
    import json

    from ..decode.offline import spacy_model_path

    meta = json.loads((spacy_model_path() / "meta.json").read_text("utf-8"))
    return (f"1 (spacy {importlib.metadata.version('spacy')}, {meta.get('lang', 'en')}_{meta.get('name', '?')} "
            f"{meta.get('version', '?')})")


def entity_iri(label: str, text: str) -> str:
    """An entity's IRI from its kind and its text, folded.

    >>> entity_iri("ORG", "Acme  Corp.")
    'urn:spacy:org:acme-corp'
    """
    folded = unicodedata.normalize("NFKC", text).casefold()
    slug = re.sub(r"[^\w]+", "-", folded).strip("-") or "x"
    return f"urn:spacy:{label.lower()}:{slug[:120]}"


def extract(text: str, chunk: str) -> list[dict]:
    """The facts of one chunk's text (``chunk``, its IRI, is not needed here)."""
    document = _pipeline()(text)
    facts: list[dict] = []
    labelled: set[str] = set()
    for sentence in document.sents:
        entities = [e for e in sentence.ents if e.label_ not in LEFT_OUT and e.text.strip()]
        for entity in entities:
            iri = entity_iri(entity.label_, entity.text)
            if iri not in labelled:
                labelled.add(iri)
                facts.append({"s": iri, "p": RDFS_LABEL, "o": entity.text, "quote": entity.text})
        quote = sentence.text.strip()
        pairs = 0
        for i, first in enumerate(entities):
            for second in entities[i + 1:]:
                subject, target = entity_iri(first.label_, first.text), entity_iri(second.label_, second.text)
                if subject == target or pairs >= MAX_PAIRS:
                    continue
                pairs += 1
                verb = _governing_verb(first, second)
                facts.append({"s": subject, "p": VERB + verb if verb else COOCCURS_WITH, "o": f"<{target}>",
                              "quote": quote})
    return facts


def _governing_verb(first: Any, second: Any) -> Optional[str]:
    """The lemma of the nearest verb both entities hang from where the first is (in) its subject and
    the second is not; None otherwise (co-occurrence)."""
    above = {token.i: token for token in _ancestors(first.root)}
    for token in _ancestors(second.root):
        if token.i in above:
            if token.pos_ not in ("VERB", "AUX"):
                return None
            if not (_branch(first.root, token).dep_.startswith("nsubj")
                    and not _branch(second.root, token).dep_.startswith("nsubj")):
                return None
            lemma = re.sub(r"[^\w-]+", "-", token.lemma_.casefold()).strip("-")
            return lemma or None
    return None


def _branch(token: Any, verb: Any) -> Any:
    """The token on the way up from ``token`` whose head is ``verb`` (``verb`` itself where it is it)."""
    while token.i != verb.i and token.head.i != verb.i and token.head.i != token.i:
        token = token.head
    return token


def _ancestors(token: Any) -> list:
    return [token, *token.ancestors]


extract.extractor_name = "kg-decoder spacy-entities"  # type: ignore[attr-defined]
extract.extractor_version = _version()  # type: ignore[attr-defined]


__all__ = ["COOCCURS_WITH", "entity_iri", "extract"]
