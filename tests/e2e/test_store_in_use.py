"""A store held by a running ``kg-decoder serve``: reading commands open it read-only and say so,
writing commands fail with a typed error that says what to do, ``decode --server`` sends the files
through the API, ``gc`` never removes a blob the graph cites; names from inside documents never
become paths or header lines."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.parse
import urllib.request

import pytest

import kg_decoder
from conftest import run_cli, serve_process

TOKEN = "in-use-token"


@pytest.fixture(scope="module")
def serving(tmp_path_factory, generated):
    folder = tmp_path_factory.mktemp("in-use")
    store = folder / "store"
    assert run_cli("decode", generated["generated.md"].path, "--store", store, "--no-progress").returncode == 0
    base, server = serve_process(store, "--write-token", TOKEN, "--no-pin-worker")
    yield {"store": store, "base": base, "folder": folder}
    server.terminate()
    server.wait(timeout=30)


def test_reading_commands_open_the_held_store_read_only_and_say_so(serving):
    done = run_cli("query", "audit-document-counts", "--store", serving["store"], "--format", "json")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line)["fileName"] for line in done.stdout.splitlines()] == ["generated.md"]
    assert "in use by another process" in done.stderr and "read-only" in done.stderr
    for command in (["audit"], ["validate"], ["trace", "--quote", "KGSENTMDBODY"], ["gc", "--dry-run"]):
        done = run_cli(*command, "--store", serving["store"])
        assert done.returncode == 0, (command, done.stderr)


def test_a_writing_command_says_what_to_do_and_decode_server_sends_the_files(serving, generated):
    done = run_cli("decode", generated["generated.csv"].path, "--store", serving["store"], "--no-progress")
    assert done.returncode == 2
    [line] = done.stderr.strip().splitlines()
    assert "in use by another process" in line and "--server" in line and "Traceback" not in line
    sent = run_cli("decode", generated["generated.csv"].path, generated["generated.json"].path, "--server",
                   serving["base"], "--token", TOKEN, "--chunk")
    assert sent.returncode == 0, sent.stderr
    assert "2 of 2 files sent" in sent.stdout and "decoded" in sent.stdout
    refused = run_cli("decode", generated["generated.csv"].path, "--server", serving["base"], "--token", "wrong")
    assert refused.returncode == 2 and "token" in refused.stderr
    listed = json.loads(urllib.request.urlopen(serving["base"] + "/api/documents", timeout=30).read())
    assert {d["file_name"] for d in listed["documents"]} == {"generated.md", "generated.csv", "generated.json"}


def test_decode_server_sends_the_files_source_so_new_bytes_are_its_next_version(serving, tmp_path):
    edited = tmp_path / "notes.md"
    edited.write_text("# Notes\n\nThe first wording of the notes.\n", encoding="utf-8")
    for text in ("# Notes\n\nThe second wording of the notes.\n", None):
        sent = run_cli("decode", edited, "--server", serving["base"], "--token", TOKEN)
        assert sent.returncode == 0, sent.stderr
        if text:
            edited.write_text(text, encoding="utf-8")
    named = run_cli("decode", edited, "--server", serving["base"], "--token", TOKEN, "--source-id", "notes-by-id")
    assert named.returncode == 0, named.stderr

    def versions(source: str) -> list[int]:
        url = serving["base"] + "/api/versions?" + urllib.parse.urlencode({"source": source})
        return [v["number"] for v in json.loads(urllib.request.urlopen(url, timeout=30).read())["versions"]]

    assert versions(str(edited.resolve())) == [1, 2]
    assert versions("notes-by-id") == [1]


def test_gc_beside_a_server_that_writes_removes_only_orphans(serving, generated):
    library = serving["store"] / "library" / "sha256"
    orphan = library / "ab" / ("ab" * 32)
    orphan.parent.mkdir(parents=True, exist_ok=True)
    orphan.write_bytes(b"left by a killed decode")
    uploads = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "decode", str(generated["generated.html"].path),
                                str(generated["generated.xml"].path), "--server", serving["base"], "--token", TOKEN],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(3):  # while the server decodes and commits
            done = run_cli("gc", "--store", serving["store"])
            assert done.returncode == 0, done.stderr
    finally:
        assert uploads.wait(timeout=300) == 0
    assert not orphan.exists()
    done = run_cli("audit", "--store", serving["store"], "--json")
    reports = {r["audit"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert reports["library-missing-blobs"]["findings"] == 0 and reports["library-orphan-blobs"]["findings"] == 0


NAMES = ["../../../../tmp/kg-escape.txt", "/etc/kg-absolute.txt", "nul\x00name.txt", "line\nbreak\r.txt",
         "x" * 4096 + ".txt", "..", "C:\\Windows\\kg.txt"]


def hostile_message() -> bytes:
    """A message whose attachment names (RFC 2231, percent-encoded) hold paths, NUL, line breaks."""
    from urllib.parse import quote

    parts = ["From: a@example.org", "To: b@example.org", "Subject: hostile names", "MIME-Version: 1.0",
             'Content-Type: multipart/mixed; boundary="kgb"', "", "--kgb", "Content-Type: text/plain", "",
             "KGSENTBODY of a message with odd attachment names."]
    for number, name in enumerate(NAMES):
        parts += ["--kgb", "Content-Type: text/plain",
                  f"Content-Disposition: attachment; filename*=utf-8''{quote(name, safe='')}", "",
                  f"KGSENTATTACH {number}"]
    return ("\r\n".join(parts + ["--kgb--", ""])).encode()


def test_names_from_inside_documents_never_become_paths_or_headers(tmp_path):
    message = hostile_message()
    store_path = tmp_path / "store"
    with kg_decoder.open_store(store_path) as store:
        result = kg_decoder.decode(message, store=store, file_name="../../hostile\n.eml")
        names = [entry.name for entry in result.embedded]
        assert len(names) == len(NAMES)
        for name in names:
            assert name is None or ("/" not in name and "\\" not in name and "\x00" not in name and "\n" not in name)
        children = [entry.result.document for entry in result.embedded if entry.result]
        assert children
    export = tmp_path / "export"
    done = run_cli("images", str(store_path / "missing.txt"), "--store", store_path, "--export", export)
    assert done.returncode == 2  # no such document: one line, nothing written
    assert not export.exists() or not any(export.iterdir())
    assert not (tmp_path.parent / "kg-escape.txt").exists()
    from kg_decoder.cli import load_web_app

    client = load_web_app().create_app(store_path).test_client()
    for document in [result.document, *children]:
        response = client.get(f"/api/documents/{document}/content")
        assert response.status_code == 200
        disposition = response.headers.get("Content-Disposition", "")
        assert "\n" not in disposition and "\r" not in disposition and ".." not in disposition
        assert len(disposition) < 600
