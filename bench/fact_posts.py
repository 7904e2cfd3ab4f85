"""Benchmark: facts posted in bulk to a running server (``POST /api/facts``), small and large.

Target (issue 59): the time of 10^5 facts over that of 10^4 is at most 12 (linear), and while the
large post runs, another client's cheap read (``ASK {}``) and a small write are answered.

1. A store with one synthetic text document of ``--sentences`` sentences, chunked (256 tokens).
2. ``kg-decoder serve`` over it in a process of its own (default limits: a post above
   ``--sync-facts`` lines is a job, 202 and its URL, polled here until it ends).
3. Rounds alternate ``--small`` and ``--large`` posts of distinct facts, each naming its chunk and
   quoting one of its sentences; each post's time (sent to done) is kept, and during the large one a
   cheap read every 0.2 s and one small SPARQL update: their latency over the same on the idle server.

    .venv/bin/python bench/fact_posts.py [--small 10000] [--large 100000] [--rounds 1]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import quote

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))
import requests  # noqa: E402

import kg_decoder  # noqa: E402
from conftest import serve_process  # noqa: E402

TOKEN = "bench-fact-posts"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
EX = "http://example.org/bench/"
CHEAP = "/sparql?query=" + quote("ASK { ?s ?p ?o }")
WORDS = ("harbour committee approved budget dredging council river bridge tender museum volunteers festival "
         "drought reservoir orchard railway tunnel lighthouse ferry cathedral bakery vineyard glacier").split()


def sentence(n: int) -> str:
    picked = [WORDS[(n * 7 + k * 3) % len(WORDS)] for k in range(6)]
    return f"Record {n} says the {picked[0]} {picked[1]} met the {picked[2]} about {picked[3]} {picked[4]} {n}."


def make_store(folder: Path, sentences: int) -> list[tuple[str, str]]:
    """The store, and (chunk IRI, a sentence held whole in it) for each sentence found whole in one chunk."""
    text = "\n\n".join(" ".join(sentence(n) for n in range(k, min(k + 5, sentences)))
                       for k in range(0, sentences, 5))
    places = []
    with kg_decoder.open_store(folder) as store:
        decoded = kg_decoder.decode(text.encode(), store=store, file_name="records.txt")
        kg_decoder.chunk_document(decoded.document, store=store, chunk_size=256)
        for chunk in kg_decoder.document_chunks(decoded.document, store=store):
            for n in range(sentences):
                if sentence(n) in chunk.text:
                    places.append((chunk.iri, sentence(n)))
    return places


def facts(places: list, count: int, tag: str) -> list[dict]:
    return [{"s": f"{EX}{tag}/s{k}", "p": EX + "says", "o": f"{tag} {k}", "quote": places[k % len(places)][1],
             "chunk": places[k % len(places)][0]} for k in range(count)]


def post(base: str, lines: list[dict]) -> tuple[float, dict]:
    started = time.perf_counter()
    answer = requests.post(base + "/api/facts", json={"facts": lines}, headers=AUTH, timeout=3600)
    if answer.status_code == 202:
        status_url = base + answer.json()["status_url"]
        while True:
            state = requests.get(status_url, timeout=60).json()
            if state["status"] in ("done", "failed"):
                break
            time.sleep(0.2)
        body = state.get("result") or state.get("error")
    else:
        body = answer.json()
    return time.perf_counter() - started, body


def latencies(base: str, stop: threading.Event, out: list) -> None:
    while not stop.is_set():
        started = time.perf_counter()
        status = requests.get(base + CHEAP, timeout=120).status_code
        out.append((time.perf_counter() - started, status))
        stop.wait(0.2)


def small_update(base: str, n: int) -> tuple[float, int]:
    started = time.perf_counter()
    status = requests.post(base + "/sparql", data=f"INSERT DATA {{ <{EX}u{n}> <{EX}p> {n} }}",
                           headers={**AUTH, "Content-Type": "application/sparql-update"}, timeout=600).status_code
    return time.perf_counter() - started, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--sentences", type=int, default=3000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fact-posts-") as work:
        places = make_store(Path(work) / "store", args.sentences)
        print(f"store: {len(places)} sentences placed in their chunks")
        base, process = serve_process(Path(work) / "store", "--write-token", TOKEN, "--request-workers", "2",
                                      "--no-pin-worker")
        try:
            idle = [latencies_once(base) for _ in range(20)]
            idle_update = statistics.median(small_update(base, -k)[0] for k in range(1, 6))
            times = {"small": [], "large": []}
            during, updates = [], []
            for r in range(args.rounds):
                for kind, count in (("small", args.small), ("large", args.large)):
                    lines = facts(places, count, f"{kind}{r}")
                    stop = threading.Event()
                    watcher = threading.Thread(target=latencies, args=(base, stop, during if kind == "large" else []))
                    watcher.start()
                    if kind == "large":
                        threading.Timer(3.0, lambda: updates.append(small_update(base, r))).start()
                    seconds, body = post(base, lines)
                    stop.set()
                    watcher.join()
                    times[kind].append(seconds)
                    print(f"  round {r}: {count} facts in {seconds:.1f} s ({1000 * seconds / count:.2f} ms a fact), "
                          f"stored {body.get('stored')}, transactions {body.get('batches')}")
            small, large = statistics.median(times["small"]), statistics.median(times["large"])
            print(f"\n{args.large} / {args.small} facts: {large:.1f} s / {small:.1f} s = {large / small:.2f} "
                  f"(size ratio {args.large / args.small:g}; target <= 12)")
            idle_read = statistics.median(idle)
            if during:
                worst = max(t for t, _ in during)
                print(f"cheap read during the large post: {len(during)} reads, statuses "
                      f"{sorted({s for _, s in during})}, median {statistics.median(t for t, _ in during) * 1000:.0f} ms, "
                      f"worst {worst * 1000:.0f} ms; median / idle = "
                      f"{statistics.median(t for t, _ in during) / idle_read:.1f}")
            for seconds, status in updates:
                print(f"small update during the large post: {status} in {seconds:.2f} s (idle {idle_update:.2f} s)")
        finally:
            process.terminate()
            process.wait(timeout=60)


def latencies_once(base: str) -> float:
    started = time.perf_counter()
    requests.get(base + CHEAP, timeout=60)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
