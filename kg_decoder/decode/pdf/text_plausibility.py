"""How plausible a page's text layer is as words of some language: a cheap check run on every PDF
page with a text layer, so a layer that is garbage (an invisible OCR layer read in the wrong
language, ``Hanorosas:t AeKnapai``; a font whose characters map to the wrong letters) is doubted
rather than trusted as certain.

A word (letters, perhaps digits and joining marks, once its outer punctuation is stripped) is
implausible when it shows what no language's spelling does and a misreading does: letters of two
scripts, punctuation inside it (``IVIs:t``), letters and digits interleaved (``6a3a``), no vowel
in a lowercase word of three letters or more in a script written with vowels (``Knn``), nine
consonants in a row in Latin script (six in others), a letter from the private use area. A word
whose case flips inside it more than a CamelCase name's does (``cBeneHna``, but also ``McDonald``
and ``getElementById``) is half plausible; a member of code (``document.getElementById``) is not
judged. The page's score is the share of its letters that are in plausible words; a page with too
few letters to judge has none.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Optional

# Below this share of letters in plausible words, a text layer is doubted.
DOUBTED_BELOW = 0.8
# A page with fewer letters in words than this is not judged (a page number, a stamp, a label).
LEAST_LETTERS = 60

_VOWELS = {
    "LATIN": set("aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿāăąēĕėęěīįıōőœūůűų"),
    "CYRILLIC": set("аеёиоуыэюяіїєў"),
    "GREEK": set("αεηιουωάέήίόύώϊϋΐΰ"),
}
# Punctuation a real word holds inside: apostrophes, hyphens (PDFium marks a soft hyphen \x02),
# dots (e.g., U.S.), slashes (and/or), ampersands (R&D), underscores and @ (names, addresses), a
# middle dot (Catalan), a plus (C++). A colon joins letters only in a technical token (arXiv:2103,
# fo:basic-link): between plain letters (Hanorosas:t) it is a misreading.
_JOINERS = set("'’‘-‐‑.&_@·+\x02\xad")
_TECHNICAL = set("/@=_.-0123456789")
_URL = re.compile(r"(?i)^(https?:|ftp:|www\.|mailto:|doi:|urn:|isbn)")
_NAMES_WITHOUT_VOWELS = re.compile(r"https?|ftp|www|html?|xml|pdf|png|jpe?g|gif|svg|css|txt|rtf|mp[34]|xls|ppt")
_CASE_SHAPES = re.compile(
    r"x+"  # caseless letters (Arabic, Hebrew, CJK) only
    r"|l+|Ul*|U+|U+l{1,2}"  # lower, Capitalised, CAPITALS, an abbreviation's plural (PDFs, IDs)
    r"|l?U+|lUl+|(Ull+)+|U+l{3,}"  # a lowercase mark before capitals (tABLE, iPhone); CamelCase (JavaScript,
    # XObject)
    r"|(Ul+)+U{1,3}|l+U{2,}"  # a name ending in capitals (GmbH, OpenAI); a lowercase name before them (innerHTML)
)
# A case that flips more than those may be a name or an identifier (McDonald, LaTeX, getElementById) as
# well as a misreading (AeKnapai): such a word counts as half plausible; a page of misreadings has
# words of the other kinds too.
_FLIPPED = 0.5
_MEMBER = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")  # document.getElementById, el.classList.toggle
_CONSONANTS_IN_A_ROW = {"LATIN": 9}  # German runs to eight (Angstschweiß); other scripts: six


@lru_cache(maxsize=4096)
def _script(char: str) -> str:
    """The script a letter is written in (the first word of its Unicode name): LATIN, CYRILLIC, CJK, …"""
    try:
        name = unicodedata.name(char)
    except ValueError:
        return ""
    first = name.split(" ", 1)[0]
    return "CJK" if first in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "IDEOGRAPHIC") else first


def _is_private(char: str) -> bool:
    return "\ue000" <= char <= "\uf8ff" or char == "\ufffd"


@lru_cache(maxsize=8192)
def _is_part(char: str) -> bool:
    """Whether a character belongs to a word (a letter, digit, combining mark, joiner or colon)."""
    return char.isalnum() or char in _JOINERS or char == ":" or unicodedata.category(char) in ("Mn", "Mc")


def words_of(text: str) -> list[str]:
    """The words of a text: split at white space and at anything a word does not hold inside (a
    bracket, a quote, a comma, a symbol), their outer punctuation stripped (a private-use character
    is kept: it is judged).

    >>> words_of('Target(s) "quoted", e-mail, Gal∗ 3. id="x" IVIs:t')
    ['Target', 's', 'quoted', 'e-mail', 'Gal', '3', 'id', 'x', 'IVIs:t']
    """
    found: list[str] = []
    for token in text.split():  # white space parts words wherever it stands: split there first, in C
        if token.isalnum():  # a token of letters and digits alone is one word, with nothing to strip
            found.append(token)
        else:
            found += _token_words(token)
    return found


def _token_words(token: str) -> list[str]:
    """:func:`words_of` of a token without white space, character by character."""
    found = []
    word: list[str] = []
    for char in token + " ":
        if _is_part(char) or _is_private(char):
            word.append(char)
            continue
        if word:
            stripped = "".join(word).strip("'’‘-‐‑.&_@·+:\x02\xad")
            if stripped:
                found.append(stripped)
            word = []
    return found


def _case_shape(letters: str) -> str:
    return "".join("U" if c.isupper() else "l" if c.islower() else "x" for c in letters)


def word_plausibility(word: str) -> Optional[float]:
    """How plausible a word (see :func:`words_of`) is as a word of some language: 1.0, 0.0, or 0.5 for
    a case that flips as a name's or an identifier's may (``McDonald``) and a misreading's does; None:
    it says little either way (fewer than two letters: a number, an initial; capitals without a vowel:
    PDF, HTML; a member of code, ``document.getElementById``).

    >>> [word_plausibility(w) for w in ("ação", "Hanorosas:t", "AeKnapai", "Knn", "JavaScript", "GmbH")]
    [1.0, 0.0, 0.5, 0.0, 1.0, None]
    >>> [word_plausibility(w) for w in ("6a3a", "PDFs", "2017", "e-mail", "strengths", "B2B", "Декларация")]
    [0.0, None, None, 1.0, 1.0, None, 1.0]
    >>> [word_plausibility(w) for w in ("Rechtsschutzversicherung", "document.getElementById", "innerHTML")]
    [1.0, None, 1.0]
    """
    verdict = _verdict(word)
    return None if verdict is None else float(verdict)


@lru_cache(maxsize=65536)  # a page's words come back (the, of, and): each judged once a process
def _verdict(word: str) -> Optional[float]:
    if any(_is_private(c) for c in word):
        return False
    letters = "".join(c for c in word if c.isalpha())
    if len(letters) < 2:
        return None
    if _URL.match(word):
        return True
    scripts = {_script(c) for c in letters}
    if len(scripts) > 1:
        return False  # Latin and Cyrillic look-alikes in one word
    [script] = scripts
    if script == "CJK":  # written without spaces: a "word" is a run of text; nothing to say of its spelling
        return True
    technical = any(c in _TECHNICAL for c in word)
    if ":" in word and not technical:
        return False  # Hanorosas:t, IVIs:t
    kinds = []  # the word's shape: "a" letters, "d" digits, "j" joiners
    for c in word:
        kind = "d" if c.isdigit() else "j" if c in _JOINERS or c == ":" else "a"
        if not kinds or kinds[-1] != kind:
            kinds.append(kind)
    shape = "".join(kinds)
    if ("ada" in shape or "dad" in shape) and any(c.islower() for c in word):
        return False  # 6a3a, n0m3r (B2B, H2O are capitals)
    parts = [part for part in re.split(r"[^\w]|\d|_", word) if part]  # e-mail, PDF.js: mail, PDF, js
    flipped = False
    for part in parts:
        if len(part) > 3 and not _CASE_SHAPES.fullmatch(_case_shape(part)):
            if _MEMBER.fullmatch(word):
                return None  # a member of code (document.getElementById): no word of a language
            flipped = True  # AeKnapai, cBeneHna, COOTBeETCTBUN: the case flips inside a word
    vowels = _VOWELS.get(script)
    if vowels is None:
        return _FLIPPED if flipped else True
    judged = False
    for part in parts:
        lower = part.lower()
        if not any(c in vowels for c in lower):
            if part.isupper() or (part[:-1].isupper() and part[-1] == "s") or len(lower) < 3 or len(parts) > 1 \
                    or sum(c.isupper() for c in part) >= 2 or _NAMES_WITHOUT_VOWELS.fullmatch(lower):
                continue  # an abbreviation (PDF, PDFs, GmbH), a short part (js, Mr), a file name (format.html) or
                # a scheme (http) says nothing either way
            return False  # Knn, nnw
        judged = True
        run = 0
        for c in lower:
            run = 0 if c in vowels else run + 1
            if run >= _CONSONANTS_IN_A_ROW.get(script, 6):
                return False
        if re.search(r"(.)\1\1", lower) and len(set(lower)) > 1:
            return False  # peructpauuu (www, iii are all one letter)
    if flipped:
        return _FLIPPED
    return True if judged else None


def plausibility(text: str) -> tuple[Optional[float], int]:
    """The share of a text's letters that are in plausible words (None: too few letters to say), and
    how many letters were judged.

    >>> plausibility("The committee approved the budget for the coming year without any changes at all.")
    (1.0, 67)
    >>> plausibility("Hanorosas:t AeKnapai...IVIs:t")
    (None, 23)
    """
    good, judged = 0.0, 0
    for word in words_of(text):
        verdict = word_plausibility(word)
        if verdict is None:
            continue
        letters = len(word) if word.isalpha() else sum(1 for c in word if c.isalpha())
        judged += letters
        good += letters * verdict
    if judged < LEAST_LETTERS:
        return None, judged
    return round(good / judged, 4), judged


def doubted(score: Optional[float]) -> bool:
    """Whether a text layer of this plausibility is doubted (a score of None, too few letters, is not)."""
    return score is not None and score < DOUBTED_BELOW


__all__ = ["DOUBTED_BELOW", "LEAST_LETTERS", "doubted", "plausibility", "word_plausibility"]
