"""Nothing a decode runs touches the network, native code included: the command line decodes real
documents under strace, which sees every process's connect() (a library's telemetry from a thread of
its own, a forked uploader), with each runtime the layout model may run on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("runtime", ["openvino", "onnxruntime"])
def test_a_decode_opens_no_internet_socket_in_any_process(corpus_dir, tmp_path, runtime):
    strace = shutil.which("strace")
    assert strace, "strace is installed by scripts/setup.sh"
    trace = tmp_path / "connect.trace"
    environment = {key: value for key, value in os.environ.items() if not key.startswith(("ORT_", "KG_DECODER_"))}
    environment["KG_DECODER_LAYOUT_RUNTIME"] = runtime
    environment["KG_DECODER_TEXT_READING"] = "process"  # the texts' reading process starts on the first page
    files = [corpus_dir / "embedded-images-tables.pdf", corpus_dir / "handbook-1p.docx"]
    answer = subprocess.run([strace, "-f", "-qq", "-s", "2000", "-e", "trace=connect,execve", "-o", str(trace), sys.executable, "-m",
                             "kg_decoder.cli", "decode", "--store", str(tmp_path / "store"), "--no-progress",
                             *map(str, files)], env=environment, capture_output=True, text=True, timeout=600)
    assert answer.returncode == 0, answer.stderr[-2000:]
    calls = trace.read_text().splitlines()
    assert any("connect(" in line for line in calls)  # the trace saw the worker's own local socket
    assert any("execve(" in line and "text_types import serve" in line for line in calls)
    assert [line for line in calls if "AF_INET" in line] == []
