"""The extract step on a real store of corpus documents: the shipped spaCy extractor end to end (facts
grounded, traced to verified boxes on the page), resuming after an interruption, and a command
extractor whose failures are typed per chunk while the run goes on."""

from __future__ import annotations

import json
import re
import sys
import textwrap

import pytest

import kg_decoder
from conftest import run_cli
from kg_decoder.cite.extract import CommandExtractor

SAYS = "http://example.org/says"


@pytest.fixture(scope="module")
def extract_store(corpus_dir, tmp_path_factory):
    """A corpus PDF (small chunks: many of them) and a text file, decoded and chunked."""
    folder = tmp_path_factory.mktemp("extract")
    store = kg_decoder.open_store(folder / "store")
    documents = []
    for name, size in (("layout-parser-paper-fast.pdf", 96), ("fake-text.txt", 512)):
        decoded = kg_decoder.decode(corpus_dir / name, store=store)
        kg_decoder.chunk_document(decoded.document, store=store, options=kg_decoder.ChunkOptions(chunk_size=size))
        documents.append(decoded.document)
    chunks = [c for d in documents for c in kg_decoder.document_chunks(d, store=store)]
    assert len(chunks) >= 8
    store.close()
    return folder / "store", documents, chunks


def test_the_shipped_spacy_extractor_grounds_and_traces_every_fact_and_a_second_run_skips(extract_store,
                                                                                           tmp_path):
    path, documents, chunks = extract_store
    pdf = documents[0]
    first = run_cli("extract", pdf, "--with", "spacy", "--store", str(path), "--no-progress")
    assert first.returncode == 0, first.stderr
    assert "extractor kg-decoder spacy-entities 1 (spacy " in first.stdout
    pdf_chunks = [c for c in chunks if c.document == pdf]
    with kg_decoder.open_store(path) as store:
        from kg_decoder.cite.spacy_entities import extract as spacy_extract

        version = spacy_extract.extractor_version
        assert store.extracted_chunks("kg-decoder spacy-entities", version) == {c.iri for c in pdf_chunks}
        rows = store.document_facts(pdf)
        assert len(rows) >= 20 and {r.extractor for r in rows} == {"kg-decoder spacy-entities"}
        joined = [r for r in rows if _iri(r.p).startswith("urn:spacy:verb:")
                  or _iri(r.p) == "urn:spacy:cooccursWith"]
        assert joined, "no sentence joined two entities"
        # Every fact is exact, and traced to boxes on the PDF's page: on the words, verified, for most
        # (52 of 64 subgraphs measured; the others cross the page's turned margin line, boxed by element).
        verified = traced = 0
        for row in {r.subgraph: r for r in rows}.values():
            obj = f"<{row.object_text}>" if row.object_is_iri else row.object_text
            [source] = [s for s in kg_decoder.trace(fact=(row.s, row.p, obj), store=store)
                        if s.subgraph == row.subgraph]
            assert source.grounding == "exact" and source.page_number is not None and source.boxes
            traced += 1
            verified += all(str(b.verification) == "verified" for b in source.boxes)
        assert verified >= 0.75 * traced, (verified, traced)
        result = kg_decoder.validate(store=store)
        assert result.conforms, result.violations[:3]
    again = run_cli("extract", pdf, "--with", "spacy", "--store", str(path), "--no-progress")
    assert again.returncode == 0, again.stderr
    assert f"0 facts from 0 of {len(pdf_chunks)} chunks" in again.stdout


class Interrupted(BaseException):
    """An interruption (pytest keeps KeyboardInterrupt itself for its own ^C)."""


def test_an_interrupted_run_continues_where_its_last_batch_ended(extract_store):
    path, documents, chunks = extract_store
    seen: list[str] = []
    interrupt = [True]

    def first_sentence(text, chunk):
        seen.append(chunk)
        if len(seen) == 5 and interrupt.pop():
            raise Interrupted  # as a ^C would, in the middle of the third batch of two
        words = text.split()
        return [{"s": chunk, "p": SAYS, "o": " ".join(words[:3]), "quote": " ".join(words[:6])}]

    with kg_decoder.open_store(path) as store:
        with pytest.raises(Interrupted):
            kg_decoder.extract(first_sentence, store=store, name="first-words", version="1", batch_chunks=2)
        assert store.extracted_chunks("first-words", "1") == set(seen[:4])
        seen.clear()
        interrupt.append(False)
        result = kg_decoder.extract(first_sentence, store=store, name="first-words", version="1", batch_chunks=2)
        assert result.skipped == 4 and result.extracted == len(chunks) - 4 and not result.failed
        assert len(seen) == len(chunks) - 4 and set(seen).isdisjoint(store.extracted_chunks("first-words", "0"))
        assert store.extracted_chunks("first-words", "1") == {c.iri for c in chunks}
        # a new version reads every chunk again
        assert kg_decoder.extract(first_sentence, store=store, name="first-words", version="2",
                                  documents=[documents[1]]).extracted == 1


def _iri(term) -> str:
    return str(term)


COMMAND = textwrap.dedent("""
    import json, sys, time
    timeout, big, bad, dies = sys.argv[1:5]
    for line in sys.stdin:
        chunk = json.loads(line)
        if chunk["chunk"] == timeout:
            time.sleep(30)
        elif chunk["chunk"] == big:
            sys.stdout.write("x" * 200000 + "\\n")
        elif chunk["chunk"] == bad:
            print("not json")
        elif chunk["chunk"] == dies:
            print("dying", file=sys.stderr)
            sys.exit(3)
        else:
            words = chunk["text"].split()
            print(json.dumps({"s": chunk["chunk"], "p": "http://example.org/begins", "o": words[0],
                              "quote": " ".join(words[:5])}))
            print(json.dumps({"s": chunk["chunk"], "p": "http://example.org/invented", "o": "x",
                              "quote": "the harbour committee approved a new budget for dredging"}))
            print(json.dumps({"s": chunk["chunk"], "p": "not an iri", "o": "x"}))
        print(json.dumps({"done": True}), flush=True)
""")


def test_a_command_extractor_fails_chunk_by_chunk_with_typed_errors_and_the_run_goes_on(extract_store, tmp_path):
    path, documents, chunks = extract_store
    script = tmp_path / "extractor.py"
    script.write_text(COMMAND)
    pdf_chunks = [c.iri for c in chunks if c.document == documents[0]]
    timeout, big, bad, dies = pdf_chunks[:4]
    command = [sys.executable, str(script), timeout, big, bad, dies]
    with kg_decoder.open_store(path) as store:
        result = kg_decoder.extract(command=command, store=store, name="cmd", version="1", chunk_seconds=2,
                                    max_output=100_000)
        codes = {f.chunk: f.code for f in result.failed}
        assert codes == {timeout: "extractor-timeout", big: "extractor-output-too-large", bad: "extractor-failed",
                         dies: "extractor-failed"}
        assert "dying" in next(f.reason for f in result.failed if f.chunk == dies)
        good = len(chunks) - 4
        assert result.extracted == good
        assert result.counts["exact"] == good and result.counts["unsupported"] == good
        assert len(result.refused) == good and all("predicate" in r.reason for r in result.refused)
        assert {r.chunk for r in result.refused} == set(c.iri for c in chunks) - set(codes)
        assert store.extracted_chunks("cmd", "1") == {c.iri for c in chunks} - set(codes)
    # the failed chunks are not recorded: the next run (the command fixed) reads them and only them
    fixed = run_cli("extract", "--with-command", f"{sys.executable} {script} - - - -", "--extractor-name", "cmd",
                    "--extractor-version", "1", "--store", str(path), "--no-progress", "--emit", "jsonl")
    assert fixed.returncode == 0, fixed.stderr
    assert re.search(r"chunks extracted +4\b", fixed.stderr) and re.search(rf"chunks skipped +{len(chunks) - 4}\b",
                                                                         fixed.stderr)
    assert [json.loads(line)["reason"] for line in fixed.stdout.splitlines()].count(
        "'not an iri' is not an absolute IRI") <= 4


def test_a_command_that_cannot_start_is_an_error_of_the_run(extract_store):
    path, _, _ = extract_store
    with pytest.raises(kg_decoder.ExtractorUnavailable):
        kg_decoder.extract(command="/nonexistent/extractor", store=path, name="none")
    with CommandExtractor([sys.executable, "-c", "import sys\nfor l in sys.stdin: print('{\"done\": true}', "
                                                 "flush=True)"]) as runner:
        assert runner({"chunk": "c", "text": "x" * 300_000}) == []  # more than a pipe holds, written as read
        assert runner({"chunk": "d", "text": "y"}) == [] and runner.started == 1
