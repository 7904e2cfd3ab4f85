"""The ontology, the SHACL shapes and the coverage audits, on real decoded stores."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import rdflib
from rdflib.namespace import OWL, RDF, RDFS

import drawn_parts
import kg_decoder
from conftest import run_cli
from kg_decoder.quality.audits import audit_definitions, run_audits
from kg_decoder import add_facts, chunk_document, document_chunks
from kg_decoder.graph.resources import resource_dir
from kg_decoder.quality.validation import validate
from test_chunks_facts_trace import make_placed_pdf

TG = "https://trustgraph.ai/ns/"
PROV = rdflib.Namespace("http://www.w3.org/ns/prov#")
XSD = "http://www.w3.org/2001/XMLSchema#"
EX = "http://example.org/"


def fact_for_every_chunk(store, document):
    for chunk in document_chunks(document, store=store):
        add_facts(chunk.iri, [(f"{EX}chunk/{chunk.index}", EX + "from", f"<{chunk.segment}>")], store=store)


@pytest.fixture(scope="module")
def clean_store(generated, tmp_path_factory):
    """Documents with nothing to find: text on every page, boxes on every PDF element, every chunk with facts."""
    folder = tmp_path_factory.mktemp("clean")
    make_placed_pdf(folder / "placed.pdf")
    form = drawn_parts.make_form_pdf(folder / "form.pdf")  # form fields and annotations: nothing to find
    store = kg_decoder.open_store(folder / "store")
    for path in (folder / "placed.pdf", generated["generated.md"].path, generated["generated.xlsx"].path, form):
        result = kg_decoder.decode(path, store=store, record_failure=True)
        chunk_document(result.document, store=store, chunk_size=64)
        fact_for_every_chunk(store, result.document)
    return store


@pytest.fixture(scope="module")
def dirty_store(generated, corpus_dir, tmp_path_factory):
    """One of each problem the audits look for, made the way a user would run into it."""
    store = kg_decoder.open_store(tmp_path_factory.mktemp("dirty") / "store")
    blank_page = kg_decoder.decode(generated["generated.pdf"].path, store=store)  # page 2 is blank
    kg_decoder.decode(generated["scanned.pdf"].path, store=store)  # no text layer: OCR
    pictures = drawn_parts.make_pictures_pdf(store.path.parent / "pictures.pdf")
    kg_decoder.decode(pictures, store=store)  # pictures and drawings alone: no text
    with pytest.raises(kg_decoder.EmptyDocument):
        kg_decoder.decode(corpus_dir / "empty.txt", store=store, record_failure=True)
    # a partitioner's box the page's own reading did not bear out, as the decode records it
    first = next(e for e in store.document_elements(blank_page.document) if e.bbox is not None)
    store.sparql_update(f"""DELETE {{ GRAPH <urn:graph:source> {{ <{first.element}> <{TG}verification> ?v }} }}
        INSERT {{ GRAPH <urn:graph:source> {{ <{first.element}> <{TG}verification> "element" }} }}
        WHERE {{ GRAPH <urn:graph:source> {{ <{first.element}> <{TG}verification> ?v }} }}""")
    chunk_document(blank_page.document, store=store, chunk_size=16, min_chunk_tokens=2)  # no facts yet
    # a form whose fields cannot be read (a partial decode), decoded without the table finder (other settings)
    damaged = drawn_parts.make_damaged_form_pdf(store.path.parent / "damaged.pdf")
    kg_decoder.decode(damaged, store=store, options=kg_decoder.DecodeOptions(pdf_tables=False))
    markdown = kg_decoder.decode(generated["generated.md"].path, store=store)
    chunk_document(markdown.document, store=store, chunk_size=16, min_chunk_tokens=2)
    first = document_chunks(markdown.document, store=store)[0]
    add_facts(first.iri, [(EX + "stale", EX + "p", "o")], store=store)
    chunk_document(markdown.document, store=store, chunk_size=512)  # the fact's chunk is gone
    # a partitioner that gave one PDF element no coordinates; a chunk lost; a chunk that starts late
    element = next(e for e in store.document_elements(blank_page.document) if e.bbox is not None)
    chunks = document_chunks(blank_page.document, store=store)
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    store.sparql_update(f"""DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{element.element}> <{TG}bboxLeft> ?v }} }} ;
        DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{chunks[-1].iri}> ?p ?o }} }} ;
        DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{chunks[0].iri}> <{TG}charOffset> ?o }} }} ;
        INSERT DATA {{ GRAPH <urn:graph:source> {{ <{chunks[0].iri}> <{TG}charOffset> "5"^^{integer} }} }}""")
    return store


# ---------------------------------------------------------------- ontology


def test_every_term_written_is_declared_with_label_comment_domain_and_range(clean_store, dirty_store):
    ontology = rdflib.Graph().parse(resource_dir("ontology") / "tg.ttl")
    used_predicates, used_classes, datatypes = set(), set(), {}
    for store in (clean_store, dirty_store):
        for quad in store.quads():
            predicate = quad.predicate.value
            if predicate.startswith(TG):
                used_predicates.add(predicate)
                if type(quad.object).__name__ == "Literal":
                    datatypes.setdefault(predicate, set()).add(quad.object.datatype.value)
            if predicate == str(RDF.type) and quad.object.value.startswith(TG):
                used_classes.add(quad.object.value)
    assert {TG + c for c in ("Chunk", "TableCell", "Subgraph", "CitationAnchor", "Chunking", "FactExtraction",
                             "FailedDecoding")} <= used_classes
    for iri in sorted(used_predicates | used_classes):
        node = rdflib.URIRef(iri)
        assert (node, RDFS.label, None) in ontology and (node, RDFS.comment, None) in ontology, iri
    for iri in used_predicates:
        node = rdflib.URIRef(iri)
        assert (node, RDFS.domain, None) in ontology and (node, RDFS.range, None) in ontology, iri
        declared = ontology.value(node, RDFS.range)
        if iri in datatypes and str(declared).startswith(XSD):
            assert datatypes[iri] == {str(declared)}, (iri, datatypes[iri], declared)
    for cls in used_classes:
        parents = set(ontology.transitive_objects(rdflib.URIRef(cls), RDFS.subClassOf))
        assert parents & {PROV.Entity, PROV.Activity}, cls


def test_every_declared_property_has_domain_and_range_and_offsets_are_aligned():
    ontology = rdflib.Graph().parse(resource_dir("ontology") / "tg.ttl")
    properties = set(ontology.subjects(RDF.type, RDF.Property))
    assert len(properties) > 60
    for node in properties:
        assert (node, RDFS.domain, None) in ontology and (node, RDFS.range, None) in ontology, node
    for cls in ontology.subjects(RDF.type, OWL.Class):
        assert (cls, RDFS.subClassOf, None) in ontology, cls
    close = {str(o) for o in ontology.objects(rdflib.URIRef(TG + "charOffset"),
                                               rdflib.URIRef("http://www.w3.org/2004/02/skos/core#closeMatch"))}
    assert close == {"http://www.w3.org/ns/oa#start",
                     "http://persistence.uni-leipzig.org/nlp2rdf/ontologies/nif-core#beginIndex"}


# ---------------------------------------------------------------- shapes


def test_every_decoded_fixture_of_every_format_conforms(chunked_generated_store):
    store, results = chunked_generated_store
    report = validate(store)
    assert report.triples > 100 * len(results)
    assert report.conforms, report.violations[:5]


def test_clean_and_dirty_stores_conform_and_facts_do_not_break_the_shapes(clean_store):
    report = validate(clean_store)
    assert report.conforms, report.violations[:5]


BROKEN = {
    "a page without its number": ("pageNumber", "page number"),
    "a negative offset": ("charOffset", "non-negative"),
    "a chunk past its segment": ("chunk", "inside its page or section"),
    "a chunk linked to itself as its next": ("nextChunk", "numbered next"),
    "a box outside its page": ("bbox", "does not lie inside its page"),
    "a run without an agent": ("agent", "wasAssociatedWith"),
    "an image with no bytes, URL or reason": ("image", "tg:skippedReason"),
    "an entity without its run": ("generated", "prov:wasGeneratedBy"),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_graph_does_not_conform(case, clean_store, generated):
    store = clean_store
    document = next(r.document for r in store.document_summaries() if r.file_name == "placed.pdf")
    lines = store.provenance_ntriples(document).splitlines()
    assert validate(store, data="\n".join(lines)).conforms
    kind, expected = BROKEN[case]

    def first(predicate):
        return next(i for i, line in enumerate(lines) if f"<{predicate}>" in line)

    if kind == "pageNumber":
        del lines[next(i for i, line in enumerate(lines) if line.startswith("<urn:page:") and TG + "pageNumber" in line)]
    elif kind == "charOffset":
        i = first(TG + "charOffset")
        lines[i] = lines[i].rsplit('"', 2)[0].rsplit('"', 1)[0] + '"-5"^^<http://www.w3.org/2001/XMLSchema#integer> .'
    elif kind == "chunk":
        i = next(i for i, line in enumerate(lines) if line.startswith("<urn:chunk:") and TG + "charLength" in line)
        lines[i] = lines[i].split('"')[0] + '"999999"^^<http://www.w3.org/2001/XMLSchema#integer> .'
    elif kind == "nextChunk":
        chunk = next(line.split()[0] for line in lines if line.startswith("<urn:chunk:"))
        lines.append(f"{chunk} <{TG}nextChunk> {chunk} .")
    elif kind == "bbox":
        i = next(i for i, line in enumerate(lines) if line.startswith("<urn:element:") and TG + "bboxRight" in line)
        lines[i] = lines[i].split('"')[0] + '"5000.0"^^<http://www.w3.org/2001/XMLSchema#double> .'
    elif kind == "agent":
        lines = [line for line in lines if "wasAssociatedWith" not in line]
    elif kind == "image":
        lines.append(f"<urn:image:broken> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <{TG}Image> .")
        lines.append(f"<urn:image:broken> <http://www.w3.org/ns/prov#wasDerivedFrom> <{document}> .")
        activity = next(line.split()[2] for line in lines if "wasGeneratedBy" in line)
        lines.append(f"<urn:image:broken> <http://www.w3.org/ns/prov#wasGeneratedBy> {activity} .")
    elif kind == "generated":
        i = next(i for i, line in enumerate(lines) if line.startswith("<urn:element:") and "wasGeneratedBy" in line)
        del lines[i]
    report = validate(store, data="\n".join(lines))
    assert not report.conforms
    assert any(expected in v.message for v in report.violations), [v.message for v in report.violations]


# ---------------------------------------------------------------- audits


def test_every_audit_has_a_header_and_the_kinds_are_right():
    audits = {a.name: a for a in audit_definitions()}
    assert set(audits) == {
        "audit-document-counts", "audit-segments-without-text", "audit-elements-without-position",
        "audit-chunk-coverage", "audit-chunk-gaps", "audit-chunks-without-facts", "audit-facts-without-chunk",
        "audit-orphan-entities", "audit-failed-or-fallback", "audit-document-integrity",
        "audit-images-text-not-chunked", "audit-images-low-ocr-confidence", "audit-pages-low-ocr-confidence",
        "audit-pages-implausible-text-layer",
        "audit-chunk-anchors-not-verified", "audit-documents-without-text", "audit-form-fields",
        "audit-partial-decodes", "audit-decoded-otherwise", "audit-facts-stale", "audit-sources-changed",
        "audit-facts-unsupported",
        "audit-documents-by-format", "audit-boxes-by-format", "audit-ocr-confidence"}
    assert {n for n, a in audits.items() if a.kind == "report"} == {
        "audit-document-counts", "audit-chunk-coverage", "audit-form-fields", "audit-sources-changed",
        "audit-documents-by-format", "audit-boxes-by-format", "audit-ocr-confidence"}
    assert all(a.title and a.finds for a in audits.values())


def test_no_finding_audit_finds_anything_in_the_clean_store(clean_store):
    audits = {a.name: a for a in run_audits(clean_store)}
    assert {n: a.table.rows for n, a in audits.items() if a.has_findings} == {}
    counts = {r["fileName"]: r for r in audits["audit-document-counts"].table.records()}
    assert counts["placed.pdf"]["pages"] == 2 and counts["placed.pdf"]["chunks"] >= 1
    assert counts["placed.pdf"]["facts"] == counts["placed.pdf"]["chunks"]
    assert counts["generated.xlsx"]["tables"] >= 1
    assert all(abs(row["share"] - 1) < 0.05 for row in audits["audit-chunk-coverage"].table.records()
               if row["length"] > 50)


def test_each_finding_audit_finds_its_problem_in_the_dirty_store(dirty_store):
    audits = {a.name: a for a in run_audits(dirty_store)}
    rows = {name: audit.table.records() for name, audit in audits.items()}
    assert [(r["fileName"], r["pageNumber"]) for r in rows["audit-segments-without-text"]
            if r.get("fileName") == "generated.pdf"] == [("generated.pdf", 2)]
    assert [(r["fileName"], r["withoutPosition"]) for r in rows["audit-elements-without-position"]] == [
        ("generated.pdf", 1)]
    gaps = rows["audit-chunk-gaps"]
    assert sorted((r["problem"], r["start"], r["end"]) for r in gaps) == [
        ("gap", 0, 5), ("no chunk", 0, 33), ("past the end", 61, 56)]
    assert {r["fileName"] for r in gaps} == {"generated.pdf"}
    assert any(r["fileName"] == "generated.pdf" for r in rows["audit-chunks-without-facts"])
    unverified = rows["audit-chunk-anchors-not-verified"]
    assert unverified and {(r["fileName"], r["pageNumber"], r["verification"]) for r in unverified} == {
        ("generated.pdf", 1, "element")}
    [stale] = rows["audit-facts-without-chunk"]
    assert stale["subject"] == EX + "stale"
    # the anchor of the chunk the fixture deleted by hand (the stale fact is detached, not orphaned)
    assert [r["type"] for r in rows["audit-orphan-entities"]] == [TG + "CitationAnchor"]
    problems = {(r.get("fileName"), r["problem"]) for r in rows["audit-failed-or-fallback"]}
    assert problems == {("empty.txt", "failed"), ("scanned.pdf", "fallback"), ("pictures.pdf", "fallback")}
    assert any("empty-document" in r["reason"] for r in rows["audit-failed-or-fallback"])
    coverage = {r["segment"]: r["share"] for r in rows["audit-chunk-coverage"]}
    assert min(coverage.values()) < 0.9  # the page that lost a chunk
    assert [(r["fileName"], r["pages"]) for r in rows["audit-documents-without-text"]] == [("pictures.pdf", 2)]
    assert [(r["fileName"], r["code"]) for r in rows["audit-partial-decodes"]] == [("damaged.pdf", "forms-not-read")]
    [otherwise] = rows["audit-decoded-otherwise"]  # the markdown file was decoded last, with the defaults
    assert (otherwise["fileName"], otherwise["differs"]) == ("damaged.pdf", "settings")
    assert "pdf-tables=off" in otherwise["settingsKey"] and "pdf-tables" not in otherwise["newestSettingsKey"]


def expected_gaps(store, document: str) -> set[tuple]:
    """What audit-chunk-gaps must find in a chunked document, worked out here from its chunks' offsets:
    each text's chunks in index order, a gap where more than 2 characters lie between two (or before
    the first, or after the last), an overlap where one starts before the last ended (the run asked
    for none), past the end where the last ends after its text."""
    lengths = {segment.segment: segment.char_length for segment in store.text_segments(document)}
    by_text: dict[str, list] = {}
    for chunk in document_chunks(document, store=store):
        by_text.setdefault(chunk.segment, []).append(chunk)
    found = {(segment, "no chunk", 0, length, None) for segment, length in lengths.items()
             if length > 0 and segment not in by_text}
    for segment, chunks in by_text.items():
        chunks.sort(key=lambda chunk: chunk.index)
        if chunks[0].char_offset > 2:
            found.add((segment, "gap", 0, chunks[0].char_offset, chunks[0].iri))
        for chunk, following in zip(chunks, chunks[1:] + [None]):
            start = chunk.char_offset + chunk.char_length
            end = following.char_offset if following is not None else lengths[segment]
            if end - start > 2:
                found.add((segment, "gap", start, end, chunk.iri))
            elif end < start:
                found.add((segment, "overlap" if following is not None else "past the end", start, end, chunk.iri))
    return found


def test_chunk_gaps_finds_each_problem_in_order_where_a_chunk_is_lost_too(tmp_path):
    """Chunks edited by hand into each problem: the audit's rows are the ones worked out from the
    offsets, a chunk lost in the middle of a text included (the gap runs to the chunk after it)."""
    text = "\n\n".join(f"Paragraph {n} says KGGAP{n} in words that fill a chunk of its own." for n in range(12))
    store = kg_decoder.open_store(tmp_path / "store")
    document = kg_decoder.decode(text.encode(), store=store, file_name="gaps.txt").document
    chunk_document(document, store=store, chunk_size=16, min_chunk_tokens=2, overlap=0)
    chunks = document_chunks(document, store=store)
    assert len(chunks) >= 8 and len({chunk.segment for chunk in chunks}) == 1
    assert findings_of(store, "audit-chunk-gaps") == set() == expected_gaps(store, document)
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"

    def set_value(chunk, name, value):
        return (f"DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{chunk.iri}> <{TG}{name}> ?o }} }} ; "
                f"INSERT DATA {{ GRAPH <urn:graph:source> {{ <{chunk.iri}> <{TG}{name}> \"{value}\"^^{integer} }} }}")

    lost = chunks[3]
    store.sparql_update(" ; ".join([
        set_value(chunks[0], "charOffset", 6),  # starts late
        f"DELETE WHERE {{ GRAPH <urn:graph:source> {{ <{lost.iri}> ?p ?o }} }}",  # lost
        set_value(chunks[6], "charOffset", chunks[5].char_offset + 4),  # overlaps the one before
        set_value(chunks[-1], "charLength", chunks[-1].char_length + 40)]))  # runs past the end
    expected = expected_gaps(store, document)
    assert findings_of(store, "audit-chunk-gaps") == expected
    assert {row[1] for row in expected} == {"gap", "overlap", "past the end"}
    assert (chunks[0].segment, "gap", chunks[2].char_offset + chunks[2].char_length, chunks[4].char_offset,
            chunks[2].iri) in expected


def findings_of(store, audit: str) -> set[tuple]:
    return {(row["segment"], row["problem"], row["start"], row["end"], row.get("chunk"))
            for row in store.table(audit).records()}


def test_a_later_successful_decode_removes_the_failure_record(tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    broken = b"%PDF-1.4\n" + bytes(range(256)) * 4
    with pytest.raises(kg_decoder.CorruptDocument):
        kg_decoder.decode(broken, store=store, file_name="broken.pdf", record_failure=True)
    [row] = store.table("audit-failed-or-fallback").records()
    assert row["problem"] == "failed" and row["fileName"] == "broken.pdf"
    with pytest.raises(kg_decoder.CorruptDocument):  # failing again keeps one record
        kg_decoder.decode(broken, store=store, file_name="broken.pdf", record_failure=True)
    assert len(store.table("audit-failed-or-fallback")) == 1
    # the Python API records nothing unless asked
    before = store.quads()
    with pytest.raises(kg_decoder.EmptyDocument):
        kg_decoder.decode(b"   ", store=store, file_name="blank.txt")
    assert store.quads() == before
    # bytes that fail with one MIME type and decode with another: the record goes away
    text = b"KGSENT plain words that decode as text."
    with pytest.raises(kg_decoder.DecodeError):
        kg_decoder.decode(text, store=store, file_name="words.txt", mime_type="application/pdf", record_failure=True)
    assert len(store.table("audit-failed-or-fallback")) == 2
    kg_decoder.decode(text, store=store, file_name="words.txt", record_failure=True)
    assert [r["fileName"] for r in store.table("audit-failed-or-fallback").records()] == ["broken.pdf"]


def test_cli_audit_and_validate(dirty_store, clean_store):
    dirty, clean = dirty_store.path, clean_store.path
    dirty_store.flush()
    clean_store.flush()
    done = run_cli("audit", "--store", dirty, "--json", "--fail-on-findings")
    assert done.returncode == 1, done.stderr
    reports = {r["audit"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert reports["audit-facts-without-chunk"]["findings"] == 1
    assert all(isinstance(report["seconds"], float) and "error" not in report for report in reports.values())
    done = run_cli("audit", "--store", clean, "--fail-on-findings")
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    # each audit's name as it starts, then what it found and how long it took
    at = lines.index("== audit-document-counts: what each document holds")
    assert re.fullmatch(r"\d+ rows in \d+\.\d\d s", lines[at + 1])
    assert sum(1 for line in lines if line.startswith("== ")) == len(reports)
    # This process writes the store: the audits' worker read a snapshot of it, dropped when done.
    snapshots = Path(clean) / "reader-snapshots"
    assert snapshots.is_dir() and not list(snapshots.iterdir())
    assert run_cli("validate", "--store", clean).returncode == 0


def test_cli_audit_reports_an_audit_past_its_time_limit_and_runs_the_others(clean_store):
    """A microsecond is too short for an audit (an answer already on its way in the millisecond the
    wait takes may still be taken): each SPARQL audit past it is stopped and reported as such, the
    library's and the text index's audits still run, and the command exits 1 naming what did not finish."""
    clean_store.flush()
    done = run_cli("audit", "--store", clean_store.path, "--timeout", "0.000001")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    unfinished = [lines[i - 1].split(":")[0].removeprefix("== ") for i, line in enumerate(lines)
                  if line.startswith("not finished after")]
    assert len(unfinished) > len(audit_definitions()) // 2
    assert all("did not finish in its time limit of 1e-06 s" in line for line in lines if line.startswith("not finished"))
    assert "== library-orphan-blobs" in done.stdout and "== text-index" in done.stdout
    [message] = [line for line in done.stderr.splitlines() if "could not finish" in line]
    assert message == f"kg-decoder: {len(unfinished)} audits could not finish: {', '.join(unfinished)}"
    for bad in ("0", "inf", "nan"):
        assert run_cli("audit", "--store", clean_store.path, "--timeout", bad).returncode == 2
