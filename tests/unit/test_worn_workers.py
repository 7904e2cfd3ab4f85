"""serve/workers.py: a request worker that took most of the address space it may take is worn (replaced)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kg_decoder.serve.workers import _worn

MB = 2 ** 20
_CHILD = """
import os, resource, sys
at_rest = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
if int(sys.argv[1]):
    resource.setrlimit(resource.RLIMIT_AS, (at_rest + int(sys.argv[1]), at_rest + int(sys.argv[1])))
held = bytearray(int(sys.argv[2]))  # mapped beyond what it had at rest
print("ready", flush=True)
sys.stdin.read()
"""


def _child(limit_bytes: int, taken_bytes: int) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", _CHILD, str(limit_bytes), str(taken_bytes)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline() == "ready\n"
    return child


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prlimit and /proc: Linux")
def test_a_worker_past_three_quarters_of_its_address_space_is_worn_and_one_gone_is_not():
    fresh, worn, unlimited = _child(256 * MB, 0), _child(256 * MB, 224 * MB), _child(0, 0)
    try:
        assert not _worn(fresh.pid, 256 * MB)
        assert _worn(worn.pid, 256 * MB)
        assert not _worn(unlimited.pid, 256 * MB)  # no limit: nothing to run out of
        assert not _worn(worn.pid, None) and not _worn(None, 256 * MB)
    finally:
        for child in (fresh, worn, unlimited):
            child.communicate("")
    assert not _worn(worn.pid, 256 * MB)  # reaped: no such process
