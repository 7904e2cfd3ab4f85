"""The vocabulary is declared; the Python API takes paths, bytes and file objects."""

from __future__ import annotations

import io

import pytest
import rdflib
from rdflib.namespace import RDFS

import kg_decoder
from kg_decoder.graph.resources import resource_dir
from kg_decoder.graph.vocabulary import TG, XSD


def test_every_tg_term_written_is_declared_with_label_and_comment(chunked_generated_store):
    store, _ = chunked_generated_store
    ontology = rdflib.Graph().parse(resource_dir("ontology") / "tg.ttl")
    used = set()
    for quad in store.quads():
        for term in (quad.predicate, quad.object):
            value = getattr(term, "value", None)
            if isinstance(value, str) and value.startswith(TG) and type(term).__name__ == "NamedNode":
                used.add(value)
    assert len(used) > 30
    for iri in sorted(used):
        node = rdflib.URIRef(iri)
        assert (node, RDFS.label, None) in ontology, f"{iri} has no rdfs:label"
        assert (node, RDFS.comment, None) in ontology, f"{iri} has no rdfs:comment"


def test_literals_are_typed(generated_store):
    store, results = generated_store
    quads = store.source_quads(results["generated.pdf"].text_documents[0].iri)
    datatypes = {q.predicate.value.rsplit("/", 1)[-1]: q.object.datatype.value for q in quads
                 if type(q.object).__name__ == "Literal"}
    assert datatypes["pageNumber"] == XSD + "integer"
    assert datatypes["charOffset"] == XSD + "integer"
    assert datatypes["pageWidth"] == XSD + "double"
    assert datatypes["textDocument"] == XSD + "boolean"


def test_decode_from_bytes_and_file_objects_and_by_mime(generated, store):
    data = generated["generated.docx"].path.read_bytes()
    from_bytes = kg_decoder.decode(data, store=store)
    assert from_bytes.format == "docx" and from_bytes.file_name is None
    with open(generated["generated.docx"].path, "rb") as stream:
        from_file = kg_decoder.decode(stream, store=store)
    assert from_file.document == from_bytes.document  # identity is the bytes, not the name
    assert from_file.file_name == "generated.docx"
    as_markdown = kg_decoder.decode(io.BytesIO(b"# KGSENT Kind\n\nbody text\n"), store=store,
                                    mime_type="text/markdown")
    assert as_markdown.format == "markdown"
    page = from_bytes.text_documents[0]
    assert store.content(page.iri).decode("utf-8") == page.text


def test_decode_result_counts_match_the_graph(generated_store):
    store, results = generated_store
    for name in ("generated.pdf", "generated.xlsx", "generated.html"):
        [row] = store.document_summaries(results[name].document)
        result = results[name]
        assert (row.elements, row.tables, row.images, row.sections) == (
            result.elements, result.tables, result.images, result.sections)
        assert (row.pages or 0) == result.pages


def test_the_activity_records_versions_and_strategy(generated_store):
    store, results = generated_store
    [row] = store.document_summaries(results["scanned.pdf"].document)
    assert row.strategy == "ocr_only"
    versions = [q.object.value for q in store.quads() if q.predicate.value == TG + "softwareVersion"]
    assert any(v.startswith("unstructured 0.") for v in versions)
    assert any(v.startswith("kg-decoder ") for v in versions)


def test_public_functions_given_a_folder_open_it_for_the_call_and_close_it(generated, tmp_path):
    folder = tmp_path / "store"
    decoded = kg_decoder.decode(generated["generated.md"].path, store=folder)  # decoding starts a store
    chunked = kg_decoder.chunk_document(decoded.document, store=folder, chunk_size=64)
    [first, *_] = kg_decoder.document_chunks(decoded.document, store=folder)
    added = kg_decoder.add_facts(first.iri, [("http://ex.org/a", "http://ex.org/b", "c")], store=folder)
    assert chunked.status == "chunked" and added.status == "added"
    assert kg_decoder.trace(fact=("http://ex.org/a", "http://ex.org/b", "c"), store=folder)
    assert kg_decoder.validate(folder).conforms and kg_decoder.run_audits(folder)
    with kg_decoder.open_store(folder) as store:  # each call closed it: the folder opens for writing
        assert store.has_document(decoded.document)


@pytest.mark.parametrize("call", [
    lambda folder: kg_decoder.trace(quote="anything", store=folder),
    lambda folder: kg_decoder.document_chunks("urn:document:x", store=folder),
    lambda folder: kg_decoder.chunk_document("urn:document:x", store=folder),
    lambda folder: kg_decoder.add_facts("urn:chunk:x", [("http://ex.org/a", "http://ex.org/b", "c")], store=folder),
    lambda folder: kg_decoder.document_images("urn:document:x", store=folder),
    lambda folder: kg_decoder.run_audits(folder),
    lambda folder: kg_decoder.validate(folder),
], ids=["trace", "document_chunks", "chunk_document", "add_facts", "document_images", "run_audits", "validate"])
def test_a_mistyped_store_folder_is_an_unknown_store_and_nothing_is_created(call, tmp_path):
    folder = tmp_path / "no-such-store"
    with pytest.raises(kg_decoder.UnknownStore) as raised:
        call(folder)
    assert raised.value.code == "unknown-store" and raised.value.http_status == 404
    assert str(folder) in raised.value.message
    assert not folder.exists()
