"""Benchmark: a quote found in every document through the text index, at 10^3, 10^4 and 10^5 texts
(targets: p50 at the largest size / p50 at the smallest <= 2; indexing <= 5 % of decode time).

1. Real documents (the corpus and some of ../shared/wild) are decoded into a base store with the
   defaults but sections by size (texts of at most 4 000 characters, as a large store would keep
   them), timing each decode and, within it, the index write after the commit (its share).
2. Stores of N texts are generated from the base store's decoded texts: each base document is
   replicated with every fourth word changed (same length, so every offset holds) under new IRIs,
   with its document, decode activity and texts (pages and sections: not their elements). The
   originals stay whole, so a quote traced to them has its elements and boxes.
3. 100 quotes of 3 to 12 words (half as texts of the store hold them, a quarter misquoted with a word
   of the same text swapped in, a quarter with an invented word: :func:`quotes_from`) are searched at each size (``kg_decoder.search``, a page of 10 with snippets);
   at the largest size, ``trace(quote=...)`` without a document is timed as well (report only).
4. The index's size per text and its rebuild rate (``reindex``) are printed for docs/scaling.md.

    .venv/bin/python bench/search.py [--sizes 1000 10000 100000] [--wild 12] [--queries 100]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from kg_decoder.graph.text_index import search_key  # noqa: E402
SHARED = REPO.parent / "shared"
SKIP = {"password.pdf", "empty.txt", "SOURCES.tsv", "README.md"}


def timed_decodes(paths: list[Path], store) -> tuple[float, float]:
    """Decode ``paths`` into ``store``: (seconds decoding in all, seconds of it writing the index)."""
    import kg_decoder
    from kg_decoder.graph import indexing

    spent = [0.0]
    original = indexing.StoreTextIndex.add_committed

    def add_committed(self, document):
        started = time.perf_counter()
        try:
            return original(self, document)
        finally:
            spent[0] += time.perf_counter() - started

    indexing.StoreTextIndex.add_committed = add_committed
    started = time.perf_counter()
    try:
        for path in paths:
            try:
                kg_decoder.decode(path, store=store, section_strategy="size")  # texts of at most 4 000 characters
            except kg_decoder.KgDecoderError as exc:
                print(f"  {path.name}: {exc.code}", file=sys.stderr)
    finally:
        indexing.StoreTextIndex.add_committed = original
    return time.perf_counter() - started, spent[0]


def changed(text: str, replica: int) -> str:
    """``text`` with every fourth word (from an offset the replica picks) changed to other letters of
    the same length, so every offset in it holds: its first four letters shifted by the replica's number
    written in base 26, so no two replicas of a text are the same."""
    words = list(re.finditer(r"[A-Za-z]{3,}", text))
    out = list(text)
    for number, word in enumerate(words):
        if (number + replica) % 4:
            continue
        code = replica
        for position in range(word.start(), min(word.end(), word.start() + 4)):
            base = "a" if out[position].islower() else "A"
            out[position] = chr(ord(base) + (ord(out[position]) - ord(base) + code % 26) % 26)
            code //= 26
    return "".join(out)


def replicate(base, target, texts_wanted: int) -> None:
    """Fill ``target`` with the base store's documents and as many changed copies as make
    ``texts_wanted`` texts in all (thin copies: document, decode activity, texts). The two share
    the base store's library."""
    from pyoxigraph import Literal, NamedNode, Quad

    from kg_decoder.graph.vocabulary import SOURCE_GRAPH

    target.text_index.opened()  # made while the graph is empty: the rebuild below is the only indexing
    with open(target.work_folder() / "base.nq", "wb") as stream:
        base.dump_nquads(stream)
    target.load_nquads((target.work_folder() / "base.nq").read_bytes())
    by_subject: dict[str, list] = {}
    derived = set()  # what derives from a document (its elements, pictures, cells...), left out of thin copies
    for quad in base.source_quads():
        subject = quad.subject.value if hasattr(quad.subject, "value") else str(quad.subject)
        by_subject.setdefault(subject, []).append(quad)
        if quad.predicate.value.endswith("wasDerivedFrom"):
            derived.add(subject)
    documents = []
    for summary in base.document_summaries():
        run = base.decode_run(summary.document)
        segments = base.text_segments(summary.document)
        if run is None or not segments:
            continue
        documents.append((summary.document, run.activity, segments))
    have = sum(len(segments) for _, _, segments in documents)
    replica = 0
    while have < texts_wanted:
        replica += 1
        quads, blobs = [], {}
        for document, activity, segments in documents:
            if have >= texts_wanted:
                break
            names = {iri: f"{iri}-r{replica}" for iri in [document, activity] + [s.segment for s in segments]}
            hashes = {}
            for segment in segments:
                text = changed(base.text(segment.sha256, segment.segment), replica)
                key = hashlib.sha256(text.encode("utf-8")).hexdigest()
                blobs[key] = text.encode("utf-8")
                hashes[segment.sha256] = key
            for subject in names:
                for quad in by_subject.get(subject, []):
                    obj = quad.object
                    if isinstance(obj, NamedNode) and obj.value in names:
                        obj = NamedNode(names[obj.value])
                    elif isinstance(obj, NamedNode) and obj.value in derived:
                        continue  # an element, a picture...: not in a thin copy
                    elif isinstance(obj, Literal) and quad.predicate.value.endswith("sha256") and obj.value in hashes:
                        obj = Literal(hashes[obj.value])
                    quads.append(Quad(NamedNode(names[subject]), quad.predicate, obj, SOURCE_GRAPH))
            have += len(segments)
        target.library.put_new(blobs)
        target.write_quads(quads)


KINDS = ("present", "misquoted", "invented")


def quotes(store, count: int, seed: int = 7) -> list[tuple[str, str]]:
    """``count`` quotes of 3 to 12 words from the store's texts: (quote, kind); see :func:`quotes_from`."""
    return quotes_from(store.text_index.opened(), count, seed)


def quotes_from(index, count: int, seed: int = 7) -> list[tuple[str, str]]:
    """Half ``present`` (a run of 3 to 12 words as a text holds it, punctuation and all), a quarter
    ``misquoted`` (the words alone, one swapped for another word of the same text: common letters
    that no text holds in that order, the costly case for a trigram index), a quarter ``invented``
    (one word replaced by letters no text holds, the cheap case)."""
    rng = random.Random(seed)
    with index._lock:
        db = index._db
        total = db.execute("SELECT max(id) FROM segments").fetchone()[0]
        found = []
        while len(found) < count:
            row = db.execute("SELECT text FROM segments WHERE id = ?", (rng.randint(1, total),)).fetchone()
            words = list(re.finditer(r"[A-Za-z][A-Za-z'-]+", row[0])) if row else []
            length = rng.randint(3, 12)
            if len(words) < length + 1:
                continue
            start = rng.randrange(len(words) - length)
            kind = KINDS[0] if len(found) % 2 == 0 else KINDS[1 + len(found) // 2 % 2]
            if kind == "present":
                found.append((row[0][words[start].start():words[start + length - 1].end()], kind))
                continue
            picked = [word.group() for word in words[start:start + length]]
            replaced = rng.randrange(length)
            picked[replaced] = rng.choice(words).group() if kind == "misquoted" else \
                "zqxv" + "".join(rng.choice("jkwy") for _ in range(4))
            quote = " ".join(picked)
            if search_key(quote) in search_key(row[0]):
                continue  # the swap left it as the text has it
            found.append((quote, kind))
    return found


def medians(seconds: list[float], wanted: list[tuple[str, str]]) -> str:
    """p50 of each kind of quote, in ms."""
    return ", ".join(f"{kind} {1000 * statistics.median(t for t, (_, k) in zip(seconds, wanted) if k == kind):.2f}"
                     for kind in KINDS)


def timings(call, wanted) -> list[float]:
    seconds = []
    for quote, _ in wanted:
        started = time.perf_counter()
        try:
            call(quote)
        except Exception as exc:  # a bound hit (too common, too short) is a result too: timed, counted
            if getattr(exc, "code", None) not in ("quote-too-common", "quote-too-short"):
                raise
        seconds.append(time.perf_counter() - started)
    return seconds


def index_only(base, sizes: list[int], count: int, work: Path) -> None:
    """The index alone (no graph) at each size, from the base store's texts replicated as above: the
    lookup and the exact match, which is what grows with the store (a page's tracing does not). An
    index already in ``work`` with the texts wanted is reused (``--indexes``)."""
    from kg_decoder.cite.places import ranked_places
    from kg_decoder.graph.text_index import HeldDecode, IndexedText, TextIndex

    texts = [(s.document, s.segment, s.kind, s.index, s.page_number, base.text(s.sha256, s.segment))
             for s in base.text_segments()]
    p50s: dict[str, dict[int, float]] = {}
    for size in sizes:
        index = TextIndex(work / f"index-{size}.sqlite3")
        started, batch, made, replica = time.perf_counter(), [], index.segment_count(), 0
        if made and made != size:
            index.clear()
            made = 0
        reused = bool(made)
        while made < size:
            by_document: dict[str, list] = {}
            for document, segment, kind, position, page, text in texts:
                if made >= size:
                    break
                name = f"{document}-r{replica}"
                by_document.setdefault(name, []).append(IndexedText(name, f"{segment}-r{replica}", kind, position,
                                                                    changed(text, replica) if replica else text, page))
                made += 1
            batch += [(HeldDecode(name, "urn:activity:x", "2026-12-01T00:00:00Z"), items)
                      for name, items in by_document.items()]
            if len(batch) >= 200:
                index.put_many(batch)
                batch = []
            replica += 1
        if not reused:
            index.put_many(batch)
            index.optimize()
        built = time.perf_counter() - started
        wanted = quotes_from(index, count)
        pager = SimpleNamespace(search_texts=index.candidates)  # ranked_places reads the index alone
        rounds = {"before": lambda q: every_place(index, q),
                  "after": lambda q: ranked_places(pager, q, wanted=10)}
        for name, call in rounds.items():
            seconds = timings(call, wanted)
            p50s.setdefault(name, {})[size] = statistics.median(seconds)
            print(f"index only, {index.segment_count():>7} texts, {name:>6}: a first page of 10, p50 "
                  f"{1000 * p50s[name][size]:.2f} ms ({medians(seconds, wanted)}), "
                  f"p90 {1000 * statistics.quantiles(seconds, n=10)[-1]:.2f} ms", flush=True)
        print(f"index only, {index.segment_count():>7} texts: {index.size_bytes() / size:,.0f} B/text; built in "
              f"{built:.0f} s ({size / max(built, 1e-9):,.0f} texts/s{', reused' if reused else ''})", flush=True)
        index.close()
    for name, by_size in p50s.items():
        print(f"index only, {name}: p50 at {sizes[-1]} / p50 at {sizes[0]}: {by_size[sizes[-1]] / by_size[sizes[0]]:.2f} "
              f"(target <= 2)")


def every_place(index, quote: str) -> list:
    """The search as it was before windows (for the comparison): every text the index names (at most
    20 000) read and matched, every place ranked as written first, then a page cut."""
    from kg_decoder.cite.quotes import as_written, find_quote
    from kg_decoder.graph.text_index import search_key

    phrase = '"' + search_key(quote).replace('"', '""') + '"'
    ids = [row[0] for row in index._db.execute("SELECT rowid FROM segment_keys WHERE segment_keys MATCH ? LIMIT 20001",
                                               (phrase,))]
    places = []
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        for (text,) in index._db.execute(f"SELECT text FROM segments WHERE id IN ({','.join('?' * len(part))})", part):
            places += [(not as_written(text[a:b], quote), text, a, b) for a, b in find_quote(text, quote)]
    places.sort(key=lambda place: place[0])
    return places[:10]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000])
    parser.add_argument("--wild", type=int, default=12, help="how many files of ../shared/wild to add to the corpus")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--base", type=Path, help="keep the decoded base store here (reused when it exists)")
    parser.add_argument("--index-only", action="store_true", help="time the index alone (no graph) at each size")
    parser.add_argument("--indexes", type=Path, help="with --index-only: keep the indexes built here (reused)")
    args = parser.parse_args()
    import kg_decoder

    work = Path(tempfile.mkdtemp(prefix="bench-search-"))
    try:
        paths = sorted(p for p in (SHARED / "corpus").iterdir() if p.is_file() and p.name not in SKIP)
        wild = sorted(p for p in (SHARED / "wild").iterdir() if p.is_file() and p.name not in SKIP)
        paths += wild[::max(1, len(wild) // args.wild)][:args.wild]
        base_folder = args.base or work / "base"
        reused = base_folder.exists()
        with kg_decoder.open_store(base_folder) as base:
            if not reused:
                decoding, indexing_time = timed_decodes(paths, base)
                print(f"decoded {len(paths)} files in {decoding:.1f} s; writing the index took {indexing_time:.2f} s "
                      f"= {100 * indexing_time / decoding:.2f} % of it (target <= 5 %)")
            print(f"base store: {len(base.document_summaries())} documents, {base.text_index.opened().segment_count()} texts")
            if args.index_only:
                index_only(base, args.sizes, args.queries, args.indexes or work)
                return 0
            p50s = {}
            for size in args.sizes:
                folder = work / f"n{size}"
                with kg_decoder.open_store(folder, library=str(base_folder / "library")) as store:
                    started = time.perf_counter()
                    replicate(base, store, size)
                    built = time.perf_counter() - started
                    started = time.perf_counter()
                    documents = store.text_index.rebuild()
                    rebuild = time.perf_counter() - started
                    index = store.text_index.opened()
                    started = time.perf_counter()
                    store.text_index.catch_up()  # nothing to catch up: what the scans of decode activities cost
                    catch_up = time.perf_counter() - started
                    texts, size_bytes = index.segment_count(), index.size_bytes()
                    text_bytes = sum(len(t.encode()) for (t,) in index._db.execute("SELECT text FROM segments"))
                    wanted = quotes(store, args.queries)
                    search = timings(lambda q: kg_decoder.search(q, store=store, limit=10), wanted)
                    p50s[size] = statistics.median(search)
                    line = (f"{texts:>7} texts, {documents:>6} documents: search p50 {1000 * p50s[size]:6.1f} ms "
                            f"({medians(search, wanted)}), "
                            f"p90 {1000 * statistics.quantiles(search, n=10)[-1]:7.1f} ms; "
                            f"index {size_bytes / texts:,.0f} B/text (texts {text_bytes / texts:,.0f} B/text); "
                            f"reindex {rebuild:.1f} s ({texts / rebuild:,.0f} texts/s, {documents / rebuild:,.0f} "
                            f"documents/s); a catch-up with nothing to do {1000 * catch_up:.0f} ms; store generated in "
                            f"{built:.0f} s")
                    if size == args.sizes[-1]:
                        traced = timings(lambda q: kg_decoder.trace(quote=q, store=store, limit=10), wanted)
                        line += f"\n         trace(quote) without a document: p50 {1000 * statistics.median(traced):.1f} ms"
                    print(line, flush=True)
            first, last = args.sizes[0], args.sizes[-1]
            print(f"p50 at {last} / p50 at {first}: {p50s[last] / p50s[first]:.2f} (target <= 2)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
