"""Benchmark: the remote store (an Oxigraph server over HTTP) against the embedded store.

The corpus is decoded into both, document by document, alternating which goes first (these
machines are noisy); each document's commit (``write_document``: the library blobs and one
transaction) is timed. Then the same quotes (four words of each page or section) are traced in
both, alternating, each trace timed. Prints the medians side by side and their ratios (target:
trace p50 over HTTP <= 3x embedded).

    .venv/bin/python bench/remote_store.py [--rounds 3] [--corpus ../shared/corpus]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from parallel import SHARED, OxigraphServer

import kg_decoder
from kg_decoder.graph.remote_store import StoreConfig


def timed_commits(store) -> list[float]:
    """Record how long each ``write_document`` of ``store`` takes."""
    durations: list[float] = []
    write = store.write_document

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return write(*args, **kwargs)
        finally:
            durations.append(time.perf_counter() - started)

    store.write_document = timed
    return durations


def quotes_of(results) -> list[tuple[str, str]]:
    """(quote, document): four plain words from each page or section."""
    found = []
    for result in results:
        for text_document in result.text_documents:
            for line in text_document.text.splitlines():
                words = line.split()
                if len(words) >= 4 and all(word.isalpha() for word in words[:4]):
                    found.append((" ".join(words[:4]), result.document))
                    break
    return found


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--corpus", type=Path, default=SHARED / "corpus")
    args = parser.parse_args()
    files = sorted(path for path in args.corpus.iterdir() if path.is_file())
    server = OxigraphServer()
    commits = {"embedded": [], "remote": []}
    traces = {"embedded": [], "remote": []}
    try:
        kg_decoder.decode(files[0], store=kg_decoder.open_store(None))  # the worker warm
        for number in range(args.rounds):
            server.clear()
            with tempfile.TemporaryDirectory() as folder:
                stores = {"embedded": kg_decoder.open_store(Path(folder) / "embedded"),
                          "remote": kg_decoder.open_store(replace(StoreConfig.at(server.url).with_library(
                              str(Path(folder) / "remote-library")), cache=str(Path(folder) / "remote-cache")))}
                times = {name: timed_commits(store) for name, store in stores.items()}
                results = []
                order = ["embedded", "remote"] if number % 2 == 0 else ["remote", "embedded"]
                for path in files:
                    for name in order:
                        try:
                            result = kg_decoder.decode(path, store=stores[name])
                        except kg_decoder.DecodeError:
                            continue
                        if name == "embedded":
                            results.append(result)
                for name in order:
                    commits[name] += times[name]
                for index, (quote, document) in enumerate(quotes_of(results)):
                    for name in (order if index % 2 == 0 else order[::-1]):
                        started = time.perf_counter()
                        kg_decoder.trace(quote=quote, document=document, store=stores[name])
                        traces[name].append(time.perf_counter() - started)
                for store in stores.values():
                    store.close()
            print(f"round {number + 1}: {len(times['embedded'])} commits, {len(quotes_of(results))} traces each",
                  file=sys.stderr, flush=True)
    finally:
        server.stop()
    print(f"{'':18s} {'embedded ms':>12s} {'remote ms':>10s} {'ratio':>6s}")
    for label, samples in (("commit p50", commits), ("trace p50", traces)):
        embedded, remote = statistics.median(samples["embedded"]), statistics.median(samples["remote"])
        print(f"{label:18s} {embedded * 1e3:12.1f} {remote * 1e3:10.1f} {remote / embedded:6.2f}")
    for label, samples in (("commit p90", commits), ("trace p90", traces)):
        embedded, remote = percentile(samples["embedded"], 0.9), percentile(samples["remote"], 0.9)
        print(f"{label:18s} {embedded * 1e3:12.1f} {remote * 1e3:10.1f} {remote / embedded:6.2f}")
    ratio = statistics.median(traces["remote"]) / statistics.median(traces["embedded"])
    print(f"trace p50 remote / embedded: {ratio:.2f} (target <= 3.00: {'met' if ratio <= 3 else 'NOT met'}); "
          f"{len(traces['remote'])} traces, {len(commits['remote'])} commits per store")


if __name__ == "__main__":
    main()
