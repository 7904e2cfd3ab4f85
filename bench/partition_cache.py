"""Benchmark: re-decoding the corpus with other section settings, with and without the parse cache.

Both runs decode every corpus file with `--section-strategy heading` into a store that already
holds the corpus decoded with the default settings:
  uncached  with partition_cache=False (every file is partitioned again);
  cached    with the cache the first decode filled.
Alternating rounds in fresh processes (these machines are noisy); prints the medians and the
cached/uncached ratio (target <= 0.2).

    .venv/bin/python bench/partition_cache.py [--corpus ../shared/corpus] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_RUN = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import kg_decoder
store = kg_decoder.open_store(sys.argv[1])
files = json.loads(sys.argv[2])
use_cache = sys.argv[3] == "cached"
kg_decoder.decode(files[0], store=store, section_strategy="count", partition_cache=False)  # warm the worker
started = time.perf_counter()
for path in files:
    kg_decoder.decode(path, store=store, section_strategy="heading", partition_cache=use_cache)
print(time.perf_counter() - started)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    import kg_decoder

    prepared = Path(tempfile.mkdtemp(prefix="cache-bench-")) / "store"
    store = kg_decoder.open_store(prepared)
    files = []
    for path in sorted(args.corpus.iterdir()):
        try:
            kg_decoder.decode(path, store=store)
            files.append(str(path))
        except kg_decoder.DecodeError:
            continue
    store.close()
    del store
    times: dict[str, list[float]] = {"uncached": [], "cached": []}
    for _ in range(args.rounds):
        for mode in ("uncached", "cached"):
            copy = prepared.parent / f"run-{mode}"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(prepared, copy)
            done = subprocess.run([sys.executable, "-c", _RUN, str(copy), json.dumps(files), mode],
                                  capture_output=True, text=True, check=True)
            times[mode].append(float(done.stdout.strip().splitlines()[-1]))
    uncached, cached = statistics.median(times["uncached"]), statistics.median(times["cached"])
    print(f"files: {len(files)}  rounds: {args.rounds}")
    print(f"uncached median {uncached:8.3f} s   {times['uncached']}")
    print(f"cached median   {cached:8.3f} s   {times['cached']}")
    print(f"ratio cached/uncached {cached / uncached:.3f}   (target <= 0.2)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
