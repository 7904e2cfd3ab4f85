"""Pure parts of tracing a quote to the words on a PDF page: folding a quote as an extractor writes
it, where a point of user space shows on the displayed page, aligning stored and drawn letters,
and placing pictures among a page's elements."""

from __future__ import annotations

import random

import pytest

from kg_decoder.cite.glyphs import _letter_pairs
from kg_decoder.cite.quotes import _BREAK, FoldedText, as_written, find_quote, quote_pattern
from kg_decoder.decode.pdf.geometry import PageGeometry
from kg_decoder.decode.images import merge_by_position
from kg_decoder.model import Element


@pytest.mark.parametrize("stored, quote, found", [
    ("A uni\ufb01ed toolkit", "unified toolkit", "uni\ufb01ed toolkit"),  # ligature glyph
    ("the o\ufb03ce sta\ufb00", "office staff", "o\ufb03ce sta\ufb00"),
    ("some \ufb01", "fi", "\ufb01"),  # a match inside a ligature covers the whole glyph
    ("\uff21\uff22\uff23 rose", "ABC rose", "\uff21\uff22\uff23 rose"),  # full-width letters
    ("the docu-\nment was", "document was", "docu-\nment was"),  # hyphenated at a line end
    ("the docu- ment was", "document was", "docu- ment was"),
    ("a well-\nknown fact", "well-known fact", "well-\nknown fact"),
    ("pre- and post-war", "pre- and post-war", "pre- and post-war"),
    ("co\u00adoperate now", "cooperate now", "co\u00adoperate now"),  # soft hyphen
    ("it\u2019s \u201cfine\u201d \u2013 really", "it's \"fine\" - really", "it\u2019s \u201cfine\u201d \u2013 really"),
    ("cafe\u0301 au lait", "café au", "cafe\u0301 au"),  # a base letter and its combining accent
    ("café au lait", "cafe\u0301 au", "café au"),
    ("end of one.\n\nNext element", "one. Next", "one.\n\nNext"),  # across two elements
    ("x\u00a0\u2009 y", "x y", "x\u00a0\u2009 y"),  # no-break and thin spaces
])
def test_a_quote_is_found_as_an_extractor_writes_it_with_exact_offsets(stored, quote, found):
    [(start, end)] = find_quote(stored, quote)
    assert stored[start:end] == found


@pytest.mark.parametrize("stored, quote", [
    ("the document", "docu ment"),  # a space the text does not have
    ("a well-known fact", "wellknown"),  # a hyphen inside a line is part of the word
    ("co-operate", "co\u00adoperate now"),
    ("di\x00culties", "diculties"),  # an unknown glyph is not a line-break hyphen
    ("Revenue", "revenue"),  # case is kept
    ("", "x"),
])
def test_what_is_not_the_quote_is_not_found(stored, quote):
    assert find_quote(stored, quote) == []


def test_every_occurrence_is_found_and_whether_it_is_written_as_quoted():
    stored = "Net uni\ufb01ed result. Net unified result."
    spans = find_quote(stored, "unified result")
    assert [stored[s:e] for s, e in spans] == ["uni\ufb01ed result", "unified result"]
    assert [as_written(stored[s:e], "unified result") for s, e in spans] == [False, True]


def test_a_quote_in_text_with_words_broken_at_line_ends_is_found_where_the_pattern_finds_it():
    """Quotes without a hyphen are looked for in the text with its broken words joined, without
    compiling a pattern (a millisecond a quote); the places must be the pattern's, also where a
    break falls at a quote's edge, between a letter and no letter, or beside a soft hyphen."""
    rng = random.Random(30)
    atoms = ["docu", "ment", "well", "known", "-", "-\n", "- ", " ", "\n", "\ufb01", "e\u0301", "1", ",", "a",
             "ab", "\u00ad", "\u2019", "_", "X"]
    cases = [("docu-\nment", "document"), ("docu-\nment", "docu"), ("docu-\nment", "ment"), ("a1-\nb", "1b"),
             ("docu-\nab", "\u00ad ab")]  # the last quote folds to " ab": the pattern finds the break's space
    for _ in range(4000):
        stored = "".join(rng.choice(atoms) for _ in range(rng.randint(3, 30)))
        start = rng.randint(0, len(stored))
        quote = stored[start:rng.randint(start, min(len(stored), start + 15))]
        cases.append((stored, quote.replace("-\n", rng.choice(["", "-", "- "])) if rng.random() < 0.5 else
                      "".join(rng.choice(atoms) for _ in range(rng.randint(1, 6)))))
    checked = 0
    for stored, quote in cases:
        folded = FoldedText(stored)
        if _BREAK not in folded.folded or not quote.strip():
            continue
        expected = [folded.span(m.start(), m.end()) for m in quote_pattern(quote).finditer(folded.folded)
                    if m.end() > m.start()]
        assert find_quote(stored, quote) == expected, (stored, quote)
        checked += 1
    assert checked > 1000


# ---------------------------------------------------------------- page geometry

MEDIA = (0.0, 0.0, 600.0, 800.0)
CROP = (50.0, 100.0, 550.0, 700.0)  # 500 wide, 600 high


@pytest.mark.parametrize("rotation, size, point", [
    # Where the user-space point (150, 600) shows: 100 right of the crop's left edge, 100 below its top.
    (0, (500, 600), (100, 100)),
    (90, (600, 500), (500, 100)),  # turned clockwise: the crop's bottom edge is now on the left
    (180, (500, 600), (400, 500)),
    (270, (600, 500), (100, 400)),
])
def test_a_user_space_point_shows_where_a_viewer_shows_it(rotation, size, point):
    geometry = PageGeometry.create(MEDIA, CROP, rotation)
    assert geometry.size == size
    assert geometry.point(150, 600) == point


def test_boxes_from_user_space_and_from_the_displayed_mediabox_agree():
    for rotation in (0, 90, 180, 270, -90, 450):
        geometry = PageGeometry.create(MEDIA, CROP, rotation)
        media = PageGeometry.create(MEDIA, None, rotation)
        rect = (150.0, 580.0, 230.0, 600.0)
        assert geometry.from_displayed_media(media.box(rect)) == pytest.approx(geometry.box(rect))


def test_what_lies_outside_the_visible_area_is_clipped_away():
    geometry = PageGeometry.create(MEDIA, CROP, 90)  # shown 600 wide, 500 high
    assert geometry.clip((-20, 10, 40, 30)) == (0, 10, 40, 30)
    assert geometry.clip((590, 480, 640, 520)) == (590, 480, 600, 500)
    assert geometry.clip((-50, 10, -5, 30)) is None  # in the text layer, but no one sees it


def test_odd_boxes_are_normalised():
    geometry = PageGeometry.create((600, 800, 0, 0), (-50, -50, 700, 900), 0)  # corners reversed, crop outside
    assert geometry.visible == (0, 0, 600, 800) and geometry.size == (600, 800)
    negative = PageGeometry.create((-300, -400, 312, 392))
    assert negative.point(-300, 392) == (0, 0) and negative.point(0, 0) == (300, 392)


# ---------------------------------------------------------------- aligning stored and drawn letters


def test_letters_pair_up_even_where_the_two_orders_move_a_block():
    stored, drawn = "projectionsareconsistent" + "censusbureau", "censusbureau" + "projectionsareconsistent"
    pairs = dict(_letter_pairs(stored, drawn))
    assert len(pairs) == len(stored)
    assert all(stored[a] == drawn[b] for a, b in pairs.items())
    assert pairs[0] == len("censusbureau")  # the moved block found where the page has it


def test_letters_the_page_does_not_have_stay_unpaired():
    pairs = dict(_letter_pairs("abcXYZdef", "abcdef"))
    assert sorted(pairs) == [0, 1, 2, 6, 7, 8]


# ---------------------------------------------------------------- pictures among a page's elements


def test_a_picture_at_the_top_of_a_later_page_goes_first_on_that_page():
    text = [Element(0, "Title", "one", page_number=1, bbox=(0, 10, 10, 20)),
            Element(1, "NarrativeText", "one more", page_number=1, bbox=(0, 30, 10, 40)),
            Element(2, "NarrativeText", "three", page_number=3, bbox=(0, 300, 10, 310))]
    pictures = [Element(0, "Image", "", page_number=3, bbox=(0, 5, 10, 8)),
                Element(0, "Image", "", page_number=3, bbox=(0, 50, 10, 60)),
                Element(0, "Image", "", page_number=2, bbox=(0, 5, 10, 8))]
    merged = merge_by_position(text, pictures)
    assert [(e.page_number, e.category) for e in merged] == [
        (1, "Title"), (1, "NarrativeText"), (2, "Image"), (3, "Image"), (3, "Image"), (3, "NarrativeText")]
    assert [e.bbox[1] for e in merged if e.page_number == 3] == [5, 50, 300]


def test_a_changed_quotes_place_is_the_same_with_the_bound_that_leaves_unlike_texts_early(monkeypatch):
    """``_approximate_in`` leaves a text whose longest common subsequence with the quote cannot reach
    the threshold: on fuzzed texts it finds what the matching finds without that bound."""
    import random

    from kg_decoder.versions import changed_quotes as versions

    rng = random.Random(30)
    words = ["revenue", "of", "12", "14.5", "M", "in", "2023", "2024", "the", "board", "met", "amended", "a", "de"]
    cases = []
    for _ in range(1500):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 30)))
        quote = " ".join(rng.choice(words) for _ in range(rng.randint(1, 8)))
        cases.append((text, quote))
    bounded = [versions._approximate_in(text, quote) for text, quote in cases]

    class NoBound:
        @staticmethod
        def similarity(quote, text):
            return len(quote)

    monkeypatch.setattr(versions, "LCSseq", NoBound)
    assert bounded == [versions._approximate_in(text, quote) for text, quote in cases]
    assert sum(found is None for found in bounded) > 100 and sum(found is not None for found in bounded) > 100


def test_a_changed_quote_keeps_most_of_its_words():
    """A quote of several words is "changed" where at most one word in four (numbers aside) was left
    out or put in, however alike its letters: a neighbour's phrase that shares letters but not words is
    no changed quote, one long word replaced in a short quote is, and a table's tags part its words."""
    from kg_decoder.versions import approximate

    def found(text, quote):
        where = approximate(text, quote)
        return None if where is None else text[where[0]:where[1]]

    neighbour = "Los municipios obtienen ingresos por concepto de contribuciones de los predios urbanos."
    assert found(neighbour, "ingresos por la vía de") is None  # 2 of 5 words differ: another phrase
    assert found("Deve ser aprovado o que está definido nos presentes estatutos.",
                 "no artigo nono destes estatutos") is None
    assert found("A Direcção é composta por três membros, e o seu Tesoureiro assina.",
                 "e o seu Presidente") == "e o seu Tesoureiro"
    assert found("The report was signed by the CEO on Monday.",
                 "signed by the Director-General") == "signed by the CEO"  # alike in letters only 0.596
    assert found("Acme had a revenue of 14.5 M in 2024.", "revenue of 12 M in 2023") == "revenue of 14.5 M in 2024"
    # One word in four, to the nearest: two of six (a heading's number drawn apart, a word replaced).
    heading = found("ROLE OF THE amended STATES TRUSTEE", "B.\n\nROLE OF THE UNITED STATES")
    assert heading is not None and heading.startswith("ROLE OF THE amended STATES")
    table = ("<table><tr><td>Title of each class</td><td/><td>Name of exchange on amended registered</td></tr>"
             "</table>")
    assert found(table, "Name of exchange on which registered") == "Name of exchange on amended registered"
    assert found(table, "class Name of exchange") == "class</td><td/><td>Name of exchange"
    # A quote of a word or two is weighed by its letters, as is text written without spaces.
    assert found("Net income rose.", "Net revenue") is None
    assert found("本公司的年度收入为十四亿元。", "本公司的年度收入为十二亿元") == "本公司的年度收入为十四亿元"


def _folded_by_one_pattern(text: str) -> str:
    """folded_letters as first written: one pattern for whitespace and hyphens, quotes by str.translate."""
    import re
    import unicodedata

    from kg_decoder.model.page_text import _LEFT_OUT, _PLAIN

    left_out_or_space = re.compile("[\\s" + "".join(map(re.escape, sorted(_LEFT_OUT))) + "]+")
    return left_out_or_space.sub("", unicodedata.normalize("NFKC", text).translate(str.maketrans(_PLAIN)).casefold())


def test_folded_letters_and_trigrams_are_those_of_their_plain_definitions():
    """The fast folding (str.split, a search for quotes) and the trigrams numpy cuts give what the plain
    definitions give, on random texts of every script, spaces, hyphens, quotes and lone surrogates."""
    from kg_decoder.graph.text_index import trigrams
    from kg_decoder.model import folded_letters

    pick = random.Random(11)
    alphabet = ([chr(code) for code in range(0, 0x3100)] + ["\U0001F600", "\ud800", "\udfff", "\U0010FFFF"]
                + list("  \t\n\x1c\x85\u2028\u3000-\u00ad\u2014\u201c\u201d\u2019\ufb03ßİ"))
    for _ in range(5000):
        text = "".join(pick.choice(alphabet) for _ in range(pick.randint(0, 30)))
        assert folded_letters(text) == _folded_by_one_pattern(text), repr(text)
        assert trigrams(text) == sorted({text[k:k + 3] for k in range(len(text) - 2)}), repr(text)
    for length in (999, 1000, 1001, 5000):  # long texts: cut by numpy
        text = "".join(pick.choice(alphabet[:300] + alphabet[-12:]) for _ in range(length))
        assert trigrams(text) == sorted({text[k:k + 3] for k in range(len(text) - 2)})
