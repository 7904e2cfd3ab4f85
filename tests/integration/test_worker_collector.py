"""A decoding worker keeps what its warm-up loaded (modules, parsers, models) out of the garbage
collector's full collections: they walked all of it each time a decode's own objects set one off; and
collects its young objects less often."""

from __future__ import annotations

import pytest

import kg_decoder
from kg_decoder.decode.worker import YOUNG_OBJECTS_COLLECTED, PartitionWorker


def test_a_warm_worker_freezes_what_its_warm_up_loaded_and_decodes_as_before(tmp_path, corpus_dir):
    worker = PartitionWorker()
    try:
        state = worker.call("kg_decoder.decode.worker:collector_state")
        frozen = state["frozen"]
        assert frozen > 100_000  # spaCy's model, unstructured, pdfminer, the layout model...
        assert state["young_collected_after"] == YOUNG_OBJECTS_COLLECTED > 700  # not Python's default
        with kg_decoder.open_store(tmp_path / "store") as store:
            result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store, worker=worker)
            assert result.status == "decoded" and result.pages == 2
        after = worker.call("kg_decoder.decode.worker:collector_state")["frozen"]
        assert after <= frozen  # frozen once, not after each decode
    finally:
        worker.close()


def test_a_task_whose_caller_went_away_is_stopped_at_once_and_its_worker_stays_warm():
    """The web server's workers: once ``cancelled()`` turns true (waitress says the client left), the
    task is interrupted within a poll, RequestCancelled is raised, and the same worker takes the next
    task (no new worker's start for each client that hangs up). The task: a quote looked for in 16 M
    letters of ligatures and broken words, which takes half a minute."""
    import os
    import time

    import pytest

    from kg_decoder.decode.worker import WorkerSetup
    from kg_decoder.model.errors import RequestCancelled

    worker = PartitionWorker(setup=WorkerSetup(warm_up="kg_decoder.decode.processes:cpu_share", idle=False,
                                               interruptible=True, name="test worker"))
    try:
        assert worker.call("kg_decoder.cite.quotes:find_quote", "a fine day", "fine", timeout=120) == [(2, 6)]
        pid = worker.pid
        started = time.monotonic()
        with pytest.raises(RequestCancelled, match="went away"):
            worker.call("kg_decoder.cite.quotes:find_quote", "ab\ufb01 c-\nd " * 2_000_000, "zzz", timeout=120,
                        cancelled=lambda: time.monotonic() - started > 1.0)
        assert time.monotonic() - started < 10  # not at the time limit
        assert worker.call("kg_decoder.cite.quotes:find_quote", "a fine day", "day", timeout=30) == [(7, 10)]
        assert worker.pid == pid != os.getpid()  # the same worker, warm
    finally:
        worker.close()


@pytest.mark.parametrize("name", ["kg_decoder", "numpy"])
def test_a_worker_runs_its_callers_kg_decoder_whatever_folder_it_is_started_from(name, tmp_path, monkeypatch):
    """A folder named ``kg_decoder`` (another version's checkout, or anyone's) or named as a library in the
    caller's current folder is not imported by the worker it starts."""
    from kg_decoder.decode.worker import WorkerSetup

    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text(f"raise ImportError('the current folder\\'s {name}')\n")
    monkeypatch.chdir(tmp_path)
    worker = PartitionWorker(setup=WorkerSetup(warm_up="kg_decoder.decode.processes:cpu_share", idle=False,
                                               name="test worker"))
    try:
        assert worker.call("kg_decoder.decode.worker:collector_state")["frozen"] > 0  # kg_decoder and numpy imported
    finally:
        worker.close()


def test_a_spawned_helper_imports_no_library_from_the_callers_current_folder(tmp_path, monkeypatch):
    from kg_decoder.decode.processes import Helper

    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text("raise ImportError(\"the current folder's numpy\")\n")
    monkeypatch.chdir(tmp_path)
    helper = Helper.spawn()
    try:
        helper.send("pkgutil:resolve_name", "numpy:__file__")  # numpy imported, where it came from
        assert not helper.result(timeout=60).startswith(str(tmp_path))
    finally:
        helper.stop()
