"""A seeded fuzzer for the decoder: every seed document (generated fixtures, the shared corpus)
mutated — truncated, bits flipped, bytes spliced, ZIP members corrupted or swapped, a wrong MIME
type declared, sizes declared huge, nesting made deep — and decoded into one store.

Each case must end in a typed DecodeError with the store exactly as it was, or in a valid
document (its declared page, section and element counts match what is stored); never in an
untyped exception, a hang past the time limit, or a partial write.

    .venv/bin/python bench/fuzz.py --cases 3000 [--seed 1]

prints cases per second and the outcomes by kind; exit 1 when a case broke a rule. The test
suite runs a fixed sample (tests/e2e/test_fuzz.py).

With ``--sparql SECONDS`` it fuzzes a live server's SPARQL endpoint instead (``--server URL``, or a
``kg-decoder serve`` it starts on a small store): queries and updates from a random grammar with
long operator chains, deep nesting, big literals, property-path combinations, glued keywords,
SERVICE and LOAD, truncated and spliced; sent one after another for that long. The server must
never die and never answer 5xx but the documented 503s of its limits: a property path of nested
closures can take Oxigraph minutes and gigabytes on a store of 60 quads, and only the worker's
limits stop it (tests/e2e/test_fuzz.py sends the seed's first 300 requests).
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


# ---------------------------------------------------------------- SPARQL against a live server

EX = "http://example.org/fuzz/"
LIMIT_CODES = {"busy", "query-timeout", "memory-limit", "cpu-limit", "time-limit"}  # the documented 503s


class SparqlGrammar:
    """Random queries and updates: mostly well formed, often far too long, deep or odd."""

    FUNCTIONS = ["STR", "LANG", "UCASE", "STRLEN", "ABS", "BOUND", "isIRI", "DATATYPE", "MD5", "CONCAT", "COALESCE",
                 "REGEX", "SUBSTR", "REPLACE", "IF", "STRSTARTS", "CONTAINS", "YEAR", "NOW", "RAND", "TRIPLE",
                 "SUBJECT", "isTRIPLE", "sameTerm", "LANGMATCHES"]
    OPERATORS = ["+", "-", "*", "/", "||", "&&", "=", "!=", "<", ">", "<=", ">="]
    GLUE = ["", " ", "\n", "#x\n", ".", "}", "{", ")", "(", "'x'", "1", "true", "<", ">", "SERVICE", "LOAD",
            "\\u0053ERVICE", "SILENT", "GRAPH", "<<(", ")>>", "~", "[]", "^^", "@en", ";", ",", "|", "^", "!", "?"]

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def length(self) -> int:
        """Mostly short; sometimes at the guard's limits and well past them."""
        rng = self.rng
        return rng.choice([1, 2, 3, 5, 8]) if rng.random() < 0.95 else rng.choice([20, 100, 400, 999, 1001, 3000, 10000])

    def term(self, big: bool = False) -> str:
        """A variable, IRI, number, literal, blank node or triple term; a ``big`` literal now and then."""
        rng = self.rng
        kind = rng.randrange(11)
        if kind == 0:
            return f"'{self.literal(big)}'"
        if kind == 1:
            return f'"{self.literal(big)}"@en'
        return [f"?v{rng.randrange(6)}", f"<{EX}{rng.randrange(9)}>", str(rng.randint(-9, 99)), "true",
                f"'{rng.randrange(9)}'^^<{EX}type>", "[]", f"_:b{rng.randrange(3)}", f"<<( ?v0 <{EX}p> ?v1 )>>",
                f"<{EX}{rng.randrange(9)}>"][kind - 2]

    def constant(self) -> str:
        """A term VALUES takes: an IRI, a literal, a number."""
        rng = self.rng
        return rng.choice([f"<{EX}{rng.randrange(9)}>", str(rng.randint(-9, 99)), "true", f"'{self.literal()}'",
                           "UNDEF"])

    def literal(self, big: bool = False) -> str:
        rng = self.rng
        size = rng.choice([1, 5, 20, 1000, 30_000]) if big else rng.choice([1, 3])
        return rng.choice(["x", "é", "\\n", "ﬁ", "\\'", "\\u0041", "SERVICE <http://127.0.0.1:9/>"]) * size

    def expression(self, depth: int = 0) -> str:
        rng = self.rng
        kind = rng.random()
        if depth > 4 or kind < 0.3:
            return self.term(big=rng.random() < 0.05)
        if kind < 0.55:
            operator = rng.choice(self.OPERATORS)
            return operator.join(self.term() for _ in range(self.length() + 1))
        if kind < 0.7:
            return rng.choice(["!", "-", "+"]) * rng.choice([1, 1, 2, 3, 150, 250]) + self.expression(depth + 1)
        if kind < 0.85:
            arguments = ", ".join(self.expression(depth + 1) for _ in range(rng.randint(0, 3)))
            return f"{rng.choice(self.FUNCTIONS)}({arguments})"
        if kind < 0.93:
            return f"{self.term()} IN ({', '.join(self.term() for _ in range(self.length()))})"
        return f"EXISTS {{ {self.group(depth + 1)} }}"

    def path(self, depth: int = 0) -> str:
        rng = self.rng
        if depth > 3 or rng.random() < 0.4:
            step = rng.choice([f"<{EX}p>", f"^<{EX}p>", "a", f"!(<{EX}p>|^<{EX}q>)", f"<{EX}q>"])
            return step + rng.choice(["", "", "*", "+", "?"])
        joiner = rng.choice(["/", "|"])
        steps = [self.path(depth + 1) for _ in range(rng.choice([2, 3]))]
        steps += [f"<{EX}p>"] * (rng.choice([200, 1200]) if rng.random() < 0.1 else 0)
        return "(" + joiner.join(steps) + ")" + rng.choice(["", "*", "+", "?"])

    def group(self, depth: int = 0) -> str:
        rng = self.rng
        parts = []
        for _ in range(rng.randint(1, 4) if depth < 4 else 1):
            kind = rng.random()
            if kind < 0.35 or depth >= 4:
                parts.append(f"?v{rng.randrange(6)} {self.path(depth) if rng.random() < 0.3 else '?p' + str(rng.randrange(3))}"
                             f" {self.term()} .")
            elif kind < 0.45:
                parts.append(f"OPTIONAL {{ {self.group(depth + 1)} }}")
            elif kind < 0.55:  # a few nested alternatives, or a long flat run of simple ones
                alternatives = ["{ " + self.group(depth + 1) + " }" for _ in range(rng.choice([2, 3]))]
                alternatives += ["{ ?v0 ?p0 ?v1 }"] * (rng.choice([600, 5000]) if rng.random() < 0.1 else 0)
                parts.append(" UNION ".join(alternatives))
            elif kind < 0.62:
                parts.append(f"MINUS {{ {self.group(depth + 1)} }}")
            elif kind < 0.72:
                parts.append(f"FILTER({self.expression(depth + 1)})")
            elif kind < 0.8:
                parts.append(f"BIND({self.expression(depth + 1)} AS ?b{rng.randrange(1000)})")
            elif kind < 0.86:
                parts.append(f"VALUES ?v{rng.randrange(6)} {{ {' '.join(self.constant() for _ in range(self.length()))} }}")
            elif kind < 0.92:
                parts.append(f"GRAPH ?g {{ {self.group(depth + 1)} }}")
            else:
                parts.append(f"{{ SELECT * WHERE {{ {self.group(depth + 1)} }} LIMIT {rng.randrange(10)} }}")
        return " ".join(parts)

    def query(self) -> str:
        rng = self.rng
        where = self.group()
        form = rng.choice([f"SELECT * WHERE {{ {where} }} LIMIT 20", f"ASK {{ {where} }}",
                           f"CONSTRUCT {{ ?v0 <{EX}p> ?v1 }} WHERE {{ {where} }} LIMIT 20",
                           f"DESCRIBE ?v0 WHERE {{ {where} }} LIMIT 5",
                           f"SELECT (COUNT(*) AS ?n) (SAMPLE(?v0) AS ?s) WHERE {{ {where} }} GROUP BY ?v1",
                           f"SELECT ?v0 WHERE {{ {where} }} ORDER BY DESC(?v0) LIMIT 3"])
        return self.mangle(f"PREFIX ex: <{EX}> " + form)

    def update(self) -> str:
        """An update that adds little (the store must not grow with the run, or every query slows)."""
        rng = self.rng
        where = self.group()
        form = rng.choice([f"INSERT DATA {{ <{EX}s> <{EX}p> '{self.literal(big=True)}' }}",
                           f"DELETE {{ ?v0 ?p0 ?v1 }} WHERE {{ {where} }}",
                           f"INSERT {{ GRAPH <{EX}g> {{ ?v0 <{EX}p> ?v1 }} }} WHERE {{ SELECT * {{ {where} }} LIMIT 3 }}",
                           f"DELETE WHERE {{ ?v0 <{EX}none> ?v1 }}", f"LOAD <http://127.0.0.1:9/{rng.randrange(9)}>",
                           f"CLEAR GRAPH <{EX}g>", f"ADD <{EX}g> TO <{EX}h>", f"CLEAR GRAPH <{EX}h>"])
        return self.mangle(form)

    def mangle(self, text: str) -> str:
        """Often left alone; else glued, cut, spliced or nested deep."""
        rng = self.rng
        kind = rng.random()
        if kind < 0.7:
            return text
        if kind < 0.8:
            position = rng.randrange(len(text) + 1)
            return text[:position] + "".join(rng.choice(self.GLUE) for _ in range(rng.randint(1, 4))) + text[position:]
        if kind < 0.87:
            return text[:rng.randrange(len(text) + 1)]
        if kind < 0.95:
            depth = rng.choice([50, 199, 201, 1000, 5000])
            return text.replace("WHERE {", "WHERE {" + "{" * depth, 1) + "}" * depth
        return text + " ;" + text


def fuzz_sparql(base: str, seconds: float, seed: int = 1, token: Optional[str] = None,
                log: Optional[Callable[[str], None]] = None, count: Optional[int] = None) -> Counter:
    """Send the grammar's queries (and, with ``token``, updates) to ``base``'s ``/sparql`` one after
    another for ``seconds`` (or, with ``count``, the seed's first ``count`` requests, however long they
    take: the same sample every run); the answers counted by status and error code. A broken rule (a
    5xx other than a limit's 503, a body that is no JSON error, the server gone) counts as BROKEN."""
    import requests

    rng = random.Random(seed)
    grammar = SparqlGrammar(rng)
    counts: Counter = Counter()
    deadline = time.monotonic() + seconds
    session = requests.Session()
    while (sum(counts.values()) < count) if count is not None else (time.monotonic() < deadline):
        update = token is not None and rng.random() < 0.15
        text = grammar.update() if update else grammar.query()
        headers = {"Accept": rng.choice(["", "text/csv", "application/sparql-results+json", "text/turtle", "*/*"])}
        if update:
            headers.update({"Authorization": f"Bearer {token}", "Content-Type": "application/sparql-update"})
        try:
            if not update and len(text) < 4000 and rng.random() < 0.5:
                response = session.get(base + "/sparql", params={"query": text, "union": rng.choice(["", "true"])},
                                       headers=headers, timeout=300)
            else:
                headers.setdefault("Content-Type", "application/sparql-query")
                response = session.post(base + "/sparql", data=text.encode("utf-8", "surrogatepass"), headers=headers,
                                        timeout=300)
        except requests.RequestException as error:
            counts[f"BROKEN: no answer ({type(error).__name__})"] += 1
            if log:
                log(f"no answer to {text[:200]!r}: {error}")
            continue
        code = ""
        if response.status_code >= 400:
            try:
                code = response.json()["error"]
            except ValueError:
                code = "not JSON"
        broken = response.status_code >= 500 and not (response.status_code == 503 and code in LIMIT_CODES)
        kind = f"{'BROKEN: ' if broken else ''}{response.status_code} {code}".strip()
        counts[kind] += 1
        if response.status_code >= 500 and log:
            log(f"{kind} for {text[:300]!r}: {response.text[:300]}")
    return counts


def sparql_main(args) -> int:
    """``--sparql SECONDS``: fuzz ``--server`` or a server started here on a small store."""
    import shutil
    import subprocess
    import tempfile

    server, base, token = None, args.server, args.token
    if base is None:
        import socket

        import kg_decoder

        folder = tempfile.mkdtemp(prefix="sparql-fuzz-")
        with kg_decoder.open_store(folder) as store:
            kg_decoder.decode(b"KGSENT fuzzed words. A second sentence of them.", store=store, file_name="a.txt")
            store.sparql_update(f"INSERT DATA {{ <{EX}0> <{EX}p> <{EX}1> . <{EX}1> <{EX}p> <{EX}2> }}")
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        token, base = "fuzz-token", f"http://127.0.0.1:{port}"
        server = subprocess.Popen([sys.executable, "-m", "kg_decoder.cli", "serve", "--store", folder, "--port",
                                   str(port), "--write-token", token, "--query-timeout", "10"],
                                  stderr=subprocess.DEVNULL)
        import urllib.request

        for _ in range(600):
            try:
                urllib.request.urlopen(base + "/sparql?query=ASK%7B%7D", timeout=60).read()
                break
            except OSError:
                time.sleep(0.1)
    try:
        started = time.monotonic()
        counts = fuzz_sparql(base, args.sparql, args.seed, token, log=lambda line: print(line, flush=True))
        alive = server is None or server.poll() is None
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=60)
            shutil.rmtree(folder, ignore_errors=True)
    print(json.dumps({"requests": sum(counts.values()), "seconds": round(time.monotonic() - started, 1),
                      "server alive": alive, "answers": dict(counts.most_common())}, indent=2))
    return 1 if not alive or any(kind.startswith("BROKEN") for kind in counts) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=20.0, help="the decode time limit of each case")
    parser.add_argument("--generated", help="a folder of generated fixtures to mutate too")
    parser.add_argument("--quick", action="store_true", help="leave out the seeds that take seconds to decode")
    parser.add_argument("--sparql", type=float, metavar="SECONDS", help="fuzz a server's SPARQL endpoint instead")
    parser.add_argument("--server", help="with --sparql: the server's base URL (default: start one)")
    parser.add_argument("--token", help="with --sparql --server: the write token, to send updates too")
    args = parser.parse_args()
    if args.sparql:
        return sparql_main(args)
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
