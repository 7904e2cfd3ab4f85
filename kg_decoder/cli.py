"""The command line: ``kg-decoder decode PATH...`` and ``kg-decoder query``.

A thin layer over the Python API: it walks folders, shows progress, prints a
summary table and turns every typed error into a one-line message.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Iterator, Optional, Sequence

from .decoder import DecodeResult, decode, software_versions
from .errors import DecodeError, StoreError
from .model import SECTION_STRATEGIES, STRATEGIES, DecodeOptions
from .resources import resource_dir
from .store import open_store


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kg-decoder", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"kg-decoder {software_versions()['kg-decoder']}")
    commands = parser.add_subparsers(dest="command", required=True)

    run = commands.add_parser("decode", help="decode files or folders (recursively) into the store")
    run.add_argument("paths", nargs="+", metavar="PATH")
    run.add_argument("--store", default="kg-store", help="store folder (default: ./kg-store)")
    run.add_argument("--strategy", choices=STRATEGIES, default="auto",
                     help="PDF/image partition strategy (auto: text layer, OCR where there is none)")
    run.add_argument("--ocr-languages", default="eng", help="tesseract languages, e.g. eng or eng+heb")
    run.add_argument("--section-strategy", choices=SECTION_STRATEGIES, default="whole-document")
    run.add_argument("--section-element-count", type=int, default=20)
    run.add_argument("--section-max-size", type=int, default=4000)
    run.add_argument("--section-within-pages", action="store_true",
                     help="apply the section strategy inside each page of page-based formats")
    run.add_argument("--password", help="password of encrypted PDFs")
    run.add_argument("--mime-type", help="decode as this MIME type instead of detecting it")
    run.add_argument("--max-bytes", type=int, default=DecodeOptions.max_bytes, help="largest file to decode")
    run.add_argument("--timeout", type=float, default=DecodeOptions.timeout_seconds,
                     help="seconds allowed per document")
    run.add_argument("--emit", choices=["jsonl"], help="print the TextDocuments (pages/sections) as JSON lines")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")

    query = commands.add_parser("query", help="run a SPARQL SELECT (a file, or a name from queries/)")
    query.add_argument("query", help="path of a .rq file, or a name such as audit_pages_without_text")
    query.add_argument("--store", default="kg-store")
    query.add_argument("--format", choices=["table", "json"], default="table")

    commands.add_parser("queries", help="list the queries shipped in queries/")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "decode":
            return _decode(args)
        if args.command == "query":
            return _query(args)
        for path in sorted(resource_dir("queries").glob("*.rq")):
            print(path.stem)
        return 0
    except (DecodeError, StoreError) as exc:
        print(f"kg-decoder: error: {exc}", file=sys.stderr)
        return 2
    except RuntimeError as exc:  # the partition worker could not start (a broken installation)
        print(f"kg-decoder: error: {exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print("kg-decoder: interrupted", file=sys.stderr)
        return 130


def iter_files(paths: Sequence[str]) -> Iterator[Path]:
    """Files named, and the files inside folders named (recursively, sorted, hidden ones skipped)."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            for root, folders, files in os.walk(path):
                folders[:] = sorted(f for f in folders if not f.startswith("."))
                for file in sorted(files):
                    if not file.startswith("."):
                        yield Path(root) / file
        else:
            yield path


def _decode(args: argparse.Namespace) -> int:
    options = dict(
        strategy=args.strategy,
        ocr_languages=args.ocr_languages,
        section_strategy=args.section_strategy,
        section_element_count=args.section_element_count,
        section_max_size=args.section_max_size,
        section_within_pages=args.section_within_pages,
        password=args.password,
        mime_type=args.mime_type,
        max_bytes=args.max_bytes,
        timeout_seconds=args.timeout,
    )
    DecodeOptions(**options)  # a bad option fails once, before any file
    files = list(iter_files(args.paths))
    if not files:
        raise StoreError("no files to decode")
    store = open_store(args.store)
    report = sys.stderr if args.emit else sys.stdout
    rows: list[list[str]] = []
    failures = 0
    from tqdm import tqdm

    progress = tqdm(files, unit="file", file=sys.stderr, disable=args.no_progress or None, dynamic_ncols=True)
    for path in progress:
        progress.set_postfix_str(path.name[:40])
        try:
            result = decode(path, store=store, **options)
        except (DecodeError, StoreError) as exc:
            failures += 1
            progress.write(f"kg-decoder: {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            rows.append([str(path), "-", "-", "-", "-", "-", f"failed: {type(exc).__name__}"])
            continue
        rows.append(_row(path, result))
        if args.emit == "jsonl":
            for text_document in result.text_documents:
                sys.stdout.write(json.dumps(text_document.to_json(), ensure_ascii=False) + "\n")
            sys.stdout.flush()
    progress.close()
    store.flush()
    print(_table(["file", "format", "pages/sections", "elements", "tables", "images", "status"], rows), file=report)
    print(f"{len(files) - failures} of {len(files)} files decoded into {args.store} "
          f"({len(store)} quads in the store)", file=report)
    return 1 if failures else 0


def _row(path: Path, result: DecodeResult) -> list[str]:
    parts = [_count(result.pages, "page"), _count(result.sections, "section")]
    layout = ", ".join(part for part in parts if part)
    return [str(path), result.format, layout, str(result.elements), str(result.tables), str(result.images),
            result.status]


def _count(number: int, noun: str) -> str:
    return "" if not number else f"{number} {noun}{'' if number == 1 else 's'}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip(),
             "  ".join("-" * width for width in widths)]
    lines += ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


def _query(args: argparse.Namespace) -> int:
    path = Path(args.query)
    text = path.read_text(encoding="utf-8") if path.is_file() else None
    if text is None:
        candidate = resource_dir("queries") / f"{args.query}.rq"
        if not candidate.is_file():
            raise StoreError(f"no query file {args.query!r} (see `kg-decoder queries`)")
        text = candidate.read_text(encoding="utf-8")
    store = open_store(args.store)
    try:
        solutions = store.graph.query(text)
    except SyntaxError as exc:
        raise StoreError(f"the query does not parse: {exc}") from None
    variables = [v.value for v in solutions.variables]
    rows = [[_cell(row[v]) for v in variables] for row in solutions]
    if args.format == "json":
        for row in rows:
            print(json.dumps(dict(zip(variables, row)), ensure_ascii=False))
    else:
        print(_table(variables, rows))
    return 0


def _cell(term) -> str:
    return "" if term is None else str(getattr(term, "value", term))


if __name__ == "__main__":
    sys.exit(main())
