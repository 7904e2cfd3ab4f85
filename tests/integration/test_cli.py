"""The command line, run as a user runs it (a real process, a real store on disk)."""

from __future__ import annotations

import json
import shutil

import pytest

import kg_decoder
from conftest import run_cli


@pytest.fixture
def mixed_folder(tmp_path, generated):
    folder = tmp_path / "in"
    (folder / "nested").mkdir(parents=True)
    shutil.copy(generated["generated.md"].path, folder / "notes.md")
    shutil.copy(generated["generated.pdf"].path, folder / "nested" / "paper.pdf")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "nested" / "broken.pdf").write_bytes(b"%PDF-1.4\n" + bytes(range(256)) * 8)
    return folder


def test_decode_a_folder_with_bad_files_reports_each_and_exits_non_zero(mixed_folder, tmp_path):
    store = tmp_path / "store"
    done = run_cli("decode", mixed_folder, "--store", store, "--no-progress")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["file", "format", "pages/sections", "elements", "tables", "images", "status"]
    rows = {line.split()[0].rsplit("/", 1)[-1]: line for line in lines[2:-1]}
    assert set(rows) == {"notes.md", "paper.pdf", "empty.txt", "broken.pdf"}
    assert "failed: EmptyDocument" in rows["empty.txt"] and "failed: CorruptDocument" in rows["broken.pdf"]
    assert "3 pages" in rows["paper.pdf"] and rows["paper.pdf"].rstrip().endswith("decoded")
    assert "2 of 4 files decoded" in lines[-1]
    errors = [line for line in done.stderr.splitlines() if line.startswith("kg-decoder:")]
    assert len(errors) == 2 and all(len(line) < 300 for line in errors)
    with kg_decoder.open_store(store) as reopened:
        assert {r.file_name for r in reopened.document_summaries()} == {"notes.md", "paper.pdf"}


def test_emit_jsonl_prints_one_text_document_per_page(generated, tmp_path):
    done = run_cli("decode", generated["generated.pdf"].path, "--store", tmp_path / "s", "--emit", "jsonl",
                   "--no-progress")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["page_number"] for r in records] == [1, 2, 3]
    assert len({r["document"] for r in records}) == 1
    assert all(r["iri"].startswith("urn:page:") for r in records)
    full = "\n\n".join(r["text"] for r in records)
    for record in records:
        assert full[record["char_offset"]: record["char_offset"] + record["char_length"]] == record["text"]
        for element in record["elements"]:
            assert element["element"].startswith("urn:element:")
    assert "file" in done.stderr  # the summary goes to stderr when stdout carries JSON


def test_section_options_reach_the_decode(generated, tmp_path):
    done = run_cli("decode", generated["generated.md"].path, "--store", tmp_path / "s", "--section-strategy",
                   "heading", "--emit", "jsonl", "--no-progress")
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(records) >= 2 and {r["kind"] for r in records} == {"section"}


def test_bad_option_is_one_line_and_exit_2(generated, tmp_path):
    done = run_cli("decode", generated["generated.md"].path, "--store", tmp_path / "s",
                   "--section-element-count", "0")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "at least 1" in done.stderr
    missing = run_cli("decode", tmp_path / "nope", "--store", tmp_path / "s", "--no-progress")
    assert missing.returncode == 1 and "nope" in missing.stderr


def test_query_runs_a_shipped_audit_query(generated, tmp_path):
    store = tmp_path / "s"
    assert run_cli("decode", generated["generated.pdf"].path, "--store", store, "--no-progress").returncode == 0
    done = run_cli("query", "audit-segments-without-text", "--store", store, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["fileName"], r["pageNumber"]) for r in rows] == [("generated.pdf", "2")]
