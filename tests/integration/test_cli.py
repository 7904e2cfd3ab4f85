"""The command line, run as a user runs it (a real process, a real store on disk)."""

from __future__ import annotations

import json
import shlex
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


def test_decode_a_folder_reports_refused_files_and_ends_well_with_what_to_do_next(mixed_folder, tmp_path):
    store = tmp_path / "store"
    done = run_cli("decode", mixed_folder, "--store", store, "--no-progress")
    assert done.returncode == 0, done.stderr  # refusing an empty or damaged file is the job done right
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["file", "format", "pages/sections", "elements", "tables", "images", "chunks", "status"]
    summary = next(i for i, line in enumerate(lines) if " files decoded into " in line)
    rows = {line.split()[0].rsplit("/", 1)[-1]: line for line in lines[2:summary]}
    assert set(rows) == {"notes.md", "paper.pdf", "empty.txt", "broken.pdf"}
    assert "refused: EmptyDocument" in rows["empty.txt"] and "refused: CorruptDocument" in rows["broken.pdf"]
    assert "3 pages" in rows["paper.pdf"] and rows["paper.pdf"].rstrip().endswith("decoded")
    assert lines[summary].startswith("2 of 4 files decoded")
    assert "2 refused as inputs (CorruptDocument, EmptyDocument)" in lines[summary]
    errors = [line for line in done.stderr.splitlines() if line.startswith("kg-decoder:")]
    assert len(errors) == 2 and all(len(line) < 300 for line in errors)
    with kg_decoder.open_store(store) as reopened:
        assert {r.file_name for r in reopened.document_summaries()} == {"notes.md", "paper.pdf"}
    # What to do next: serve, a trace that works as printed (on the PDF), the audit.
    steps = {line.split(":", 1)[0].strip(): line.split(":", 1)[1].split("(then")[0].strip()
             for line in lines[lines.index("Next:") + 1:]}
    assert set(steps) == {"browse and query it", "trace a quote", "audit its coverage"}

    def command(step: str) -> list[str]:  # the words after the program (run here as python -m kg_decoder.cli)
        words = shlex.split(steps[step])
        return words[next(i for i, word in enumerate(words) if word in ("serve", "trace", "audit")):]

    assert command("browse and query it") == ["serve", "--store", str(store)]
    trace = command("trace a quote")
    assert trace[-1].endswith("paper.pdf")
    traced = run_cli(*trace, "--format", "json")
    assert traced.returncode == 0, traced.stderr
    assert json.loads(traced.stdout)[0]["page_number"] >= 1
    assert run_cli(*command("audit its coverage")).returncode == 0


def test_fail_on_error_makes_any_file_not_decoded_fail_the_job(mixed_folder, tmp_path):
    done = run_cli("decode", mixed_folder, "--store", tmp_path / "store", "--no-progress", "--fail-on-error")
    assert done.returncode == 1 and "2 of 4 files decoded" in done.stdout


def test_a_job_that_cannot_do_its_work_exits_non_zero(generated, tmp_path):
    """hi_res needs a layout model this machine does not have: that is the job failing, not the input."""
    done = run_cli("decode", generated["generated.pdf"].path, "--store", tmp_path / "store", "--no-progress",
                   "--strategy", "hi_res")
    assert done.returncode == 1
    assert "failed: ModelUnavailable" in done.stdout and "1 failed" in done.stdout


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
    assert missing.returncode == 1 and "nope" in missing.stderr and "failed: UnreadableFile" in missing.stdout


def test_queries_lists_what_a_user_may_run_and_query_refuses_the_store_s_own_updates(tmp_path):
    listed = run_cli("queries")
    assert listed.returncode == 0
    rows = {line.split()[0]: line for line in listed.stdout.splitlines()[2:]}
    assert "audit-chunk-gaps" in rows and "gaps and overlaps between chunks" in rows["audit-chunk-gaps"]
    assert not [name for name in rows if name.startswith("delete_")]
    assert list(rows)[0].startswith("audit-")
    update = run_cli("query", "delete_source", "--store", tmp_path / "s")
    assert update.returncode == 2 and "is an update the store runs itself" in update.stderr
    assert update.stderr.count("\n") == 1


def test_query_runs_a_shipped_audit_query(generated, tmp_path):
    store = tmp_path / "s"
    assert run_cli("decode", generated["generated.pdf"].path, "--store", store, "--no-progress").returncode == 0
    done = run_cli("query", "audit-segments-without-text", "--store", store, "--format", "json")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["fileName"], r["pageNumber"]) for r in rows] == [("generated.pdf", "2")]


def test_a_rerun_on_unchanged_files_answers_from_the_store_without_starting_workers(generated, corpus_dir, tmp_path,
                                                                                    monkeypatch, capsys):
    from kg_decoder.cli.main import main
    from kg_decoder.decode.worker import PartitionWorker

    folder = tmp_path / "files"
    folder.mkdir()
    for name in ("generated.md", "generated.csv"):
        shutil.copy(generated[name].path, folder / name)
    for name in ("password.pdf", "empty.txt"):  # refused: one by its reading in a worker, one before
        shutil.copy(corpus_dir / name, folder / name)
    started = []
    start = PartitionWorker.start
    monkeypatch.setattr(PartitionWorker, "start", lambda worker: started.append(worker) or start(worker))
    command = ["decode", str(folder), "--store", str(tmp_path / "store"), "--chunk", "--no-progress"]

    def rows() -> dict[str, str]:
        return {line.split()[0]: line.rstrip() for line in capsys.readouterr().out.splitlines()
                if line.startswith(str(folder))}

    assert main(command) == 0 and started
    first = rows()
    assert first[str(folder / "password.pdf")].endswith("refused: EncryptedDocument")
    started.clear()
    assert main(command) == 0
    assert started == []  # every file answered from the store, the refusals too
    again = rows()
    assert {name: row for name, row in again.items() if row.endswith("refused: EncryptedDocument") or
            row.endswith("refused: EmptyDocument")} == {name: first[name] for name in
                                                       (str(folder / "password.pdf"), str(folder / "empty.txt"))}
    decoded = [row for row in again.values() if "refused" not in row]
    assert len(decoded) == 2 and all(row.endswith("unchanged") for row in decoded)
    assert all(int(row.split()[-2]) >= 1 for row in decoded)  # the chunks the store holds, counted
    assert main(command + ["--password", "not-this-one"]) == 0 and len(started) == 1  # a password given is tried
    started.clear()
    (folder / "generated.csv").write_text("name,city\nChanged,Braga\n")
    assert main(command) == 0 and len(started) == 1  # one worker, for the one file that changed
