"""Crash safety, proven: a decode killed (SIGKILL to its whole process group, worker included) at
each phase of a decode on one store (partitioning, mapping, the document's transaction begun
and just committed, chunking and its transaction, a second document's transaction, an e-mail's
attachments: bench/crash.py's MOMENTS) leaves every document whole or absent, the graph valid,
every cited blob in the library; the batch then completes, and gc removes what the kills
orphaned. bench/crash.py runs the same harness with many random kills."""

from __future__ import annotations

import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import crash  # noqa: E402


@pytest.mark.slow
def test_a_kill_at_each_phase_leaves_every_document_whole_or_absent(tmp_path):
    summary = crash.run(trials=0, seed=20261130, folder=tmp_path, moments=crash.MOMENTS, log=print)
    assert summary["killed"] == len(crash.MOMENTS), summary  # every kill came mid-decode, at its moment
    assert len(summary["stages"]) == len(crash.MOMENTS), summary["stages"]  # each phase hit
    assert summary["problems"] == [], summary["problems"]
    assert summary["gc_exit"] == 0 and summary["orphans_after_gc"] == 0
    assert summary["rerun_exit"] == 0, summary["rerun_stdout"]
    assert summary["problems_after_rerun"] == []
