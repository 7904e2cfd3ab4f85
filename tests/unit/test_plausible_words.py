"""A text layer's words, as its plausibility reads them (``decode.pdf.text_plausibility.words_of``): split
at white space first, then character by character only in a token that is not all letters and digits,
they are the words a reading character by character finds, on real pages and on odd characters."""

from __future__ import annotations

import pypdfium2 as pdfium

from kg_decoder.decode.pdf.text_plausibility import _token_words, words_of


def test_words_split_at_white_space_first_are_the_words_read_character_by_character(corpus_dir):
    texts = ['Target(s) "quoted", e-mail,\u00a0Gal∗ 3.\u2003id="x"\tIVIs:t\u2028naïve ﬁle \ue000x 12²½ Ⅻ a\xadb']
    for name in ("layout-parser-paper-fast.pdf", "embedded-images-tables.pdf"):
        pdf = pdfium.PdfDocument(str(corpus_dir / name))
        texts += [pdf[index].get_textpage().get_text_bounded() for index in range(len(pdf))]
    for text in texts:
        assert words_of(text) == _token_words(text)  # white space is no part of a word: the same split
    assert words_of(texts[0]) == ["Target", "s", "quoted", "e-mail", "Gal", "3", "id", "x", "IVIs:t", "naïve",
                                  "ﬁle", "\ue000x", "12²½", "Ⅻ", "a\xadb"]
