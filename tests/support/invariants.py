"""The invariants of DESIGN.md, checked on what the store holds (graph + library)."""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
from importlib.resources import files

import kg_decoder
from kg_decoder.decode.assembly import SEPARATOR
from kg_decoder.graph.library import sha256_hex

TABLE_PREFIX, TABLE_SUFFIX = "<table", "</table>"


@functools.lru_cache(maxsize=1)
def _reference_encoding():
    """cl100k_base as OpenAI's tiktoken counts it, not the chunker's bpe-openai: the merge table is the
    file bpe-openai ships (tiktoken would download it), checked against the hash tiktoken expects of
    OpenAI's own; the split pattern and special tokens are tiktoken's."""
    import tiktoken
    from tiktoken_ext import openai_public

    data = gzip.decompress((files("bpe_openai") / "data" / "cl100k_base.tiktoken.gz").read_bytes())

    def shipped_table(url: str, expected_hash: str) -> dict[bytes, int]:
        assert hashlib.sha256(data).hexdigest() == expected_hash, f"not OpenAI's {url}"
        return {base64.b64decode(token): int(rank) for token, rank in (row.split() for row in data.splitlines() if row)}

    original, openai_public.load_tiktoken_bpe = openai_public.load_tiktoken_bpe, shipped_table
    try:
        return tiktoken.Encoding(**openai_public.cl100k_base())
    finally:
        openai_public.load_tiktoken_bpe = original


def reference_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k_base, counted by another engine than the chunker's.

    >>> reference_tokens("Hello world"), reference_tokens("")
    (2, 0)
    """
    return len(_reference_encoding().encode_ordinary(text))


def orphans(store) -> list:
    return store.table("audit-orphan-entities").rows


def check_document(store, document: str) -> dict:
    """Assert every offset invariant for one document; return its segments' texts and elements."""
    segments = store.document_segments(document)
    assert segments, f"{document} has no pages or sections"
    texts = {row.segment: store.text(row.sha256) for row in segments}
    carrying = [row for row in segments if row.text_document]
    document_text = SEPARATOR.join(texts[row.segment] for row in carrying)
    summary = store.source_quads(document)
    length = [q.object.value for q in summary if q.predicate.value.endswith("/charLength")]
    assert length == [str(len(document_text))]
    for row in segments:
        text = texts[row.segment]
        assert len(text) == row.char_length
        assert document_text[row.char_offset: row.char_offset + row.char_length] == text, row
    elements = store.document_elements(document)
    for element in elements:
        if element.char_offset is None:
            assert element.category == "Image", element
            continue
        text = texts[element.segment]
        piece = text[element.char_offset: element.char_offset + element.char_length]
        if element.category == "Table":
            assert piece.startswith(TABLE_PREFIX) and piece.endswith(TABLE_SUFFIX), piece[:80]
        else:
            assert piece == element.text, (piece, element.text)
        if element.bbox is not None:
            assert 0 <= element.left <= element.right <= element.page_width * 1.01
            assert 0 <= element.top <= element.bottom <= element.page_height * 1.01
    for image_text in (row for row in store.text_segments(document) if row.kind == "image"):
        text = store.text(image_text.sha256)
        assert image_text.char_offset is None and image_text.derived_from and len(text) == image_text.char_length
        assert text not in document_text, "a picture's words are kept out of the page and section text"
        for word in store.segment_text_elements(image_text.segment):
            assert word.category == "OcrWord" and text[word.char_offset:word.char_offset + word.char_length] == word.text
    assert orphans(store) == []
    return {"segments": segments, "texts": texts, "elements": elements, "document_text": document_text}


def check_chunks(store, document: str, chunk_size: int) -> list:
    """Assert the chunk invariants for one chunked document; return its chunks (ChunkView)."""
    texts = {row.segment: store.text(row.sha256) for row in store.text_segments(document)}
    chunks = kg_decoder.document_chunks(document, store=store)
    assert [c.index for c in chunks] == list(range(len(chunks)))
    covered = {segment: [False] * len(text) for segment, text in texts.items()}
    for chunk in chunks:
        text = texts[chunk.segment]
        body = text[chunk.char_offset: chunk.char_offset + chunk.char_length]
        assert chunk.text[chunk.prefix_length: chunk.prefix_length + chunk.char_length] == body, chunk.iri
        assert body and body == body.strip()
        assert "\ufffd" not in chunk.text or "\ufffd" in text
        assert chunk.tokens == reference_tokens(chunk.text) <= chunk_size
        assert store.chunk_info(chunk.iri).sha256 == sha256_hex(chunk.text.encode("utf-8"))
        for i in range(chunk.char_offset, chunk.char_offset + chunk.char_length):
            covered[chunk.segment][i] = True
    for segment, text in texts.items():
        missed = "".join(ch for ch, hit in zip(text, covered[segment]) if not hit)
        assert not missed.strip(), f"text of {segment} reached no chunk: {missed[:80]!r}"
    assert orphans(store) == []
    return chunks


CLOCK_READINGS = ("startedAtTime", "endedAtTime", "generatedAtTime")


def timeless(quads) -> set:
    """Quads without the clock readings of runs and versions: the only thing two decodes of a file differ in."""
    return {q for q in quads if not q.predicate.value.endswith(CLOCK_READINGS)}
