"""Benchmark: every shipped audit's time on the main job's store, on 10 times that store, and on a store
of 10^5 chunks (targets: 10x / 1x <= 12 for each audit, linear; the whole ``kg-decoder audit`` on the
main job's store at most 3x the slowest single ``kg-decoder query`` of an audit).

1. The base: the main job's store (``--store``, e.g. ./kg-store after ``bash scripts/run.sh``; else the
   shared corpus is decoded and chunked as the main job does, into a temporary store), copied, and
   given a corpus text as version 1 of a source, one fact on each chunk (so the audits of facts have
   something to read), then the text's version 2 (so the facts on version 1 get verdicts).
2. Stores of k copies of the base's graph are made (every ``urn:`` IRI and blank node renamed per
   copy: k documents for each base document, with their pages, chunks, facts and runs); each
   carries the base's library, so the library audits read the same blobs. k = 1, 10, and enough
   copies for 10^5 chunks.
3. Each store's audits are run as ``kg-decoder audit`` runs them (``run_audits`` with a time limit,
   each SPARQL audit in a worker), the median of ``--rounds`` runs per audit; an audit past the
   limit is shown as such. Then the main job's own store: the CLI's ``kg-decoder audit`` wall
   time against the slowest ``kg-decoder query NAME`` of an audit (each a new process, as a user runs
   them).

    .venv/bin/python bench/audits.py [--store ./kg-store] [--chunks 100000] [--rounds 3] [--timeout 120]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pyoxigraph import BlankNode, NamedNode, Quad, Store, Triple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
CLI = [sys.executable, "-m", "kg_decoder.cli"]
CORPUS = REPO.parent / "shared" / "corpus"
VERSIONED = CORPUS / "README.rst"
GRAPH_PREFIX = "urn:graph:"


def main_job_store(folder: Path) -> Path:
    """The shared corpus decoded and chunked into ``folder`` as ``scripts/run.sh`` does."""
    done = subprocess.run(CLI + ["decode", str(CORPUS), "--store", str(folder), "--chunk", "--no-progress"],
                          cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"the main job failed: {done.stderr[-2000:]}")
    return folder


def add_a_versioned_source(folder: Path) -> str:
    """A corpus text decoded and chunked as version 1 of a source, with a fact on each of its paragraphs'
    first lines (version 2 comes later: its edits make some of them stale)."""
    import kg_decoder

    with kg_decoder.open_store(folder) as store:
        first = kg_decoder.decode(VERSIONED.read_bytes(), store=store, source_id="bench-source",
                                  file_name=VERSIONED.name)
        kg_decoder.chunk_document(first.document, store=store)
        for chunk in kg_decoder.document_chunks(first.document, store=store):  # a fact on each paragraph's line
            starts = [0] + [found.end() for found in re.finditer(r"\n\n+", chunk.text)]
            lines = [(start, start + len(chunk.text[start:].split("\n", 1)[0])) for start in starts]
            kg_decoder.add_facts(chunk.iri, [(f"http://example.org/line/{start}", "http://example.org/says",
                                              chunk.text[start:end][:40]) for start, end in lines if end > start],
                                 spans=[span for span in lines if span[1] > span[0]], store=store)
        return first.document


def edit_the_versioned_source(folder: Path) -> None:
    """Version 2 of the source: a word changed and a paragraph dropped (the facts on version 1 get verdicts)."""
    import kg_decoder

    paragraphs = VERSIONED.read_text(encoding="utf-8").split("\n\n")
    edited = "\n\n".join(paragraphs[:2] + paragraphs[3:]).replace("the", "a", 1)
    with kg_decoder.open_store(folder) as store:
        second = kg_decoder.decode(edited.encode("utf-8"), store=store, source_id="bench-source",
                                   file_name=VERSIONED.name)
        kg_decoder.chunk_document(second.document, store=store)
        assert second.version.number == 2, second.version


def add_a_fact_per_chunk(folder: Path) -> int:
    """One fact on each chunk of the store, spanning the chunk's first word (the facts' audits read them)."""
    import kg_decoder

    added = 0
    with kg_decoder.open_store(folder) as store:
        for summary in store.document_summaries():
            for chunk in kg_decoder.document_chunks(summary.document, store=store):
                words = chunk.text.split()
                if not words:
                    continue
                start = chunk.text.index(words[0])
                kg_decoder.add_facts(chunk.iri, [(f"http://example.org/chunk/{chunk.index}", "http://example.org/says",
                                                  words[0][:40])], spans=[(start, start + len(words[0]))], store=store)
                added += 1
    return added


def _renamed(term, suffix: str):
    if isinstance(term, NamedNode) and term.value.startswith("urn:") and not term.value.startswith(GRAPH_PREFIX):
        return NamedNode(f"{term.value}-{suffix}")
    if isinstance(term, BlankNode):
        return BlankNode(f"{term.value}x{suffix}")
    if isinstance(term, Triple):
        return Triple(_renamed(term.subject, suffix), _renamed(term.predicate, suffix), _renamed(term.object, suffix))
    return term


def replicated(base: Path, copies: int, folder: Path) -> Path:
    """A store at ``folder`` holding ``copies`` renamed copies of ``base``'s graph, and its library."""
    quads = list(Store.read_only(str(base / "oxigraph")).quads_for_pattern(None, None, None, None))
    shutil.copytree(base / "library", folder / "library")
    graph = Store(str(folder / "oxigraph"))
    for copy in range(copies):
        graph.bulk_extend(Quad(_renamed(q.subject, str(copy)), q.predicate, _renamed(q.object, str(copy)),
                               q.graph_name) for q in quads)
    graph.optimize()
    del graph
    return folder


def chunk_count(folder: Path) -> int:
    from kg_decoder.graph.opening import open_store

    with open_store(folder, read_only=True) as store:
        return sum(int(row.get("chunks", 0)) for row in store.table("audit-document-counts").records())


def audit_seconds(folder: Path, timeout: float, rounds: int) -> dict[str, float]:
    """Each audit's median time over ``rounds`` runs (inf: past the time limit)."""
    from kg_decoder.quality.audits import run_audits

    seen: dict[str, list[float]] = {}
    for _ in range(rounds):
        for audit in run_audits(folder, timeout=timeout):
            seen.setdefault(audit.name, []).append(float("inf") if audit.error else audit.seconds)
    return {name: statistics.median(times) for name, times in seen.items()}


def wall(*arguments: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(CLI + list(arguments), cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"kg-decoder {' '.join(arguments)} failed: {done.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="the main job's store (default: make one from the corpus)")
    parser.add_argument("--chunks", type=int, default=100_000, help="chunks of the largest store")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per audit")
    args = parser.parse_args()
    from kg_decoder.quality.audits import audit_definitions

    work = Path(tempfile.mkdtemp(prefix="bench-audits-"))
    try:
        main_store = args.store or main_job_store(work / "main-job")
        base = work / "base"
        shutil.copytree(main_store, base, ignore=shutil.ignore_patterns("partition-cache", "renders", "snapshots"))
        add_a_versioned_source(base)
        facts = add_a_fact_per_chunk(base)
        edit_the_versioned_source(base)
        per_copy = chunk_count(base)
        sizes = {"1x": 1, "10x": 10, f"{args.chunks:.0e} chunks": -(-args.chunks // per_copy)}
        print(f"base: {per_copy} chunks, {facts} facts; stores of {', '.join(f'{k} copies' for k in sizes.values())}",
              flush=True)
        times: dict[str, dict[str, float]] = {}
        for label, copies in sizes.items():
            folder = replicated(base, copies, work / f"copies-{copies}")
            rounds = args.rounds if copies <= 10 else 1
            started = time.perf_counter()
            times[label] = audit_seconds(folder, args.timeout, rounds)
            print(f"{label}: {chunk_count(folder)} chunks, audits run {rounds}x in "
                  f"{time.perf_counter() - started:.1f} s", flush=True)
            shutil.rmtree(folder)

        labels = list(sizes)
        names = list(times[labels[0]])
        print(f"\n{'audit':42} " + " ".join(f"{label:>14}" for label in labels) + f" {'10x/1x':>8}")
        for name in names:
            one, ten = times[labels[0]][name], times[labels[1]][name]
            ratio = ten / one if one > 0 else float("nan")
            print(f"{name:42} " + " ".join(f"{times[label][name]:>13.3f}s" for label in labels) + f" {ratio:>8.1f}")
        for label in labels:
            whole = sum(value for value in times[label].values())
            slowest = max(times[label], key=times[label].get)
            print(f"{label}: whole audit {whole:.2f} s; slowest {slowest} {times[label][slowest]:.2f} s "
                  f"({times[label][slowest] / whole:.0%} of the whole)")

        singles = {audit.name: wall("query", audit.name, "--store", str(main_store), "--format", "json")
                   for audit in audit_definitions()}
        whole = wall("audit", "--store", str(main_store))
        slowest = max(singles, key=singles.get)
        print(f"\nthe main job's store: kg-decoder audit {whole:.2f} s; the slowest kg-decoder query of an audit "
              f"({slowest}) {singles[slowest]:.2f} s; ratio {whole / singles[slowest]:.2f} (goal <= 3)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
