"""The invariants of DESIGN.md, checked on what the store holds (graph + library)."""

from __future__ import annotations

from kg_decoder.assembly import SEPARATOR

TABLE_PREFIX, TABLE_SUFFIX = "<table", "</table>"


def check_document(store, document: str) -> dict:
    """Assert every offset invariant for one document; return its segments' texts and elements."""
    segments = store.select("document_segments", document=document)
    assert segments, f"{document} has no pages or sections"
    texts = {row["segment"]: store.library.get(row["sha256"]).decode("utf-8") for row in segments}
    carrying = [row for row in segments if row["textDocument"]]
    document_text = SEPARATOR.join(texts[row["segment"]] for row in carrying)
    summary = store.source_quads(document)
    length = [q.object.value for q in summary if q.predicate.value.endswith("/charLength")]
    assert length == [str(len(document_text))]
    for row in segments:
        text = texts[row["segment"]]
        assert len(text) == row["charLength"]
        assert document_text[row["charOffset"] : row["charOffset"] + row["charLength"]] == text, row
    elements = store.select("document_elements", document=document)
    for element in elements:
        if "charOffset" not in element:
            assert element["category"] == "Image", element
            continue
        text = texts[element["segment"]]
        piece = text[element["charOffset"] : element["charOffset"] + element["charLength"]]
        if element["category"] == "Table":
            assert piece.startswith(TABLE_PREFIX) and piece.endswith(TABLE_SUFFIX), piece[:80]
        else:
            assert piece == element["text"], (piece, element["text"])
        if "left" in element:
            assert 0 <= element["left"] <= element["right"] <= element["pageWidth"] * 1.01
            assert 0 <= element["top"] <= element["bottom"] <= element["pageHeight"] * 1.01
    assert store.select("audit-orphan-entities") == []
    return {"segments": segments, "texts": texts, "elements": elements, "document_text": document_text}


def check_chunks(store, document: str, chunk_size: int) -> list:
    """Assert the chunk invariants for one chunked document; return its chunks (ChunkView)."""
    from kg_decoder.chunk_pipeline import document_chunks
    from kg_decoder.chunking import count_tokens
    from kg_decoder.library import sha256_hex

    texts = {row["segment"]: store.library.get(row["sha256"]).decode("utf-8")
             for row in store.select("text_documents", document=document)}
    chunks = document_chunks(document, store=store)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    covered = {segment: [False] * len(text) for segment, text in texts.items()}
    for chunk in chunks:
        text = texts[chunk.segment]
        body = text[chunk.char_offset: chunk.char_offset + chunk.char_length]
        assert chunk.text[chunk.prefix_length: chunk.prefix_length + chunk.char_length] == body, chunk.iri
        assert body and body == body.strip()
        assert "\ufffd" not in chunk.text or "\ufffd" in text
        assert chunk.tokens == count_tokens(chunk.text) <= chunk_size
        rows = store.select("chunk_info", chunk=chunk.iri)
        assert rows[0]["sha256"] == sha256_hex(chunk.text.encode("utf-8"))
        for i in range(chunk.char_offset, chunk.char_offset + chunk.char_length):
            covered[chunk.segment][i] = True
    for segment, text in texts.items():
        missed = "".join(ch for ch, hit in zip(text, covered[segment]) if not hit)
        assert not missed.strip(), f"text of {segment} reached no chunk: {missed[:80]!r}"
    assert store.select("audit-orphan-entities") == []
    return chunks
