"""Benchmark: PDF table recognition on ICDAR 2013 (../shared/tables-icdar2013), kg-decoder beside the
libraries people reach for, in one run, scored by ../shared/tools/table_score.py.

kg-decoder decodes every PDF into a fresh store (``kg-decoder decode``) and the scorer reads the
tables back through the vocabulary; pdfplumber's ``find_tables()`` and camelot's lattice and stream
flavours are scored on the same files. The baselines run in the interpreter given by
``--baseline-python`` (default: this one); where a library is not installed there, its row says so.
kg-decoder's own dependencies never include camelot: make a separate virtualenv for the baselines,
e.g. ``python3 -m venv /tmp/baselines && /tmp/baselines/bin/pip install camelot-py pdfplumber``.

The finder's rules and thresholds were tuned on the odd-numbered documents of ICDAR 2013 (the half in
``../shared/tables-icdar2013``); the even-numbered half is held out for acceptance. Every score line
says which kind of files it was measured on: in-sample (tuned on: an optimistic figure), held out, or
a mix of both (with the counts).

Also prints seconds per page with and without tables: decode time of the table pages and of the
pages without tables, with table finding on and off (``--no-pdf-tables``).

    .venv/bin/python bench/tables.py [--dataset ../shared/tables-icdar2013] [--baseline-python PY]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCORER = REPO.parent / "shared" / "tools" / "table_score.py"
BASELINES = ("pdfplumber", "camelot-lattice", "camelot-stream")
TARGETS = "targets: location recall >= 0.90, precision >= 0.90; structure F1 >= 0.85"
_ICDAR_NAME = re.compile(r"(eu|us)-(\d{3})[a-z]?\.pdf")


def tuned_on(name: str) -> bool:
    """Whether an ICDAR 2013 file is one the table finder was tuned on (the odd-numbered documents).

    >>> tuned_on("eu-009a.pdf"), tuned_on("us-002.pdf"), tuned_on("report.pdf")
    (True, False, False)
    """
    match = _ICDAR_NAME.fullmatch(name)
    return bool(match) and int(match.group(2)) % 2 == 1


def sample_label(dataset: Path) -> str:
    """Which files a score on ``dataset`` is measured on: in-sample, held out, or both."""
    names = [path.name for path in dataset.glob("*.pdf")]
    tuned = sum(tuned_on(name) for name in names)
    if tuned == len(names):
        return f"IN-SAMPLE: all {len(names)} files are the half the rules were tuned on (the odd-numbered documents)"
    if tuned == 0:
        return f"HELD OUT: none of the {len(names)} files was used to tune the rules"
    return f"MIXED: {tuned} of {len(names)} files are in-sample (tuned on), {len(names) - tuned} held out"


def score_kg_decoder(dataset: Path) -> str:
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    done = subprocess.run([sys.executable, str(SCORER), str(dataset), "--decode-args", "--image-ocr off"],
                          capture_output=True, text=True, env=env)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]


def score_baseline(dataset: Path, name: str, python: str) -> str:
    module = "camelot" if name.startswith("camelot") else "pdfplumber"
    if subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode != 0:
        return f"{name}: not installed in {python} (see this script's docstring)"
    done = subprocess.run([python, str(SCORER), str(dataset), "--baseline", name], capture_output=True, text=True)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]


def table_pages(dataset: Path) -> dict[str, set[int]]:
    pages: dict[str, set[int]] = {}
    for regions in dataset.glob("*-reg.xml"):
        name = regions.name.replace("-reg.xml", ".pdf")
        pages[name] = {int(region.get("page")) for region in ET.parse(regions).getroot().iter("region")}
    return pages


def seconds_per_page(dataset: Path) -> list[str]:
    """Decode each page alone (one-page PDFs cut from the dataset) with tables on and off."""
    import pypdfium2 as pdfium

    import kg_decoder

    with_tables = table_pages(dataset)
    times: dict[tuple[bool, bool], list[float]] = {(t, on): [] for t in (True, False) for on in (True, False)}
    with tempfile.TemporaryDirectory() as folder:
        pages = []
        for pdf_path in sorted(dataset.glob("*.pdf")):
            pdf = pdfium.PdfDocument(str(pdf_path))
            for index in range(len(pdf)):
                single = pdfium.PdfDocument.new()
                single.import_pages(pdf, [index])
                path = Path(folder) / f"{pdf_path.stem}-{index + 1}.pdf"
                single.save(str(path))
                single.close()
                pages.append((path, index + 1 in with_tables.get(pdf_path.name, set())))
            pdf.close()
        store = kg_decoder.open_store(Path(folder) / "store")
        kg_decoder.decode(pages[0][0], store=store, image_ocr="off")  # warm up: imports, the worker, the model
        for number, (path, has_table) in enumerate(pages):
            # Alternating, and which goes first too: these machines are noisy. The two settings differ, so
            # neither is served by the other's parse cache entry or found unchanged.
            for on in ((True, False) if number % 2 else (False, True)):
                started = time.perf_counter()
                kg_decoder.decode(path, store=store, image_ocr="off", pdf_tables=on)
                times[(has_table, on)].append(time.perf_counter() - started)
    lines = []
    for has_table in (True, False):
        on, off = (sorted(times[(has_table, flag)]) for flag in (True, False))
        median_on, median_off = on[len(on) // 2], off[len(off) // 2]
        lines.append(f"pages {'with' if has_table else 'without'} tables ({len(on)}): median {median_on:.3f} s with "
                     f"table finding, {median_off:.3f} s without; ratio {median_on / median_off:.2f}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default=str(REPO.parent / "shared" / "tables-icdar2013"))
    parser.add_argument("--baseline-python", default=sys.executable)
    parser.add_argument("--skip-timing", action="store_true")
    args = parser.parse_args()
    dataset = Path(args.dataset)
    label = sample_label(dataset)
    print(TARGETS)
    print(f"dataset {dataset}: {label}")
    kind = f"[{label.split(':')[0].lower()}]"
    print(kind, score_kg_decoder(dataset), flush=True)
    for name in BASELINES:  # tuned on neither half: the same files, for comparison
        print(kind, score_baseline(dataset, name, args.baseline_python), flush=True)
    if not args.skip_timing:
        for line in seconds_per_page(dataset):
            print(line)


if __name__ == "__main__":
    main()
