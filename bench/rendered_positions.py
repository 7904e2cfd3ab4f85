"""Benchmark: what placing Office documents on their LibreOffice rendering costs a decode.

Decodes the corpus's DOCX, ODT, RTF and PPTX files (and any given) into fresh stores, with the
default (rendered positions on) and with `rendered_positions=False`, in alternating rounds in
fresh processes (these machines are noisy). Prints per file the median seconds of both and their
ratio, then the totals side by side.

    .venv/bin/python bench/rendered_positions.py [--corpus ../shared/corpus] [--rounds 3] [FILE...]

``--long-docx PAGES`` instead times one long DOCX (about PAGES pages, made here from the corpus's
handbook page and tables, repeated with python-docx) against unstructured's own ``partition()`` of it:
both in fresh processes, alternating, both at idle priority (the decoding worker runs there). Prints
the wall-time ratio, the ratio of the peak RSS of the largest process of each side (the decode's
worker or its LibreOffice against the one raw process; targets <= 1.3 and <= 1.2) and how many of
the decode's elements were placed (a page and a box on the rendering) and how many not; and the
ratio of CPU seconds (every process of each side), which a machine shared with other work disturbs less.

    .venv/bin/python bench/rendered_positions.py --long-docx 300 [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
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


# The CPU seconds of this process and all it started (LibreOffice, the worker, its readers), gone or not:
# on a shared machine a side's own work, whatever else runs (decode_overhead.py counts them so too).
_CPU = f"""
import sys
sys.path.insert(0, {str(REPO / "bench")!r})
from decode_overhead import cpu_seconds as cpu
"""

_LONG_RAW = _CPU + """
import json, os, sys, time, warnings
warnings.simplefilter("ignore")
os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
from kg_decoder.decode import offline
offline.prepare()
from unstructured.partition.auto import partition
partition(filename=sys.argv[2])
started, spent = time.perf_counter(), cpu()
elements = partition(filename=sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - started, "cpu": cpu() - spent, "elements": len(elements)}))
"""

_LONG_DECODE = _CPU + """
import json, sys, tempfile, time, warnings
warnings.simplefilter("ignore")
import kg_decoder
with tempfile.TemporaryDirectory() as folder:
    store = kg_decoder.open_store(folder)
    kg_decoder.decode(sys.argv[2], store=store, partition_cache=False)
    started, spent = time.perf_counter(), cpu()
    result = kg_decoder.decode(sys.argv[1], store=store, partition_cache=False)
    seconds, spent = time.perf_counter() - started, cpu() - spent
    rows = [row for row in store.document_elements(result.document)]
    placed = sum(1 for row in rows if row.bbox and row.rendered_page_number)
    run = store.rendering_run(result.document)
    print(json.dumps({"seconds": seconds, "cpu": spent, "elements": len(rows), "placed": placed,
                      "rendered_pages": run.rendered_page_count if run else 0,
                      "problems": [p.code for p in result.problems]}))
"""


def make_long_docx(path: Path, pages: int, corpus: Path) -> Path:
    """About ``pages`` pages of real corpus content: the handbook's page of prose and the tables
    document, repeated (a copy lays out as about three pages), each copy under a heading of its own."""
    import copy

    import docx

    document = docx.Document(str(corpus / "handbook-1p.docx"))
    body = document.element.body
    prose = [child for child in body if not child.tag.endswith("sectPr")]
    tables = [child for child in docx.Document(str(corpus / "docx-tables.docx")).element.body
              if not child.tag.endswith("sectPr")]
    for child in prose:
        body.remove(child)
    for number in range(1, pages // 3 + 2):
        document.add_heading(f"Part {number}: the handbook, copy {number}", 1)
        for child in prose + (tables if number % 3 == 0 else []):
            document.add_paragraph()._p.addprevious(copy.deepcopy(child))
    document.save(str(path))
    return path


def _measured(script: str, *arguments: str) -> dict:
    """Run ``script`` in a fresh process: its JSON answer, with the peak RSS (MB) of its largest
    process (itself or any descendant it waited for: the decoding worker, LibreOffice)."""
    process = subprocess.Popen([sys.executable, "-c", script, *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, text=True, cwd=tempfile.gettempdir())
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = status
    if status != 0:
        raise RuntimeError(f"the measured process failed ({status}): {output[-500:]}")
    answer = json.loads(output.strip().splitlines()[-1])
    answer["peak_mb"] = usage.ru_maxrss / 1024
    return answer


def long_docx(pages: int, rounds: int, corpus: Path) -> int:
    with tempfile.TemporaryDirectory() as folder:
        path = str(make_long_docx(Path(folder) / "long.docx", pages, corpus))
        warm = str(corpus / "handbook-1p.docx")
        sides: dict[str, list[dict]] = {"raw": [], "decode": []}
        for number in range(rounds):
            for side in (("raw", "decode") if number % 2 == 0 else ("decode", "raw")):
                answer = _measured(_LONG_RAW if side == "raw" else _LONG_DECODE, path, warm)
                sides[side].append(answer)
                print(f"round {number + 1} {side:7} {answer['seconds']:8.1f} s  peak {answer['peak_mb']:7.0f} MB  "
                      f"CPU {answer['cpu']:6.1f} s  "
                      + json.dumps({k: v for k, v in answer.items() if k not in ("seconds", "peak_mb", "cpu")}),
                      flush=True)
    wall = [d["seconds"] / r["seconds"] for d, r in zip(sides["decode"], sides["raw"])]
    memory = [d["peak_mb"] / r["peak_mb"] for d, r in zip(sides["decode"], sides["raw"])]
    cpu = [d["cpu"] / r["cpu"] for d, r in zip(sides["decode"], sides["raw"])]
    last = sides["decode"][-1]
    print(f"long DOCX of {last['rendered_pages']} rendered pages, {rounds} rounds (ratios per round: {wall}, {memory})")
    print(f"wall decode/raw        {statistics.median(wall):.2f}   (target <= 1.3)")
    print(f"CPU decode/raw         {statistics.median(cpu):.2f}   (every process of each side: what a loaded machine leaves of wall time)")
    print(f"peak RSS decode/raw    {statistics.median(memory):.2f}   (largest process; target <= 1.2)")
    print(f"elements placed        {last['placed']} of {last['elements']} ({last['elements'] - last['placed']} not placed)")
    return 0


def run(files: list[str], rendered: bool) -> dict[str, float]:
    done = subprocess.run([sys.executable, "-c", _RUN, json.dumps(files), "on" if rendered else "off"],
                          capture_output=True, text=True, cwd=tempfile.gettempdir(), check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", default=str(REPO.parent / "shared" / "corpus"))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--long-docx", type=int, metavar="PAGES", help="time one long DOCX against raw unstructured")
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    if args.long_docx:
        return long_docx(args.long_docx, args.rounds, Path(args.corpus))
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
