"""Benchmark: what placing Office documents on their LibreOffice rendering costs a decode.

Decodes the corpus's DOCX, ODT, RTF and PPTX files (and any given) into fresh stores, with the
default (rendered positions on) and with `rendered_positions=False`, in alternating rounds in
fresh processes (these machines are noisy). Prints per file the median seconds of both and their
ratio, then the totals side by side.

    .venv/bin/python bench/rendered_positions.py [--corpus ../shared/corpus] [--rounds 3] [FILE...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FORMATS = (".docx", ".odt", ".rtf", ".pptx", ".doc", ".ppt")

_RUN = """
import json, sys, time, warnings
warnings.simplefilter("ignore")
import kg_decoder
files, rendered = json.loads(sys.argv[1]), sys.argv[2] == "on"
seconds = {}
with kg_decoder.open_store(None) as store:
    kg_decoder.decode(b"warm the worker up", store=store, file_name="warm.txt")
    for path in files:
        started = time.perf_counter()
        kg_decoder.decode(path, store=store, rendered_positions=rendered, partition_cache=False)
        seconds[path] = time.perf_counter() - started
print(json.dumps(seconds))
"""


def run(files: list[str], rendered: bool) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(files), "on" if rendered else "off"],
                          capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    files = [str(Path(f).resolve()) for f in args.files] or sorted(
        str(p) for p in Path(args.corpus).iterdir() if p.suffix in FORMATS)
    rounds: dict[bool, list[dict[str, float]]] = {True: [], False: []}
    for number in range(args.rounds):
        for rendered in ((True, False) if number % 2 == 0 else (False, True)):
            rounds[rendered].append(run(files, rendered))
    print(f"{'file':40} {'rendered s':>11} {'plain s':>9} {'ratio':>6}")
    totals = {True: 0.0, False: 0.0}
    for path in files:
        medians = {flag: statistics.median(r[path] for r in rounds[flag]) for flag in (True, False)}
        totals[True] += medians[True]
        totals[False] += medians[False]
        print(f"{Path(path).name[:40]:40} {medians[True]:11.2f} {medians[False]:9.2f} "
              f"{medians[True] / medians[False]:6.2f}")
    print(f"{'all ' + str(len(files)) + ' files':40} {totals[True]:11.2f} {totals[False]:9.2f} "
          f"{totals[True] / totals[False]:6.2f}   (+{(totals[True] - totals[False]) / len(files):.2f} s per document)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
