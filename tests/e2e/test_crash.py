"""Crash safety, proven: a decode killed (SIGKILL to its whole process group, worker included) at
random moments 20 times on one store leaves every document whole or absent, the graph valid,
every cited blob in the library; the batch then completes, and gc removes what the kills
orphaned. bench/crash.py runs the same harness with more trials."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import crash  # noqa: E402


@pytest.mark.slow
def test_twenty_kills_leave_every_document_whole_or_absent(tmp_path):
    summary = crash.run(trials=20, seed=20261130, folder=tmp_path, window=3.0, log=lambda line: None)
    assert summary["killed"] >= 15, summary  # the kills came while the decodes were at work
    assert summary["problems"] == [], summary["problems"]
    assert summary["gc_exit"] == 0 and summary["orphans_after_gc"] == 0
    assert summary["rerun_exit"] == 0, summary["rerun_stdout"]
    assert summary["problems_after_rerun"] == []
