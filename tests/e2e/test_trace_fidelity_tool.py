"""The shared trace-fidelity measure, run as it is on the shared PDFs: quotes drawn from poppler's
words are found, on the page poppler found them, boxed on the words (issue 17's targets)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SHARED = Path(__file__).resolve().parents[3] / "shared"


def test_quotes_from_an_independent_engine_are_found_and_boxed_on_their_words(tmp_path):
    tool = SHARED / "tools" / "trace_fidelity.py"
    run = subprocess.run([sys.executable, str(tool), str(SHARED / "corpus"), str(SHARED / "tables-icdar2013")],
                         capture_output=True, text=True, timeout=1200, cwd=tmp_path)
    summary = run.stdout.strip().splitlines()[-1]
    numbers = re.search(r"(\d+) quotes: found (\d+), right page (\d+) .*?\) (\d+) \(", summary)
    assert numbers, run.stdout + run.stderr
    total, found, right, boxed = (int(n) for n in numbers.groups())
    assert "decode failed" not in run.stdout, run.stdout
    assert total >= 290 and found >= 0.99 * total and right == found and boxed >= 0.97 * total, run.stdout
