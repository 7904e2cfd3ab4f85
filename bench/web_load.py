"""Load benchmark of the web app, bounded, loopback only.

Starts `kg-decoder serve` (waitress, threads) in its own process on a fresh store holding a few
decoded, chunked corpus documents with facts; then
  1. without load: one client, SPARQL queries and trace requests in turn (--quiet-seconds);
  2. under load: --clients client processes doing the same for --seconds while one more process
     uploads documents to decode (POST /api/documents) the whole time.
Prints requests per second, p50/p99 latency, the error count, and per request kind (SPARQL lookup,
trace) the ratio of p99 under load to p50 without load (target: zero errors, ratio <= 5). With
--floor the load phase runs once more with an idle-priority CPU burner in place of the uploads:
the same ratios for a machine that is merely busy, side by side.

With --no-isolation the server runs queries and traces in its own threads (``--request-workers 0``)
instead of its workers: the same figures, to see what the workers add per request.

    .venv/bin/python bench/web_load.py [--seconds 30] [--clients 1] [--client-cpus 1] [--upload-interval 0] [--floor]
                                       [--no-isolation]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
TOKEN = "bench-token"
EX = "http://example.org/bench/"
# Lookups that start from known IRIs, as an application does; a whole-store aggregate would only
# measure that the store grows while uploads decode.
QUERIES = [
    "SELECT ?s ?o WHERE {{ ?s <http://example.org/bench/source> ?o }} LIMIT 50",
    "SELECT ?p ?o WHERE {{ GRAPH <urn:graph:source> {{ <{document}> ?p ?o }} }}",
    "SELECT ?page ?n WHERE {{ GRAPH <urn:graph:source> {{ ?page <http://www.w3.org/ns/prov#wasDerivedFrom> "
    "<{document}> ; <https://trustgraph.ai/ns/pageNumber> ?n }} }}",
    "SELECT ?g WHERE {{ GRAPH <urn:graph:source> {{ ?g <https://trustgraph.ai/ns/contains> "
    "<<( <http://example.org/bench/{name}> <http://example.org/bench/source> <{document}> )>> }} }}",
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


def upload(base: str, name: str, payload: bytes, chunk: bool = True) -> dict:
    fields = {"chunk": "true", "chunk_size": "256"} if chunk else {}
    body, content_type = multipart(name, payload, fields)
    status, answer = call(base + "/api/documents", body, {"Content-Type": content_type,
                                                          "Authorization": f"Bearer {TOKEN}"})
    if status != 201:
        raise RuntimeError(f"upload of {name} failed: {status} {answer[:200]!r}")
    return json.loads(answer)


def seed(base: str, corpus: Path) -> tuple[list[str], list[str]]:
    """Decode the seed files, add one fact per document; return query URLs and trace URLs."""
    traces, queries = [], []
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
        queries += [base + "/sparql?" + urllib.parse.urlencode({"query": q.format(document=document, name=name)})
                    for q in QUERIES]
    return queries, traces


def reader(queries: list[str], traces: list[str], seconds: float, results) -> None:
    """One client: SPARQL lookups and traces in turn for ``seconds``; (latencies, errors) to ``results``."""
    rng = random.Random()
    latencies, errors = [], []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        kind = "sparql" if rng.random() < 0.5 else "trace"
        url = rng.choice(queries if kind == "sparql" else traces)
        started = time.perf_counter()
        try:
            status, _ = call(url)
        except OSError as exc:
            errors.append(str(exc))
            continue
        latencies.append((time.perf_counter() - started, kind))
        if status != 200:
            errors.append(f"{status} {url[:80]}")
    results.put((latencies, errors))


def uploader(base: str, corpus: Path, seconds: float, interval: float, chunk: bool, results) -> None:
    """Uploads of distinct copies of a corpus PDF, back to back (or every ``interval`` s), for ``seconds``."""
    number, done, errors = 0, 0, []
    data = (corpus / "layout-parser-paper-fast.pdf").read_bytes()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        number += 1
        started = time.perf_counter()
        try:
            upload(base, f"copy-{number}.pdf", data + f"\n%copy {number}\n".encode(), chunk=chunk)
            done += 1
        except (RuntimeError, OSError) as exc:
            errors.append(str(exc))
        time.sleep(max(0.0, min(interval - (time.perf_counter() - started), deadline - time.perf_counter())))
    results.put((done, errors))


class _Tagged:
    """A client's end of the results queue: what it puts is tagged with its place in the list."""

    def __init__(self, index: int, results) -> None:
        self.index, self.results = index, results

    def put(self, value) -> None:
        self.results.put((self.index, value))


def _run_tagged(index: int, target, args: tuple, results, cpus) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)
    target(*args, _Tagged(index, results))


def run_clients(targets: list[tuple], cpus: Optional[set[int]] = None) -> list:
    """Each client in a process of its own: threads of one process would wait on each other's GIL
    (5 ms slices), and that wait would be measured as the server's latency. Answers in target order."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = [context.Process(target=_run_tagged, args=(index, target, args, results, cpus))
                 for index, (target, args) in enumerate(targets)]
    for process in processes:
        process.start()
    answers = dict(results.get() for _ in processes)
    for process in processes:
        process.join()
    return [answers[index] for index in range(len(targets))]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def burner(seconds: float, results) -> None:
    """The machine's floor: one CPU kept busy at idle priority, no I/O, no store, no decoding."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(19)
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        pass
    results.put((0, []))


def ratios(label: str, quiet: list, loaded: list) -> float:
    """Per request kind, p99 under load over p50 without load; prints them, returns the worst."""
    # The two kinds cost different amounts (a trace runs several lookups and aligns characters), so
    # each is compared with itself: the p50 of a mix of two modes would jump between them.
    worst = 0.0
    for kind in ("sparql", "trace"):
        base = statistics.median([t for t, k in quiet if k == kind])
        busy = [t for t, k in loaded if k == kind]
        ratio = percentile(busy, 0.99) / base
        worst = max(worst, ratio)
        print(f"  {label:10} {kind:6} p50 without load {base * 1000:.1f} ms; under load p50 "
              f"{statistics.median(busy) * 1000:.1f} ms, p99 {percentile(busy, 0.99) * 1000:.1f} ms; "
              f"p99 under load / p50 without load = {ratio:.2f}")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--quiet-seconds", type=float, default=10)
    parser.add_argument("--clients", type=int, default=1,
                        help="reading clients, one process each (on a 2-CPU machine more than one measures "
                             "the clients' own CPU shortage)")
    parser.add_argument("--upload-interval", type=float, default=0.0,
                        help="seconds from one upload's start to the next (0: back to back)")
    parser.add_argument("--no-chunk", action="store_true", help="uploads decode without chunking")
    parser.add_argument("--client-cpus", type=lambda text: {int(c) for c in text.split(",")},
                        help="run the client processes on these CPUs only, e.g. 1 (as clients on another host "
                             "would be; the server keeps the others)")
    parser.add_argument("--no-isolation", action="store_true",
                        help="serve with --request-workers 0 (queries and traces in the server's threads, as before "
                             "the workers): what the workers cost, by comparison")
    parser.add_argument("--floor", action="store_true",
                        help="also run the load phase with an idle-priority CPU burner instead of uploads: what "
                             "any busy CPU alone does to the tail on this machine, printed side by side")
    args = parser.parse_args()

    port = free_port()
    base = f"http://127.0.0.1:{port}"
    store = tempfile.mkdtemp(prefix="web-load-")
    server = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "serve", "--store", store, "--port", str(port),
                               "--threads", "16"] + (["--request-workers", "0"] if args.no_isolation else []), env=dict(os.environ, KG_DECODER_WRITE_TOKEN=TOKEN),
                              stderr=subprocess.DEVNULL)
    try:
        for _ in range(300):
            try:
                call(base + "/api/openapi.json")
                break
            except OSError:
                time.sleep(0.1)
        queries, traces = seed(base, args.corpus)

        [(quiet, quiet_errors)] = run_clients([(reader, (queries, traces, args.quiet_seconds))], args.client_cpus)
        readers = [(reader, (queries, traces, args.seconds)) for _ in range(args.clients)]
        started = time.perf_counter()
        answers = run_clients(readers + [(uploader, (base, args.corpus, args.seconds, args.upload_interval,
                                                     not args.no_chunk))], args.client_cpus)
        elapsed = time.perf_counter() - started
        loaded = [latency for latencies, _ in answers[:-1] for latency in latencies]
        errors = [error for _, client_errors in answers for error in client_errors]
        uploads = answers[-1][0]
        floor = run_clients(readers + [(burner, (args.seconds,))], args.client_cpus) if args.floor else None
    finally:
        server.terminate()
        server.wait(timeout=30)

    every = [t for t, _ in loaded]
    quiet_all = [t for t, _ in quiet]
    print(f"without load: {len(quiet)} requests, p50 {statistics.median(quiet_all) * 1000:.1f} ms, "
          f"errors {len(quiet_errors)}")
    print(f"under load:   {len(loaded)} requests in {elapsed:.0f} s = {len(loaded) / elapsed:.1f} req/s "
          f"({args.clients} clients + {uploads} uploads decoded), p50 {statistics.median(every) * 1000:.1f} ms, "
          f"p99 {percentile(every, 0.99) * 1000:.1f} ms, errors {len(errors) + len(quiet_errors)}")
    print(f"  all requests: p99 under load / p50 without load = "
          f"{percentile(every, 0.99) / statistics.median(quiet_all):.2f} (the mix's p50 falls between two modes)")
    worst = ratios("uploads", quiet, loaded)
    if floor is not None:
        ratios("cpu burner", quiet, [latency for latencies, _ in floor[:-1] for latency in latencies])
    print(f"worst ratio {worst:.2f} (target <= 5), errors {len(errors) + len(quiet_errors)} (target 0)")
    for error in (errors + quiet_errors)[:5]:
        print("  error:", error)
    return 0


if __name__ == "__main__":
    sys.exit(main())
