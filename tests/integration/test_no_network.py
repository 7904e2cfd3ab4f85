"""Nothing a decode runs touches the network, native code included: the command line decodes real
documents under strace, which sees every process's connect() (a library's telemetry from a thread of
its own, a forked uploader), with each runtime the layout model may run on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import kg_decoder

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runtime", ["openvino", "onnxruntime"])
def test_a_decode_opens_no_internet_socket_in_any_process(corpus_dir, tmp_path, runtime):
    strace = shutil.which("strace")
    assert strace, "strace is installed by scripts/setup.sh"
    trace = tmp_path / "connect.trace"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("ORT_", "KG_DECODER_"))}
    environment["KG_DECODER_LAYOUT_RUNTIME"] = runtime
    files = [corpus_dir / "embedded-images-tables.pdf", corpus_dir / "handbook-1p.docx"]
    answer = subprocess.run([strace, "-f", "-qq", "-s", "2000", "-e", "trace=connect,execve", "-o", str(trace), sys.executable, "-m",
                             "kg_decoder.cli", "decode", "--store", str(tmp_path / "store"), "--no-progress",
                             *map(str, files)], env=environment, capture_output=True, text=True, timeout=600)
    assert answer.returncode == 0, answer.stderr[-2000:]
    calls = trace.read_text().splitlines()
    assert any("connect(" in line for line in calls)  # the trace saw the worker's own local socket
    assert any("execve(" in line and "kg_decoder.decode.worker" in line for line in calls)  # the worker was traced
    assert [line for line in calls if "AF_INET" in line] == []


def test_office_files_that_link_outside_reach_nothing_in_any_process(tmp_path):
    """Twenty Office files linking a picture, text, template, workbook or section by URL (a loopback
    server here) or by a path of this machine: decoded by the command line under strace, no process
    (LibreOffice included) connects to an Internet address or opens a file they name, the server
    hears nothing, and every file decodes with its own text."""
    import http.server

    from kg_decoder.decode.sandbox import confinement
    from linked_office import hostile_office_files, write_secrets
    from servers import handler_server

    heard = []

    class Counting(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            heard.append(self.path)
            self.send_response(404)
            self.end_headers()

    secrets = write_secrets(tmp_path / "secrets")
    inputs, store, traces = tmp_path / "in", tmp_path / "store", tmp_path / "traces"
    inputs.mkdir()
    traces.mkdir()
    with handler_server(Counting) as url:
        for name, data in hostile_office_files(url, secrets).items():
            (inputs / name).write_bytes(data)
        answer = subprocess.run([shutil.which("strace"), "-ff", "-qq", "-e",
                                 "trace=connect,open,openat,openat2,creat,stat,lstat,newfstatat,statx,access,readlink",
                                 "-o", str(traces / "trace"), sys.executable, "-m", "kg_decoder.cli", "decode",
                                 "--store", str(store), "--no-progress", str(inputs)],
                                capture_output=True, text=True, timeout=900)
    assert answer.returncode == 0, answer.stderr[-2000:]
    assert "20 of 20 files decoded" in answer.stdout, answer.stdout
    with kg_decoder.open_store(store) as opened:
        for summary in opened.document_summaries():
            texts = [opened.text(s.sha256, s.segment) for s in opened.text_segments(summary.document)]
            assert "KGLINK" in " ".join(texts), summary.file_name
    calls = [line for path in traces.iterdir() for line in path.read_text(errors="replace").splitlines()]
    assert any("soffice" in line for line in calls)  # LibreOffice laid the pages out under the trace
    assert [line for line in calls if "AF_INET" in line] == []
    assert heard == []
    # No file they name is opened (one LibreOffice looks for in its confinement is not there: -1 ENOENT).
    touched = [line for line in calls if str(secrets) in line and " = -1 " not in line]
    assert touched == [], touched[:5]
    assert confinement() in ("bwrap", "unshare")  # scripts/setup.sh installs bubblewrap


def test_without_confinement_libreoffice_reads_only_the_formats_the_cleaning_covers(generated, tmp_path):
    """A machine where neither bubblewrap nor unshare can run (here: a PATH without them): a DOC, whose
    fields LibreOffice would follow to this machine's files, is refused with the reason; a DOCX,
    cleaned, still gets its pages drawn; with KG_DECODER_UNCONFINED_OFFICE=1 the DOC decodes."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for folder in (Path(sys.executable).parent, Path("/usr/bin"), Path("/bin")):
        for program in folder.iterdir():
            if program.name not in ("bwrap", "unshare") and not (bare / program.name).exists():
                (bare / program.name).symlink_to(program)
    environment = {**os.environ, "PATH": str(bare)}

    def decode(name: str, **extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "kg_decoder.cli", "decode", "--store",
                               str(tmp_path / f"store-{len(extra)}"), "--no-progress",
                               str(generated[name].path)], env={**environment, **extra},
                              capture_output=True, text=True, timeout=600)

    refused = decode("generated.doc")
    assert "refused: UnsupportedFormat" in refused.stdout, refused.stdout
    assert "only confined by bubblewrap" in refused.stderr and "KG_DECODER_UNCONFINED_OFFICE=1" in refused.stderr
    drawn = decode("generated.docx")
    assert drawn.returncode == 0 and " decoded" in drawn.stdout, drawn.stdout
    assert list((tmp_path / "store-0" / "renders").glob("*.pdf"))  # laid out by LibreOffice, unconfined
    allowed = decode("generated.doc", KG_DECODER_UNCONFINED_OFFICE="1")
    assert allowed.returncode == 0 and " decoded" in allowed.stdout, allowed.stdout
