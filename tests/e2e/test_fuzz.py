"""A fixed, seeded sample of the fuzzer (bench/fuzz.py runs thousands): every mutated document ends
in a typed error with the store untouched, or in a whole document; never an untyped exception,
a hang or a partial write. And a fixed, seeded sample of 300 requests of its SPARQL grammar (queries
and updates) against a live server: the server never dies and answers nothing 5xx but the typed 503
of a limit."""

from __future__ import annotations

import sys
from collections import Counter

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "bench"))

import fuzz  # noqa: E402


@pytest.mark.slow
def test_a_fixed_sample_of_mutated_documents_breaks_no_rule(generated):
    folder = next(iter(generated.values())).path.parent
    sample = fuzz.cases(fuzz.seeds(folder, quick=True), count=300, seed=20261130, max_depth=5000)
    assert len({case.mutation for case in sample}) == len(fuzz.MUTATIONS)
    outcomes = fuzz.fuzz(sample, timeout=10.0)
    broken = [f"{o.case.mutation} of {o.case.seed_name}: {o.kind}" for o in outcomes if o.kind.startswith("BROKEN")]
    assert broken == []
    kinds = Counter(o.kind for o in outcomes)
    assert kinds["decoded"] > 20 and len(kinds) > 3, kinds  # the sample reaches both ends


@pytest.mark.slow
def test_random_sparql_never_kills_the_server_nor_gets_an_untyped_5xx(tmp_path):
    import time

    import kg_decoder
    import requests
    from conftest import serve_process

    with kg_decoder.open_store(tmp_path / "store") as store:
        kg_decoder.decode(b"KGSENT fuzzed words. A second sentence of them.", store=store, file_name="a.txt")
        store.sparql_update(f"INSERT DATA {{ <{fuzz.EX}0> <{fuzz.EX}p> <{fuzz.EX}1> . <{fuzz.EX}1> <{fuzz.EX}p> "
                            f"<{fuzz.EX}2> }}")
    # A short query time limit: the sample's heavy queries reach it (the typed 503) sooner.
    base, server = serve_process(tmp_path / "store", "--write-token", "fuzz-token", "--query-timeout", "3")
    try:
        counts = fuzz.fuzz_sparql(base, 0, seed=20261201, token="fuzz-token", count=300)
        assert server.poll() is None  # the same process, alive
        started = time.monotonic()
        assert requests.get(base + "/sparql", params={"query": "ASK {}"}, timeout=30).status_code == 200
        assert time.monotonic() - started < 5
    finally:
        server.terminate()
        server.wait(timeout=60)
    broken = {kind: count for kind, count in counts.items() if kind.startswith("BROKEN")}
    assert broken == {}, broken
    assert sum(counts.values()) == 300 and counts["200"] > 20 and counts["400 query-too-complex"] > 20, counts
    assert counts["204"] > 5 and counts["400 malformed-query"] > 20, counts  # updates and bad text among them
    print(dict(counts.most_common()))
