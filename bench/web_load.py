"""Load benchmark of the web app, bounded, loopback only.

Starts `kg-decoder serve` (waitress, threads) in its own process on a fresh store holding a few
decoded, chunked corpus documents with facts; then
  1. without load: one client, SPARQL queries and trace requests in turn (--quiet-seconds);
  2. under load: --clients threads doing the same for --seconds while one more thread uploads
     documents to decode (POST /api/documents) the whole time.
Prints requests per second, p50/p99 latency, the error count, and the ratio of p99 under load
to p50 without load (target: zero errors, ratio <= 5).

    .venv/bin/python bench/web_load.py [--seconds 30] [--clients 8] [--upload-interval 0]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"
EX = "http://example.org/bench/"
QUERIES = [
    "SELECT ?type (COUNT(?e) AS ?n) WHERE { GRAPH <urn:graph:source> { ?e a ?type } } GROUP BY ?type",
    "SELECT ?s ?p ?o WHERE { ?s ?p ?o } LIMIT 50",
    "SELECT ?d ?f WHERE { GRAPH <urn:graph:source> { ?d a <https://trustgraph.ai/ns/Document> ; "
    "<https://trustgraph.ai/ns/fileName> ?f } }",
]
SEED_FILES = ["layout-parser-paper-fast.pdf", "stanley-cups.xlsx", "example-10k-1p.html", "fake-text.txt"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def call(url: str, data: bytes | None = None, headers: dict | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def multipart(name: str, payload: bytes, fields: dict) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
             for k, v in fields.items()]
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
                 f"Content-Type: application/octet-stream\r\n\r\n".encode() + payload + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def upload(base: str, name: str, payload: bytes) -> dict:
    body, content_type = multipart(name, payload, {"chunk": "true", "chunk_size": "256"})
    status, answer = call(base + "/api/documents", body, {"Content-Type": content_type,
                                                          "Authorization": f"Bearer {TOKEN}"})
    if status != 201:
        raise RuntimeError(f"upload of {name} failed: {status} {answer[:200]!r}")
    return json.loads(answer)


def seed(base: str, corpus: Path) -> list[str]:
    """Decode the seed files, add one fact per document; return trace URLs."""
    traces = []
    for name in SEED_FILES:
        document = upload(base, name, (corpus / name).read_bytes())["document"]
        query = ("SELECT ?chunk WHERE { GRAPH <urn:graph:source> { ?chunk <http://www.w3.org/ns/prov#wasDerivedFrom> "
                 f"?segment ; <https://trustgraph.ai/ns/chunkIndex> 0 . ?segment <http://www.w3.org/ns/prov#wasDerivedFrom>+ <{document}> }} }}")
        status, answer = call(base + "/sparql?" + urllib.parse.urlencode({"query": query}))
        chunk = json.loads(answer)["results"]["bindings"][0]["chunk"]["value"]
        fact = {"s": EX + name, "p": EX + "source", "o": f"<{document}>"}
        status, answer = call(base + "/api/facts", json.dumps({"chunk": chunk, "facts": [fact]}).encode(),
                              {"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
        assert status == 201, answer
        traces.append(base + "/api/trace?" + urllib.parse.urlencode(fact))
    return traces


def reader(base: str, traces: list[str], stop: threading.Event, latencies: list, errors: list) -> None:
    rng = random.Random()
    while not stop.is_set():
        if rng.random() < 0.5:
            url = base + "/sparql?" + urllib.parse.urlencode({"query": rng.choice(QUERIES)})
        else:
            url = rng.choice(traces)
        started = time.perf_counter()
        try:
            status, _ = call(url)
        except OSError as exc:
            errors.append(str(exc))
            continue
        latencies.append(time.perf_counter() - started)
        if status != 200:
            errors.append(f"{status} {url[:80]}")


def uploader(base: str, corpus: Path, stop: threading.Event, done: list, errors: list, interval: float) -> None:
    number = 0
    data = (corpus / "layout-parser-paper-fast.pdf").read_bytes()
    while not stop.is_set():
        number += 1
        started = time.perf_counter()
        try:
            upload(base, f"copy-{number}.pdf", data + f"\n%copy {number}\n".encode())
            done.append(number)
        except (RuntimeError, OSError) as exc:
            errors.append(str(exc))
        stop.wait(max(0.0, interval - (time.perf_counter() - started)))


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--quiet-seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--upload-interval", type=float, default=0.0,
                        help="seconds from one upload's start to the next (0: back to back)")
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    store = tempfile.mkdtemp(prefix="web-load-")
    server = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "serve", "--store", store, "--port", str(port),
                               "--threads", "16"], env=dict(os.environ, KG_DECODER_WRITE_TOKEN=TOKEN),
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                call(base + "/api/openapi.json")
                break
            except OSError:
                time.sleep(0.1)
        traces = seed(base, args.corpus)

        stop, quiet, quiet_errors = threading.Event(), [], []
        timer = threading.Timer(args.quiet_seconds, stop.set)
        timer.start()
        reader(base, traces, stop, quiet, quiet_errors)

        stop, loaded, errors, uploads = threading.Event(), [], [], []
        threads = [threading.Thread(target=reader, args=(base, traces, stop, loaded, errors))
                   for _ in range(args.clients)]
        threads.append(threading.Thread(target=uploader, args=(base, args.corpus, stop, uploads, errors,
                                                           args.upload_interval)))
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        time.sleep(args.seconds)
        stop.set()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
    finally:
        server.terminate()
        server.wait(timeout=30)

    p50_quiet = statistics.median(quiet)
    p50, p99 = statistics.median(loaded), percentile(loaded, 0.99)
    print(f"without load: {len(quiet)} requests, p50 {p50_quiet * 1000:.1f} ms, errors {len(quiet_errors)}")
    print(f"under load:   {len(loaded)} requests in {elapsed:.0f} s = {len(loaded) / elapsed:.1f} req/s "
          f"({args.clients} clients + {len(uploads)} uploads decoded), p50 {p50 * 1000:.1f} ms, "
          f"p99 {p99 * 1000:.1f} ms, errors {len(errors) + len(quiet_errors)}")
    print(f"p99 under load / p50 without load = {p99 / p50_quiet:.2f} (target <= 5)")
    for error in (errors + quiet_errors)[:5]:
        print("  error:", error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
