"""Decoding several documents at once: ``decode --workers N`` on one machine.

Two workers write exactly what one writes (the same quads, the same table in input order), and a
worker process killed in the middle of a document fails that file only.
"""

from __future__ import annotations

import shutil
import threading

import pytest
from invariants import timeless

import kg_decoder
from conftest import seed_caches
from kg_decoder.decode.parallel import WorkerPool, in_input_order
from kg_decoder.model.errors import CorruptDocument

pytestmark = pytest.mark.slow



def _table(stdout: str) -> list[str]:
    """The summary table's rows, as printed (input order), without the summary line after it."""
    return [line for line in stdout.splitlines() if line.strip() and not line.startswith(("Next", " "))][:-1]


def test_two_workers_write_what_one_writes(corpus_dir, corpus_store, tmp_path, cli):
    one, two = tmp_path / "one", tmp_path / "two"
    # Both runs partition from the session's corpus store's cache and renderings: what is compared is
    # the commits of documents finishing out of order, not the parsers' determinism (tested elsewhere).
    seed_caches(one, corpus_store[0])
    first = cli("decode", corpus_dir, "--store", one, "--workers", "1", "--no-progress")
    assert first.returncode == 0, first.stderr
    two.mkdir()
    for folder in ("partition-cache", "renders"):
        shutil.copytree(one / folder, two / folder)
    second = cli("decode", corpus_dir, "--store", two, "--workers", "2", "--no-progress")
    assert second.returncode == 0, second.stderr
    assert _table(second.stdout) == _table(first.stdout)
    assert "25 of 27 files decoded" in second.stdout
    with kg_decoder.open_store(one) as a, kg_decoder.open_store(two) as b:
        assert timeless(a.quads()) == timeless(b.quads())
        assert len(a) > 10_000


def test_a_worker_killed_mid_document_fails_that_file_only(corpus_dir, tmp_path):
    files = [corpus_dir / name for name in ("fake-text.txt", "layout-parser-paper-with-empty-pages.pdf",
                                            "stanley-cups.csv", "README.md")]
    victim = files[1]
    killed = threading.Event()
    with kg_decoder.open_store(tmp_path / "store") as store:

        def job(path, worker):
            def progress(report):
                # the victim's worker dies once its partitioning has begun
                if path == victim and report.stage == "partition" and not killed.is_set():
                    killed.set()
                    worker._process.kill()

            return kg_decoder.decode(path, store=store, worker=worker, partition_cache=False, progress=progress)

        with WorkerPool(2) as pool:
            outcomes = dict(in_input_order(files, job, pool))
        assert killed.is_set()
        assert isinstance(outcomes[victim], CorruptDocument) and "crashed" in str(outcomes[victim])
        decoded = [path for path in files if path != victim]
        assert all(outcomes[path].status == "decoded" for path in decoded)
        assert sorted(s.file_name for s in store.document_summaries()) == sorted(p.name for p in decoded)


def test_copies_of_a_file_decoded_side_by_side_make_one_document(corpus_dir, tmp_path, cli):
    """The same bytes under two names, decoded by two workers at once: one decode, then the other
    finds it, as one after the other would (one start and one end time, not two)."""
    for name in ("a.pdf", "b.pdf"):
        shutil.copy(corpus_dir / "layout-parser-paper-fast.pdf", tmp_path / name)
    done = cli("decode", tmp_path / "a.pdf", tmp_path / "b.pdf", "--store", tmp_path / "store", "--workers", "2",
               "--no-progress")
    assert done.returncode == 0, done.stderr
    with kg_decoder.open_store(tmp_path / "store") as store:
        [summary] = store.document_summaries()
        started = [q for q in store.quads() if q.predicate.value.endswith("startedAtTime")]
        assert len({q.subject for q in started}) == len(started)  # no activity with two start times
