"""A seeded fuzzer for the decoder: every seed document (generated fixtures, the shared corpus)
mutated — truncated, bits flipped, bytes spliced, ZIP members corrupted or swapped, a wrong MIME
type declared, sizes declared huge, nesting made deep — and decoded into one store.

Each case must end in a typed DecodeError with the store exactly as it was, or in a valid
document (its declared page, section and element counts match what is stored); never in an
untyped exception, a hang past the time limit, or a partial write.

    .venv/bin/python bench/fuzz.py --cases 3000 [--seed 1]

prints cases per second and the outcomes by kind; exit 1 when a case broke a rule. The test
suite runs a fixed sample (tests/e2e/test_fuzz.py).
"""

from __future__ import annotations

import argparse
import io
import json
import random
import re
import struct
import sys
import time
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO.parent / "shared" / "corpus"
MIME_TYPES = ["application/pdf", "text/html", "application/json", "text/csv", "application/epub+zip",
              "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "message/rfc822",
              "image/png", "text/markdown", "application/vnd.ms-excel", "application/x-ndjson"]


@dataclass
class Case:
    number: int
    seed_name: str
    mutation: str
    data: bytes
    file_name: Optional[str]
    options: dict = field(default_factory=dict)


@dataclass
class Outcome:
    case: Case
    kind: str  # "decoded", an error code, or "BROKEN: ..." when a rule was broken
    seconds: float


# ---------------------------------------------------------------- mutations


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[:rng.randint(0, max(0, len(data) - 1))]


def flip_bits(data: bytes, rng: random.Random) -> bytes:
    raw = bytearray(data)
    for _ in range(rng.randint(1, 32)):
        if raw:
            raw[rng.randrange(len(raw))] ^= 1 << rng.randrange(8)
    return bytes(raw)


def splice(data: bytes, rng: random.Random) -> bytes:
    if not data:
        return bytes(rng.randrange(256) for _ in range(64))
    start = rng.randrange(len(data))
    junk = rng.choice([bytes(rng.randrange(256) for _ in range(rng.randint(1, 512))), data[:rng.randint(1, 256)],
                       b"\x00" * rng.randint(1, 4096), b"<" * 500, b"{" * 500])
    return data[:start] + junk + data[start + rng.randint(0, 256):]


def _rezip(data: bytes, change: Callable[[list[tuple[zipfile.ZipInfo, bytes]]], None]) -> bytes:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    change(members)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, payload in members:
            archive.writestr(info.filename, payload)
    return out.getvalue()


def corrupt_member(data: bytes, rng: random.Random) -> bytes:
    def change(members):
        index = rng.randrange(len(members))
        info, payload = members[index]
        members[index] = (info, rng.choice([payload[:len(payload) // 2], flip_bits(payload, rng), b"",
                                            b"<?xml version='1.0'?><" + b"a>" * 5000]))
    return _rezip(data, change)


def swap_members(data: bytes, rng: random.Random) -> bytes:
    def change(members):
        if len(members) > 1:
            a, b = rng.sample(range(len(members)), 2)
            members[a], members[b] = (members[a][0], members[b][1]), (members[b][0], members[a][1])
    return _rezip(data, change)


def huge_sizes(data: bytes, rng: random.Random) -> bytes:
    """ZIP central directory entries that declare gigabytes; elsewhere a huge length field."""
    raw = bytearray(data)
    position = raw.find(b"PK\x01\x02")
    found = 0
    while position >= 0:
        struct.pack_into("<I", raw, position + 24, 0xFFFFFFF0)  # uncompressed size
        found += 1
        position = raw.find(b"PK\x01\x02", position + 4)
    if not found:  # a PDF stream, or any other length field, that claims gigabytes
        lengthened = re.sub(rb"/Length \d+", b"/Length 99999999999", data, count=3)
        return lengthened if lengthened != data else data + b"\nContent-Length: 99999999999\n"
    return bytes(raw)


DEPTHS = [1000, 20000, 200000]


def deep_nesting(data: bytes, rng: random.Random, depths: list[int] = DEPTHS) -> bytes:
    depth = rng.choice(depths)
    return rng.choice([b"[" * depth + b"]" * depth, b"<a>" * depth + b"</a>" * depth,
                       b"{\"a\":" * depth + b"1" + b"}" * depth,
                       "".join("  " * min(i, 400) + "- item\n" for i in range(depth // 50)).encode(),
                       b"<html><body>" + b"<div>" * depth + b"text" + b"</div>" * depth + b"</body></html>"])


MUTATIONS = {"truncate": truncate, "flip bits": flip_bits, "splice": splice, "corrupt member": corrupt_member,
             "swap members": swap_members, "huge sizes": huge_sizes, "deep nesting": deep_nesting,
             "wrong mime": lambda data, rng: data}


# Seeds whose every decode takes seconds (LibreOffice conversions, OCR, many PDF pages): left out of
# the quick sample the test suite runs, kept in the benchmark's.
SLOW_SEEDS = ("generated.doc", "generated.ppt", "scanned.pdf", "words.png", "words.jpg", "words.tiff",
              "loremipsum-flat.pdf", "layout-parser-paper-with-empty-pages.pdf", "layout-parser-paper-fast.pdf",
              "tests-example.xls", "fake.odt", "fake-doc.rtf", "generated.odt", "generated.rtf", "generated.epub",
              "winter-sports.epub", "embedded-images-tables.pdf")


def seeds(generated_folder: Optional[Path] = None, quick: bool = False) -> dict[str, bytes]:
    """The documents mutated: the corpus, and the generated fixtures when a folder of them is given;
    ``quick`` leaves out the seeds that take seconds to decode."""
    paths = [path for path in sorted(CORPUS.iterdir()) if path.is_file()]
    if generated_folder is not None:
        paths += [path for path in sorted(generated_folder.iterdir()) if path.is_file()]
    return {path.name: path.read_bytes() for path in paths if not (quick and path.name in SLOW_SEEDS)}


def cases(seed_documents: dict[str, bytes], count: int, seed: int, max_depth: Optional[int] = None) -> list[Case]:
    rng = random.Random(seed)
    names = sorted(seed_documents)
    made = []
    for number in range(count):
        name = rng.choice(names)
        data = seed_documents[name]
        mutation = rng.choice(list(MUTATIONS))
        if mutation in ("corrupt member", "swap members") and not data.startswith(b"PK"):
            mutation = "flip bits"
        try:
            if mutation == "deep nesting" and max_depth is not None:
                mutated = deep_nesting(data, rng, [d for d in DEPTHS if d <= max_depth] or [max_depth])
            else:
                mutated = MUTATIONS[mutation](data, rng)
        except (zipfile.BadZipFile, ValueError, IndexError):
            mutation, mutated = "truncate", truncate(data, rng)
        options = {"mime_type": rng.choice(MIME_TYPES)} if mutation == "wrong mime" else {}
        file_name = rng.choice([name, None, "x" + name[-5:]])
        made.append(Case(number, name, mutation, mutated, file_name, options))
    return made


# ---------------------------------------------------------------- running


def snapshot(store) -> tuple[int, frozenset]:
    return len(store), frozenset(store.library.keys())


def check_whole(store, document: str) -> Optional[str]:
    """A rule broken by a decoded document (its parts do not match its declared counts), else None."""
    [summary] = store.document_summaries(document)
    segments = store.document_segments(document)
    pages = sum(1 for s in segments if s.kind == "page")
    sections = sum(1 for s in segments if s.kind == "section")
    elements = sum(1 for e in store.document_elements(document) if e.category != "Image")
    if (summary.pages or 0) != pages or summary.sections != sections or summary.elements != elements:
        return f"partial document: declares {summary.pages}/{summary.sections}/{summary.elements}, holds " \
               f"{pages}/{sections}/{elements}"
    return None


def run_case(case: Case, store, timeout: float) -> Outcome:
    import kg_decoder

    before = snapshot(store)
    started = time.monotonic()
    try:
        result = kg_decoder.decode(case.data, store=store, file_name=case.file_name, timeout_seconds=timeout,
                                   embedded_depth=1, **case.options)
    except kg_decoder.DecodeError as error:
        seconds = time.monotonic() - started
        if snapshot(store) != before:
            return Outcome(case, f"BROKEN: {error.code} left a partial write", seconds)
        if seconds > timeout + 30:
            return Outcome(case, f"BROKEN: {error.code} after {seconds:.0f} s, past the limit", seconds)
        return Outcome(case, error.code, seconds)
    except Exception as error:  # the rule under test: nothing but a typed error may escape
        return Outcome(case, f"BROKEN: untyped {type(error).__name__}: {str(error)[:200]}",
                       time.monotonic() - started)
    seconds = time.monotonic() - started
    if seconds > timeout + 30:
        return Outcome(case, f"BROKEN: decoded after {seconds:.0f} s, past the limit", seconds)
    for document in result.documents():
        problem = check_whole(store, document)
        if problem:
            return Outcome(case, f"BROKEN: {problem}", seconds)
    return Outcome(case, "decoded", seconds)


def fuzz(case_list: list[Case], timeout: float = 20.0, log: Optional[Callable[[Outcome], None]] = None) -> list[Outcome]:
    import kg_decoder

    outcomes = []
    with kg_decoder.open_store(None) as store:
        kg_decoder.decode(b"A document that must survive every case.", store=store, file_name="baseline.txt")
        for case in case_list:
            outcome = run_case(case, store, timeout)
            outcomes.append(outcome)
            if log is not None:
                log(outcome)
        integrity = store.table("audit-document-integrity").rows
        if integrity:
            outcomes.append(Outcome(case_list[-1], f"BROKEN: integrity audit {integrity[:2]}", 0.0))
    return outcomes


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="the decode time limit of each case")
    parser.add_argument("--generated", help="a folder of generated fixtures to mutate too")
    parser.add_argument("--quick", action="store_true", help="leave out the seeds that take seconds to decode")
    args = parser.parse_args()
    case_list = cases(seeds(Path(args.generated) if args.generated else None, args.quick), args.cases, args.seed)
    started = time.monotonic()

    def show(outcome: Outcome) -> None:
        if outcome.kind.startswith("BROKEN"):
            print(f"case {outcome.case.number} ({outcome.case.mutation} of {outcome.case.seed_name}): {outcome.kind}",
                  flush=True)

    outcomes = fuzz(case_list, args.timeout, show)
    elapsed = time.monotonic() - started
    kinds = Counter(o.kind if not o.kind.startswith("BROKEN") else "BROKEN" for o in outcomes)
    print(json.dumps({"cases": len(case_list), "seconds": round(elapsed, 1),
                      "cases_per_second": round(len(case_list) / elapsed, 2), "outcomes": dict(kinds.most_common()),
                      "slowest": round(max(o.seconds for o in outcomes), 1)}, indent=2))
    return 1 if kinds.get("BROKEN") else 0


if __name__ == "__main__":
    sys.exit(main())
