"""The text index keeps, for each trigram, how many texts hold it (what a lookup picks the rarest
trigrams by): the counts equal FTS5's own after texts of many trigrams are put, replaced and removed,
more than one statement's worth of them at a time."""

from __future__ import annotations

from kg_decoder.graph.text_index import COUNTED_PER_STATEMENT, HeldDecode, IndexedText, TextIndex, trigrams


def counts(index: TextIndex) -> dict[str, int]:
    return dict(index._db.execute("SELECT trigram, texts FROM trigram_counts WHERE texts != 0"))


def counted_by_fts5(index: TextIndex) -> dict[str, int]:
    index._db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.v USING fts5vocab(main, segment_keys, 'row')")
    return dict(index._db.execute("SELECT term, doc FROM temp.v"))


def put(index: TextIndex, document: str, ended: str, *texts: str) -> None:
    index.put(HeldDecode(document, f"urn:run:{ended}", ended),
              [IndexedText(document, f"{document}/{i}", "page", i, text, i + 1) for i, text in enumerate(texts)])


def test_trigram_counts_follow_puts_replacements_and_removals(tmp_path):
    words = " ".join(f"w{n:04d}x" for n in range(400))  # thousands of distinct trigrams
    assert len(trigrams(words)) > 3 * COUNTED_PER_STATEMENT
    index = TextIndex(tmp_path / "index.sqlite")
    try:
        put(index, "urn:doc:a", "2026-12-01T10:00:00Z", words, words[:1500], "shared words")
        put(index, "urn:doc:b", "2026-12-01T10:00:01Z", words[700:], "shared words")
        assert counts(index) == counted_by_fts5(index) and counts(index)["sha"] == 2
        put(index, "urn:doc:a", "2026-12-01T10:00:02Z", words[300:900])  # a re-decode replaces its texts
        assert counts(index) == counted_by_fts5(index) and counts(index)["sha"] == 1
        index.remove("urn:doc:b")
        assert counts(index) == counted_by_fts5(index) and "sha" not in counts(index)
        assert [t.document for t in index.candidates("w0100x w0101x")[0]] == ["urn:doc:a"]
    finally:
        index.close()


def test_a_long_texts_trigrams_are_every_distinct_three_letters_whatever_the_letters():
    """A long text is cut by numpy: the same trigrams, in the same order, as slices give, with NUL
    letters (numpy's strings drop them at their end), lone surrogates and letters past the BMP."""
    letters = ["a", "b", "\x00", "\ud800", "\udfff", "\U0001f600", "\U0010ffff", "\x01", " ", "\uffff"]
    for shift in range(len(letters)):
        key = "".join(letters[(i * 7 + i // 3 + shift) % (len(letters) - shift)] for i in range(1200))
        assert trigrams(key) == sorted({key[i:i + 3] for i in range(len(key) - 2)})
