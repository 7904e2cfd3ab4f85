"""Benchmark: trace latency must not grow with the store (target: large/small median ratio <= 2).

In one run, on one on-disk store:
  1. decode and chunk a few real documents and copies of them (--small-quads, 10^4), add facts,
     time the traces;
  2. grow the same store past --target-quads (default 10^6) with many more decoded and chunked
     documents, then time the very same traces again.
The growth decodes through the real pipeline (grouping, assembly, RDF mapping, one transaction
per document, chunking); only partitioning is done once per source file and reused for its
copies, each copy a different document (its bytes differ by a trailing comment line).

Probes: a fact, a span (the first characters of each document, on page 1 for the PDF), a quote
searched in its document, and a quote searched in every document (unscoped; taken from the one
source that is never copied, so its answer stays the same size as the store grows). Each is timed
  warm  --repeats times in this process: after the first, the trace's caches (the page's text layer,
        the alignment of an element's characters) answer;
  cold  once each in a fresh process that opens the store read-only and traces something of another
        document first (imports, queries and the store warm, the probe's page never read before):
        what the first trace of a page costs. The operating system's file cache is not emptied.

Prints the median (and p90) per probe kind at both sizes and the ratio.

With --verification-cost it stops after step 1 and times the quote traces with each box checked by
the page's second reading (kg_decoder.cite.verification) and without (the alignment's boxes taken as
they come), in turns, and prints the ratio of the medians (target <= 1.10).

    .venv/bin/python bench/trace_latency.py [--corpus ../shared/corpus] [--target-quads 1000000]
        [--repeats 20] [--cold 4]
    .venv/bin/python bench/trace_latency.py --verification-cost
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["layout-parser-paper-fast.pdf", "stanley-cups.xlsx", "example-10k-1p.html", "fake-text.txt"]
EX = "http://example.org/bench/"


class ReusingWorker:
    """A partition worker that partitions each distinct (format, source) once and reuses the result."""

    def __init__(self) -> None:
        from kg_decoder.decode.worker import shared_worker

        self.worker = shared_worker()
        self.cache: dict[tuple[str, int], object] = {}

    def partition(self, data: bytes, format_name: str, options):
        key = (format_name, len(data.split(b"\n%bench-copy")[0]))
        if key not in self.cache:
            self.cache[key] = self.worker.call("kg_decoder.decode.backends:partition_document", data, format_name,
                                               options, timeout=options.timeout_seconds)
        return self.cache[key]

    def build_document(self, plain: bytes, job, progress=None):
        """The mapping runs here, on the reused partitioning (the cache is per copy, so not used)."""
        from kg_decoder.decode.build import build_document

        return build_document(plain, replace(job, cache_folder=None), progress, partition=self.partition)


def copy_bytes(data: bytes, number: int, fmt_suffix: str) -> bytes:
    """The same document with different bytes (so a different document IRI)."""
    if fmt_suffix in (".pdf",):
        return data + f"\n%bench-copy {number}\n".encode()
    if fmt_suffix in (".html", ".txt"):
        return data + f"\n%bench-copy {number}\n".encode()
    return data  # zip formats: left as they are (used once)


def add_facts_to(store, document: str, tag: str) -> list[tuple]:
    """One fact per chunk (quoting its first word); returns the facts."""
    from kg_decoder.cite.chunks import document_chunks
    from kg_decoder.cite.facts import add_facts

    facts = []
    for chunk in document_chunks(document, store=store)[:5]:
        words = [w for w in chunk.text[chunk.prefix_length:].split() if w.isalpha() and len(w) > 3]
        body = chunk.text[chunk.prefix_length:]
        word = next((w for w in words if body.count(w) == 1), None)
        if word is None:
            continue
        fact = (f"{EX}{tag}/{chunk.index}", EX + "mentions", word)
        add_facts(chunk.iri, [fact], [{"quote": word}], store=store)
        facts.append(fact)
    return facts


def time_traces(store, probes: dict[str, list], repeats: int) -> dict[str, list[float]]:
    """Warm: each probe ``repeats`` times in this process."""
    from kg_decoder.cite.trace import trace

    timings: dict[str, list[float]] = {name: [] for name in probes}
    for _ in range(repeats):
        for name, calls in probes.items():
            for kwargs in calls:
                started = time.perf_counter()
                sources = trace(store=store, **kwargs)
                timings[name].append(time.perf_counter() - started)
                assert sources, (name, kwargs)
    return timings


def time_cold(folder: str, probes: dict[str, list], warm_up: dict, per_kind: int) -> dict[str, list[float]]:
    """Cold: each probe (at most ``per_kind`` of a kind) once, in a process of its own."""
    timings: dict[str, list[float]] = {name: [] for name in probes}
    for name, calls in probes.items():
        for kwargs in calls[:per_kind]:
            done = subprocess.run([sys.executable, __file__, "--cold-probe", folder, "--probe",
                                   json.dumps({"probe": kwargs, "warm_up": warm_up})],
                                  capture_output=True, text=True, check=True)
            timings[name].append(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
    return timings


def cold_probe(folder: str, spec: dict) -> None:
    """One cold trace, in this (fresh) process: prints its seconds as JSON."""
    import kg_decoder
    from kg_decoder.cite.trace import trace

    store = kg_decoder.open_store(folder, read_only=True)
    assert trace(store=store, **_arguments(spec["warm_up"]))
    kwargs = _arguments(spec["probe"])
    started = time.perf_counter()
    sources = trace(store=store, **kwargs)
    seconds = time.perf_counter() - started
    assert sources, kwargs
    print(json.dumps({"seconds": seconds, "sources": len(sources)}))


def _arguments(kwargs: dict) -> dict:
    """A probe's arguments back from JSON (facts and spans are tuples)."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in kwargs.items()}


def unscoped_quotes(text: str, count: int = 2) -> list[str]:
    """Quotes of two words or more for a search in every document: pieces of text between markup
    (a table cell's, a title's), the first ``count`` different ones."""
    pieces = [piece.strip() for piece in re.split(r"<[^>]+>|\n", text)]
    return list(dict.fromkeys(piece for piece in pieces if len(piece.split()) >= 2))[:count]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--small-quads", type=int, default=10_000)
    parser.add_argument("--target-quads", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cold", type=int, default=4, help="cold probes of each kind (each a process)")
    parser.add_argument("--cold-probe", help=argparse.SUPPRESS)
    parser.add_argument("--probe", help=argparse.SUPPRESS)
    parser.add_argument("--verification-cost", action="store_true",
                        help="time quote traces with and without checking their boxes, then stop")
    args = parser.parse_args()
    if args.cold_probe:
        cold_probe(args.cold_probe, json.loads(args.probe))
        return 0

    import kg_decoder
    from kg_decoder.cite.chunks import chunk_document

    folder = tempfile.mkdtemp(prefix="trace-bench-")
    atexit.register(shutil.rmtree, folder, True)  # a store of 10^6 quads takes a gigabyte
    store = kg_decoder.open_store(folder)
    worker = ReusingWorker()
    originals = {name: (args.corpus / name).read_bytes() for name in SOURCES}
    growable = [name for name in SOURCES if Path(name).suffix in (".pdf", ".html", ".txt")]
    probes: dict[str, list] = {"fact": [], "span": [], "quote": [], "quote-all": []}
    warm_up = None  # a probe of a document without pages, traced first by a cold process
    for name, data in originals.items():
        result = kg_decoder.decode(data, store=store, file_name=name, worker=worker)
        chunk_document(result.document, store=store, chunk_size=256)
        facts = add_facts_to(store, result.document, name)
        probes["fact"] += [{"fact": fact} for fact in facts[:2]]
        first = result.text_documents[0]
        probes["span"].append({"span": (first.iri, 0, min(40, len(first.text)))})
        if facts:
            probes["quote"].append({"quote": facts[0][2], "document": result.document})
        if name not in growable:
            probes["quote-all"] += [{"quote": quote} for quote in unscoped_quotes(first.text)]
        if name.endswith(".txt"):
            warm_up = {"span": (first.iri, 0, min(40, len(first.text)))}
    started, number = time.perf_counter(), 0

    def grow_to(quads: int) -> None:
        nonlocal number
        while len(store) < quads:
            number += 1
            for name in growable:
                data = copy_bytes(originals[name], number, Path(name).suffix)
                result = kg_decoder.decode(data, store=store, file_name=f"copy-{number}-{name}", worker=worker)
                chunk_document(result.document, store=store, chunk_size=256)
                if number % 10 == 0:
                    add_facts_to(store, result.document, f"{number}-{name}")
            if number % 100 == 0:
                print(f"  grown to {len(store):,} quads ({number * len(growable)} more documents, "
                      f"{time.perf_counter() - started:.0f} s)", file=sys.stderr)
        store.flush()

    grow_to(args.small_quads)
    if args.verification_cost:
        return verification_cost(store, probes["quote"], args.repeats)
    small_quads = len(store)
    small = time_traces(store, probes, args.repeats)
    small_cold = time_cold(folder, probes, warm_up, args.cold)
    grow_to(args.target_quads)
    large_quads = len(store)
    large = time_traces(store, probes, args.repeats)
    large_cold = time_cold(folder, probes, warm_up, args.cold)

    print(f"store: {small_quads:,} quads -> {large_quads:,} quads ({number * len(growable) + len(SOURCES)} documents)")
    print(f"{'trace':15} {'times':>6} {'median small':>13} {'median large':>13} {'p90 small':>10} {'p90 large':>10} "
          f"{'ratio':>6}")
    worst = 0.0
    for temperature, at_small, at_large in (("warm", small, large), ("cold", small_cold, large_cold)):
        for name in probes:
            if not at_small[name]:
                continue
            a, b = statistics.median(at_small[name]), statistics.median(at_large[name])
            worst = max(worst, b / a)
            print(f"{temperature + ' ' + name:15} {len(at_small[name]):6} {a * 1000:11.2f}ms {b * 1000:11.2f}ms "
                  f"{_p90(at_small[name]) * 1000:8.2f}ms {_p90(at_large[name]) * 1000:8.2f}ms {b / a:6.2f}")
    print(f"worst median ratio {worst:.2f} (target <= 2)")
    return 0


def verification_cost(store, quotes: list[dict], repeats: int) -> int:
    """Quote traces with their boxes checked and without, in turns (the same warm caches for both)."""
    from kg_decoder.cite import trace as tracing
    from kg_decoder.cite.glyphs import span_line_boxes

    checked, spells = tracing.checked_lines, tracing.spells

    def unchecked(page, region, text, start, end, key=None):
        return span_line_boxes(page, region, text, start, end, key) or None

    time_traces(store, {"quote": quotes}, 2)  # pages read and alignments made: both runs find them so
    timings: dict[str, list[float]] = {"checked": [], "unchecked": []}
    for _ in range(repeats):
        for name in ("unchecked", "checked"):
            tracing.checked_lines, tracing.spells = (checked, spells) if name == "checked" else (
                unchecked, lambda *args: True)
            timings[name] += time_traces(store, {"quote": quotes}, 1)["quote"]
    tracing.checked_lines, tracing.spells = checked, spells
    with_checks, without = statistics.median(timings["checked"]), statistics.median(timings["unchecked"])
    print(f"quote traces: {len(quotes)} quotes x {repeats} turns; median {without * 1000:.2f} ms unchecked, "
          f"{with_checks * 1000:.2f} ms checked: ratio {with_checks / without:.3f} (target <= 1.10)")
    return 0


def _p90(values: list[float]) -> float:
    """The 90th percentile, nearest rank."""
    return sorted(values)[max(0, math.ceil(0.9 * len(values)) - 1)]


if __name__ == "__main__":
    sys.exit(main())
