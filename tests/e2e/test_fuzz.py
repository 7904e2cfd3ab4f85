"""A fixed, seeded sample of the fuzzer (bench/fuzz.py runs thousands): every mutated document ends
in a typed error with the store untouched, or in a whole document; never an untyped exception,
a hang or a partial write."""

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
