"""People's names a partitioner calls a ``Title``, typed ``Author``.

unstructured calls a short line without a full stop a ``Title``; a paper's author line ("Zejiang
Shen1, Ruochen Zhang2, and Weining Li5", "Jane Q. Doe") is one, so it read as a heading and a
heading-led chunking began a section there. Capitalised words alone are no sign of names (headings
such as "Cognitive Abilities" or "Federal Citizen Services Fund" are as capitalised, and spaCy's small
model calls "Helpful Links" a PERSON), so a ``Title`` becomes an ``Author`` only when three things hold:

- its words are names: capitalised words and initials (``Q.``, ``J.-P.``), with the particles of
  names (van, de, et al.), joined by commas and "and"; footnote marks (digits, ``*``, ``†``) and
  brackets aside; no other lowercase word, no digit before a letter, at most six words a name;
- they look like people's names: a footnote mark after a name (``Shen1``), a list of two names or
  more of two words or more, an initial, or spaCy's named entities (the bundled model) calling half its letters a PERSON;
- it is in an author block: an e-mail address, an academic affiliation (a university, an institute,
  a laboratory...) or another author line among the three elements after it or the two before it on
  its page, with no paragraph between; or it ends with "et al." (a running head naming a paper's
  authors).

Measured on the PDFs, DOCX and ODT of ``corpus/`` and ``tables-icdar2013/``: of 318 titles, 35 are
shaped as names (mostly headings); the three author lines of the LayoutParser paper and its two
running heads "Z. Shen et al." become ``Author``, no heading does.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..model import Element

AUTHOR = "Author"
_AFTER, _BEFORE = 3, 2  # elements looked at after and before a title on its page
_MAX_WORDS = 6  # words a name holds at most
_SHORT = 300  # characters a line of an author block holds at most (affiliations with addresses are long)

_EMAIL = re.compile(r"[\w.+-]*@[\w-]+(?:\.[\w-]+)+")
_AFFILIATION = re.compile(r"\b(?:Universit\w*|Institut\w*|College|Laborator\w*|Faculty|Academy|School of|"
                          r"Department of|Dept\. of|Inc\.|Ltd\.?|GmbH|Hospital)\b")
_MARKS = re.compile(r"[\d*†‡§¶#()\[\]{}⋆✉]+")  # footnote marks and brackets beside a name
_SEPARATORS = re.compile(r"\s*(?:,|;|&|\band\b|\bund\b|\bet\b(?!\s+al))\s*")
_CAPITALISED = re.compile(r"[^\W\d_][^\W\d_]*(?:[-'’][^\W\d_]+)*\.?")
_INITIALS = re.compile(r"(?:[^\W\d_]\.-?)+")
_ET_AL = re.compile(r"\bet al\.?\s*$")
_PERSON_SHARE = 0.5  # of a line's letters spaCy must call a PERSON
_PARTICLES = frozenset({"van", "von", "der", "den", "de", "del", "della", "di", "da", "du", "le", "la", "bin",
                        "ibn", "al", "et", "y", "dos", "das", "ter", "zu"})


def retype_author_lines(elements: list[Element]) -> None:
    """Make ``Author`` of each ``Title`` that is a line of people's names in an author block (in place); a
    line next to one found counts as in the block too. (spaCy is asked last, of the lines in a block.)"""
    candidates = [position for position, element in enumerate(elements)
                  if element.category == "Title" and is_name_line(element.text)]
    found = True
    while found:
        found = False
        for position in candidates:
            element = elements[position]
            if element.category == "Title" and (_ET_AL.search(element.text) or _in_author_block(elements, position)
                                                and _names_people(element.text)):
                element.category = AUTHOR
                found = True


def is_name_line(text: str) -> bool:
    """Whether ``text`` is people's names and nothing else.

    >>> [is_name_line(t) for t in ["Jane Q. Doe", "Zejiang Shen1 (", "), Ruochen Zhang2, Melissa Dell3",
    ...                            "Lee4, Jacob Carlson3, and Weining Li5", "Ludwig van Beethoven*"]]
    [True, True, True, True, True]
    >>> [is_name_line(t) for t in ["Introduction", "Results and discussion", "Table 3", "2.1 Methods",
    ...                            "E-PRTR pollutants and their thresholds", "melissadell,jacob carlson"]]
    [False, False, False, False, False, False]
    """
    plain = _MARKS.sub(" ", text)
    if re.search(r"\d[^\W\d_]", text):
        return False  # a digit before a letter ("3rd", "2D"): no footnote mark after a name
    names = [name.split() for name in _SEPARATORS.split(plain) if name.strip()]
    if not names or any(len(words) > _MAX_WORDS for words in names):
        return False
    capitalised = 0
    for words in names:
        for word in words:
            if word.lower().rstrip(".") in _PARTICLES:
                continue
            if not (_INITIALS.fullmatch(word) or _CAPITALISED.fullmatch(word) and word[0].isupper()):
                return False
            capitalised += not _INITIALS.fullmatch(word)
    return capitalised >= 1 and sum(len(words) for words in names) >= 2 or _single_mark(text, names)


def _single_mark(text: str, names: list[list[str]]) -> bool:
    """A lone word with a footnote mark after it ("Lee4"): a name cut off its line."""
    return len(names) == 1 and len(names[0]) == 1 and bool(re.search(r"[^\W\d_]\d", text))


def _names_people(text: str) -> bool:
    """Whether a line of names names people: a footnote mark after a name, a list of names, an initial,
    or spaCy calling most of it a PERSON."""
    plain = _MARKS.sub(" ", text)
    names = [name.split() for name in _SEPARATORS.split(plain) if name.strip()]
    if re.search(r"[^\W\d_][\d*†‡]", text) or len(names) >= 2 and all(len(words) >= 2 for words in names):
        return True
    if any(_INITIALS.fullmatch(word) for word in plain.split()):
        return True
    letters = sum(char.isalpha() for char in plain) or 1
    return sum(sum(char.isalpha() for char in entity.text) for entity in _entities(plain)
               if entity.label_ == "PERSON") >= _PERSON_SHARE * letters


@lru_cache(maxsize=1)
def _ner():
    """spaCy's bundled small English pipeline, its entity recogniser alone (loaded once a process, when
    a line needs it)."""
    import spacy

    from .offline import spacy_model_path

    return spacy.load(spacy_model_path(), exclude=["parser", "lemmatizer", "attribute_ruler", "senter"])


def _entities(text: str) -> list:
    try:
        return list(_ner()(text).ents)
    except Exception:  # no model: no PERSON found, the title stays one
        return []


def _in_author_block(elements: list[Element], position: int) -> bool:
    """Whether an e-mail address, an affiliation or an author line is among the short lines next to the
    element on its page (the elements up to the nearest paragraph on either side)."""
    page = elements[position].page_number
    for step, reach in ((1, _AFTER), (-1, _BEFORE)):
        index = position
        for _ in range(reach):
            index += step
            if not 0 <= index < len(elements):
                break
            other = elements[index]
            if other.page_number != page or other.category == "NarrativeText" or len(other.text) > _SHORT:
                break  # past the author block: a paragraph, another page
            if other.is_image or not other.text.strip():
                continue
            if other.category in ("EmailAddress", AUTHOR) or _EMAIL.search(other.text) or \
                    _AFFILIATION.search(other.text):
                return True
    return False


__all__ = ["AUTHOR", "is_name_line", "retype_author_lines"]
