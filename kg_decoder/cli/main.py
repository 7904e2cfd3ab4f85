"""The command line: ``kg-decoder decode``, ``chunk``, ``facts add``, ``trace``, ``query`` and the rest.

A thin layer over the Python API: it walks folders, shows progress, prints tables and turns
every typed error into a one-line message and a non-zero exit.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

from ..cite.annotations import web_annotations
from ..cite.chunks import chunk_document, document_chunks
from ..cite.documents import document_named
from ..cite.fact_lines import add_fact_lines
from ..cite.extract import extract
from ..cite.facts import add_facts
from ..cite.images import document_images, export_images
from ..cite.search import search
from ..cite.trace import trace
from ..decode.images import limit_image_pixels
from ..graph.queries import query_file, shipped_queries
from ..graph.terms import read_facts
from ..graph.transfer import export_store, import_store
from ..model import Audit, CrawlOptions
from ..model.errors import InvalidFact, KgDecoderError
from ..quality.audits import run_audits
from ..quality.validation import validate
from ..serve.version_views import verdict_chain_views
from ..sources.crawl import crawl
from .arguments import build_parser, chunk_options
from .common import UsageError, open_job_store as _store, open_reading_store as _reading_store
from .decoding import decode_command
from .serving import mcp_command, serve_command
from .versions import diff_command, prune_command, versions_command
from .output import describe_sources, emit_jsonl, json_line, short, table


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    commands = {"decode": decode_command, "query": _query, "chunk": _chunk, "facts": _facts, "extract": _extract,
                "trace": _trace, "serve": serve_command, "images": _images, "audit": _audit, "validate": _validate,
                "crawl": _crawl, "gc": _gc, "queries": _queries, "export": _export, "import": _import, "search": _search,
                "reindex": _reindex, "remove": _remove, "mcp": mcp_command,
                "versions": lambda a: versions_command(a, _reading_store(a)),
                "diff": lambda a: diff_command(a, _reading_store(a)),
                "prune": lambda a: prune_command(a, _store(a, create=False))}
    try:
        if hasattr(args, "max_image_pixels"):  # a command that decodes pictures, here or in its workers
            if args.max_image_pixels is not None and args.max_image_pixels < 1:
                raise UsageError("--max-image-pixels takes a positive number")
            limit_image_pixels(args.max_image_pixels)  # the environment carries it to the workers
        return commands[args.command](args)
    except KgDecoderError as exc:
        print(f"kg-decoder: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("kg-decoder: interrupted", file=sys.stderr)
        return 130


def _export(args: argparse.Namespace) -> int:
    moved = export_store(_reading_store(args), Path(args.folder))
    print(f"exported {moved.quads} quads and {moved.blobs} blobs from {args.store} into {args.folder}")
    return 0


def _import(args: argparse.Namespace) -> int:
    store = _store(args)
    moved = import_store(store, Path(args.folder))
    store.flush()
    print(f"imported {moved.quads} quads and {moved.blobs} blobs from {args.folder} into {args.store} "
          f"({len(store)} quads in the store)")
    return 0


def _crawl(args: argparse.Namespace) -> int:
    """Crawl, print a table of the pages; exit 1 when the start page itself could not be decoded."""
    options = CrawlOptions(max_pages=args.max_pages, delay_seconds=args.delay, max_crawl_delay=args.max_crawl_delay,
                           page_timeout=args.page_timeout, max_page_bytes=args.max_page_bytes, retries=args.retries,
                           user_agent=args.user_agent)
    store = _store(args)

    def show(report):
        if not args.no_progress:
            print(f"\r{report.current + 1}/{report.total} {report.message}"[:100].ljust(100), end="",
                  file=sys.stderr, flush=True)

    result = crawl(args.url, store=store, options=options, progress=show, section_strategy=args.section_strategy)
    if not args.no_progress:
        print(file=sys.stderr)
    for page in result.pages:
        if page.error is not None:
            print(f"kg-decoder: {page.url}: {type(page.error).__name__}: {page.error.message}", file=sys.stderr)
    rows = [[page.url, str(page.depth), str(page.http_status or "-"), str(page.status), page.document or "-"]
            for page in result.pages]
    print(table(["url", "depth", "http", "status", "document"], rows))
    store.flush()
    done = [p for p in result.pages if p.document]
    print(f"{len(done)} of {len(result.fetched)} fetched pages in {args.store} ({len(store)} quads in the store)")
    return 0 if result.pages and result.pages[0].document else 1


def _chunk(args: argparse.Namespace) -> int:
    options = chunk_options(args)
    store = _store(args, create=False)
    documents = [document_named(name, store) for name in args.documents] or sorted(
        {summary.document for summary in store.document_summaries()})
    report = sys.stderr if args.emit else sys.stdout
    rows = []
    for document in documents:
        result = chunk_document(document, store=store, options=options)
        rows.append([document, str(result.chunks), str(result.status)])
        if args.emit == "jsonl":
            emit_jsonl(view.to_json() for view in document_chunks(document, store=store))
    store.flush()
    print(table(["document", "chunks", "status"], rows), file=report)
    return 0


def _facts(args: argparse.Namespace) -> int:
    if args.chunk is not None:
        triples, spans = read_facts(args.file, format=args.format)
        result = add_facts(args.chunk, triples, spans, store=_store(args, create=False), extractor=args.extractor)
        print(f"{result.facts} facts {result.status} from {result.chunk} in {len(result.subgraphs)} subgraphs")
        return 0
    kind = args.format or os.path.splitext(str(args.file))[1].lower().lstrip(".")
    if kind not in ("jsonl", "json"):
        raise InvalidFact("facts without --chunk are JSON lines (each names its chunk, its document or nothing); "
                          "Turtle and N-Triples need --chunk")
    from tqdm import tqdm

    bar = tqdm(total=0, unit="fact", file=sys.stderr, disable=args.no_progress or None, dynamic_ncols=True)

    def show(report) -> None:
        bar.total = report.total
        bar.update(report.current - bar.n)

    result = add_fact_lines(args.file, store=_store(args, create=False), extractor=args.extractor,
                            batch_lines=args.batch_lines, progress=show)
    bar.close()
    if args.emit == "jsonl":
        emit_jsonl(outcome.to_json() for outcome in result.outcomes)
    report = sys.stderr if args.emit else sys.stdout
    print(table(["grounding", "facts", "reasons"], result.summary_rows()), file=report)
    for outcome in result.refused[:20]:
        print(f"line {outcome.line}: refused: {outcome.reason}", file=report)
    if len(result.refused) > 20:
        print(f"... and {len(result.refused) - 20} more refused lines (--emit jsonl lists every line)", file=report)
    print(f"{result.stored} of {result.lines} lines stored in {result.batches} transactions"
          + (f" ({result.unchanged} already held)" if result.unchanged else ""), file=report)
    return 0


def _extract(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    bar = tqdm(total=0, unit="chunk", file=sys.stderr, disable=args.no_progress or None, dynamic_ncols=True)

    def show(report) -> None:
        bar.total = report.total
        bar.update(report.current - bar.n)

    store = _store(args, create=False)
    result = extract(args.extractor, command=args.with_command, store=store, documents=args.documents or None,
                     name=args.extractor_name, version=args.extractor_version, batch_chunks=args.batch_chunks,
                     chunk_seconds=args.chunk_seconds, max_output=args.max_output, progress=show)
    bar.close()
    store.flush()
    if args.emit == "jsonl":
        emit_jsonl([*(failure.to_json() for failure in result.failed),
                    *(outcome.to_json() for outcome in result.refused)])
    report = sys.stderr if args.emit else sys.stdout
    print(f"extractor {result.extractor} {result.version}", file=report)
    print(table(["", "count", "reasons"], result.summary_rows()), file=report)
    for failure in result.failed[:20]:
        print(f"chunk {failure.chunk}: {failure.code}: {failure.reason}", file=report)
    if len(result.failed) > 20:
        print(f"... and {len(result.failed) - 20} more failed chunks (--emit jsonl lists them)", file=report)
    print(f"{result.facts} facts from {result.extracted} of {result.chunks} chunks in {result.batches} "
          f"transactions", file=report)
    return 1 if result.failed else 0


def _trace(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    if args.fact:
        sources = trace(fact=_parse_fact(args.fact), store=store)
    elif args.segment:
        if args.start is None or args.end is None:
            raise UsageError("--segment needs --start and --end")
        sources = trace(span=(args.segment, args.start, args.end), store=store)
    elif args.quote:
        sources = trace(quote=args.quote, document=document_named(args.document, store) if args.document else None,
                        store=store, limit=args.limit, offset=args.offset)
    else:
        raise UsageError("give a fact, --segment with --start and --end, or --quote")
    if args.format == "jsonld":
        print(json.dumps(web_annotations(sources), ensure_ascii=False, indent=2))
    elif args.format == "json":
        print(json.dumps([source.to_json() for source in sources], ensure_ascii=False, indent=2))
    else:
        print(describe_sources(sources, [verdict_chain_views(store, source) for source in sources]))
    return 0 if sources else 1


def _search(args: argparse.Namespace) -> int:
    found = search(args.quote, store=_reading_store(args), limit=10 if args.limit is None else args.limit,
                   offset=args.offset)
    if args.format == "json":
        print(json.dumps(found.to_json(), ensure_ascii=False, indent=2))
    else:
        for hit in found.hits:
            where = f"page {hit.page_number}" if hit.page_number is not None else hit.segment_kind
            print(f"{hit.file_name or hit.document}  {where}  {hit.segment} {hit.start}..{hit.end}")
            print(f"    ...{hit.before}[{' '.join(hit.quote.split())}]{hit.after}...")
        shown = f"{found.offset + 1}-{found.offset + len(found.hits)} of " if found.hits else ""
        print(f"{shown}{'' if found.total_exact else 'at least '}{found.total} places", file=sys.stderr)
    return 0 if found.hits else 1


def _reindex(args: argparse.Namespace) -> int:
    with _store(args, create=False) as store:
        count = store.text_index.rebuild()
    print(f"the text index holds {count} documents", file=sys.stderr)
    return 0


def _remove(args: argparse.Namespace) -> int:
    with _store(args, create=False) as store:
        store.remove_document(document_named(args.document, store))
    return 0


def _parse_fact(text: str):
    """A fact written as one N-Triples statement (the final dot may be left out)."""
    statement = text.strip()
    triples, _ = read_facts("fact.nt", data=(statement if statement.endswith(".") else statement + " .").encode(),
                            format="nt")
    if len(triples) != 1:
        raise UsageError("give exactly one fact")
    return triples[0]


def _images(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    document = document_named(args.document, store)
    images = document_images(document, store=store)
    if args.format == "json":
        emit_jsonl(image.to_json() for image in images)
    else:
        rows = [[image.iri, short(image.page_number or image.sheet_name),
                 " ".join(f"{v:.1f}" for v in image.bbox) if image.bbox else "",
                 f"{image.width}x{image.height}" if image.width else "", short(image.mime_type),
                 image.anchor_cell or "", image.skipped_reason or ("stored" if image.sha256 else
                                                                   image.source_url or "")]
                for image in images]
        print(table(["image", "page", "bbox", "pixels", "mime", "cell", "bytes"], rows))
    if args.export:
        written = export_images(document, args.export, store=store)
        print(f"{len(written)} images written to {args.export}", file=sys.stderr)
    return 0


def _audit(args: argparse.Namespace) -> int:
    if not (math.isfinite(args.timeout) and args.timeout > 0):
        raise UsageError("--timeout takes a number of seconds over 0")

    def started(audit: Audit) -> None:  # the name first, so a slow audit is seen while it runs
        if not args.json:
            print(f"== {audit.name}: {audit.title}", flush=True)

    def ended(audit: Audit) -> None:
        if args.json:
            print(json_line(audit.to_json()), end="", flush=True)
            return
        rows = audit.table
        if audit.error is not None:
            print(f"not finished after {audit.seconds:.1f} s: {audit.error}")
        else:
            count = f"{len(rows)} found" if audit.kind == "finding" else f"{len(rows)} rows"
            print(f"{count} in {audit.seconds:.2f} s")
        if rows.rows:
            print(table(rows.columns, [[short(value) for value in row] for row in rows.rows]))
        print(flush=True)

    audits = run_audits(_reading_store(args), timeout=args.timeout, started=started, ended=ended)
    findings = sum(1 for audit in audits if audit.has_findings)
    unfinished = [audit.name for audit in audits if audit.error is not None]
    if not args.json:
        print(f"{findings} of {sum(1 for a in audits if a.kind == 'finding')} finding audits found something")
    if unfinished:
        print(f"kg-decoder: {len(unfinished)} audit{'s' if len(unfinished) > 1 else ''} could not finish: "
              f"{', '.join(unfinished)}", file=sys.stderr)
        return 1
    return 1 if args.fail_on_findings and findings else 0


def _validate(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    report = validate(store, document_named(args.document, store) if args.document else None)
    if report.conforms:
        print(f"conforms: {report.triples} triples checked against ontology/shapes.ttl")
        return 0
    print(table(["focus", "path", "message", "value"],
                [[v.focus, v.path or "", v.message, v.value or ""] for v in report.violations]))
    print(f"{len(report.violations)} violations in {report.triples} triples")
    return 1


def _gc(args: argparse.Namespace) -> int:
    store = _reading_store(args)
    orphans = store.collect_garbage(dry_run=args.dry_run, wait=args.wait)
    for key in orphans:
        print(key)
    verb = "would be removed" if args.dry_run else "removed"
    print(f"{len(orphans)} library blobs no entity cites {verb}", file=sys.stderr)
    return 0


def _queries(args: argparse.Namespace) -> int:
    """The shipped queries a user may run (the store's own updates left out), audits first."""
    runnable = sorted((query for query in shipped_queries() if not query.is_update),
                      key=lambda query: (not query.name.startswith("audit-"), query.name))
    rows = []
    for query in runnable:
        gives = " ".join((query.headers.get("audit") or query.description).split()).split(". ")[0]
        rows.append([query.name, query.kind_of_query, gives if len(gives) <= 100 else gives[:99] + "…"])
    print(table(["query", "kind", "what it gives"], rows))
    return 0


def _query(args: argparse.Namespace) -> int:
    path = Path(args.query)
    if path.is_file():
        text = path.read_text(encoding="utf-8")
    else:
        shipped = query_file(args.query)
        if shipped.is_update:
            raise UsageError(f"{shipped.name} is an update the store runs itself; kg-decoder query runs SELECT, "
                             f"ASK and CONSTRUCT queries (kg-decoder queries lists them)")
        text = shipped.text
    rows = _reading_store(args).select_rows(text)
    if args.format == "json":
        emit_jsonl(rows.records())
    else:
        print(table(rows.columns, [[short(value) for value in row] for row in rows.rows]))
    return 0
