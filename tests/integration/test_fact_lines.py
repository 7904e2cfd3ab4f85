"""Facts in bulk, each grounded with a verdict: the Python API, the command line and ``POST /api/facts``
on a real store, the placed PDF (words where reportlab drew them) and a corpus PDF."""

from __future__ import annotations

import json

import pytest

import kg_decoder
from conftest import run_cli
from test_chunks_facts_trace import assert_box_near, drawn_box, make_placed_pdf

EX = "http://example.org/"
TOKEN = "test-write-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
INVENTED = "The harbour committee approved a new budget for dredging in March."


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fact-lines")
    make_placed_pdf(folder / "placed.pdf")
    store = kg_decoder.open_store(folder / "store")
    result = kg_decoder.decode(folder / "placed.pdf", store=store)
    kg_decoder.chunk_document(result.document, store=store)
    chunks = kg_decoder.document_chunks(result.document, store=store)
    return store, result.document, chunks, folder


def fact(name: str, **more) -> dict:
    return {"s": EX + "alpha", "p": EX + "says", "o": name, **more}


def test_each_line_gets_its_verdict_and_bad_lines_are_refused_with_their_number(placed):
    store, document, chunks, _ = placed
    page_one = next(c for c in chunks if "kilo" in c.text)
    lines = [
        json.dumps(fact("exact", chunk=page_one.iri, quote="echo foxtrot. Golf hotel")),
        json.dumps(fact("normalised", document=document, quote="\uff27olf hotel india")),
        json.dumps(fact("fuzzy", quote="hotel golf india juliett kilo")),  # word order, nothing named
        json.dumps(fact("dropped", chunk=page_one.iri, quote="November oscar quebec romeo sierra")),
        json.dumps({"s": EX + "Golf", "p": EX + "near", "o": f"<{EX}Kilo>", "chunk": page_one.iri}),  # inferred
        json.dumps({"s": EX + "Alpha", "p": EX + "near", "o": f"<{EX}Lima>", "chunk": page_one.iri}),  # two sentences
        json.dumps(fact("invented", chunk=page_one.iri, quote=INVENTED)),
        json.dumps(fact("nowhere", quote=INVENTED)),
        "{not json",
        json.dumps({"s": EX + "a", "p": "says", "o": "x", "quote": "kilo"}),
        json.dumps(fact("lost", chunk="urn:chunk:00000000-0000-0000-0000-000000000000", quote="kilo")),
        "",
        json.dumps(fact("bare")),
    ]
    result = kg_decoder.add_fact_lines(("\n".join(lines) + "\n").encode(), store=store, extractor="test")
    verdicts = {o.line: (str(o.grounding) if o.grounding else None) for o in result.outcomes}
    assert verdicts == {1: "exact", 2: "normalised", 3: "fuzzy", 4: "fuzzy", 5: "inferred", 6: "unsupported",
                        7: "unsupported", 8: "unsupported", 9: None, 10: None, 11: None, 13: None}
    reasons = {o.line: o.reason for o in result.refused}
    assert reasons[9].startswith("not JSON") and "predicate" in reasons[10] and "no chunk" in reasons[11]
    assert "nothing to ground" in reasons[13]
    assert result.counts == {"exact": 1, "normalised": 1, "fuzzy": 2, "inferred": 1, "unsupported": 3}
    assert result.stored == 8 and result.batches == 1
    fuzzy = next(o for o in result.outcomes if o.line == 3)
    assert fuzzy.chunk == page_one.iri and 0.8 <= fuzzy.score <= 1.0
    assert page_one.text[fuzzy.start:fuzzy.end].split() == ["Golf", "hotel", "india", "juliett", "kilo"]
    # The same lines again: the batch is already held, nothing is written twice.
    before = len(store.quads())
    again = kg_decoder.add_fact_lines(("\n".join(lines) + "\n").encode(), store=store, extractor="test")
    assert again.unchanged == 1 and len(store.quads()) == before
    assert kg_decoder.validate(store=store).conforms


def test_grounded_facts_trace_to_verified_boxes_on_the_words_and_unsupported_to_none(placed):
    store, _, chunks, _ = placed
    page_one = next(c for c in chunks if "kilo" in c.text)
    kg_decoder.add_fact_lines([fact("boxed", chunk=page_one.iri, quote="quebec romeo sierra"),
                               fact("fuzzy-boxed", quote="juliett india hotel golf")], store=store)
    [source] = kg_decoder.trace(fact=(EX + "alpha", EX + "says", "boxed"), store=store)
    assert source.grounding == "exact" and source.evidence == "quebec romeo sierra"
    [box] = [b for b in source.boxes]
    assert box.source == "characters" and box.verification == "verified"
    assert_box_near(box, drawn_box(2, "quebec romeo sierra"))
    [fuzzy] = kg_decoder.trace(fact=(EX + "alpha", EX + "says", "fuzzy-boxed"), store=store)
    assert fuzzy.grounding == "fuzzy" and fuzzy.grounding_score == 1.0
    assert [b.verification for b in fuzzy.boxes] == ["verified"]
    assert_box_near(fuzzy.boxes[0], drawn_box(1, "Golf hotel india juliett"))
    kg_decoder.add_fact_lines([fact("made-up", chunk=page_one.iri, quote=INVENTED)], store=store)
    [unsupported] = kg_decoder.trace(fact=(EX + "alpha", EX + "says", "made-up"), store=store)
    assert unsupported.grounding == "unsupported" and unsupported.boxes == [] and unsupported.evidence == INVENTED
    annotation = kg_decoder.web_annotations([unsupported])["first"]["items"][0]
    assert annotation["grounding"] == "unsupported" and annotation["evidence"] == INVENTED
    assert not any(isinstance(t.get("selector"), dict) for t in annotation["target"])  # no region of a page
    annotation = kg_decoder.web_annotations([fuzzy])["first"]["items"][0]
    assert annotation["grounding"] == "fuzzy" and annotation["groundingScore"] == 1.0
    findings = store.table("audit-facts-unsupported").records()
    assert {row["object"] for row in findings} >= {"made-up"}
    assert "boxed" not in {row["object"] for row in findings}
    assert {row.get("evidence") for row in findings if row["object"] == "made-up"} == {INVENTED}


def test_cli_bulk_file_prints_the_summary_and_the_chunk_form_still_works(placed, tmp_path):
    store, document, chunks, folder = placed
    path = tmp_path / "facts.jsonl"
    path.write_text("\n".join(json.dumps(fact(f"cli-{k}", document=document, quote=quote)) for k, quote in
                              enumerate(["Alpha bravo charlie", "oscar papa quebec", INVENTED])) + "\n{oops\n",
                    encoding="utf-8")
    store.close()  # the last test of the module's store: the command line opens it now
    done = run_cli("facts", "add", path, "--store", folder / "store", "--no-progress", "--batch-lines", "2")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line.split()[1] for line in done.stdout.splitlines()[2:8]}
    assert rows == {"exact": "2", "normalised": "0", "fuzzy": "0", "inferred": "0", "unsupported": "1",
                    "refused": "1"}
    assert "line 4: refused: not JSON" in done.stdout and "3 of 4 lines stored in 2 transactions" in done.stdout
    single = tmp_path / "one.jsonl"
    single.write_text(json.dumps({"s": EX + "kilo", "p": EX + "near", "o": "<" + EX + "lima>", "quote": "kilo"})
                      + "\n", encoding="utf-8")
    kilo = next(c for c in chunks if "kilo" in c.text)
    done = run_cli("facts", "add", "--chunk", kilo.iri, single, "--store", folder / "store")
    assert done.returncode == 0 and "1 facts added" in done.stdout, done.stderr
    bad = run_cli("facts", "add", tmp_path / "missing.jsonl", "--store", folder / "store", "--no-progress")
    assert bad.returncode == 2 and "cannot read" in bad.stderr


def test_post_api_facts_in_bulk_needs_the_token_and_answers_the_summary(web_app, tmp_path):
    make_placed_pdf(tmp_path / "placed.pdf")
    store = kg_decoder.open_store(tmp_path / "store")
    app = web_app.create_app(store, write_token=TOKEN, max_upload_bytes=2_000_000)
    client = app.test_client()
    with open(tmp_path / "placed.pdf", "rb") as stream:
        uploaded = client.post("/api/documents", data={"file": (stream, "placed.pdf"), "chunk": "true"},
                               headers=AUTH)
    assert uploaded.status_code == 201
    [chunk, *_] = kg_decoder.document_chunks(uploaded.json["document"], store=store)
    body = {"extractor": "web", "facts": [fact("w1", quote="india juliett kilo"),
                                          fact("w2", chunk=chunk.iri, quote=INVENTED),
                                          {"s": EX + "a"}, fact("w3", document="nope.pdf", quote="kilo")]}
    assert client.post("/api/facts", json=body).status_code == 403
    answer = client.post("/api/facts?outcomes=true", json=body, headers=AUTH)
    assert answer.status_code == 201, answer.json
    assert answer.json["counts"]["exact"] == 1 and answer.json["counts"]["unsupported"] == 1
    refused = {r["line"]: r["reason"] for r in answer.json["refused"]}
    assert refused.keys() == {3, 4} and refused[3] == "needs the keys s, p and o" and "nope.pdf" in refused[4]
    assert len(answer.json["outcomes"]) == 4
    bad = client.post("/api/facts", data="[1, 2", content_type="application/json", headers=AUTH)
    assert bad.status_code == 400 and bad.json["error"] == "bad-request"
    page = client.get("/trace", query_string={"s": EX + "alpha", "p": EX + "says", "o": "w2"})
    assert b'data-grounding="unsupported"' in page.data and b"no box is drawn" in page.data
    page = client.get("/trace", query_string={"s": EX + "alpha", "p": EX + "says", "o": "w1"})
    assert b'data-grounding="exact"' in page.data
    store.close()


def test_a_corpus_pdf_grounds_exact_folded_and_paraphrased_quotes_and_not_invented_ones(corpus_dir, tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store)
    kg_decoder.chunk_document(result.document, store=store, chunk_size=256)
    chunks = kg_decoder.document_chunks(result.document, store=store)
    chunk = max(chunks, key=lambda c: len(c.text))
    words = chunk.text.split()
    middle = len(words) // 2
    exact = " ".join(words[middle:middle + 10])
    dropped = " ".join(words[middle:middle + 4] + words[middle + 5:middle + 12])
    lines = [fact("c-exact", chunk=chunk.iri, quote=exact), fact("c-dropped", document=result.document, quote=dropped),
             fact("c-invented", document=result.document, quote=INVENTED)]
    outcome = kg_decoder.add_fact_lines(lines, store=store)
    assert [str(o.grounding) for o in outcome.outcomes] == ["exact", "fuzzy", "unsupported"]
    for name in ("c-exact", "c-dropped"):
        [source] = kg_decoder.trace(fact=(EX + "alpha", EX + "says", name), store=store)
        assert source.boxes and all(b.source == "characters" and b.verification == "verified" for b in source.boxes)
    assert kg_decoder.trace(fact=(EX + "alpha", EX + "says", "c-invented"), store=store) == []  # no chunk holds it
    [row] = store.table("audit-facts-unsupported").records()
    assert row["source"] == result.document and row["object"] == "c-invented"
    assert store.table("audit-facts-without-chunk").records() == []
    store.close()
