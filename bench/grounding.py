"""Benchmark: facts grounded with a verdict (``kg_decoder.add_fact_lines``), from the corpus, with ground truth.

Targets: invented quotes -> ``unsupported`` >= 0.98; true quotes (exact, folded, paraphrased) grounded
>= 0.97; grounded facts of PDFs whose every box is on the words (``characters``, ``verified``) >= 0.99;
10^4 facts in bulk at <= 2 ms a fact (the ratio to the store's raw write of the same quads printed).

1. The corpus PDFs and DOCX files (../shared/corpus) are decoded and chunked (256 tokens).
2. From each chunk's sentences, facts whose quotes are: ``exact`` (a run of 6 to 14 words as written);
   ``folded`` (the run as an extractor writes it: ligatures, a word broken at a line end joined,
   typographic quotes straightened, else a soft hyphen kept in a word); ``paraphrased`` — ``order``
   (the run's first two words moved to its end), ``dropped`` (a word of its middle left out, not a
   negation nor a number), ``number`` (a number of the run written another way: 1,200 / 1200, 3 /
   three, 5% / 5 percent); ``invented`` — ``other`` (a run of a chunk of another document),
   ``made-up`` (a sentence of words put together) and ``altered`` (the run with its first number off
   by one, else a "not" after its first auxiliary verb: what an extractor gets wrong). Each names its chunk; a third of the true and invented ones are added again
   naming only their document, and a third naming nothing (the text index finds the chunk).
3. The fuzzy threshold: the bag-of-words score (:func:`kg_decoder.cite.grounding.fuzzy_span`) of every
   paraphrased and invented quote in its chunk, swept from 0.5 to 0.95.
4. The facts are added, precision and recall of ``unsupported`` (invented are the positives) and the
   share of true quotes grounded are printed by kind and by how the line names its place; the grounded
   facts of PDFs are traced (``--traces`` of them) and their boxes checked.
5. Cost: ``--facts`` lines naming their chunk added in bulk into a copy of the store, against the
   same quads written raw (``store.write_quads``) into another copy.

    .venv/bin/python bench/grounding.py [--facts 10000] [--traces 400] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
import kg_decoder  # noqa: E402
from kg_decoder.cite.grounding import GroundingText, fuzzy_span  # noqa: E402
from kg_decoder.cite.quotes import find_quote  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus"
EX = "http://example.org/bench/"
NUMBER_WORDS = "zero one two three four five six seven eight nine ten eleven twelve".split()
MADE_UP_WORDS = ("harbour committee approved budget dredging March council river bridge tender museum "
                 "volunteers festival drought reservoir orchard railway tunnel lighthouse ferry cathedral "
                 "bakery vineyard glacier").split()
SCANNED = {"loremipsum-flat.pdf"}  # a PDF without a text layer: its page text is OCR's
TRUE_KINDS = ("exact", "folded", "order", "dropped", "number")
INVENTED_KINDS = ("other", "made-up", "altered")
NEGATIONS = {"not", "no", "never", "none", "nor", "neither", "nothing", "without", "cannot"}


def decode_corpus(store) -> dict:
    documents = {}
    for path in sorted(CORPUS.iterdir()):
        if path.suffix.lower() not in (".pdf", ".docx") or path.name == "password.pdf":
            continue
        try:
            result = kg_decoder.decode(path, store=store)
        except kg_decoder.DecodeError as exc:
            print(f"  {path.name}: {exc}", file=sys.stderr)
            continue
        kg_decoder.chunk_document(result.document, store=store, chunk_size=256)
        chunks = kg_decoder.document_chunks(result.document, store=store)
        documents[result.document] = (path.name, path.suffix.lower().lstrip("."), chunks)
    return documents


def word_runs(text: str, rng: random.Random, count: int) -> list[str]:
    """Runs of 6 to 14 words as they are written in the text (their whitespace as it is), within a sentence."""
    runs = []
    for sentence in re.split(r"(?<=[.!?])\s+|\n\s*\n", text):
        if "<" in sentence:  # a table's markup
            continue
        words = list(re.finditer(r"\S+", sentence))
        if len(words) < 8:
            continue
        length = rng.randint(6, min(14, len(words)))
        first = rng.randint(0, len(words) - length)
        runs.append(sentence[words[first].start():words[first + length - 1].end()].strip(".,;:"))
    rng.shuffle(runs)
    return runs[:count]


def folded(run: str) -> str:
    out = run.replace("ﬁ", "fi").replace("ﬂ", "fl").replace("ﬀ", "ff").replace("ﬃ", "ffi")
    out = re.sub(r"(?<=[a-z])-\s*\n\s*(?=[a-z])", "", out)
    out = out.translate(str.maketrans({"’": "'", "‘": "'", "“": '"', "”": '"', "–": "-", "—": "-"}))
    out = " ".join(out.split())
    if out != " ".join(run.split()):
        return out
    words = out.split(" ")
    longest = max(range(len(words)), key=lambda k: len(words[k]))
    word = words[longest]
    if len(word) >= 6 and word.isalpha():
        words[longest] = word[:3] + "\u00ad" + word[3:]  # a soft hyphen an extractor copied
        return " ".join(words)
    return out.replace("'", "’", 1) if "'" in out else ""


def paraphrased(run: str, kind: str, rng: random.Random) -> str:
    words = run.split()
    if kind == "order":
        return " ".join(words[2:] + words[:2])
    if kind == "dropped":  # a word of no weight to the claim: not a negation, not a number
        middle = [k for k in range(1, len(words) - 1) if words[k].lower().strip(".,;:") not in NEGATIONS
                  and not any(c.isdigit() for c in words[k])]
        if not middle:
            return ""
        k = rng.choice(middle)
        return " ".join(words[:k] + words[k + 1:])
    if kind == "altered":  # what an extractor gets wrong: a figure off by one, or a claim denied
        for k, word in enumerate(words):
            bare = word.strip(".,;:()%")
            if re.fullmatch(r"\d+", bare):
                words[k] = word.replace(bare, str(int(bare) + 1))
                return " ".join(words)
        for k, word in enumerate(words[:-1]):
            if word.lower() in ("is", "are", "was", "were", "can", "will", "has", "have", "does", "do"):
                return " ".join(words[:k + 1] + ["not"] + words[k + 1:])
        return ""
    for k, word in enumerate(words):  # number
        bare = word.strip(".,;:()")
        if re.fullmatch(r"\d{1,3}(,\d{3})+", bare):
            words[k] = word.replace(bare, bare.replace(",", ""))
        elif re.fullmatch(r"\d{4,}", bare) and not 1900 <= int(bare) <= 2100:
            words[k] = word.replace(bare, f"{int(bare):,}")
        elif re.fullmatch(r"\d{1,2}", bare) and int(bare) < len(NUMBER_WORDS):
            words[k] = word.replace(bare, NUMBER_WORDS[int(bare)])
        elif re.fullmatch(r"\d+(\.\d+)?%", bare):
            words[k] = word.replace(bare, bare[:-1] + " percent")
        else:
            continue
        return " ".join(words)
    return ""


def made_up(rng: random.Random) -> str:
    words = rng.sample(MADE_UP_WORDS, 6)
    return (f"The {words[0]} {words[1]} said the {words[2]} of the {words[3]} rose by {rng.randint(2, 90)} "
            f"percent after the {words[4]} near the {words[5]} closed.")


def make_facts(documents: dict, rng: random.Random, per_chunk: int) -> list[dict]:
    facts = []
    all_runs = {document: [run for chunk in chunks for run in word_runs(chunk.text, rng, 3)]
                for document, (_, _, chunks) in documents.items()}
    number = 0
    for document, (name, fmt, chunks) in documents.items():
        # Another document's words, unless this one holds them too (the corpus has one paper twice).
        own = [GroundingText(chunk.text) for chunk in chunks]
        others = [run for other, runs in all_runs.items() if other != document for run in runs
                  if not any(find_quote(text.text, run, text.folded) for text in own)]
        for chunk in chunks:
            runs = word_runs(chunk.text, rng, per_chunk)
            with_numbers = [run for run in word_runs(chunk.text, rng, 10 * per_chunk) if paraphrased(run, "number", rng)]
            for k, run in enumerate(runs):
                quotes = {"exact": run, "folded": folded(run)}
                for kind in ("order", "dropped", "altered"):
                    quotes[kind] = paraphrased(run, kind, rng)
                quotes["number"] = paraphrased(with_numbers[k], "number", rng) if k < len(with_numbers) else ""
                quotes["other"] = rng.choice(others) if others else ""
                quotes["made-up"] = made_up(rng)
                for kind, quote in quotes.items():
                    if not quote or len(quote.split()) < 4:
                        continue
                    number += 1
                    facts.append({"s": f"{EX}s{number}", "p": EX + kind, "o": f"fact {number}", "quote": quote,
                                  "chunk": chunk.iri, "_document": document, "_kind": kind, "_format": fmt,
                                  "_file": name})
    return facts


def threshold_sweep(facts: list[dict], texts: dict) -> None:
    scores = defaultdict(list)
    for fact in facts:
        if fact["_kind"] in ("exact", "folded"):
            continue
        found = fuzzy_span(texts[fact["chunk"]], fact["quote"])
        scores["true" if fact["_kind"] in TRUE_KINDS else "invented"].append(found[2] if found else 0.0)
    print("\nfuzzy threshold (bag-of-words Dice score of paraphrased and invented quotes in their chunk):")
    print(f"  {'threshold':>9}  {'paraphrased grounded':>20}  {'invented rejected':>17}")
    for threshold in (0.5, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95):
        kept = sum(s >= threshold for s in scores["true"]) / max(1, len(scores["true"]))
        rejected = sum(s < threshold for s in scores["invented"]) / max(1, len(scores["invented"]))
        print(f"  {threshold:>9.2f}  {kept:>20.3f}  {rejected:>17.3f}")
    invented = sorted(scores["invented"], reverse=True)
    if not invented or not scores["true"]:
        return
    print(f"  invented: highest score {invented[0]:.3f}, 99th percentile {invented[len(invented) // 100]:.3f}; "
          f"paraphrased: lowest {min(scores['true']):.3f}, 1st percentile "
          f"{sorted(scores['true'])[len(scores['true']) // 100]:.3f}")


def report(facts: list[dict], outcomes: dict, title: str, other_is_true: bool = False) -> tuple:
    """``other_is_true``: lines that name nothing, for which another document's words are in the store."""
    true_kinds = (*TRUE_KINDS, "other") if other_is_true else TRUE_KINDS
    invented_kinds = ("made-up", "altered") if other_is_true else INVENTED_KINDS
    by_kind = defaultdict(Counter)
    for fact in facts:
        by_kind[fact["_kind"]][str(outcomes[fact["_line"]].grounding)] += 1
    print(f"\n{title}")
    print(f"  {'kind':<10} {'facts':>6}  " + "  ".join(f"{g:>11}" for g in kg_decoder.Grounding))
    for kind in (*TRUE_KINDS, *INVENTED_KINDS):
        counts = by_kind[kind]
        print(f"  {kind:<10} {sum(counts.values()):>6}  " + "  ".join(f"{counts[str(g)]:>11}"
                                                                      for g in kg_decoder.Grounding))
    true = [f for f in facts if f["_kind"] in true_kinds]
    invented = [f for f in facts if f["_kind"] in invented_kinds]
    said_unsupported = [f for f in facts if outcomes[f["_line"]].grounding == "unsupported"]
    tp = sum(f["_kind"] in invented_kinds for f in said_unsupported)
    precision = tp / max(1, len(said_unsupported))
    recall = tp / max(1, len(invented))
    grounded = sum(outcomes[f["_line"]].grounding != "unsupported" for f in true) / max(1, len(true))
    paraphrases = [f for f in true if f["_kind"] in ("order", "dropped", "number")]
    para = sum(outcomes[f["_line"]].grounding != "unsupported" for f in paraphrases) / max(1, len(paraphrases))
    print(f"  unsupported: precision {precision:.4f}, recall {recall:.4f} (invented -> unsupported; target >= 0.98)")
    print(f"  true quotes grounded {grounded:.4f} (target >= 0.97); paraphrased alone {para:.4f}")
    return precision, recall, grounded, para


def add(store, facts: list[dict], mode: str) -> dict:
    lines = []
    for k, fact in enumerate(facts, start=1):
        line = {key: value for key, value in fact.items() if not key.startswith("_")}
        line["o"] = f"{fact['o']} ({mode})"
        line.pop("chunk")
        if mode == "chunk":
            line["chunk"] = fact["chunk"]
        elif mode == "document":
            line["document"] = fact["_document"]
        fact["_line"] = k
        fact["_object"] = line["o"]
        lines.append(line)
    result = kg_decoder.add_fact_lines(lines, store=store)
    return {o.line: o for o in result.outcomes}


def boxes_on_the_words(store, facts: list[dict], outcomes: dict, count: int, rng: random.Random) -> None:
    grounded = [f for f in facts if f["_format"] == "pdf" and outcomes[f["_line"]].grounding != "unsupported"]
    sample = rng.sample(grounded, min(count, len(grounded)))
    on_words = Counter()
    scanned = Counter()
    started = time.perf_counter()
    for fact in sample:
        sources = kg_decoder.trace(fact=(fact["s"], fact["p"], fact["_object"]), store=store)
        ok = bool(sources) and all(s.boxes and all(b.source in ("characters", "ocr") and b.verification == "verified"
                                                   for b in s.boxes) for s in sources)
        if fact["_file"] in SCANNED:
            scanned[ok] += 1
            continue
        on_words[(fact["_kind"], ok)] += 1
        if not ok and on_words[(fact["_kind"], False)] <= 2:
            print(f"    not on the words: {fact['_file']} {fact['_kind']} {fact['quote'][:60]!r} "
                  f"{[(b.source, str(b.verification)) for s in sources for b in s.boxes]}")
    good = sum(n for (kind, ok), n in on_words.items() if ok)
    traced = sum(on_words.values())
    print(f"  grounded PDF facts whose boxes are on the words (a text layer's characters, or OCR words): "
          f"{good}/{traced} = {good / max(1, traced):.4f}"
          f" (target >= 0.99); {1000 * (time.perf_counter() - started) / max(1, len(sample)):.0f} ms a trace")
    print("    by kind: " + ", ".join(f"{kind} {on_words[(kind, True)]}/{on_words[(kind, True)] + on_words[(kind, False)]}"
                                      for kind in TRUE_KINDS))
    print(f"  scanned PDFs (no text layer, page text read by OCR; the trace gives the element's box): "
          f"{scanned[True]}/{sum(scanned.values())} on the words")


def cost(store_path: Path, facts: list[dict], count: int, work: Path) -> None:
    lines = []
    for k in range(count):
        fact = facts[k % len(facts)]
        lines.append({"s": fact["s"], "p": fact["p"], "o": f"cost {k}", "quote": fact["quote"], "chunk": fact["chunk"]})
    bulk, raw = work / "bulk", work / "raw"
    for folder in (bulk, raw):
        shutil.copytree(store_path, folder)
    written: list = []
    with kg_decoder.open_store(bulk) as store:
        plain_write = store.write_quads
        writing = [0.0]

        def keep(quads):
            written.append(list(quads))
            started = time.perf_counter()
            plain_write(quads)
            writing[0] += time.perf_counter() - started

        store.write_quads = keep
        started = time.perf_counter()
        result = kg_decoder.add_fact_lines(lines, store=store)
        elapsed = time.perf_counter() - started
    with kg_decoder.open_store(raw) as store:
        started = time.perf_counter()
        for quads in written:
            store.write_quads(quads)
        raw_time = time.perf_counter() - started
    quads = sum(len(q) for q in written)
    print(f"\ncost: {count} facts ({quads} quads, {result.batches} transactions) added in bulk in {elapsed:.2f} s = "
          f"{1000 * elapsed / count:.3f} ms a fact (target <= 2); of it the writes {writing[0]:.2f} s")
    print(f"  the same quads written raw: {raw_time:.2f} s; bulk / raw = {elapsed / raw_time:.1f}")
    print(f"  grounded: {dict(result.counts)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--facts", type=int, default=10_000, help="facts of the cost run")
    parser.add_argument("--traces", type=int, default=400, help="grounded PDF facts traced for their boxes")
    parser.add_argument("--per-chunk", type=int, default=8, help="runs of words taken from each chunk")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="bench-grounding-"))
    try:
        store_path = work / "store"
        started = time.perf_counter()
        with kg_decoder.open_store(store_path) as store:
            documents = decode_corpus(store)
        print(f"decoded and chunked {len(documents)} documents in {time.perf_counter() - started:.0f} s: " +
              ", ".join(f"{name} ({len(chunks)} chunks)" for name, _, chunks in documents.values()))
        facts = make_facts(documents, rng, args.per_chunk)
        print(f"{len(facts)} facts: " + ", ".join(f"{k} {n}" for k, n in Counter(f["_kind"] for f in facts).items()))
        texts = {chunk.iri: GroundingText(chunk.text) for _, _, chunks in documents.values() for chunk in chunks}
        threshold_sweep(facts, texts)
        for mode in ("chunk", "document", "nothing"):
            folder = work / f"verdicts-{mode}"
            shutil.copytree(store_path, folder)
            with kg_decoder.open_store(folder) as store:
                started = time.perf_counter()
                outcomes = add(store, facts, mode)
                elapsed = time.perf_counter() - started
                report(facts, outcomes, f"lines naming their {mode} ({1000 * elapsed / len(facts):.2f} ms a fact)"
                       + (": another document's words are true here, found in the store" if mode == "nothing" else ":"),
                       other_is_true=mode == "nothing")
                if mode == "chunk":
                    boxes_on_the_words(store, facts, outcomes, args.traces, rng)
            shutil.rmtree(folder)
        cost(store_path, facts, args.facts, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
