"""The public API: every function answers wrong types, missing stores and unknown IRIs with a
KgDecoderError (a stable code and an HTTP status), never another exception; statuses are string
enums; results turn into JSON; options pass one way; the web app uses public names only."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

import kg_decoder
from kg_decoder import KgDecoderError

UNKNOWN = "urn:document:00000000-0000-0000-0000-000000000000"
BAD_CALLS = {
    "open_store a number": lambda s: kg_decoder.open_store(123),
    "open_store read-only where there is none": lambda s: kg_decoder.open_store("/nonexistent/kg", read_only=True),
    "open_store under a file": lambda s: kg_decoder.open_store("/etc/hostname/store"),
    "open_store a NUL": lambda s: kg_decoder.open_store("bad\0path"),
    "decode a number": lambda s: kg_decoder.decode(123, store=s),
    "decode a missing path": lambda s: kg_decoder.decode("/nonexistent/file.pdf", store=s),
    "decode a NUL path": lambda s: kg_decoder.decode("bad\0path", store=s),
    "decode a folder": lambda s: kg_decoder.decode("/tmp", store=s),
    "decode into a number": lambda s: kg_decoder.decode(b"words", store=123),
    "decode with an unknown option": lambda s: kg_decoder.decode(b"words", store=s, colour="blue"),
    "decode with a wrongly typed option": lambda s: kg_decoder.decode(b"words", store=s, section_max_size="big"),
    "decode with options of another kind": lambda s: kg_decoder.decode(b"words", store=s,
                                                                      options=kg_decoder.ChunkOptions()),
    "decode with a text file object": lambda s: kg_decoder.decode(open(__file__), store=s),
    "chunk nothing": lambda s: kg_decoder.chunk_document(None, store=s),
    "chunk an unknown document": lambda s: kg_decoder.chunk_document(UNKNOWN, store=s),
    "chunk a malformed IRI": lambda s: kg_decoder.chunk_document("not an iri <>", store=s),
    "chunk with a wrong option": lambda s: kg_decoder.chunk_document(UNKNOWN, store=s, chunk_size="big"),
    "chunks of an unknown document": lambda s: kg_decoder.document_chunks(UNKNOWN, store=s),
    "chunks of a number": lambda s: kg_decoder.document_chunks(5, store=s),
    "images of an unknown document": lambda s: kg_decoder.document_images(UNKNOWN, store=s),
    "export the images of an unknown document": lambda s: kg_decoder.export_images(UNKNOWN, "/tmp/x", store=s),
    "facts for nothing": lambda s: kg_decoder.add_facts(None, [("http://a/s", "http://a/p", "o")], store=s),
    "facts for an unknown chunk": lambda s: kg_decoder.add_facts("urn:chunk:x", [("http://a/s", "http://a/p", "o")],
                                                                store=s),
    "facts as a number": lambda s: kg_decoder.add_facts("urn:chunk:x", 5, store=s),
    "facts with spans as a number": lambda s: kg_decoder.add_facts("urn:chunk:x", [("http://a/s", "http://a/p", "o")],
                                                                  spans=5, store=s),
    "read facts from a number": lambda s: kg_decoder.read_facts(5),
    "read facts from nowhere": lambda s: kg_decoder.read_facts("/nonexistent/facts.ttl"),
    "read facts of an unknown format": lambda s: kg_decoder.read_facts("f.ttl", data=b"", format="xml"),
    "trace nothing": lambda s: kg_decoder.trace(store=s),
    "trace a number": lambda s: kg_decoder.trace(fact=5, store=s),
    "trace a malformed span": lambda s: kg_decoder.trace(span=5, store=s),
    "trace a span of an unknown page": lambda s: kg_decoder.trace(span=("urn:page:x", 0, 1), store=s),
    "trace a span of a malformed IRI": lambda s: kg_decoder.trace(span=("<>", 0, 1), store=s),
    "trace a quote that is a number": lambda s: kg_decoder.trace(quote=5, store=s),
    "trace a quote in an unknown document": lambda s: kg_decoder.trace(quote="x", document=UNKNOWN, store=s),
    "trace a quote in a document that is a number": lambda s: kg_decoder.trace(quote="x", document=5, store=s),
    "annotate a number": lambda s: kg_decoder.web_annotations(5),
    "annotate strings": lambda s: kg_decoder.web_annotations(["x"]),
    "audit a number": lambda s: kg_decoder.run_audits(123),
    "validate an unknown document": lambda s: kg_decoder.validate(s, document=UNKNOWN),
    "validate a document that is a number": lambda s: kg_decoder.validate(s, document=5),
    "validate text that is no N-Triples": lambda s: kg_decoder.validate(s, data="not ntriples"),
    "crawl a number": lambda s: kg_decoder.crawl(5, store=s),
    "crawl a mail address": lambda s: kg_decoder.crawl("mailto:a@example.org", store=s),
    "crawl with a wrong limit": lambda s: kg_decoder.crawl("http://127.0.0.1:9/", store=s, max_pages="many"),
    "crawl with an unknown option": lambda s: kg_decoder.crawl("http://127.0.0.1:9/", store=s, depth=3),
    "open a store on a closed port": lambda s: kg_decoder.open_store("http://127.0.0.1:9", library="unused-library"),
    "open a remote store without a library": lambda s: kg_decoder.open_store("http://127.0.0.1:9"),
    "open a library of an unknown protocol": lambda s: kg_decoder.open_store(None, library="nosuchproto://x/y"),
    "export into a folder that is not empty": lambda s: kg_decoder.export_store(s, Path(__file__).parent),
    "import a folder that is no export": lambda s: kg_decoder.import_store(s, Path(__file__).parent),
}


@pytest.mark.parametrize("case", sorted(BAD_CALLS))
def test_public_functions_raise_only_typed_errors(case):
    with kg_decoder.open_store(None) as store:
        with pytest.raises(KgDecoderError) as raised:
            BAD_CALLS[case](store)
    error = raised.value
    assert error.code and error.code != "error" and 400 <= error.http_status < 600
    assert "\n" not in error.message and json.dumps(error.to_json())


def test_every_error_class_has_a_stable_code_and_status():
    classes = [getattr(kg_decoder, name) for name in kg_decoder.__all__]
    errors = [c for c in classes if isinstance(c, type) and issubclass(c, KgDecoderError)]
    assert len(errors) > 20
    codes = {}
    for error in errors:
        assert error.code and 400 <= error.http_status < 600, error
        if error.__dict__.get("code"):
            assert error.code not in codes, (error, codes.get(error.code))
            codes[error.code] = error


def test_statuses_are_strings_and_results_are_json():
    with kg_decoder.open_store(None) as store:
        result = kg_decoder.decode(b"KGSENT words of one line.", store=store, file_name="a.txt")
        again = kg_decoder.decode(b"KGSENT words of one line.", store=store, file_name="a.txt")
        assert result.status == "decoded" and again.status == kg_decoder.DecodeStatus.UNCHANGED
        assert json.loads(json.dumps(result.to_json()))["status"] == "decoded"
        chunked = kg_decoder.chunk_document(result.document, store=store)
        assert chunked.to_json()["status"] == "chunked"
        [source] = kg_decoder.trace(quote="words of", store=store)
        assert json.loads(json.dumps(source.to_json()))["document"]["file_name"] == "a.txt"


def test_options_pass_one_way_an_object_with_keywords_over_it():
    with kg_decoder.open_store(None) as store:
        base = kg_decoder.DecodeOptions(section_strategy="count", section_element_count=1)
        data = b"First paragraph.\n\nSecond paragraph.\n"
        by_object = kg_decoder.decode(data, store=store, options=base)
        by_keywords = kg_decoder.decode(data, store=store, section_strategy="count", section_element_count=1)
        assert by_object.document == by_keywords.document and by_object.sections == 2
        overridden = kg_decoder.decode(data, store=store, options=base, section_element_count=5)
        assert overridden.sections == 1


def test_the_web_app_imports_only_public_names():
    web = Path(kg_decoder.__file__).resolve().parent / "web"
    allowed = {"kg_decoder", "kg_decoder.serve"}
    for path in web.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kg_decoder"):
                assert node.module in allowed, (path.name, node.module)
                exported = set(__import__(node.module, fromlist=["__all__"]).__all__)
                assert {alias.name for alias in node.names} <= exported, (path.name, node.module)
            if isinstance(node, ast.Import):
                assert all(not a.name.startswith("kg_decoder.") for a in node.names), path.name


def test_no_query_row_or_vocabulary_iri_outside_the_graph_stage():
    package = Path(kg_decoder.__file__).resolve().parent
    for path in package.rglob("*.py"):
        if "graph" in path.relative_to(package.parent).parts:
            continue
        text = path.read_text(encoding="utf-8")
        assert "store.select(" not in text and "trustgraph.ai/ns" not in text, path
        assert ".graph.query(" not in text and ".graph.evaluate(" not in text and "._rows(" not in text, path
