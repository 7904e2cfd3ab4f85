"""The web server's store: commits on a low-priority thread of their own, RocksDB's threads niced."""

from __future__ import annotations

import os
import threading

import pytest
from pyoxigraph import NamedNode, Quad, RdfFormat, serialize

import kg_decoder
from kg_decoder.graph.priority import LOW_PRIORITY

QUAD = Quad(NamedNode("http://example.org/s"), NamedNode("http://example.org/p"), NamedNode("http://example.org/o"),
            NamedNode("urn:graph:source"))


class Watched:
    """The store's real graph, noting which thread commits and at what priority; it can fail on demand."""

    def __init__(self, graph, fail=False):
        self._graph, self.fail, self.seen = graph, fail, []

    def __getattr__(self, name):
        return getattr(self._graph, name)

    def __len__(self):
        return len(self._graph)

    def load(self, *args, **kwargs):
        native = threading.get_native_id()
        self.seen.append((threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, native)))
        if self.fail:
            raise OSError("disk full")
        return self._graph.load(*args, **kwargs)


def rocksdb_priorities() -> list[int]:
    found = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/comm") as comm:
            if comm.read().startswith("rocksdb"):
                found.append(os.getpriority(os.PRIO_PROCESS, int(task)))
    return found


def test_commits_run_on_the_low_priority_thread_and_the_storage_threads_are_niced(tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    store.serve_reads_first()
    assert rocksdb_priorities() and set(rocksdb_priorities()) == {LOW_PRIORITY}
    store.graph = watched = Watched(store.graph)
    store.write_quads([QUAD])
    assert watched.seen == [("kg-store-commits", LOW_PRIORITY)]
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) != LOW_PRIORITY  # the caller is untouched
    assert QUAD in store.quads()


def test_a_failed_commit_on_that_thread_is_the_callers_error_and_its_blobs_go(tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    store.serve_reads_first()
    store.graph = Watched(store.graph, fail=True)
    with pytest.raises(kg_decoder.StoreError, match="disk full"):
        store.write_document("urn:document:x", serialize([QUAD], format=RdfFormat.N_QUADS), {"ab" * 32: b"bytes"},
                             replace=False)
    assert not store.library.path_of("ab" * 32).exists()


def test_serve_gives_the_worker_the_last_cpu_and_the_requests_the_others(tmp_path):
    import json
    import urllib.parse
    import urllib.request

    from conftest import serve_process

    base, server = serve_process(tmp_path / "store", "--write-token", "t")
    try:
        cpus = sorted(os.sched_getaffinity(0))
        children = [int(pid) for pid in open(f"/proc/{server.pid}/task/{server.pid}/children").read().split()]
        # the decoding worker, not the workers that answer requests (serve/workers.py)
        [worker] = [pid for pid in children if b"warm_up_decoding" in open(f"/proc/{pid}/cmdline", "rb").read()]
        assert os.sched_getscheduler(worker) == os.SCHED_IDLE
        if len(cpus) >= 2:
            assert os.sched_getaffinity(worker) == {cpus[-1]}
            assert os.sched_getaffinity(server.pid) == set(cpus[:-1])
        boundary = "kgboundary"
        body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\n"
                f"KGSENTSERVED words decoded through the served app.\r\n--{boundary}--\r\n").encode()
        request = urllib.request.Request(base + "/api/documents", data=body, headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}", "Authorization": "Bearer t"})
        answer = json.loads(urllib.request.urlopen(request, timeout=300).read())
        document = answer["document"]
        query = urllib.parse.urlencode({"query": f"ASK {{ GRAPH <urn:graph:source> {{ <{document}> ?p ?o }} }}"})
        asked = json.loads(urllib.request.urlopen(f"{base}/sparql?{query}", timeout=30).read())
        assert asked["boolean"] is True
    finally:
        server.terminate()
        server.wait(timeout=30)
