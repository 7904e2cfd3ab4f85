"""Benchmark: how long a partition worker takes to start (imports, the spaCy model) until it is ready.

Every `kg-decoder decode` starts one, `--workers N` starts N and each Ray worker process one, so
this is paid per run, not per document. Two kinds, alternating in fresh processes (these machines
are noisy):
  as-shipped  `python -m kg_decoder.decode.worker`, which keeps torch out (no task uses it);
  with-torch  the same worker with torch imported first, as thinc (under spaCy) did before.
Prints the median wall and CPU seconds of each and the as-shipped/with-torch ratios.

    .venv/bin/python bench/worker_start.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import resource
import socket
import statistics
import subprocess
import sys
import time
from multiprocessing.connection import Connection

_WITH_TORCH = "import sys, runpy, torch; runpy.run_module('kg_decoder.decode.worker', run_name='__main__')"


def start_once(kind: str) -> tuple[float, float]:
    """Wall and CPU seconds until the worker says it is ready."""
    parent_end, child_end = socket.socketpair()
    command = ([sys.executable, "-m", "kg_decoder.decode.worker"] if kind == "as-shipped"
               else [sys.executable, "-c", _WITH_TORCH])
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    worker = subprocess.Popen(command + [str(child_end.fileno())], pass_fds=[child_end.fileno()],
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    child_end.close()
    connection = Connection(parent_end.detach())
    if connection.recv() != "ready":
        raise SystemExit(f"the {kind} worker did not start")
    wall = time.perf_counter() - started
    connection.send(None)  # stop
    connection.close()
    worker.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    kinds = ["with-torch", "as-shipped"]
    start_once("as-shipped")  # the file cache warm for both
    times: dict[str, list[tuple[float, float]]] = {kind: [] for kind in kinds}
    for number in range(args.rounds):
        for kind in kinds if number % 2 == 0 else reversed(kinds):
            times[kind].append(start_once(kind))
            print(f"round {number + 1} {kind:10s} wall {times[kind][-1][0]:.2f} s  CPU {times[kind][-1][1]:.2f} s",
                  flush=True)
    medians = {kind: (statistics.median(w for w, _ in times[kind]), statistics.median(c for _, c in times[kind]))
               for kind in kinds}
    print(f"\n{'kind':10s} {'wall s':>7s} {'CPU s':>6s} {'wall ratio':>11s} {'CPU ratio':>10s}")
    for kind in kinds:
        wall, cpu = medians[kind]
        print(f"{kind:10s} {wall:7.2f} {cpu:6.2f} {wall / medians['with-torch'][0]:11.2f} "
              f"{cpu / medians['with-torch'][1]:10.2f}")


if __name__ == "__main__":
    main()
