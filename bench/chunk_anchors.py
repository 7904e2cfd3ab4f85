"""Benchmark: what verified chunk anchors add to chunking (target: ratio of medians <= 1.05).

Each chunk anchor says whether its box is verified, from the checks its elements' boxes passed when
they were decoded: chunking reads one more column of the elements, works out each anchor's
verification and writes one more quad per anchor. This times the first chunking of a few decoded
corpus documents in fresh stores, in turns with and without that work (the elements' query without
the column, no verification worked out or written), and prints the ratio of the medians.

    .venv/bin/python bench/chunk_anchors.py [--corpus ../shared/corpus] [--rounds 8]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["layout-parser-paper-fast.pdf", "embedded-images-tables.pdf", "handbook-1p.docx", "example-10k-1p.html"]


def without_verification():
    """Undo, until called again, what verification adds to chunking; returns the function that restores it."""
    from kg_decoder.cite import chunks
    from kg_decoder.graph import queries, run_mapping, store
    from kg_decoder.graph.vocabulary import tg

    original_query, original_checked, original_anchor = store.query_file, chunks._checked, run_mapping._describe_anchor

    def query_file(name: str):
        found = original_query(name)
        if name != "document_text_elements":
            return found
        text = "\n".join(line for line in found.text.splitlines() if "tg:verification" not in line)
        return queries.parse_query_file(name, text.replace(" ?verification", ""))

    def describe_anchor(out, chunk_iri, anchor, activity):
        original_anchor(out, chunk_iri, anchor, activity)
        if out.quads and out.quads[-1].predicate == tg("verification"):
            out.quads.pop()

    store.query_file, chunks._checked, run_mapping._describe_anchor = query_file, lambda element: None, describe_anchor

    def restore() -> None:
        store.query_file, chunks._checked, run_mapping._describe_anchor = original_query, original_checked, original_anchor

    return restore


def first_chunkings(corpus: Path, seed: Path) -> float:
    """Seconds to chunk the sources once, decoded into a fresh store (the parse cache and renderings
    copied from ``seed``, so nothing is partitioned again)."""
    import kg_decoder

    folder = Path(tempfile.mkdtemp(prefix="chunk-bench-"))
    for part in ("partition-cache", "renders"):
        if (seed / part).is_dir():
            shutil.copytree(seed / part, folder / part)
    with kg_decoder.open_store(folder) as store:
        documents = [kg_decoder.decode(corpus / name, store=store).document for name in SOURCES]
        started = time.perf_counter()
        for document in documents:
            kg_decoder.chunk_document(document, store=store, chunk_size=128)
        spent = time.perf_counter() - started
    shutil.rmtree(folder)
    return spent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()

    import kg_decoder

    seed = Path(tempfile.mkdtemp(prefix="chunk-bench-seed-"))
    with kg_decoder.open_store(seed) as store:  # partition once, for every round
        for name in SOURCES:
            kg_decoder.decode(args.corpus / name, store=store)
    first_chunkings(args.corpus, seed)  # warm: imports, tokenizer
    timings: dict[str, list[float]] = {"with": [], "without": []}
    for turn in range(args.rounds):
        for name in (("with", "without") if turn % 2 else ("without", "with")):
            restore = without_verification() if name == "without" else (lambda: None)
            try:
                timings[name].append(first_chunkings(args.corpus, seed))
            finally:
                restore()
    shutil.rmtree(seed)
    with_checks, without = statistics.median(timings["with"]), statistics.median(timings["without"])
    print(f"chunking {len(SOURCES)} documents, {args.rounds} rounds: median {without * 1000:.1f} ms without verified "
          f"anchors, {with_checks * 1000:.1f} ms with: ratio {with_checks / without:.3f} (target <= 1.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
