"""The text index orders decodes by when they ended as times, not as text: Oxigraph writes an
xsd:dateTime without trailing zeros, so ``10:00:00Z`` sorts after ``10:00:00.51Z`` as text."""

from __future__ import annotations

from kg_decoder.graph.text_index import HeldDecode, IndexedText, TextIndex


def test_a_later_decode_in_the_same_second_replaces_the_earlier_one(tmp_path):
    index = TextIndex(tmp_path / "index.sqlite")
    try:
        for activity, ended, word in (("urn:a:1", "2026-12-01T10:00:00Z", "earlier"),
                                      ("urn:a:2", "2026-12-01T10:00:00.51Z", "later"),
                                      ("urn:a:0", "2026-12-01T11:00:00.5+02:00", "older")):  # 09:00 UTC: kept out
            index.put(HeldDecode("urn:doc", activity, ended, "f.txt"),
                      [IndexedText("urn:doc", "urn:seg", "page", 0, f"the {word} text", 1)])
        assert index.held("urn:doc").activity == "urn:a:2"
        assert [text.text for text in index.candidates("later text")[0]] == ["the later text"]
        assert index.candidates("earlier text") == ([], None)
        assert index.watermark() == "2026-12-01T10:00:00.51Z"
    finally:
        index.close()
