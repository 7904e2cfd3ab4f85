"""Writes on a real server (waitress in a thread, a store on disk), issue 59 items 4 and 5: a large
fact post is a job that lets other writes in between its batches while reads go on; requests
waiting for the store's writer are bounded (503 with Retry-After past the bound) and dropped when
their client leaves; async uploads wait on disk in a bounded queue, not in memory."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from urllib.parse import quote

import pytest
import requests

import kg_decoder
from kg_decoder.cli import load_web_app

TOKEN = "server-writes-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EX = "http://example.org/writes/"
CHEAP = "/sparql?query=" + quote("ASK { ?s ?p ?o }")
UPDATE = {**AUTH, "Content-Type": "application/sparql-update"}


def sentence(n: int) -> str:
    return f"Record {n} says the harbour committee met the council about the bridge {n}."


@pytest.fixture(scope="module")
def store_folder(tmp_path_factory) -> tuple[Path, list]:
    folder = tmp_path_factory.mktemp("server-writes") / "store"
    text = "\n\n".join(" ".join(sentence(n) for n in range(k, k + 5)) for k in range(0, 400, 5))
    with kg_decoder.open_store(folder) as store:
        decoded = kg_decoder.decode(text.encode(), store=store, file_name="records.txt")
        kg_decoder.chunk_document(decoded.document, store=store, chunk_size=256)
        places = [(chunk.iri, sentence(n)) for chunk in kg_decoder.document_chunks(decoded.document, store=store)
                  for n in range(400) if sentence(n) in chunk.text]
    return folder, places


class Live:
    def __init__(self, folder: Path, **settings) -> None:
        from waitress.server import create_server

        self.store = kg_decoder.open_store(folder)
        self.app = load_web_app().create_app(self.store, write_token=TOKEN, isolate=False, **settings)
        self.config = self.app.extensions["kg_decoder"]
        self.server = create_server(self.app, host="127.0.0.1", port=0, threads=6, channel_request_lookahead=1)
        threading.Thread(target=self.server.run, daemon=True).start()
        self.base = f"http://127.0.0.1:{self.server.effective_port}"

    def close(self) -> None:
        self.config.jobs.wait()
        self.server.close()
        self.store.close()

    def ask(self, pattern: str) -> bool:
        return requests.get(self.base + "/sparql", params={"query": f"ASK {{ {pattern} }}"}, timeout=60,
                            headers={"Accept": "application/sparql-results+json"}).json()["boolean"]


@pytest.fixture()
def live(store_folder):
    server = Live(store_folder[0], sync_facts=1000, write_waiters=1, job_queue=3)
    yield server
    server.close()


def lines(places: list, count: int, tag: str) -> list[dict]:
    return [{"s": f"{EX}{tag}/s{k}", "p": EX + "says", "o": f"{tag} {k}", "quote": places[k % len(places)][1],
             "chunk": places[k % len(places)][0]} for k in range(count)]


def timed_get(url: str) -> tuple[float, int]:
    started = time.perf_counter()
    status = requests.get(url, timeout=60).status_code
    return time.perf_counter() - started, status


def test_a_large_fact_post_is_a_job_that_lets_reads_and_writes_in(live, store_folder):
    idle = sorted(timed_get(live.base + CHEAP)[0] for _ in range(10))[5]
    answer = requests.post(live.base + "/api/facts", json={"facts": lines(store_folder[1], 5000, "large")},
                           headers=AUTH, timeout=120)
    assert answer.status_code == 202, answer.text
    assert answer.headers["Location"] == answer.json()["status_url"]
    status_url = live.base + answer.json()["status_url"]
    reads, update = [], None
    while True:
        state = requests.get(status_url, timeout=60).json()
        if state["status"] in ("done", "failed"):
            break
        if state["status"] == "running" and update is None:  # a small write while the post runs
            update = requests.post(live.base + "/sparql", data=f"INSERT DATA {{ <{EX}small> <{EX}p> 1 }}",
                                   headers=UPDATE, timeout=120)
            update_done_before = requests.get(status_url, timeout=60).json()["status"]
        reads.append(timed_get(live.base + CHEAP))
    assert state["status"] == "done", state
    assert state["result"]["stored"] == 5000 and state["result"]["batches"] == 3
    # The small write went in between the post's batches, before the post ended.
    assert update is not None and update.status_code == 204 and update_done_before == "running"
    assert all(status == 200 for _, status in reads) and len(reads) >= 3
    during = sorted(seconds for seconds, _ in reads)[len(reads) // 2]
    assert during < 50 * max(idle, 0.005), (during, idle)
    assert live.ask(f"<{EX}large/s4999> <{EX}says> ?o") and live.ask(f"<{EX}small> ?p ?o")


def test_a_post_under_the_cap_answers_at_once(live, store_folder):
    answer = requests.post(live.base + "/api/facts", json={"facts": lines(store_folder[1], 1000, "sync")},
                           headers=AUTH, timeout=120)
    assert answer.status_code == 201 and answer.json()["stored"] == 1000


def test_waiting_writers_are_bounded_and_dropped_when_their_client_leaves(live):
    config = live.config
    with config.writes:  # another write holds the store
        # A writer whose client gives up while it waits: never applied.
        with socket.create_connection(("127.0.0.1", live.server.effective_port)) as gone:
            body = f"INSERT DATA {{ <{EX}gone> <{EX}p> 1 }}".encode()
            gone.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-update\r\n"
                         + f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
            for _ in range(50):
                if config.writes.waiting == 1:
                    break
                time.sleep(0.05)
            assert config.writes.waiting == 1
        for _ in range(50):  # it stops waiting once waitress sees the connection closed
            if config.writes.waiting == 0:
                break
            time.sleep(0.05)
        assert config.writes.waiting == 0
        # One writer waits (the bound is 1); the next is 503 at once, with Retry-After.
        waiting: list = []
        first = threading.Thread(target=lambda: waiting.append(requests.post(
            live.base + "/sparql", data=f"INSERT DATA {{ <{EX}waited> <{EX}p> 1 }}", headers=UPDATE, timeout=60)))
        first.start()
        for _ in range(50):
            if config.writes.waiting == 1:
                break
            time.sleep(0.05)
        refused = requests.post(live.base + "/sparql", data=f"INSERT DATA {{ <{EX}refused> <{EX}p> 1 }}",
                                headers=UPDATE, timeout=60)
        assert refused.status_code == 503 and refused.json()["error"] == "busy"
        assert int(refused.headers["Retry-After"]) > 0
        facts = requests.post(live.base + "/api/facts", headers=AUTH, timeout=60,
                              json={"facts": [{"s": EX + "f", "p": EX + "p", "o": "x", "quote": "harbour"}]})
        assert facts.status_code == 503 and "Retry-After" in facts.headers
        assert timed_get(live.base + CHEAP)[1] == 200  # reads are not held behind the writers
    first.join(timeout=60)
    assert waiting and waiting[0].status_code == 204
    assert live.ask(f"<{EX}waited> ?p ?o")
    assert not live.ask(f"<{EX}gone> ?p ?o") and not live.ask(f"<{EX}refused> ?p ?o")


def test_eight_writers_that_give_up_park_no_thread_and_none_is_applied(store_folder):
    """Issue 59's load: while a long write holds the store, eight clients send updates and leave. Two
    wait (the default bound), the others are 503 at once; the two stop waiting when their clients go;
    none is applied, and cheap reads and static files are answered all along (no thread parked)."""
    server = Live(store_folder[0], write_waiters=2)
    try:
        config = server.config
        with config.writes:  # the long write
            sockets = []
            for k in range(8):
                gone = socket.create_connection(("127.0.0.1", server.server.effective_port))
                body = f"INSERT DATA {{ <{EX}gave-up/{k}> <{EX}p> 1 }}".encode()
                gone.sendall(b"POST /sparql HTTP/1.1\r\nHost: x\r\nContent-Type: application/sparql-update\r\n"
                             + f"Authorization: Bearer {TOKEN}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                             + body)
                sockets.append(gone)
            deadline = time.monotonic() + 10
            while config.writes.waiting < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert config.writes.waiting == 2  # the bound: the other six were refused at once
            assert timed_get(server.base + CHEAP)[1] == 200 and timed_get(server.base + "/static/app.css")[1] == 200
            for gone in sockets:
                gone.close()
            deadline = time.monotonic() + 10
            while config.writes.waiting and time.monotonic() < deadline:
                time.sleep(0.05)
            assert config.writes.waiting == 0
            assert timed_get(server.base + CHEAP)[1] == 200
        assert not server.ask(f"?s <{EX}p> 1 . FILTER(STRSTARTS(STR(?s), \"{EX}gave-up/\"))")
    finally:
        server.close()


def test_a_writer_waits_no_longer_than_its_deadline(store_folder):
    server = Live(store_folder[0], write_wait=0.5)
    try:
        with server.config.writes:
            answer = requests.post(server.base + "/sparql", data=f"INSERT DATA {{ <{EX}late> <{EX}p> 1 }}",
                                   headers=UPDATE, timeout=60)
        assert answer.status_code == 503 and answer.headers["Retry-After"]
        assert not server.ask(f"<{EX}late> ?p ?o")
    finally:
        server.close()


def rss() -> int:
    with open("/proc/self/statm") as stream:
        return int(stream.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def upload_from_another_process(base: str, path: Path) -> tuple[int, dict, dict]:
    """An async upload sent by curl, so that this process's memory is the server's only."""
    answer = subprocess.run(["curl", "-s", "-D", "-", "-H", f"Authorization: Bearer {TOKEN}", "-F", "async=true",
                             "-F", f"file=@{path};filename={path.name}", base + "/api/documents"],
                            capture_output=True, timeout=120, check=True).stdout.decode()
    head, _, body = answer.replace("\r\n", "\n").partition("\n\n")
    while head.startswith("HTTP/1.1 100"):
        head, _, body = body.partition("\n\n")
    status = int(head.split()[1])
    headers = dict(line.split(": ", 1) for line in head.splitlines()[1:] if ": " in line)
    return status, headers, json.loads(body)


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs curl")
def test_async_uploads_wait_on_disk_in_a_bounded_queue(store_folder, tmp_path):
    stale = store_folder[0] / "upload-spool" / "left-by-a-stopped-server"
    stale.parent.mkdir(exist_ok=True)
    stale.write_bytes(b"x")
    server = Live(store_folder[0], job_queue=4)
    spool = server.config.jobs.spool_folder
    assert spool.is_dir() and not stale.exists()  # emptied at the start
    size = 24 * 1024 * 1024
    blob = tmp_path / "blob.bin"
    blob.write_bytes(os.urandom(1024) * (size // 1024))  # not a document: refused at once when its turn comes
    try:
        with server.config.writes:  # a long write holds the store: the uploads queue
            before = rss()
            accepted = []
            for _ in range(4):
                status, _, body = upload_from_another_process(server.base, blob)
                assert status == 202, body
                accepted.append(body["status_url"])
            status, headers, body = upload_from_another_process(server.base, blob)
            assert status == 503 and body["error"] == "busy"
            assert int(headers["Retry-After"]) > 0
            queued = sum(p.stat().st_size for p in spool.iterdir())
            assert queued >= 4 * size  # the bodies are on disk
            grown = rss() - before
            assert grown < 0.25 * queued, (grown, queued)  # not held in memory
        server.config.jobs.wait()
        for status_url in accepted:
            state = requests.get(server.base + status_url, timeout=60).json()
            assert state["status"] in ("done", "failed"), state
        assert list(spool.iterdir()) == []  # each job's body removed when it ended
    finally:
        server.close()
