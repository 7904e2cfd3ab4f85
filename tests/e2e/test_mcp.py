"""``kg-decoder mcp``: a real server process driven by the MCP SDK's own client, over stdio and over
streamable HTTP, on corpus documents: every tool called, each listed with a description, an input
and an output schema, each structured result valid against its schema; a quote traced to the page
and boxes ``kg_decoder.trace`` gives; an invented quote found nowhere, and said so; SERVICE, writes
on a read-only server and paths outside the roots refused; a malformed argument a tool error, the
server still answering."""

from __future__ import annotations

import base64
import io
import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
import jsonschema
import pytest

import kg_decoder
from conftest import REPO

pytest.importorskip("mcp")
from mcp import Client, StdioServerParameters  # noqa: E402

PDF, DOCX = "layout-parser-paper-fast.pdf", "handbook-1p.docx"
QUOTE = "deep learning"
INVENTED = "the quarterly revenue of the unicorn farm rose by 12 percent"


def _server_command(store: Path, *arguments: str) -> list[str]:
    return ["-m", "kg_decoder.cli", "mcp", "--store", str(store), "--request-workers", "1", *arguments]


def _stdio(store: Path, *arguments: str) -> Client:
    return Client(StdioServerParameters(command=sys.executable, args=_server_command(store, *arguments),
                                        cwd=str(REPO)), read_timeout_seconds=120)


@pytest.fixture(scope="module")
def corpus_two(corpus_dir, tmp_path_factory):
    """A store of two corpus documents, chunked, and what the Python API says of them; closed, so that
    the server may hold it."""
    folder = tmp_path_factory.mktemp("mcp-store")
    with kg_decoder.open_store(folder) as store:
        documents = {}
        for name in (PDF, DOCX):
            documents[name] = kg_decoder.decode(corpus_dir / name, store=store).document
            kg_decoder.chunk_document(documents[name], store=store)
        expected = {
            "trace": kg_decoder.trace(quote=QUOTE, document=documents[PDF], store=store, limit=5),
            "search": kg_decoder.search(QUOTE, store=store, limit=10, boxes=True),
        }
    return folder, documents, expected


def _calls(documents: dict) -> list[tuple[str, dict]]:
    return [
        ("search", {"quote": QUOTE}),
        ("search", {"quote": "LayoutParser", "document": PDF, "limit": 3}),
        ("trace", {"quote": QUOTE, "document": PDF}),
        ("trace", {"quote": INVENTED}),
        ("trace", {"subject": "http://ex.org/a", "predicate": "http://ex.org/b", "object": "c"}),
        ("page_image", {"document": PDF, "page": 1, "quote": QUOTE, "max_side": 512}),
        ("page_image", {"document": DOCX, "page": 1}),
        ("list_documents", {}),
        ("document_outline", {"document": PDF}),
        ("document_outline", {"document": documents[DOCX]}),
        ("sparql", {"query": "SELECT ?d WHERE { GRAPH <urn:graph:source> { ?d a <https://trustgraph.ai/ns/Document> "
                             "} } ORDER BY ?d"}),
        ("sparql", {"query": "ASK { GRAPH ?g { ?s ?p ?o } }"}),
        ("sparql", {"query": "CONSTRUCT { ?d a ?t } WHERE { GRAPH ?g { ?d a ?t } } LIMIT 3"}),
        ("audit", {"name": "audit-chunk-coverage", "rows": 5}),
        ("decode", {"paths": [PDF]}),
        ("add_facts", {"facts": [{"subject": "http://ex.org/a", "predicate": "http://ex.org/b", "object": "c",
                                  "quote": QUOTE, "document": PDF}]}),
    ]


BAD_CALLS = [
    ("sparql", {"query": "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }"}),
    ("sparql", {"query": "LOAD <http://127.0.0.1:9/data.ttl>"}),
    ("sparql", {"query": "INSERT DATA { <urn:x:a> <urn:x:b> <urn:x:c> }"}),
    ("sparql", {"query": "SELECT ?s WHERE { GRAPH ?g { ?s ?p ?o } }"}),  # thousands of rows; --row-cap 50
    ("search", {"quote": {"not": "text"}}),
    ("trace", {"quote": QUOTE, "subject": "http://ex.org/a"}),
    ("document_outline", {"document": "no-such-file.pdf"}),
    ("trace", {"quote": QUOTE, "document": "urn:document:00000000-0000-5000-8000-000000000000"}),
    ("page_image", {"document": PDF, "page": 99}),
]


async def _session(client: Client, documents: dict) -> dict:
    answers: dict = {}
    async with client:
        answers["tools"] = (await client.list_tools()).tools
        answers["calls"] = [(name, arguments, await client.call_tool(name, arguments))
                            for name, arguments in _calls(documents)]
        answers["bad"] = []
        for name, arguments in BAD_CALLS:  # each followed by a good call: the server still answers
            answers["bad"].append((name, await client.call_tool(name, arguments),
                                   await client.call_tool("list_documents", {"limit": 1})))
        answers["resources"] = (await client.list_resources()).resources
        answers["read"] = [await client.read_resource(resource.uri) for resource in answers["resources"][:3]]
        answers["prompts"] = (await client.list_prompts()).prompts
        answers["prompt"] = await client.get_prompt("answer_with_citations", {"question": "What is LayoutParser?"})
    return answers


@pytest.fixture(scope="module")
def over_stdio(corpus_two, corpus_dir):
    folder, documents, _ = corpus_two
    return anyio.run(_session, _stdio(folder, "--root", str(corpus_dir), "--row-cap", "50"), documents)


def _result(answers: dict, name: str, index: int = 0):
    return [result for called, _, result in answers["calls"] if called == name][index]


def test_every_tool_is_listed_with_a_description_and_both_schemas(over_stdio):
    tools = {tool.name: tool for tool in over_stdio["tools"]}
    assert set(tools) == {"search", "trace", "page_image", "list_documents", "document_outline", "sparql", "audit",
                          "decode", "add_facts"}
    for tool in tools.values():
        assert len(tool.description) > 80, tool.name
        assert tool.input_schema["type"] == "object" and tool.input_schema.get("properties"), tool.name
        assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
        assert "$ref" not in json.dumps(tool.output_schema), tool.name  # inlined: checked faster by a client
    assert tools["search"].annotations.read_only_hint and not tools["decode"].annotations.read_only_hint


def test_every_tool_answers_and_its_structured_result_fits_its_schema(over_stdio):
    schemas = {tool.name: tool.output_schema for tool in over_stdio["tools"]}
    called = set()
    for name, arguments, result in over_stdio["calls"]:
        called.add(name)
        if name in ("decode", "add_facts"):  # refused on a read-only server: below
            continue
        assert not result.is_error, (name, arguments, result.content[0].text)
        jsonschema.validate(result.structured_content, schemas[name])
        # the same answer as text, last (after page_image's picture), for a client that reads no structure
        assert json.loads(result.content[-1].text) == result.structured_content, name
    assert called == set(schemas)


def test_a_quote_is_traced_to_the_page_and_boxes_python_gives(over_stdio, corpus_two):
    expected = corpus_two[2]["trace"]
    answer = _result(over_stdio, "trace").structured_content
    assert answer["found"] and len(answer["places"]) == len(expected) > 0
    for place, source in zip(answer["places"], expected):
        assert (place["page_number"], place["segment"], place["start"], place["end"]) == \
               (source.page_number, source.segment, source.start, source.end)
        assert [(b["page_number"], b["left"], b["top"], b["right"], b["bottom"], b["verification"])
                for b in place["boxes"]] == [(b.page_number, b.left, b.top, b.right, b.bottom, str(b.verification))
                                             for b in source.boxes]
    assert answer["places"][0]["verification"] == "verified"
    assert answer["annotation"] == kg_decoder.web_annotations(expected)
    found = _result(over_stdio, "search").structured_content
    python = corpus_two[2]["search"]
    assert [(p["segment"], p["start"], len(p["boxes"])) for p in found["places"]] == \
           [(h.segment, h.start, len(h.source.boxes)) for h in python.hits]


def test_a_quote_is_traced_to_the_page_and_boxes_the_cli_gives(over_stdio, corpus_two, cli):
    folder, documents, _ = corpus_two
    done = cli("trace", "--quote", QUOTE, "--document", documents[PDF], "--store", folder, "--format", "json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    places = _result(over_stdio, "trace").structured_content["places"]
    assert [(p["page_number"], p["segment"], p["start"], p["end"],
             [(b["page_number"], b["left"], b["top"], b["right"], b["bottom"], b["verification"]) for b in p["boxes"]])
            for p in places] == \
           [(p["page_number"], p["segment"], p["start"], p["end"],
             [(b["page_number"], b["left"], b["top"], b["right"], b["bottom"], b["verification"]) for b in p["boxes"]])
            for p in printed] != []


def test_an_invented_quote_has_no_place_and_says_so(over_stdio):
    answer = _result(over_stdio, "trace", 1).structured_content
    assert not answer["found"] and answer["places"] == [] and "no place found" in answer["message"]
    fact = _result(over_stdio, "trace", 2).structured_content
    assert not fact["found"] and "fact" in fact["message"]


def test_a_page_comes_as_a_bounded_image_with_the_quotes_boxes(over_stdio):
    from PIL import Image

    result = _result(over_stdio, "page_image")
    image = next(block for block in result.content if block.type == "image")
    picture = Image.open(io.BytesIO(base64.b64decode(image.data)))
    assert max(picture.size) == 512 and image.mime_type == "image/png"
    assert result.structured_content["boxes_drawn"] >= 1 and result.structured_content["drawn_from"] == "page"
    office = _result(over_stdio, "page_image", 1).structured_content
    assert office["drawn_from"] == "rendering" and office["width"] <= 1568


def test_sparql_audit_and_documents_answer_tables(over_stdio, corpus_two):
    documents = corpus_two[1]
    rows = _result(over_stdio, "sparql").structured_content
    assert rows["kind"] == "select" and sorted(r["d"] for r in rows["rows"]) == sorted(documents.values())
    assert _result(over_stdio, "sparql", 1).structured_content["boolean"] is True
    assert _result(over_stdio, "sparql", 2).structured_content["triples"].count(" .\n") == 3
    audit = _result(over_stdio, "audit").structured_content["audits"][0]
    assert audit["audit"] == "audit-chunk-coverage" and audit["kind"] == "report" and audit["rows"]
    listed = _result(over_stdio, "list_documents").structured_content
    assert listed["total"] == 2 and {d["file_name"] for d in listed["documents"]} == {PDF, DOCX}
    outline = _result(over_stdio, "document_outline").structured_content
    assert outline["counts"]["pages"] == 2 and outline["counts"]["chunks"] >= 1


def test_bad_input_is_a_tool_error_and_the_server_answers_the_next_call(over_stdio):
    messages = {}
    for name, result, after in over_stdio["bad"]:
        assert result.is_error, name
        assert "Traceback" not in result.content[0].text
        assert not after.is_error and after.structured_content["total"] == 2
        messages.setdefault(name, result.content[0].text)
    assert "service-not-allowed" in messages["sparql"]
    load, insert, rows = [result.content[0].text for name, result, _ in over_stdio["bad"] if name == "sparql"][1:]
    assert "malformed-query" in load and "malformed-query" in insert  # a query, never an update
    assert "too-many-rows" in rows and "LIMIT" in rows
    assert "unknown-entity" in messages["document_outline"]
    unknown = [result.content[0].text for name, result, _ in over_stdio["bad"] if name == "trace"][1]
    assert unknown.endswith(": unknown-entity: no document urn:document:00000000-0000-5000-8000-000000000000 in the store")


def test_writes_are_refused_without_allow_writes(over_stdio):
    for name in ("decode", "add_facts"):
        result = _result(over_stdio, name)
        assert result.is_error and "forbidden" in result.content[0].text and "--allow-writes" in result.content[0].text


def test_documents_and_chunks_are_resources_and_a_prompt_asks_for_traced_quotes(over_stdio, corpus_two):
    uris = [resource.uri for resource in over_stdio["resources"]]
    assert any(uri.startswith("kg-decoder://document/") for uri in uris)
    assert any(uri.startswith("kg-decoder://chunk/") for uri in uris)
    texts = [read.contents[0].text for read in over_stdio["read"]]
    assert any('"segments"' in text for text in texts) and any('"anchors"' in text for text in texts)
    assert [prompt.name for prompt in over_stdio["prompts"]] == ["answer_with_citations"]
    assert "trace" in over_stdio["prompt"].messages[0].content.text


# ---------------------------------------------------------------- over streamable HTTP, writing


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _http_server(store: Path, *arguments: str):
    port = _free_port()
    process = subprocess.Popen([sys.executable, *_server_command(store, "--http", str(port), *arguments)],
                               cwd=str(REPO), stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    for _ in range(600):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return f"http://127.0.0.1:{port}/mcp", process
        except OSError:
            if process.poll() is not None:
                break
            time.sleep(0.1)
    process.kill()
    raise RuntimeError("kg-decoder mcp --http did not come up")


async def _writing_session(url: str, root: Path, outside: Path) -> dict:
    answers = {}
    async with Client(url, read_timeout_seconds=300) as client:
        answers["outside"] = await client.call_tool("decode", {"paths": [str(outside)]})
        answers["dotdot"] = await client.call_tool("decode", {"paths": ["../" + outside.name]})
        answers["link"] = await client.call_tool("decode", {"paths": ["link.txt"]})
        answers["decode"] = await client.call_tool("decode", {"paths": ["notes.txt"]})
        answers["facts"] = await client.call_tool("add_facts", {"facts": [
            {"subject": "http://ex.org/acme", "predicate": "http://ex.org/revenue", "object": "12 M",
             "quote": "revenue of 12 M", "document": "notes.txt"}]})
        answers["fact"] = await client.call_tool("trace", {"subject": "http://ex.org/acme",
                                                           "predicate": "http://ex.org/revenue", "object": "12 M"})
        answers["search"] = await client.call_tool("search", {"quote": "revenue of 12"})
    return answers


@pytest.mark.slow
def test_over_http_a_writing_server_decodes_under_its_roots_only_and_adds_facts(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "secret.txt"
    root.mkdir()
    (root / "notes.txt").write_text("Acme had a revenue of 12 M in 2024.\n", encoding="utf-8")
    outside.write_text("Not to be read.\n", encoding="utf-8")
    (root / "link.txt").symlink_to(outside)
    url, process = _http_server(tmp_path / "store", "--allow-writes", "--root", str(root))
    try:
        answers = anyio.run(_writing_session, url, root, outside)
    finally:
        process.terminate()
        process.wait(timeout=30)
    for refused in ("outside", "dotdot", "link"):
        assert answers[refused].is_error and "forbidden" in answers[refused].content[0].text, refused
    [decoded] = answers["decode"].structured_content["files"]
    assert decoded["status"] == "decoded" and decoded["chunks"] == 1
    assert answers["facts"].structured_content["facts"] == 1
    [outcome] = answers["facts"].structured_content["outcomes"]
    assert outcome["grounding"] == "exact" and outcome["chunk"].startswith("urn:chunk:")  # grounded, with its verdict
    fact = answers["fact"].structured_content
    assert fact["found"] and fact["places"][0]["quote"] == "revenue of 12 M"
    assert answers["search"].structured_content["places"][0]["file_name"] == "notes.txt"
    with kg_decoder.open_store(tmp_path / "store", read_only=True) as store:
        assert [d.file_name for d in store.document_summaries()] == ["notes.txt"]


@pytest.mark.slow
def test_over_http_a_read_only_server_traces_as_over_stdio(corpus_two, tmp_path):
    folder, documents, expected = corpus_two
    copy = tmp_path / "store"
    shutil.copytree(folder, copy)

    async def calls(url: str) -> tuple:
        async with Client(url, read_timeout_seconds=120) as client:
            return (await client.call_tool("trace", {"quote": QUOTE, "document": documents[PDF]}),
                    await client.call_tool("decode", {"paths": ["x"]}),
                    await client.call_tool("search", {"quote": 42}),
                    await client.call_tool("search", {"quote": QUOTE}))

    url, process = _http_server(copy)
    try:
        traced, refused, malformed, searched = anyio.run(calls, url)
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert [p["page_number"] for p in traced.structured_content["places"]] == \
           [s.page_number for s in expected["trace"]]
    assert refused.is_error and "--allow-writes" in refused.content[0].text
    assert malformed.is_error and not searched.is_error and searched.structured_content["found"]
