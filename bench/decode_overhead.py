"""Benchmark: what kg-decoder's provenance layer costs on top of partitioning, and its write speed.

Runs, side by side and alternating (these machines are noisy), in fresh processes:
  raw      unstructured's partition() alone over the corpus, with the strategy kg-decoder used per file;
  decode   kg-decoder decode of the same files into a new on-disk store.
Each process warms up first (imports, spaCy model, worker start) on one small file, then times the
corpus. Prints the medians and their ratio (target <= 1.10). ``--compare image-ocr pdf-tables
rendered-positions`` adds a decode with each of those off, so what each costs prints beside it;
``--only pdf`` times the files of one format (say the PDFs without tables, for what finding tables
costs where there are none).

Then compares write throughput on the same quads: kg-decoder's transactional per-document writes
(KgStore.write; and KgStore.write_serialized, decode's own path) against pyoxigraph's bulk_extend
(target ratio >= 0.5).

    .venv/bin/python bench/decode_overhead.py [--corpus ../shared/corpus] [--rounds 3] [--only pdf]
        [--compare image-ocr pdf-tables rendered-positions] [--skip-writes]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


WITHOUT = {"image-ocr": {"image_ocr": "off"}, "pdf-tables": {"pdf_tables": False},
           "rendered-positions": {"rendered_positions": False}}  # each decode option a comparison turns off


def corpus_plan(corpus: Path, only: str | None = None) -> list[tuple[str, str | None]]:
    """Files kg-decoder decodes (of format ``only``, if given), each with the partition strategy it used
    (None: not a PDF/image)."""
    import kg_decoder

    plan = []
    with tempfile.TemporaryDirectory() as folder:
        store = kg_decoder.open_store(folder)
        for path in sorted(corpus.iterdir()):
            try:
                result = kg_decoder.decode(path, store=store)
            except kg_decoder.DecodeError:
                continue
            if only is not None and result.format != only:
                continue
            strategy = result.strategy if result.format in ("pdf", "png", "jpeg", "tiff") else None
            plan.append((str(path), strategy))
    return plan


def run_raw(plan: list[tuple[str, str | None]]) -> float:
    from kg_decoder.decode import offline

    offline.prepare()
    from unstructured.partition.auto import partition

    def kwargs(strategy: str | None) -> dict:
        return {"strategy": "ocr_only" if strategy == "fast+ocr_only" else strategy} if strategy else {}

    warm_path, warm_strategy = min(plan, key=lambda item: Path(item[0]).stat().st_size)
    partition(filename=warm_path, **kwargs(warm_strategy))
    started = time.perf_counter()
    for path, strategy in plan:
        partition(filename=path, **kwargs(strategy))
    return time.perf_counter() - started


def run_decode(plan: list[tuple[str, str | None]], options: dict | None = None) -> float:
    import kg_decoder

    with tempfile.TemporaryDirectory() as folder:
        warm_store = kg_decoder.open_store(Path(folder) / "warm")
        warm = min((p for p, _ in plan), key=lambda p: Path(p).stat().st_size)
        kg_decoder.decode(warm, store=warm_store)
        store = kg_decoder.open_store(Path(folder) / "store")
        started = time.perf_counter()
        for path, _ in plan:
            kg_decoder.decode(path, store=store, **(options or {}))
        store.flush()
        return time.perf_counter() - started


def write_throughput(plan: list[tuple[str, str | None]], rounds: int) -> tuple[float, float, float, int]:
    """Quads per second: per-document transactional writes vs one bulk_extend, on the same quads."""
    import pyoxigraph

    import kg_decoder

    documents = []
    for path, _ in plan:  # each document alone in a store: its quads are the store's quads
        with tempfile.TemporaryDirectory() as folder:
            store = kg_decoder.open_store(folder)
            result = kg_decoder.decode(path, store=store)
            documents.append((result.document, list(store.quads()), {}))
            del store
    total = sum(len(q) for _, q, _ in documents)
    ours, bulk, single = [], [], []
    nquads = [(iri, pyoxigraph.serialize(quads, format=pyoxigraph.RdfFormat.N_QUADS), blobs)
              for iri, quads, blobs in documents]  # what the worker hands the store's owner
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as folder:  # the ceiling: every quad in one Store.extend
            raw = pyoxigraph.Store(folder)
            started = time.perf_counter()
            raw.extend([q for _, quads, _ in documents for q in quads])
            raw.flush()
            single.append(total / (time.perf_counter() - started))
        with tempfile.TemporaryDirectory() as folder:  # decode's own path: N-Quads loaded outside the GIL
            target = kg_decoder.open_store(folder)
            started = time.perf_counter()
            for iri, data, blobs in nquads:
                target.write_document(iri, data, blobs, replace=False)
            target.flush()
            ours.append(total / (time.perf_counter() - started))
        with tempfile.TemporaryDirectory() as folder:
            raw = pyoxigraph.Store(folder)
            started = time.perf_counter()
            raw.bulk_extend(q for _, quads, _ in documents for q in quads)
            raw.flush()
            bulk.append(total / (time.perf_counter() - started))
    return statistics.median(ours), statistics.median(bulk), statistics.median(single), total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", nargs="*", choices=sorted(WITHOUT), default=[],
                        help="also time the decode with each of these off")
    parser.add_argument("--only", help="time only the files of this format (e.g. pdf)")
    parser.add_argument("--skip-writes", action="store_true", help="leave out the write throughput part")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--plan", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        plan = json.loads(Path(args.plan).read_text())
        if args.child == "raw":
            seconds = run_raw(plan)
        else:
            seconds = run_decode(plan, WITHOUT.get(args.child.removeprefix("no-")) if args.child != "decode" else None)
        print(json.dumps({"seconds": seconds}))
        return
    plan = corpus_plan(Path(args.corpus), args.only)
    plan_file = Path(tempfile.mkstemp(suffix=".json")[1])
    plan_file.write_text(json.dumps(plan))
    modes = ("raw", "decode") + tuple(f"no-{name}" for name in args.compare)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    for round_number in range(args.rounds):
        for mode in modes:
            done = subprocess.run([sys.executable, __file__, "--child", mode, "--plan", str(plan_file)],
                                  capture_output=True, text=True, check=True)
            times[mode].append(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
            print(f"round {round_number + 1} {mode:22} {times[mode][-1]:.3f} s", flush=True)
    raw, decoded = statistics.median(times["raw"]), statistics.median(times["decode"])
    print(f"\nfiles: {len(plan)}  rounds: {args.rounds}")
    print(f"raw partition median   {raw:.3f} s")
    print(f"kg-decoder median      {decoded:.3f} s")
    print(f"ratio decode/raw       {decoded / raw:.3f}   (target <= 1.10)")
    for name in args.compare:
        without = statistics.median(times[f"no-{name}"])
        print(f"kg-decoder without {name}: median {without:.3f} s, ratio {without / raw:.3f}; {name} costs "
              f"{decoded / without:.3f}x")
    if args.skip_writes:
        return
    ours, bulk, single, total = write_throughput(plan, max(args.rounds, 3))
    print(f"\nquads written: {total}")
    print(f"kg-decoder writes      {ours:,.0f} quads/s  (one transaction per document: N-Quads loaded, the GIL"
          " released)")
    print(f"one Store.extend       {single:,.0f} quads/s  (all quads in a single transaction)")
    print(f"bulk_extend            {bulk:,.0f} quads/s  (not transactional)")
    print(f"ratio ours/bulk        {ours / bulk:.3f}   (target >= 0.5)")
    print(f"ratio ours/one extend  {ours / single:.3f}")


if __name__ == "__main__":
    main()
