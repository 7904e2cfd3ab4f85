"""Every shipped query keeps the contract its header declares, and the typed reads keep theirs."""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest
from pyoxigraph import QuerySolutions, Store

import kg_decoder
from kg_decoder.graph import indexing, reads, version_reads
from kg_decoder.graph.queries import query_file, shipped_queries
from kg_decoder.model.errors import QueryError

QUERIES = [query.name for query in shipped_queries()]


@pytest.mark.parametrize("name", QUERIES)
def test_a_query_returns_what_its_header_says_and_binds_only_variables_it_uses(name):
    query = query_file(name)
    assert query.description or query.headers.get("finds"), f"{name}.rq says nothing of what it gives"
    kind = query.kind_of_query
    if kind == "select":
        solutions = Store().query(query.text)
        assert isinstance(solutions, QuerySolutions)
        assert tuple(v.value for v in solutions.variables) == query.returns, name
    else:
        assert not query.returns, f"{name}.rq is no SELECT but declares what it returns"
    code = "\n".join(line for line in query.text.splitlines() if not line.startswith("#"))
    for variable in query.binds + query.may_bind:
        assert re.search(rf"\?{variable}\b", code), f"{name}.rq binds ?{variable}, which it does not use"
    if query.binds:  # bound, it still parses (and a SELECT runs)
        values = {v: "urn:test:x" for v in query.binds}
        if name == "fact_sources":
            values = {"s": "http://ex.org/s", "p": "http://ex.org/p", "o": "http://ex.org/o"}
        bound = query.bound(values)
        if kind == "update":
            Store().update(bound)
        else:
            Store().query(bound)


def test_binding_a_misspelt_or_missing_variable_fails_at_once():
    with pytest.raises(QueryError, match=r"binds \?segment, not \?segmnt"):
        query_file("segment_info").bound({"segmnt": "urn:page:x"})
    with pytest.raises(QueryError, match=r"needs \?segment bound"):
        query_file("segment_info").bound({})
    with pytest.raises(QueryError, match="not an IRI"):
        query_file("segment_info").bound({"segment": "urn:page:x> } ; DROP ALL ; #"})
    with pytest.raises(QueryError, match="no shipped query"):
        query_file("../secrets")


def read_methods():
    for name, method in inspect.getmembers(reads.GraphReads, inspect.isfunction):
        if not name.startswith("_"):
            yield name, method


READ_MODULES = (reads, version_reads, indexing)  # GraphReads, the reads mixed into it, the text index's


def test_every_read_dataclass_holds_what_its_query_returns():
    source = "".join(inspect.getsource(module) for module in READ_MODULES)
    pairs = re.findall(r'self\._(?:read|one)\("([\w-]+)", (\w+)', source)
    assert len(pairs) >= 20
    for name, kind in pairs:
        dataclass = next(getattr(m, kind) for m in READ_MODULES if hasattr(m, kind))
        fields = {field.name for field in dataclasses.fields(dataclass)}
        returned = {reads.snake(variable) for variable in query_file(name).returns}
        required = {f.name for f in dataclasses.fields(dataclass)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        assert returned <= fields, (name, kind, returned - fields)
        assert required <= returned, (name, kind, required - returned)


def test_every_shipped_select_has_a_typed_read_or_is_an_audit():
    source = "".join(inspect.getsource(module) for module in READ_MODULES)
    read = set(re.findall(r'"([\w-]+)"', source))
    for query in shipped_queries():
        if query.kind_of_query != "select" or query.name.startswith("audit-"):
            continue
        # What the graphs themselves read: the quads of a server without the Graph Store Protocol, and
        # what a read-only graph's writer has committed.
        assert query.name in read or query.name in ("all_quads", "library_references"), query.name


def test_every_typed_read_answers_on_an_empty_store():
    with kg_decoder.open_store(None) as store:
        for name, method in read_methods():
            parameters = [p for p in inspect.signature(method).parameters.values() if p.name != "self"]
            if name == "table":
                continue
            arguments = ["urn:test:x" if p.default is inspect.Parameter.empty else None for p in parameters]
            if name == "fact_sources":
                from pyoxigraph import NamedNode

                arguments = [NamedNode("http://ex.org/s")] * 3
            answer = method(store, *[a for a in arguments if a is not None])
            assert answer in ([], None, set(), 0, {}, False), (name, answer)


def test_a_json_lines_fact_file_keeps_a_quote_that_holds_a_line_separator():
    """JSON leaves U+2028 as it is inside a string; a JSON line is cut at newlines only."""
    import json

    from kg_decoder.graph.terms import read_facts

    lines = [json.dumps({"s": "http://ex.org/a", "p": "http://ex.org/says", "o": "x", "quote": "two\u2028lines"},
                        ensure_ascii=False), json.dumps({"s": "http://ex.org/b", "p": "http://ex.org/says", "o": "y",
                                                         "quote": "next\u0085one"}, ensure_ascii=False)]
    triples, spans = read_facts("facts.jsonl", data="\r\n".join(lines).encode())
    assert len(triples) == 2 and spans == [{"quote": "two\u2028lines"}, {"quote": "next\u0085one"}]


def test_a_mappings_lines_are_the_quads_its_terms_make():
    """The document mapping writes N-Quads lines from its terms' own N-Triples forms: the same quads
    as pyoxigraph's, whatever a text holds (quotes, backslashes, line breaks, control characters,
    other scripts, a language, a datatype)."""
    from pyoxigraph import Literal, NamedNode

    from kg_decoder.graph.quads import NQuadsWriter, QuadWriter, double_literal, int_literal, typed_literal

    subject, predicate = NamedNode("urn:kg-test:élément/1?a=b#c"), NamedNode("https://trustgraph.ai/ns/text")
    objects = [Literal('say "hi"\\ there\n\r\ttab\x00\x07\x7f\u2028 שלום 中文 😀'),
               Literal("Olá", language="pt-BR"),
               int_literal(-12), double_literal(1e-300), double_literal(float("inf")), typed_literal(True),
               NamedNode("https://example.org/a%20b"), Literal("")]
    lines, quads = NQuadsWriter(), QuadWriter()
    for obj in objects:
        lines.add(subject, predicate, obj)
        quads.add(subject, predicate, obj)
    assert len(lines) == len(objects) and lines.quads == quads.quads
    from pyoxigraph import Triple

    for odd in ('"x" <urn:graph:other> .\n<urn:a> <urn:b> "injected"', None, Triple(subject, predicate, subject)):
        with pytest.raises(TypeError):
            lines.add(subject, predicate, odd)
    assert len(lines) == len(objects)
