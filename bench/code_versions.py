"""Benchmark: decode time of a corpus with this checkout's code against another version's, in one run.

Each round decodes every file of the corpus with the command line (``kg-decoder decode``, one batch,
into a fresh store: no parse cache, no kept renderings) once with each version, the order of the two
alternating from round to round (these machines are shared and noisy). Prints each run's wall time,
the medians and their ratio (this checkout / the baseline; the target of a change that reads more
of each document is <= 1.05).

    git archive <revision> | tar -x -C /tmp/baseline
    .venv/bin/python bench/code_versions.py --baseline /tmp/baseline [--corpus ../shared/corpus] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def timed_decode(code: Path, files: list[Path], workers: int) -> float:
    """Seconds one CLI batch takes to decode ``files`` into a new store, with the package at ``code``."""
    environment = dict(os.environ, PYTHONPATH=str(code))
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "kg_decoder.cli", "decode", "--store", str(Path(folder) / "store"),
                        "--no-progress", "--workers", str(workers), *map(str, files)],
                       env=environment, cwd=folder, capture_output=True, check=False)
        return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a folder holding the other version's code")
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    files = sorted(p for p in args.corpus.iterdir() if p.is_file())
    times: dict[str, list[float]] = {"this": [], "baseline": []}
    for round_number in range(args.rounds):
        order = [("this", REPO), ("baseline", args.baseline)]
        for name, code in order if round_number % 2 == 0 else reversed(order):
            seconds = timed_decode(code, files, args.workers)
            times[name].append(seconds)
            print(f"round {round_number + 1}: {name:8} {seconds:7.1f} s", flush=True)
    this, baseline = statistics.median(times["this"]), statistics.median(times["baseline"])
    print(f"{len(files)} files, {args.rounds} rounds: median this {this:.1f} s, baseline {baseline:.1f} s, "
          f"ratio {this / baseline:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
