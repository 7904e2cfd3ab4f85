"""Attacks on `kg-decoder serve` that leave other clients without an answer (issue 59, items 2 and
3), replayed on loopback against a real server; bounded, stopping by itself.

Starts `kg-decoder serve` in its own process on a store (--store, or one it builds from a few
corpus files), then replays each attack from one loopback address (127.0.0.5 and up) while a cheap
request (a static file, `ASK {}`, `/api/documents`) is sent from another (127.0.0.3), and prints a
table: attack, the attack's statuses, its time, the server's RSS after it, whether the server kept
its PID, and for the cheap requests (sent every half second while the attack lasts) whether every
one was answered 200 meanwhile, and the median and worst ratio of their latency to the same request
on the idle server (target: all answered). --code runs another checkout's server (git worktree or
git archive of main), for the same table before a change.

Attacks:
  slowloris        110 connections from one address, each with half a request's headers, held
  trickle          one request's headers sent a byte a second (cut at --request-deadline)
  runaway-queries  four SPARQL cross products from four addresses, each until --query-timeout
  common-search    HTML /search?q=of+the from four addresses
  common-trace     /api/trace?quote=of the from four addresses
  big-page         the HTML trace of `of the` from two addresses
  document-page    the page of a document with --facts facts, from two addresses

    .venv/bin/python bench/attack.py [--store DIR] [--attacks slowloris,runaway-queries] [--hold 8]
                                     [--query-timeout 10] [--facts 20000]

The store it builds (without --store): four corpus files (the layout-parser paper, a text, an HTML
page, a README), chunked; a Markdown text of 3000 paragraphs of common phrases; --facts facts cited
to the paper's first chunk.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Callable, Iterator, Optional

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
CHEAP_CLIENT = "127.0.0.3"
RUNAWAY = ("SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . "
           "FILTER(STR(?c) != STR(?l)) }")
ASK = "/sparql?query=" + urllib.parse.quote("ASK {}")


def cheap_get(base: str, path: str, source: str = CHEAP_CLIENT, timeout: float = 20.0) -> tuple[int, float]:
    """GET ``path`` from the loopback address ``source``: (status, seconds); status 0 when no answer
    came within ``timeout`` (or the connection failed)."""
    address = urllib.parse.urlsplit(base)
    started = time.monotonic()
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout,
                                            source_address=(source, 0))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    except OSError:
        return 0, time.monotonic() - started
    finally:
        connection.close()


def client_address(n: int) -> str:
    """The n-th attacking loopback address: 127.0.0.5, 127.0.0.6, ..."""
    return f"127.0.0.{5 + n}"


class HalfSent:
    """Connections opened from one address, each sent half a request's headers, held open."""

    def __init__(self, base: str, count: int, source: str) -> None:
        address = urllib.parse.urlsplit(base)
        self.sockets: list[socket.socket] = []
        self.failed = 0
        for _ in range(count):
            try:
                sock = socket.create_connection((address.hostname, address.port), timeout=2,
                                                source_address=(source, 0))
                sock.sendall(b"GET /static/app.css HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                self.sockets.append(sock)
            except OSError:
                self.failed += 1

    def refused(self) -> int:
        """How many of the connections the server answered already or closed (it read nothing more)."""
        count = 0
        for sock in self.sockets:
            sock.setblocking(False)
            try:
                data = sock.recv(4096)
                count += 1 if data == b"" or data.startswith(b"HTTP/1.1 503") else 0
            except BlockingIOError:
                pass
            except OSError:
                count += 1
        return count + self.failed

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


@contextlib.contextmanager
def half_sent(base: str, count: int, source: str) -> Iterator[HalfSent]:
    attack = HalfSent(base, count, source)
    try:
        yield attack
    finally:
        attack.close()


def trickle(base: str, source: str, interval: float = 1.0, limit: float = 60.0) -> tuple[str, float]:
    """One request's headers sent a byte every ``interval`` seconds until the server closes the
    connection or ``limit`` seconds pass: ("cut", seconds) or ("held", limit)."""
    address = urllib.parse.urlsplit(base)
    sock = socket.create_connection((address.hostname, address.port), source_address=(source, 0))
    sock.settimeout(interval)
    started = time.monotonic()
    try:
        for byte in b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10_000:
            if time.monotonic() - started > limit:
                return "held", limit
            try:
                sock.sendall(bytes([byte]))
                if sock.recv(1) == b"":
                    return "cut", time.monotonic() - started
            except socket.timeout:
                continue
            except OSError:
                return "cut", time.monotonic() - started
        return "held", time.monotonic() - started
    finally:
        sock.close()


def concurrent(requests: list[Callable[[], tuple[int, float]]]) -> list[threading.Thread]:
    """Start each request in a thread of its own; their threads (``thread.answer`` once done)."""
    threads = []
    for request in requests:
        thread = threading.Thread(target=lambda t=None, r=request: setattr(threading.current_thread(), "answer", r()),
                                  daemon=True)
        thread.answer = None
        thread.start()
        threads.append(thread)
    return threads


def runaway_queries(base: str, count: int = 4, timeout: float = 120.0) -> list[threading.Thread]:
    """``count`` runaway queries, one from each of ``count`` addresses, under way."""
    path = "/sparql?union=true&query=" + urllib.parse.quote(RUNAWAY)
    return concurrent([lambda n=n: cheap_get(base, path, source=client_address(n), timeout=timeout)
                       for n in range(count)])


def from_addresses(base: str, path: str, count: int = 4, timeout: float = 120.0) -> list[threading.Thread]:
    """``path`` asked from ``count`` addresses at once, under way."""
    return concurrent([lambda n=n: cheap_get(base, path, source=client_address(n), timeout=timeout)
                       for n in range(count)])


# ------------------------------------------------------------------ the bench


def rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20
    except (OSError, IndexError, ValueError):
        return 0.0


def start_server(store: Path, query_timeout: float, extra: list[str], code: Path = REPO) -> tuple[str, subprocess.Popen]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "serve", "--store", str(Path(store).resolve()), "--port",
                                str(port), "--query-timeout", str(query_timeout), "--no-pin-worker", *extra],
                               stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(code)}, cwd=str(code))
    base = f"http://127.0.0.1:{port}"
    for _ in range(600):
        if cheap_get(base, "/api/openapi.json", source="127.0.0.1", timeout=5)[0] == 200:
            return base, process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    raise SystemExit(f"kg-decoder serve did not come up on {base}")


COMMON = ("The history of the city is the story of the river. In the spring the water of the hills came "
          "down in the night, and the people of the valley went up to the hills in the morning. ")


def build_store(folder: Path, facts: int = 20_000, paragraphs: int = 3000) -> Path:
    """A store of a few corpus documents (a PDF paper, texts, an HTML page), chunked, a text of
    ``paragraphs`` paragraphs full of common phrases, and ``facts`` facts cited to the paper's first
    chunk (its document page lists them)."""
    sys.path.insert(0, str(REPO))
    import kg_decoder

    store_path = folder / "store"
    common = folder / "common-phrases.md"
    common.write_text("\n\n".join(f"## Part {n}\n\n{COMMON * 3}" for n in range(paragraphs)))
    with kg_decoder.open_store(store_path) as store:
        for path in [CORPUS / name for name in ("layout-parser-paper-fast.pdf", "fake-text.txt",
                                                "example-10k-1p.html", "README.md")] + [common]:
            result = kg_decoder.decode(path, store=store, pdf_tables=False)
            if path != common:
                kg_decoder.chunk_document(result.document, store=store)
            if path.name.endswith(".pdf") and facts:
                chunk = kg_decoder.document_chunks(result.document, store=store)[0].iri
                kg_decoder.add_facts(chunk, [(f"http://example.org/s{n}", "http://example.org/p", f"o{n}")
                                             for n in range(facts)], store=store)
    return store_path


CHEAP_PATHS = ("/static/app.css", ASK, "/api/documents")


def idle_latencies(base: str) -> dict[str, float]:
    return {path: sorted(cheap_get(base, path)[1] for _ in range(5))[2] for path in CHEAP_PATHS}


def probe_during(base: str, threads: list[threading.Thread], idle: dict[str, float], hold: float) -> dict:
    """The cheap requests sent every half second while ``threads`` run (at most ``hold`` seconds, at least
    one round): answered all, and the worst ratio to the idle latency."""
    ratios, answered, rounds = [], True, 0
    started = time.monotonic()
    while rounds == 0 or (time.monotonic() - started < hold and any(thread.is_alive() for thread in threads)):
        time.sleep(0.5)
        for path in CHEAP_PATHS:
            status, seconds = cheap_get(base, path)
            answered &= status == 200
            ratios.append(seconds / max(idle[path], 1e-4))
        rounds += 1
    ratios.sort()
    return {"answered": answered, "ratio": ratios[len(ratios) // 2], "worst": ratios[-1], "probes": len(ratios)}


def run_attack(name: str, base: str, process: subprocess.Popen, idle: dict[str, float], hold: float,
               timeout: float) -> dict:
    pid = process.pid
    started = time.monotonic()
    statuses: list = []
    if name == "slowloris":
        with half_sent(base, 110, client_address(0)) as attack:
            holding = concurrent([lambda: (time.sleep(hold), (0, hold))[1]])
            probe = probe_during(base, holding, idle, hold)
            statuses = [f"{attack.refused()} of 110 refused"]
    elif name == "trickle":
        thread = concurrent([lambda: trickle(base, client_address(1), limit=max(hold, 30))])[0]
        probe = probe_during(base, [thread], idle, max(hold, 30))
        thread.join()
        statuses = [f"{thread.answer[0]} at {thread.answer[1]:.1f} s"]
    else:
        if name == "runaway-queries":
            threads = runaway_queries(base, timeout=timeout + 60)
        elif name == "common-search":
            threads = from_addresses(base, "/search?q=of+the", timeout=timeout + 60)
        elif name == "common-trace":
            threads = from_addresses(base, "/api/trace?quote=" + urllib.parse.quote("of the"), timeout=timeout + 60)
        elif name == "big-page":
            threads = from_addresses(base, "/trace?quote=" + urllib.parse.quote("of the"), count=2,
                                     timeout=timeout + 60)
        elif name == "document-page":
            threads = from_addresses(base, "/documents/" + urllib.parse.quote(largest_document(base), safe=""),
                                     count=2, timeout=timeout + 60)
        else:
            raise SystemExit(f"no attack named {name}")
        probe = probe_during(base, threads, idle, timeout + 60)
        for thread in threads:
            thread.join(timeout=timeout + 60)
        codes = [str(thread.answer[0]) if thread.answer else "none" for thread in threads]
        statuses = [f"{code}x{codes.count(code)}" for code in sorted(set(codes))]
    return {"attack": name, "status": statuses, "seconds": time.monotonic() - started, "rss": rss_mb(pid),
            "pid kept": process.poll() is None, **probe}


def largest_document(base: str) -> str:
    """The document whose page lists the most facts: the PDF of the store this bench builds, else the first."""
    import json

    connection = http.client.HTTPConnection(urllib.parse.urlsplit(base).hostname, urllib.parse.urlsplit(base).port,
                                            timeout=60)
    connection.request("GET", "/api/documents")
    documents = json.loads(connection.getresponse().read())["documents"]
    connection.close()
    pdfs = [d for d in documents if str(d.get("file_name", "")).endswith(".pdf")]
    chosen = (pdfs or documents)[0]
    return chosen.get("document") or chosen["iri"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, help="serve this store (default: one built from corpus files)")
    parser.add_argument("--attacks", default="slowloris,trickle,runaway-queries,common-search,common-trace,big-page,"
                                              "document-page")
    parser.add_argument("--code", type=Path, default=REPO,
                        help="the checkout whose kg_decoder the server runs (default: this one), to compare")
    parser.add_argument("--facts", type=int, default=20_000, help="facts of the store it builds (default 20000)")
    parser.add_argument("--hold", type=float, default=8.0, help="seconds the connection attacks are held")
    parser.add_argument("--query-timeout", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kg-attack-") as scratch:
        store = args.store or build_store(Path(scratch), facts=args.facts)
        base, process = start_server(store, args.query_timeout, [], code=args.code)
        try:
            for path in CHEAP_PATHS:
                cheap_get(base, path, timeout=120)
            time.sleep(3)  # the workers warm
            idle = idle_latencies(base)
            print(f"server {process.pid} on {base}; idle: "
                  + ", ".join(f"{path.split('?')[0]} {seconds * 1000:.1f} ms" for path, seconds in idle.items()))
            print(f"{'attack':<16} {'status':<26} {'time s':>7} {'RSS MB':>7} {'PID kept':>8} {'answered':>8} "
                  f"{'ratio p50':>9} {'worst':>7}")
            for name in args.attacks.split(","):
                row = run_attack(name, base, process, idle, args.hold, args.query_timeout)
                print(f"{row['attack']:<16} {str(row['status'])[:26]:<26} {row['seconds']:>7.1f} {row['rss']:>7.0f} "
                      f"{str(row['pid kept']):>8} {str(row['answered']):>8} {row['ratio']:>9.1f} {row['worst']:>7.0f}",
                      flush=True)
                time.sleep(1)
        finally:
            process.terminate()
            process.wait(timeout=60)


if __name__ == "__main__":
    main()
