"""Crash safety: kill a decode (its whole process group, worker included) with SIGKILL at random
moments across a batch of large documents, many times on one store, and check what is left.

After the kills the store must open, conform to the SHACL shapes, hold every document either
whole or not at all (the integrity audit: declared page, section and element counts match what
is stored), hold the bytes of every library hash the graph cites, and let the batch be run
again to completion; the blobs a kill orphaned are listed by the library audit and removed by
``kg-decoder gc``.

    .venv/bin/python bench/crash.py --trials 100 [--seed 7]

prints each trial (when the kill came, in which stage) and the checks; exit 1 if one fails.
The test suite runs the same harness with a kill at each chosen moment of ``MOMENTS`` instead of random
ones (tests/e2e/test_crash.py): every phase of a decode is hit, in far fewer trials.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import select
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
# Stages whose progress marks a decode at work (the worker is warm): the kill window opens there.
BUSY = ('"stage": "partition"', '"stage": "group"', '"stage": "map"', '"stage": "write quads"', '"stage": "chunk"',
        '"stage": "embedded files"', '"stage": "done"')


def make_batch(folder: Path, scale: int = 1) -> list[Path]:
    """Large documents of several formats (many quads each, so commits take a while), and corpus files;
    ``scale`` multiplies their size."""
    from docx import Document
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    folder.mkdir(parents=True, exist_ok=True)
    batch = []
    for number in range(scale):
        path = folder / f"large-{number}.pdf"
        pdf = canvas.Canvas(str(path), pagesize=letter)
        for page in range(20):
            pdf.setFont("Helvetica", 10)
            for line in range(45):
                pdf.drawString(54, 740 - 15 * line, f"Report {number} page {page + 1} line {line + 1}: "
                                                      f"the crash harness writes words that must survive.")
            pdf.showPage()
        pdf.save()
        batch.append(path)
    document = Document()
    for section in range(30 * scale):
        document.add_heading(f"Chapter {section + 1}", level=1)
        for paragraph in range(10):
            document.add_paragraph(f"Chapter {section + 1}, paragraph {paragraph + 1}: a decode killed at any "
                                   f"moment leaves this document whole or absent.")
    path = folder / "large.docx"
    document.save(path)
    batch.append(path)
    path = folder / "large.md"
    path.write_text("\n\n".join(f"# Part {part}\n\n" + "\n\n".join(
        f"Part {part} paragraph {n}: words to chunk and to keep." for n in range(20)) for part in range(30 * scale)),
        encoding="utf-8")
    batch.append(path)
    for name in ("layout-parser-paper-fast.pdf", "fake-email-attachment.eml", "stanley-cups.xlsx",
                 "example-10k-1p.html"):
        shutil.copy(CORPUS / name, folder / name)
        batch.append(folder / name)
    return batch


def decode_command(store: Path, batch: list[Path], settings: list[str]) -> list[str]:
    return [sys.executable, "-m", "kg_decoder.cli", "decode", *map(str, batch), "--store", str(store),
            "--progress-jsonl", *settings]


def random_settings(rng: random.Random) -> list[str]:
    """Other section settings each time, so the batch is decoded again and earlier decodes replaced."""
    choice = rng.choice(["size", "count", "heading", "whole-document"])
    settings = ["--section-strategy", choice]
    if choice == "size":
        settings += ["--section-max-size", str(rng.randint(300, 6000))]
    if choice == "count":
        settings += ["--section-element-count", str(rng.randint(2, 40))]
    if choice in ("heading", "whole-document") or rng.random() < 0.5:  # new chunks at least, when not new sections
        settings += ["--chunk", "--chunk-size", str(rng.randint(48, 600))]
    return settings


# Chosen moments: (stage, words of its message, which such report of the batch): the kill comes the
# instant the decode reports it. Each phase of a document's decode and of its chunking: its partition
# (read from the parse cache the first decode filled), the quads made, the transactions' starts
# (mid-write) and ends (just committed), a second document's transaction and an e-mail's attachments.
MOMENTS = (("partition", "", 1), ("map", "", 1), ("write quads", "in one transaction", 1), ("write quads", "wrote", 1),
           ("chunk", "", 1), ("write quads", "quads of chunks", 1), ("write quads", "in one transaction", 2),
           ("embedded files", "", 1))


@dataclass
class Trial:
    number: int
    settings: list[str]
    killed_after: float  # seconds after the decode got to work; -1: it finished before the kill
    stage: str


def kill_during_a_decode(store: Path, batch: list[Path], rng: random.Random, number: int,
                         window: float) -> Trial:
    """Start the batch with new settings, wait until it is at work, kill its process group at a
    random moment within ``window`` seconds."""
    settings = random_settings(rng)
    process = subprocess.Popen(decode_command(store, batch, settings), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    seen, stage, started = b"", "starting", time.monotonic()
    busy_at = None
    delay = rng.uniform(0, window)
    try:
        while process.poll() is None:
            now = time.monotonic()
            if busy_at is not None and now - busy_at >= delay:
                break
            if now - started > 600:
                raise RuntimeError("the decode did not get to work within 600 s")
            ready, _, _ = select.select([process.stderr], [], [], 0.02)
            if ready:
                chunk = os.read(process.stderr.fileno(), 65536)
                seen = (seen + chunk)[-4000:]
                text = seen.decode("utf-8", "replace")
                marks = [(text.rfind(mark), mark) for mark in BUSY]
                position, mark = max(marks)
                if position >= 0:
                    stage = mark.split('"')[3]
                    if busy_at is None:
                        busy_at = time.monotonic()
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
            return Trial(number, settings, time.monotonic() - busy_at, stage)
        return Trial(number, settings, -1.0, "finished")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
        process.stderr.close()


def kill_at_moment(store: Path, batch: list[Path], rng: random.Random, number: int,
                   moment: tuple[str, str, int]) -> Trial:
    """Start the batch with new settings (chunks among them), kill its process group the instant its
    progress reports ``moment`` (stage, words of the message, the how-many-th such report)."""
    stage, words, nth = moment
    settings = random_settings(rng)
    if "--chunk" not in settings:  # the chunking phases are among the moments
        settings += ["--chunk", "--chunk-size", str(rng.randint(48, 600))]
    process = subprocess.Popen(decode_command(store, batch, settings), stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, start_new_session=True)
    pending, seen, started = b"", 0, time.monotonic()
    try:
        while process.poll() is None and seen < nth:
            if time.monotonic() - started > 600:
                raise RuntimeError(f"the decode did not reach {moment} within 600 s")
            ready, _, _ = select.select([process.stderr], [], [], 0.5)
            if not ready:
                continue
            pending += os.read(process.stderr.fileno(), 65536)
            *lines, pending = pending.split(b"\n")
            for line in lines:
                try:
                    report = json.loads(line) if line.startswith(b"{") else {}
                except ValueError:  # a line of something else the process printed
                    report = {}
                if report.get("stage") == stage and words in report.get("message", ""):
                    seen += 1
                    if seen == nth:
                        os.killpg(process.pid, signal.SIGKILL)  # at once: before the next line is read
                        break
        process.wait(timeout=60)
        if seen < nth:
            return Trial(number, settings, -1.0, "finished")
        return Trial(number, settings, time.monotonic() - started, f"{stage} {words}".strip() + f" #{nth}")
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
        process.stderr.close()


def problems(store_path: Path, shapes: bool = True) -> list[str]:
    """What is wrong with the store (empty: nothing); ``shapes`` validates against the SHACL shapes too."""
    import kg_decoder

    found = []
    with kg_decoder.open_store(store_path) as store:
        if shapes:
            report = kg_decoder.validate(store)
            if not report.conforms:
                found.append(f"SHACL: {len(report.violations)} violations, e.g. {report.violations[0]}")
        for audit in kg_decoder.run_audits(store):
            if audit.name in ("audit-document-integrity", "audit-orphan-entities", "library-missing-blobs") \
                    and audit.table.rows:
                found.append(f"{audit.name}: {audit.table.rows[:3]}")
    return found


def run(trials: int, seed: int, folder: Path, window: float = 8.0, log=print, scale: int = 1,
        moments: tuple = ()) -> dict:
    """The whole experiment in ``folder``; a summary of what happened. With ``moments``, a trial kills
    at each of them (``trials`` and ``window`` unused) instead of at random moments."""
    rng = random.Random(seed)
    batch = make_batch(folder / "batch", scale)
    store = folder / "store"
    first = subprocess.run(decode_command(store, batch, []), capture_output=True, text=True, timeout=1800)
    if first.returncode != 0:
        raise RuntimeError(f"the batch does not decode: {first.stderr[-2000:]}")
    kills = []
    chosen = [lambda number, moment=moment: kill_at_moment(store, batch, rng, number, moment) for moment in moments]
    random_kills = [lambda number: kill_during_a_decode(store, batch, rng, number, window)] * trials
    for number, kill in enumerate(chosen or random_kills, 1):
        trial = kill(number)
        kills.append(trial)
        log(f"trial {number:3}: {'killed %.2f s in' % trial.killed_after if trial.killed_after >= 0 else 'finished'}"
            f" ({trial.stage}) with {' '.join(trial.settings)}")
    after_kills = problems(store)
    import kg_decoder

    with kg_decoder.open_store(store) as opened:
        orphans = opened.orphan_blobs()
        leftovers = opened.library.leftovers()
    gc = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "gc", "--store", str(store)], capture_output=True,
                        text=True, timeout=600)
    with kg_decoder.open_store(store) as opened:
        orphans_after_gc = opened.orphan_blobs()
    again = subprocess.run(decode_command(store, batch, kills[-1].settings if kills else []), capture_output=True,
                           text=True, timeout=1800)
    return {"trials": len(kills), "killed": sum(1 for t in kills if t.killed_after >= 0),
            "stages": sorted({t.stage for t in kills}), "problems": after_kills, "orphans": len(orphans),
            "leftovers": len(leftovers), "gc_exit": gc.returncode, "orphans_after_gc": len(orphans_after_gc),
            "rerun_exit": again.returncode, "rerun_stdout": again.stdout[-600:],
            "problems_after_rerun": problems(store, shapes=False)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--window", type=float, default=8.0, help="seconds after the decode is at work in which "
                                                                 "the kill falls")
    parser.add_argument("--moments", action="store_true", help="a kill at each of MOMENTS (as the test suite "
                                                                  "does) instead of --trials random ones")
    parser.add_argument("--folder", help="work here (default: a temporary folder)")
    parser.add_argument("--scale", type=int, default=2, help="how large the generated documents are")
    args = parser.parse_args()
    import tempfile

    folder = Path(args.folder or tempfile.mkdtemp(prefix="kg-crash-"))
    started = time.monotonic()
    summary = run(args.trials, args.seed, folder, args.window, scale=args.scale,
                  moments=MOMENTS if args.moments else ())
    print(f"\n{summary['killed']} of {summary['trials']} trials killed mid-decode, in stages "
          f"{', '.join(summary['stages'])}; {time.monotonic() - started:.0f} s")
    print(f"after the kills: {summary['problems'] or 'no problem'}; {summary['orphans']} orphaned blobs, "
          f"{summary['leftovers']} half-written blob files")
    print(f"kg-decoder gc exit {summary['gc_exit']}, orphans left {summary['orphans_after_gc']}; the batch again: "
          f"exit {summary['rerun_exit']}, {summary['problems_after_rerun'] or 'no problem'}")
    ok = (not summary["problems"] and not summary["problems_after_rerun"] and summary["gc_exit"] == 0
          and summary["orphans_after_gc"] == 0 and summary["rerun_exit"] == 0)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
