"""Past one machine: a shared library on S3 (moto's server) and documents decoded as Ray tasks on a
local 2-CPU cluster, committing straight to an Oxigraph server. Everything on 127.0.0.1."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest
from invariants import timeless
from servers import S3_TEST_ENVIRONMENT, create_bucket, moto_s3_server, oxigraph_server, s3_options

import kg_decoder
from conftest import seed_caches
from kg_decoder.model.errors import BlobMissing

pytestmark = pytest.mark.slow

FILES = ["embedded-images-tables.pdf", "fake-text.txt", "stanley-cups.csv", "fake-html-cp1252.html",
         "README.md", "password.pdf"]



@pytest.fixture(scope="module")
def s3():
    with moto_s3_server() as server:
        create_bucket(server.endpoint_url, "kg-test")
        yield server


def test_an_s3_library_decodes_traces_and_exports_images(s3, corpus_dir, tmp_path):
    options = s3_options(s3.endpoint_url)
    with kg_decoder.open_store(tmp_path / "store", library="s3://kg-test/images-test", library_options=options) as store:
        result = kg_decoder.decode(corpus_dir / "embedded-images-tables.pdf", store=store)
        assert not (tmp_path / "store" / "library").exists()
        original = (corpus_dir / "embedded-images-tables.pdf").read_bytes()
        assert store.library.get(hashlib.sha256(original).hexdigest()) == original
        [source] = kg_decoder.trace(quote="Potentiodynamic polarization data", document=result.document, store=store)[:1]
        assert source.page_number == 1 and source.boxes
        written = kg_decoder.export_images(result.document, tmp_path / "images", store=store)
        assert written and all(path.stat().st_size > 0 for path in written)
        stored = {hashlib.sha256(path.read_bytes()).hexdigest() for path in written}
        assert stored <= set(store.library.keys())
        # A blob gone from the bucket: a typed error naming the entity that cites it.
        page = store.document_pages(result.document)[0].page
        store.library.remove([store.content_hash(page)])
        with pytest.raises(BlobMissing, match=page):
            store.content(page)


def test_ray_tasks_commit_what_a_local_decode_writes(s3, corpus_dir, corpus_store, tmp_path, cli):
    """Six corpus files and a copy of the first (decoded after it, not beside it on the other CPU), each a
    version of its path as on this machine; the local decode compared with reads the session corpus
    store's parse cache (the commits are compared, not the parsers' determinism). Then a file's new bytes
    decoded on Ray are its source's version 2, with the diff and the fact carried."""
    copy = tmp_path / "copy.pdf"
    shutil.copy(corpus_dir / FILES[0], copy)
    files = [corpus_dir / FILES[0], copy] + [corpus_dir / name for name in FILES[1:]]
    notes = tmp_path / "notes.md"
    notes.write_text("# Notes\n\nRevenue was 12 M in 2024, as the board reported.\n\nThe board met twice.\n")
    with oxigraph_server(tmp_path / "oxigraph") as server:
        env = {**os.environ, **S3_TEST_ENVIRONMENT, "RAY_USAGE_STATS_ENABLED": "0"}
        done = cli("decode", *files, "--store", server.url, "--library", "s3://kg-test/ray-test",
                   "--library-option", f"endpoint_url={s3.endpoint_url}", "--ray", "auto", "--workers", "2",
                   "--no-progress", env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "6 of 7 files decoded" in done.stdout and "refused: EncryptedDocument" in done.stdout
        assert s3.endpoint_url not in done.stdout  # option values (secrets, often) are not printed
        names = {str(path) for path in files}
        rows = [line.split()[0] for line in done.stdout.splitlines() if line.split() and line.split()[0] in names]
        assert rows == [str(path) for path in files]  # the table in input order
        seed_caches(tmp_path / "local", corpus_store[0])
        with kg_decoder.open_store(tmp_path / "local") as local:
            for path in files:  # the same bytes, names and sources
                try:
                    kg_decoder.decode(path.read_bytes(), file_name=path.name, store=local, record_failure=True,
                                      source_id=str(path.resolve()))
                except kg_decoder.DecodeError:
                    pass
            with kg_decoder.open_store(server.url, library="s3://kg-test/ray-test",
                                       library_options=s3_options(s3.endpoint_url)) as remote:
                assert timeless(remote.quads()) == timeless(local.quads())
                started = [q for q in remote.quads() if q.predicate.value.endswith("startedAtTime")]
                assert len({q.subject for q in started}) == len(started)  # no activity with two start times
                assert remote.missing_blobs() == []
                traced = kg_decoder.trace(quote="Potentiodynamic polarization data", store=remote)
                assert traced and traced[0].boxes == kg_decoder.trace(quote="Potentiodynamic polarization data", store=local)[0].boxes
                first = kg_decoder.decode(notes, store=remote, record_failure=True)  # version 1, here
                kg_decoder.chunk_document(first.document, store=remote)
                [chunk] = kg_decoder.document_chunks(first.document, store=remote)[:1]
                kg_decoder.add_facts(chunk.iri, [("http://ex.org/acme", "http://ex.org/revenue", "12 M")],
                                     spans=[{"quote": "Revenue was 12 M in 2024"}], store=remote)
        notes.write_text("# Notes\n\nRevenue was 14 M in 2024, as the board reported.\n\nThe board met twice.\n")
        done = cli("decode", notes, "--store", server.url, "--library", "s3://kg-test/ray-test",
                   "--library-option", f"endpoint_url={s3.endpoint_url}", "--ray", "auto", "--workers", "2",
                   "--no-progress", env=env, timeout=900)
        assert done.returncode == 0, done.stderr[-3000:]
        with kg_decoder.open_store(server.url, library="s3://kg-test/ray-test",
                                   library_options=s3_options(s3.endpoint_url)) as remote:
            versions = kg_decoder.source_versions(str(notes.resolve()), store=remote)
            assert [(v.number, v.latest) for v in versions] == [(1, False), (2, True)]
            assert versions[1].counts.changed == 1 and versions[1].facts == {"current": 0, "moved": 0, "changed": 1,
                                                                           "removed": 0}


def test_ray_refuses_the_embedded_store(tmp_path, corpus_dir, cli):
    done = cli("decode", corpus_dir / "fake-text.txt", "--store", tmp_path / "store", "--ray", "auto")
    assert done.returncode == 2
    assert "--ray needs a remote --store" in done.stderr and len(done.stderr.strip().splitlines()) == 1


def _kill_running_tasks(stop: threading.Event, kills: list, limit: int) -> None:
    """SIGKILL each process running a decode task (Ray names it ``ray::decode_task``), ``limit`` times."""
    while not stop.is_set() and len(kills) < limit:
        found = subprocess.run(["pgrep", "-f", "ray::decode_task"], capture_output=True, text=True).stdout.split()
        if found:
            time.sleep(0.5)  # inside the decode, not while it starts
            for pid in found:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), signal.SIGKILL)
            kills.append(found)
            time.sleep(1.0)
        time.sleep(0.05)


@pytest.mark.parametrize("deaths", [1, 3])
def test_a_ray_task_that_dies_is_run_again_then_reported(deaths, corpus_dir, tmp_path):
    """Killed once, a task is run again and its document committed whole; killed on every run
    (three), the file is a typed failure and nothing of it is stored."""
    import ray

    from kg_decoder.cli.distributed import _TASK_RETRIES, _collected, decode_task
    from kg_decoder.graph.remote_store import StoreConfig
    from kg_decoder.model import DecodeOptions

    path = corpus_dir / "layout-parser-paper-fast.pdf"
    with oxigraph_server(tmp_path / "oxigraph") as server:
        config = StoreConfig.at(server.url).with_library(str(tmp_path / "library"))
        ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
        stop, kills = threading.Event(), []
        killer = threading.Thread(target=_kill_running_tasks, args=(stop, kills, deaths), daemon=True)
        try:
            killer.start()
            task = ray.remote(num_cpus=1, max_retries=_TASK_RETRIES)(decode_task)
            _, outcome = _collected(ray, path, task.remote(path.name, path.read_bytes(), config, DecodeOptions(),
                                                           None, False))
        finally:
            stop.set()
            ray.shutdown()
        assert len(kills) == deaths
        with kg_decoder.open_store(config) as remote:
            if deaths <= _TASK_RETRIES:
                assert outcome.status == "decoded"
                with kg_decoder.open_store(None) as local:  # the same bytes and name, no source's version
                    kg_decoder.decode(path.read_bytes(), file_name=path.name, store=local)
                    assert timeless(remote.quads()) == timeless(local.quads())
            else:
                assert isinstance(outcome, kg_decoder.WorkerUnavailable) and "failed 3 times" in str(outcome)
                assert len(remote) == 0
