"""Benchmark: what the MCP server adds to a search and a trace (target: MCP / Python median <= 1.5).

One store of two corpus documents (layout-parser-paper-fast.pdf, handbook-1p.docx), decoded and
chunked. A ``kg-decoder mcp`` process serves it over stdio (its default transport, with its request
workers); the SDK's client calls
  search  {"quote": --search-quote}: every document, each place traced (kg_decoder.search(...,
          boxes=True) in Python);
  trace   {"quote": --trace-quote, "document": the PDF}: kg_decoder.trace(quote=..., document=...);
and this process makes the same calls through the Python API on the same store (opened read-only
beside the server), in turns, round by round, after one warm-up round of each. Prints the median and
p90 of each in ms and the ratio of the medians, MCP / Python: what a client pays for the protocol,
the JSON of the answer (boxes, Web Annotation) and the worker the server runs the call in.

    .venv/bin/python bench/mcp_cost.py [--rounds 20] [--corpus ../shared/corpus] [--request-workers 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import kg_decoder  # noqa: E402

PDF, DOCX = "layout-parser-paper-fast.pdf", "handbook-1p.docx"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=REPO.parent / "shared" / "corpus")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--request-workers", type=int, default=2)
    parser.add_argument("--search-quote", default="LayoutParser")
    parser.add_argument("--trace-quote", default="deep learning")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mcp-cost-"))
    try:
        with kg_decoder.open_store(folder) as store:
            documents = {name: kg_decoder.decode(args.corpus / name, store=store).document for name in (PDF, DOCX)}
            for document in documents.values():
                kg_decoder.chunk_document(document, store=store)
        timings = anyio.run(_measure, folder, documents[PDF], args)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{'call':8} {'python ms':>10} {'mcp ms':>10} {'p90 py':>8} {'p90 mcp':>8} {'ratio':>6}")
    for name in ("search", "trace"):
        python, mcp = timings[name]
        ratio = statistics.median(mcp) / statistics.median(python)
        print(f"{name:8} {statistics.median(python) * 1000:10.1f} {statistics.median(mcp) * 1000:10.1f} "
              f"{_p90(python) * 1000:8.1f} {_p90(mcp) * 1000:8.1f} {ratio:6.2f}")


async def _measure(folder: Path, pdf: str, args) -> dict:
    from mcp import Client, StdioServerParameters

    server = StdioServerParameters(command=sys.executable, cwd=str(REPO), args=[
        "-m", "kg_decoder.cli", "mcp", "--store", str(folder), "--request-workers", str(args.request_workers)])
    calls = {
        "search": ({"quote": args.search_quote},
                   lambda store: kg_decoder.search(args.search_quote, store=store, limit=10, boxes=True)),
        "trace": ({"quote": args.trace_quote, "document": pdf},
                  lambda store: kg_decoder.trace(quote=args.trace_quote, document=pdf, store=store, limit=5)),
    }
    timings = {name: ([], []) for name in calls}
    async with Client(server, read_timeout_seconds=120) as client:
        with kg_decoder.open_store(folder, read_only=True) as store:  # the server holds it for writing
            for round_number in range(args.rounds + 1):  # round 0 warms up both sides
                for name, (arguments, python_call) in calls.items():
                    began = time.perf_counter()
                    python_call(store)
                    python_seconds = time.perf_counter() - began
                    began = time.perf_counter()
                    result = await client.call_tool(name, arguments)
                    mcp_seconds = time.perf_counter() - began
                    if result.is_error or not result.structured_content["found"]:
                        raise SystemExit(f"{name} failed through MCP: {result.content[0].text}")
                    if round_number:
                        timings[name][0].append(python_seconds)
                        timings[name][1].append(mcp_seconds)
    return timings


def _p90(values: list[float]) -> float:
    return sorted(values)[min(len(values) - 1, int(0.9 * len(values)))]


if __name__ == "__main__":
    main()
