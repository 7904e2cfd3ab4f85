"""A new version killed (SIGKILL to the decode's process group, its worker included) at random moments,
the version's commit among them: the source is left at its old version or holds the whole new one
(its revision and a verdict for every fact), the graph conforms, and decoding again completes it."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

import kg_decoder
from conftest import REPO

FACTS = 80
# Prints "written" when the document is committed: the version (diff, verdicts, its commit) comes next.
DECODE = ("import sys, kg_decoder\n"
          "def told(report):\n"
          "    if report.stage == 'done': print('written', flush=True)\n"
          "kg_decoder.decode(sys.argv[1], store=sys.argv[2], source_id='crash-report', rendered_positions=False, "
          "progress=told)")


def paragraphs(edited: bool) -> list[str]:
    out = []
    for number in range(FACTS):
        value = number + 1000 + (7 if edited and number % 5 == 0 else 0)
        if edited and number % 11 == 0:
            continue
        out.append(f"Paragraph {number} says the plant in region {number} shipped {value} units last quarter.")
    return out


def check(store_path, shapes: bool = False) -> tuple[int, int]:
    """The latest version's number and its verdicts; asserts the store is whole (and conforms to the shapes:
    slow, pySHACL in Python)."""
    with kg_decoder.open_store(store_path) as store:
        versions = kg_decoder.source_versions("crash-report", store=store)
        latest = [v for v in versions if v.latest]
        assert len(latest) == 1 and latest[0].number == len(versions), versions
        verdicts = sum(latest[0].facts.values()) if latest[0].facts else 0
        if latest[0].number == 2:
            assert verdicts == FACTS, latest[0]
        audits = {a.name: a.table.rows for a in kg_decoder.run_audits(store=store)}
        assert audits["audit-orphan-entities"] == [] and audits["audit-document-integrity"] == []
        if shapes:
            report = kg_decoder.validate(store=store)
            assert report.conforms, report.violations[:3]
        return latest[0].number, verdicts


@pytest.mark.slow
def test_a_new_version_killed_at_any_moment_is_all_or_nothing(tmp_path):
    base = tmp_path / "base"
    old, new = tmp_path / "v1.txt", tmp_path / "v2.txt"
    old.write_text("\n\n".join(paragraphs(False)))
    new.write_text("\n\n".join(paragraphs(True)))
    with kg_decoder.open_store(base) as store:
        first = kg_decoder.decode(old, store=store, source_id="crash-report")
        kg_decoder.chunk_document(first.document, store=store)
        for chunk in kg_decoder.document_chunks(first.document, store=store):
            quotes = [line.split(" says ")[1][:40] for line in chunk.text.split("\n\n") if " says " in line]
            if quotes:
                kg_decoder.add_facts(chunk.iri, [(f"http://ex.org/{abs(hash(q))}", "http://ex.org/says", q)
                                                 for q in quotes], spans=[{"quote": q} for q in quotes], store=store)
    rng = random.Random(2027)
    outcomes = []
    for trial in range(4):
        folder = tmp_path / f"trial-{trial}"
        shutil.copytree(base, folder)
        process = subprocess.Popen([sys.executable, "-c", DECODE, str(new), str(folder)], cwd=REPO,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, start_new_session=True)
        if trial % 2:  # while the process starts, or the document is decoded or written
            time.sleep(rng.uniform(1.0, 4.0))
        else:  # while the version is made and committed
            process.stdout.readline()
            time.sleep(rng.uniform(0.0, 0.5))
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
        outcomes.append(check(folder)[0])
        # Decoded again here (a process of its own is needed only to be killed): this process's
        # worker is warm already.
        with kg_decoder.open_store(folder) as store:
            kg_decoder.decode(new, store=store, source_id="crash-report", rendered_positions=False)
        assert check(folder, shapes=trial == 0) == (2, FACTS)
    assert 1 in outcomes  # some kills came before the version's commit (and the others after it: whole)
