"""A decode that could not read everything says so: status ``partial`` with structured problems (code,
page, kind of element, message) on the result, in its JSON, in the graph (tg:Problem of the decode
activity), in the CLI's table and in an audit; re-decoding the unchanged file reads them back. A
document read whole has none. The decode activity records every setting and the engines it ran on."""

from __future__ import annotations

import re

import drawn_parts as parts
import pytest

import kg_decoder
from conftest import run_cli
from kg_decoder.graph.resources import resource_dir
from kg_decoder.model import PROBLEM_CODES, Problem
from kg_decoder.quality.audits import run_audits

PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    folder = tmp_path_factory.mktemp("partial")
    path = parts.make_damaged_form_pdf(folder / "damaged.pdf")
    store = kg_decoder.open_store(folder / "store")
    return store, path, kg_decoder.decode(path, store=store)


def test_a_form_whose_fields_cannot_be_read_is_decoded_in_part(damaged):
    store, _, result = damaged
    assert result.status == kg_decoder.DecodeStatus.PARTIAL
    [problem] = result.problems
    assert problem.code == "forms-not-read" and "AttributeError" in problem.message
    text = " ".join(t.text for t in result.text_documents)
    assert "Application form" in text  # the page's own text is kept
    assert result.to_json()["problems"] == [{"code": "forms-not-read", "message": problem.message,
                                            "page_number": None, "element_kind": None}]
    assert kg_decoder.validate(store).conforms


def test_the_graph_records_each_problem_of_the_decode(damaged):
    store, _, result = damaged
    rows = store.select_rows(PREFIXES + f"""SELECT ?code ?message WHERE {{ GRAPH ?g {{
        ?run a tg:Decoding ; prov:used <{result.document}> ; tg:problem ?problem .
        ?problem a tg:Problem ; prov:wasDerivedFrom <{result.document}> ; prov:wasGeneratedBy ?run ;
                 tg:problemCode ?code ; tg:problemMessage ?message }} }}""").rows
    assert [(str(code), str(message)) for code, message in rows] == [("forms-not-read", result.problems[0].message)]
    audits = {a.name: a for a in run_audits(store)}
    [row] = audits["audit-partial-decodes"].table.rows
    assert row[0] == result.document and row[1] == "damaged.pdf" and row[2] == "forms-not-read"
    assert {a.name for a in run_audits(store) if a.has_findings} >= {"audit-partial-decodes"}


def test_decoding_the_same_file_again_reads_its_problems_back(damaged):
    store, path, result = damaged
    again = kg_decoder.decode(path, store=store)
    assert again.status == kg_decoder.DecodeStatus.UNCHANGED
    assert again.problems == result.problems
    retried = kg_decoder.decode(path, store=store, retry_partial=True)  # read again, not answered from the store
    assert retried.status == kg_decoder.DecodeStatus.PARTIAL and retried.partition_source == "partitioned"
    assert retried.problems == result.problems


def test_a_document_read_whole_has_no_problem_and_a_new_decode_replaces_the_old_ones(damaged, tmp_path):
    store, path, result = damaged
    whole = kg_decoder.decode(parts.make_form_pdf(tmp_path / "form.pdf"), store=store)
    assert whole.status == kg_decoder.DecodeStatus.DECODED and whole.problems == []
    other = kg_decoder.decode(path, store=store, options=kg_decoder.DecodeOptions(section_max_size=500))
    assert other.status == kg_decoder.DecodeStatus.PARTIAL
    problems = store.select_rows(PREFIXES + "SELECT ?p WHERE { GRAPH ?g { ?p a tg:Problem } }").rows
    assert len(problems) == 1  # the earlier decode's problem went with it
    kg_decoder.decode(path, store=store)  # as it was, for the other tests


def test_the_cli_names_the_readings_that_failed(tmp_path):
    path = parts.make_damaged_form_pdf(tmp_path / "damaged.pdf")
    done = run_cli("decode", path, "--store", tmp_path / "store", "--no-progress")
    assert done.returncode == 0, done.stderr
    assert re.search(r"damaged\.pdf.*partial \(forms-not-read\)", done.stdout)


def test_a_problem_has_a_known_code_in_the_model_and_the_shapes():
    with pytest.raises(ValueError):
        Problem.of("misread", "no such code")
    shapes = (resource_dir("ontology") / "shapes.ttl").read_text()
    listed = re.search(r"tg:problemCode ;.*?sh:in \(([^)]*)\)", shapes, re.S).group(1)
    assert set(re.findall(r'"([^"]+)"', listed)) == set(PROBLEM_CODES)


def test_the_decode_records_every_setting_and_the_engines_it_ran_on(damaged):
    store, _, result = damaged
    query = PREFIXES + f"""SELECT ?key ?tables ?version WHERE {{ GRAPH ?g {{
        ?run a tg:Decoding ; prov:used <{result.document}> ; tg:settingsKey ?key ; tg:pdfTables ?tables ;
             tg:pdfReader "pdfium" ; tg:renderedPositions ?placed ; tg:imageOcr ?ocr ; tg:minImageTextConfidence ?least ;
             prov:wasAssociatedWith ?agent . ?agent tg:softwareVersion ?version }} }}"""
    rows = store.select_rows(query).rows
    assert {str(key) for key, _, _ in rows} == {kg_decoder.DecodeOptions().settings_key()}
    versions = {str(version) for _, _, version in rows}
    assert any(re.fullmatch(r"tesseract \d+\.\d+.*", v) for v in versions)
    assert any(re.fullmatch(r"table model layout_cdla\.onnx sha256:[0-9a-f]{16}", v) for v in versions)
    assert any(v.startswith("PDFium ") for v in versions) and any(v.startswith("pdfminer.six ") for v in versions)
