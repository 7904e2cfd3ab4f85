"""Benchmark: decoding on several CPUs, ``decode --workers N`` and ``decode --ray``, against one worker.

Each run is the command a user types, in a fresh process, over the same files (the shared corpus
and the ICDAR 2013 PDFs by default), into a new store, with the parse cache off (every document
partitioned). Runs alternate round by round (these machines are noisy); the medians and their
ratios are printed side by side, with the machine's CPU utilisation during each run (busy time
of all CPUs over their wall time, from /proc/stat):

  workers-1   --workers 1 into an embedded store               (the baseline)
  workers-2   --workers 2 into an embedded store               (target: workers-2 / workers-1 <= 0.60)
  ray-2       --ray auto on a local 2-CPU cluster, into an Oxigraph server and a library folder
              (target: ray-2 / workers-1 <= 0.70; remote-1 shows what the server alone costs)
  remote-1    --workers 1 into the same Oxigraph server

Each mode is also timed on one small file (start-up: imports, workers warming up, a Ray cluster
starting); the ratios of the runs without it show what a batch much longer than this one gets.

    .venv/bin/python bench/parallel.py [--rounds 3] [--modes workers-1 workers-2 ray-2 remote-1]
        [--files PATH ...]
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
BIN = Path(sys.executable).parent


def cpu_jiffies() -> tuple[int, int]:
    """(busy, total) jiffies of all CPUs since boot."""
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OxigraphServer:
    """An Oxigraph server on a free loopback port over a fresh folder."""

    def __init__(self) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="bench-oxigraph-"))
        self.url = f"http://127.0.0.1:{free_port()}"
        self.process = subprocess.Popen([str(BIN / "oxigraph"), "serve", "--location", str(self.folder / "db"),
                                         "--bind", self.url.removeprefix("http://")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import urllib.request

        for _ in range(300):
            try:
                urllib.request.urlopen(f"{self.url}/query?query=ASK%7B%7D", timeout=1).read()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the Oxigraph server did not start")

    def clear(self) -> None:
        import urllib.parse
        import urllib.request

        urllib.request.urlopen(f"{self.url}/update", data=urllib.parse.urlencode({"update": "CLEAR ALL"}).encode(),
                               timeout=60).read()

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(30)
        shutil.rmtree(self.folder, ignore_errors=True)


def run(mode: str, files: list[Path], server: OxigraphServer) -> tuple[float, float, str]:
    """(wall seconds, CPU utilisation, summary line) of one decode run in ``mode``."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-parallel-"))
    command = [str(BIN / "kg-decoder"), "decode", *map(str, files), "--no-progress", "--no-partition-cache"]
    kind, workers = mode.rsplit("-", 1)
    if kind == "workers":
        command += ["--store", str(scratch / "store"), "--workers", workers]
    else:
        server.clear()
        command += ["--store", server.url, "--library", str(scratch / "library"), "--workers", workers]
        if kind == "ray":
            command += ["--ray", "auto"]
    # A remote store's local cache (renderings) new for each run, as an embedded store's folder is.
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "KG_DECODER_CACHE": str(scratch / "cache")}
    busy0, total0 = cpu_jiffies()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    busy1, total1 = cpu_jiffies()
    shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        raise RuntimeError(f"{mode} failed ({done.returncode}): {done.stderr[-2000:]}")
    summary = next((line for line in done.stdout.splitlines() if " files decoded into " in line), "?")
    return wall, (busy1 - busy0) / max(1, total1 - total0), summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", nargs="+", default=["workers-1", "workers-2", "ray-2", "remote-1"])
    parser.add_argument("--files", nargs="+", type=Path,
                        default=[SHARED / "corpus", *sorted((SHARED / "tables-icdar2013").glob("*.pdf"))])
    args = parser.parse_args()
    files = [f for path in args.files for f in ([path] if path.is_file() else sorted(path.iterdir()))]
    print(f"{len(files)} files, {sum(f.stat().st_size for f in files) / 1e6:.1f} MB; CPUs: "
          f"{len(os.sched_getaffinity(0))}; rounds: {args.rounds}", flush=True)
    server = OxigraphServer()
    times: dict[str, list[float]] = {mode: [] for mode in args.modes}
    usage: dict[str, list[float]] = {mode: [] for mode in args.modes}
    startup: dict[str, list[float]] = {mode: [] for mode in args.modes}
    small = [SHARED / "corpus" / "fake-text.txt"]
    try:
        for number in range(args.rounds):
            order = args.modes if number % 2 == 0 else list(reversed(args.modes))
            for mode in order:
                wall, used, summary = run(mode, files, server)
                times[mode].append(wall)
                usage[mode].append(used)
                startup[mode].append(run(mode, small, server)[0])
                print(f"round {number + 1} {mode:10s} {wall:7.1f} s  CPU {used:4.0%}  start-up "
                      f"{startup[mode][-1]:4.1f} s  {summary}", flush=True)
    finally:
        server.stop()
    base = statistics.median(times[args.modes[0]])
    marginal = {mode: statistics.median(times[mode]) - statistics.median(startup[mode]) for mode in args.modes}
    print(f"\n{'mode':10s} {'median s':>9s} {'ratio':>6s} {'CPU':>5s} {'start-up s':>11s} {'ratio without it':>17s}"
          f"   (ratios: to {args.modes[0]})")
    for mode in args.modes:
        median = statistics.median(times[mode])
        print(f"{mode:10s} {median:9.1f} {median / base:6.2f} {statistics.median(usage[mode]):5.0%} "
              f"{statistics.median(startup[mode]):11.1f} {marginal[mode] / marginal[args.modes[0]]:17.2f}")
    targets = {"workers-2": 0.60, "ray-2": 0.70}
    for mode, target in targets.items():
        if mode in times:
            ratio = statistics.median(times[mode]) / base
            print(f"{mode} / {args.modes[0]}: {ratio:.2f} (target <= {target:.2f}: "
                  f"{'met' if ratio <= target else 'NOT met'})")


if __name__ == "__main__":
    main()
