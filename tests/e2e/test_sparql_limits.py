"""The query guard's limits, measured against the real Oxigraph: each construct that makes its
parser or evaluator recurse (a flat operator chain, a run of UNIONs, BINDs, select expressions...)
runs in a process of its own, from four times the longest the guard lets through, doubling until
the process dies. A process that survives four times the limit proves the margin; an Oxigraph
upgrade that crashes sooner fails here, loudly, before any server meets such a query."""

from __future__ import annotations

import subprocess
import sys

import pytest

from kg_decoder.graph.sparql_guard import MAX_CHAIN_ELEMENTS, MAX_NESTING, chain_elements, check_shape
from kg_decoder.model.errors import QueryTooComplex

P = "<http://example.org/p>"
# construct -> the query with n repetitions. "/" paths take minutes to plan at these lengths: the
# trailing "!" makes the query fail to parse once the path is read, so the parser alone is measured.
FAMILIES = {
    "1+1+...": lambda n: "ASK { FILTER(" + "1+" * n + "1) }",
    "1*1*...": lambda n: "ASK { FILTER(" + "1*" * n + "1) }",
    "||": lambda n: "ASK { FILTER(" + "true||" * n + "true) }",
    "&&": lambda n: "ASK { FILTER(" + "true&&" * n + "true) }",
    "UNION": lambda n: "ASK { " + "{} UNION " * n + "{} }",
    "OPTIONAL {}": lambda n: "ASK { " + "OPTIONAL {} " * n + "}",
    "MINUS {}": lambda n: "ASK { ?s ?p ?o " + "MINUS { ?s ?p ?o } " * n + "}",
    "FILTER()": lambda n: "ASK { " + "FILTER(true) " * n + "}",
    "BIND": lambda n: "SELECT * { " + "".join(f"BIND({i} AS ?v{i}) " for i in range(n)) + "}",
    "select expressions": lambda n: "SELECT " + "".join(f"(1 AS ?v{i}) " for i in range(n)) + "{}",
    "path |": lambda n: "ASK { ?s " + "|".join([P] * (n + 1)) + " ?o }",
    "path / (parser)": lambda n: "ASK { ?s " + "/".join([P] * (n + 1)) + " ?o } !",
}
NESTED = {
    "nested {}": lambda n: "ASK " + "{" * n + "}" * n,
    "nested ()": lambda n: "ASK { FILTER(" + "(" * n + "1" + ")" * n + ") }",
}
RUN = """
import sys, pyoxigraph
try:
    result = pyoxigraph.Store().query(sys.stdin.read())
    bool(result) if isinstance(result, pyoxigraph.QueryBoolean) else list(result)
except SyntaxError:
    pass
"""
MARGIN = 4
CEILING = 64  # times the limit: no crash by then is a finding worth printing, not a failure


def longest_allowed(family, limit_of) -> int:
    """The most repetitions the guard lets through."""
    low, high = 1, 1
    while limit_of(family(high)):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if limit_of(family(middle)) else (low, middle)
    return low


def survives(query: str) -> bool:
    """Whether Oxigraph parses and evaluates ``query`` without its process dying (a minute at most)."""
    try:
        done = subprocess.run([sys.executable, "-c", RUN], input=query, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return True  # slow, not dead: the server's time limit is for that
    assert done.returncode == 0 or done.returncode < 0, done.stderr[-500:]
    return done.returncode == 0


def passes_guard(query: str) -> bool:
    try:
        check_shape(query)
        return True
    except QueryTooComplex:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(FAMILIES) + sorted(NESTED))
def test_oxigraph_survives_four_times_what_the_guard_lets_through(name):
    family = FAMILIES.get(name) or NESTED[name]
    allowed = longest_allowed(family, passes_guard)
    assert not passes_guard(family(allowed + 2))  # the guard does refuse past its limit
    if name in FAMILIES:
        assert chain_elements(family(allowed)) <= MAX_CHAIN_ELEMENTS
    length = allowed * MARGIN
    assert survives(family(length)), (
        f"pyoxigraph now dies on {name} x {length}, {MARGIN} times what the guard lets through: lower "
        f"MAX_CHAIN_ELEMENTS ({MAX_CHAIN_ELEMENTS}) or MAX_NESTING ({MAX_NESTING}) in graph/sparql_guard.py")
    while length < allowed * CEILING and survives(family(length * 2)):
        length *= 2
    crashed_at = length * 2 if length < allowed * CEILING else None
    print(f"{name}: the guard lets {allowed} through; Oxigraph survives {length} "
          f"({length // allowed}x), {'dies at ' + str(crashed_at) if crashed_at else 'no crash seen'}")
