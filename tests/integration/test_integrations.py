"""The LangChain and LlamaIndex loaders on a real store of a corpus PDF, run through the real libraries
(their in-memory vector stores with fake embeddings: no model, no network), and every document they
hand out traced back to verified boxes on its page."""

from __future__ import annotations

import pytest

import kg_decoder
from kg_decoder.integrations.chunks import boxes_of

TITLE = "Deep Learning Based Document Image Analysis"


@pytest.fixture(scope="module")
def loaded(corpus_dir, tmp_path_factory):
    store = kg_decoder.open_store(tmp_path_factory.mktemp("integrations") / "store")
    decoded = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store)
    kg_decoder.chunk_document(decoded.document, store=store, options=kg_decoder.ChunkOptions(chunk_size=128))
    yield store, decoded.document, kg_decoder.document_chunks(decoded.document, store=store)
    store.close()


def _verified_on(sources, page_number: int, share: float = 1.0) -> bool:
    """Boxes, all on the page, at least ``share`` of them verified on the words (a chunk crossing the
    first page's turned margin line gets that line's element box)."""
    boxes = [b for s in sources for b in s.boxes]
    verified = [b for b in boxes if str(b.verification) == "verified"]
    return bool(boxes) and all(b.page_number == page_number for b in boxes) and len(verified) >= share * len(boxes)


def test_langchain_loader_and_retriever_hand_out_chunks_that_trace_to_verified_boxes(loaded):
    from langchain_core.embeddings import DeterministicFakeEmbedding
    from langchain_core.vectorstores import InMemoryVectorStore

    from kg_decoder.integrations.langchain import (KgDecoderLoader, KgDecoderRetriever, trace_answer_quote,
                                                   trace_document)

    store, document, chunks = loaded
    documents = KgDecoderLoader(store, [document]).load()
    assert [d.metadata["chunk_iri"] for d in documents] == [c.iri for c in chunks]
    for loaded_document, chunk in zip(documents, chunks):
        metadata = loaded_document.metadata
        assert loaded_document.page_content == chunk.text
        assert metadata["source"] == "layout-parser-paper-fast.pdf" and metadata["document_iri"] == document
        assert metadata["page"] == metadata["page_number"] - 1 == chunk.anchors[0].page_number - 1
        assert {b["page_number"] for b in metadata["boxes"]} == {a.page_number for a in chunk.anchors}
    # A real pipeline: the documents in LangChain's vector store (fake embeddings), one retrieved, traced.
    vectors = InMemoryVectorStore.from_documents(documents, DeterministicFakeEmbedding(size=16))
    [found] = vectors.similarity_search(documents[2].page_content, k=1)
    sources = trace_document(found, store)
    assert sources and sources[0].chunks == [found.metadata["chunk_iri"]]
    assert _verified_on(sources, found.metadata["page_number"])
    # The lexical retriever: chunks that hold the words; a quote of the answer traced to its boxes.
    retrieved = KgDecoderRetriever(store=store, k=2).invoke(TITLE)
    assert retrieved and all(TITLE in d.page_content.replace("\n", " ") for d in retrieved)
    quoted = trace_answer_quote(TITLE, store, retrieved)
    assert quoted[0].document.iri == document and _verified_on(quoted, 1)
    assert boxes_of(quoted)[0]["verification"] == "verified"
    assert trace_answer_quote("The harbour committee approved a budget for dredging", store, retrieved) == []


def test_llamaindex_reader_gives_nodes_with_offsets_in_the_document_text_that_trace_to_verified_boxes(loaded):
    from llama_index.core import MockEmbedding, VectorStoreIndex
    from llama_index.core.schema import MetadataMode, NodeRelationship

    from kg_decoder.integrations.llamaindex import KgDecoderReader, trace_answer_quote, trace_node

    store, document, chunks = loaded
    reader = KgDecoderReader(store)
    nodes = reader.load_nodes()
    assert [n.node_id for n in nodes] == [c.iri for c in chunks]
    segments = {s.segment: s for s in store.text_segments(document)}
    for node, chunk in zip(nodes, chunks):
        assert node.relationships[NodeRelationship.SOURCE].node_id == document
        assert node.metadata["page_label"] == str(chunk.anchors[0].page_number)
        segment = segments[chunk.segment]
        page_text = store.text(segment.sha256, segment.segment)
        body = node.text[node.metadata["prefix_length"]:]
        assert page_text[node.start_char_idx - segment.char_offset:node.end_char_idx - segment.char_offset] == body
        embedded = node.get_content(metadata_mode=MetadataMode.EMBED)
        assert "layout-parser-paper-fast.pdf" in embedded and "chunk_iri" not in embedded and "boxes" not in embedded
    assert [d.doc_id for d in reader.load_data()] == [c.iri for c in chunks]
    # A real pipeline: an index with mock embeddings, a node retrieved with its score, traced.
    index = VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))
    [hit] = index.as_retriever(similarity_top_k=1).retrieve(TITLE)
    sources = trace_node(hit, store)
    assert sources and _verified_on(sources, hit.node.metadata["page_number"], share=0.5)
    quoted = trace_answer_quote(TITLE, store, [hit])
    assert quoted and _verified_on(quoted, 1), [(s.page_number, [(b.page_number, str(b.verification)) for b in s.boxes]) for s in quoted]
