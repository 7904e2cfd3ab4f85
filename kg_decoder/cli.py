"""The command line: ``kg-decoder decode``, ``chunk``, ``facts add``, ``trace`` and ``query``.

A thin layer over the Python API: it walks folders, shows progress, prints a
summary table and turns every typed error into a one-line message.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
from pathlib import Path
from typing import Iterator, Optional, Sequence

from pyoxigraph import QuerySolutions

from .audits import run_audits
from .chunk_pipeline import chunk_document, document_chunks
from .chunking import ChunkOptions
from .crawler import CrawlOptions, crawl
from .decoder import DecodeResult, EmbeddedResult, decode
from .errors import (DecodeError, InvalidSpan, KgDecoderError, MalformedQuery, ProvenanceError, QueryError,
                     StoreError, UnknownEntity)
from .facts import add_facts, read_facts
from .identifiers import document_iri
from .image_catalog import document_images, export_images
from .library import sha256_hex
from .model import SECTION_STRATEGIES, STRATEGIES, DecodeOptions
from .resources import resource_dir
from .store import open_store
from .trace import trace, web_annotations
from .validation import validate
from .versions import software_versions
from .worker import shared_worker


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
    run.add_argument("--encoding", help="character set of text-based files (HTML, text, CSV...), e.g. windows-1251; "
                                        "default: detected")
    run.add_argument("--max-bytes", type=int, default=DecodeOptions.max_bytes, help="largest file to decode")
    run.add_argument("--timeout", type=float, default=DecodeOptions.timeout_seconds,
                     help="seconds allowed per document")
    run.add_argument("--embedded-depth", type=int, default=DecodeOptions.embedded_depth,
                     help="decode attachments and embedded files as child documents down to this depth (0: none)")
    run.add_argument("--max-embedded-bytes", type=int, default=DecodeOptions.max_embedded_bytes,
                     help="bytes allowed for all embedded files of one document together")
    run.add_argument("--emit", choices=["jsonl"],
                     help="print the TextDocuments (pages/sections), or with --chunk the chunks, as JSON lines")
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--chunk", action="store_true", help="chunk each decoded document as well")
    run.add_argument("--no-partition-cache", action="store_true",
                     help="partition again even when the same bytes were partitioned the same way before")
    run.add_argument("--no-record-failures", action="store_true",
                     help="do not record failed decodes in the store (the failed-or-fallback audit lists them)")
    _chunk_arguments(run)

    chunk = commands.add_parser("chunk", help="chunk decoded documents (all of the store's when none is named)")
    chunk.add_argument("documents", nargs="*", metavar="DOC", help="document IRI, or the path of a decoded file")
    chunk.add_argument("--store", default="kg-store")
    chunk.add_argument("--emit", choices=["jsonl"], help="print the chunks with their anchors as JSON lines")
    _chunk_arguments(chunk)

    facts = commands.add_parser("facts", help="store facts a downstream extractor took from a chunk")
    facts_commands = facts.add_subparsers(dest="facts_command", required=True)
    add = facts_commands.add_parser("add", help="add the triples of FILE (Turtle, N-Triples or JSON lines)")
    add.add_argument("file", metavar="FILE")
    add.add_argument("--chunk", required=True, help="IRI of the chunk the facts were extracted from")
    add.add_argument("--store", default="kg-store")
    add.add_argument("--format", choices=["ttl", "nt", "jsonl"], help="file format (default: from the extension)")
    add.add_argument("--extractor", help="name of the extractor, recorded on the extraction activity")

    back = commands.add_parser("trace", help="trace a fact, a span or a quote back to its page and rectangle")
    back.add_argument("fact", nargs="?", help='a fact as N-Triples: "<s> <p> <o>" or "<s> <p> \"literal\""')
    back.add_argument("--segment", help="IRI of a page, section or chunk, with --start and --end")
    back.add_argument("--start", type=int)
    back.add_argument("--end", type=int)
    back.add_argument("--quote", help="text to find, in --document or in every document")
    back.add_argument("--document", help="document IRI or the path of a decoded file")
    back.add_argument("--store", default="kg-store")
    back.add_argument("--format", choices=["text", "json", "jsonld"], default="text",
                      help="jsonld: W3C Web Annotation")

    web = commands.add_parser("crawl", help="crawl a web site from URL (within its host) and decode its pages")
    web.add_argument("url")
    web.add_argument("--store", default="kg-store")
    web.add_argument("--max-pages", type=int, default=CrawlOptions.max_pages)
    web.add_argument("--delay", type=float, default=CrawlOptions.delay_seconds,
                     help="seconds between requests (robots.txt Crawl-delay raises it, up to --max-crawl-delay)")
    web.add_argument("--max-crawl-delay", type=float, default=CrawlOptions.max_crawl_delay)
    web.add_argument("--page-timeout", type=float, default=CrawlOptions.page_timeout,
                     help="seconds allowed to fetch one page")
    web.add_argument("--max-page-bytes", type=int, default=CrawlOptions.max_page_bytes)
    web.add_argument("--retries", type=int, default=CrawlOptions.retries,
                     help="retries on 429, 5xx and network errors, with exponential backoff")
    web.add_argument("--user-agent", default="", help="default: kg-decoder/VERSION")
    web.add_argument("--section-strategy", choices=SECTION_STRATEGIES, default="whole-document")
    web.add_argument("--no-progress", action="store_true")

    query = commands.add_parser("query", help="run a SPARQL SELECT (a file, or a name from queries/)")
    query.add_argument("query", help="path of a .rq file, or a name such as audit-segments-without-text")
    query.add_argument("--store", default="kg-store")
    query.add_argument("--format", choices=["table", "json"], default="table")

    commands.add_parser("queries", help="list the queries shipped in queries/")

    serve = commands.add_parser("serve", help="serve SPARQL, the API and the pages (waitress, threaded)")
    serve.add_argument("--store", default="kg-store")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--threads", type=int, default=8)
    serve.add_argument("--write-token", default=os.environ.get("KG_DECODER_WRITE_TOKEN"),
                       help="token that uploads, facts and SPARQL Update need (default: $KG_DECODER_WRITE_TOKEN; "
                            "none: read-only)")
    serve.add_argument("--query-timeout", type=float, default=30.0)
    serve.add_argument("--allow-service", action="append", default=[], metavar="ENDPOINT_PREFIX",
                       help="let SPARQL queries call remote endpoints (SERVICE) whose IRI starts with this prefix; "
                            "repeat for more (default: SERVICE is refused)")
    serve.add_argument("--row-cap", type=int, default=100_000)
    serve.add_argument("--no-pin-worker", dest="pin_worker", action="store_false",
                       help="let the decoding worker share every CPU with the request threads (default: the "
                            "worker gets the last CPU to itself, the requests the others)")

    pictures = commands.add_parser("images", help="list a document's images; --export writes their bytes")
    pictures.add_argument("document", metavar="DOC", help="document IRI, or the path of a decoded file")
    pictures.add_argument("--store", default="kg-store")
    pictures.add_argument("--export", metavar="DIR", help="write the stored image bytes into DIR")
    pictures.add_argument("--format", choices=["table", "json"], default="table")

    audit = commands.add_parser("audit", help="run the coverage audits (queries/audit-*.rq), a table each")
    audit.add_argument("--store", default="kg-store")
    audit.add_argument("--json", action="store_true", help="print one JSON object per audit")
    audit.add_argument("--fail-on-findings", action="store_true", help="exit 1 when any audit finds something")

    check = commands.add_parser("validate", help="check the store against the SHACL shapes (ontology/shapes.ttl)")
    check.add_argument("--store", default="kg-store")
    check.add_argument("--document", help="only this document (IRI, or the path of a decoded file)")
    return parser


def _chunk_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = ChunkOptions()
    parser.add_argument("--chunk-size", type=int, default=defaults.chunk_size, help="tokens per chunk (cl100k_base)")
    parser.add_argument("--overlap", type=int, default=defaults.overlap, help="tokens shared by neighbouring chunks")
    parser.add_argument("--min-chunk-tokens", type=int, default=defaults.min_chunk_tokens,
                        help="shortest chunk a boundary may leave")
    parser.add_argument("--boundary-window", type=int, help="tokens searched back for a boundary (default: size/4)")
    parser.add_argument("--heading-prefix", action="store_true", help="start each chunk with its heading path")


def _chunk_options(args: argparse.Namespace) -> dict:
    options = dict(chunk_size=args.chunk_size, overlap=args.overlap, min_chunk_tokens=args.min_chunk_tokens,
                   boundary_window=args.boundary_window, heading_prefix=args.heading_prefix)
    ChunkOptions(**options)  # a bad option fails once, before any document
    return options


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "decode":
            return _decode(args)
        if args.command == "query":
            return _query(args)
        if args.command == "chunk":
            return _chunk(args)
        if args.command == "facts":
            return _facts(args)
        if args.command == "trace":
            return _trace(args)
        if args.command == "serve":
            return _serve(args)
        if args.command == "images":
            return _images(args)
        if args.command == "audit":
            return _audit(args)
        if args.command == "validate":
            return _validate(args)
        if args.command == "crawl":
            return _crawl(args)
        for path in sorted(resource_dir("queries").glob("*.rq")):
            print(path.stem)
        return 0
    except KgDecoderError as exc:
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
        encoding=args.encoding,
        max_bytes=args.max_bytes,
        timeout_seconds=args.timeout,
        embedded_depth=args.embedded_depth,
        max_embedded_bytes=args.max_embedded_bytes,
    )
    DecodeOptions(**options)  # a bad option fails once, before any file
    chunking = _chunk_options(args) if args.chunk else None
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

        def show(report, name=path.name[:30]):
            progress.set_postfix_str(f"{name}: {report.message}"[:70])

        try:
            result = decode(path, store=store, record_failure=not args.no_record_failures,
                            partition_cache=not args.no_partition_cache, progress=show, **options)
            children = [e for top in result.embedded for e in top.walk()]
            if chunking is not None:
                for document in result.documents():
                    chunk_document(document, store=store, progress=show, **chunking)
        except (DecodeError, ProvenanceError, StoreError) as exc:
            failures += 1
            progress.write(f"kg-decoder: {path}: {type(exc).__name__}: {exc}", file=sys.stderr)
            rows.append([str(path), "-", "-", "-", "-", "-", f"failed: {type(exc).__name__}"])
            continue
        rows.append(_row(path, result))
        rows.extend(_embedded_row(path, child) for child in children)
        for child in children:
            if child.error is not None:  # the parent is decoded; its attachment is reported, not fatal
                progress.write(f"kg-decoder: {path} > {child.path}: {type(child.error).__name__}: "
                               f"{child.error.message}", file=sys.stderr)
        if args.emit == "jsonl":
            records = (document_chunks(result.document, store=store) if chunking is not None
                       else result.text_documents)
            _emit_jsonl(record.to_json() for record in records)
    progress.close()
    store.flush()
    print(_table(["file", "format", "pages/sections", "elements", "tables", "images", "status"], rows), file=report)
    print(f"{len(files) - failures} of {len(files)} files decoded into {args.store} "
          f"({len(store)} quads in the store)", file=report)
    return 1 if failures else 0


def _crawl(args: argparse.Namespace) -> int:
    """Crawl, print a table of the pages; exit 1 when the start page itself could not be decoded."""
    options = CrawlOptions(max_pages=args.max_pages, delay_seconds=args.delay, max_crawl_delay=args.max_crawl_delay,
                           page_timeout=args.page_timeout, max_page_bytes=args.max_page_bytes, retries=args.retries,
                           user_agent=args.user_agent)
    store = open_store(args.store)

    def show(report):
        if not args.no_progress:
            print(f"\r{report.current + 1}/{report.total} {report.message}"[:100].ljust(100), end="",
                  file=sys.stderr, flush=True)

    result = crawl(args.url, store=store, crawl_options=options, progress=show,
                   section_strategy=args.section_strategy)
    if not args.no_progress:
        print(file=sys.stderr)
    for page in result.pages:
        if page.error is not None:
            print(f"kg-decoder: {page.url}: {type(page.error).__name__}: {page.error.message}", file=sys.stderr)
    rows = [[page.url, str(page.depth), str(page.http_status or "-"), page.status, page.document or "-"]
            for page in result.pages]
    print(_table(["url", "depth", "http", "status", "document"], rows))
    store.flush()
    done = [p for p in result.pages if p.document]
    print(f"{len(done)} of {len(result.fetched)} fetched pages in {args.store} ({len(store)} quads in the store)")
    return 0 if result.pages and result.pages[0].document else 1


def _emit_jsonl(records) -> None:
    for record in records:
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _document_iri(name: str) -> str:
    """A document named by IRI, or by the path of the file that was decoded."""
    path = Path(name)
    if path.is_file():
        return document_iri(sha256_hex(path.read_bytes()))
    if ":" in name:
        return name
    raise UnknownEntity(f"{name} is neither a file nor a document IRI")


def _chunk(args: argparse.Namespace) -> int:
    options = _chunk_options(args)
    store = open_store(args.store)
    documents = [_document_iri(name) for name in args.documents] or sorted(
        {row["document"] for row in store.select("document_summary")})
    report = sys.stderr if args.emit else sys.stdout
    rows = []
    for document in documents:
        result = chunk_document(document, store=store, **options)
        rows.append([document, str(result.chunks), result.status])
        if args.emit == "jsonl":
            _emit_jsonl(view.to_json() for view in document_chunks(document, store=store))
    store.flush()
    print(_table(["document", "chunks", "status"], rows), file=report)
    return 0


def _facts(args: argparse.Namespace) -> int:
    triples, spans = read_facts(args.file, format=args.format)
    result = add_facts(args.chunk, triples, spans, store=open_store(args.store), extractor=args.extractor)
    print(f"{result.facts} facts {result.status} from {result.chunk} in {len(result.subgraphs)} subgraphs")
    return 0


def _trace(args: argparse.Namespace) -> int:
    store = open_store(args.store, read_only=True)
    if args.fact:
        sources = trace(fact=_parse_fact(args.fact), store=store)
    elif args.segment:
        if args.start is None or args.end is None:
            raise InvalidSpan("--segment needs --start and --end")
        sources = trace(span=(args.segment, args.start, args.end), store=store)
    elif args.quote:
        sources = trace(quote=args.quote, document=_document_iri(args.document) if args.document else None,
                        store=store)
    else:
        raise InvalidSpan("give a fact, --segment with --start and --end, or --quote")
    if args.format == "jsonld":
        print(json.dumps(web_annotations(sources), ensure_ascii=False, indent=2))
    elif args.format == "json":
        print(json.dumps([source.to_json() for source in sources], ensure_ascii=False, indent=2))
    else:
        print(_describe_sources(sources))
    return 0 if sources else 1


def _serve(args: argparse.Namespace) -> int:
    from waitress import serve

    # Uploads are partitioned, mapped and chunked in the worker; this process reads inputs and commits.
    # What Python work is left here (the multipart body, JSON) is cut in short GIL slices so that
    # reading threads do not wait behind it for the default 5 ms.
    sys.setswitchinterval(0.0005)
    worker = shared_worker()
    if args.pin_worker:
        _split_cpus(worker)
    worker.start()
    store = open_store(args.store)
    store.serve_reads_first()
    app = load_web_app().create_app(store, write_token=args.write_token, query_timeout=args.query_timeout,
                                    row_cap=args.row_cap, allow_service=tuple(args.allow_service))
    # The heap built at start-up is frozen out of the garbage collector: full passes over it were the
    # slowest requests.
    gc.collect()
    gc.freeze()
    print(f"kg-decoder: serving {args.store} on http://{args.host}:{args.port}/ "
          f"({'writable with the token' if args.write_token else 'read-only'})", file=sys.stderr)
    serve(app, host=args.host, port=args.port, threads=args.threads)
    return 0


def _split_cpus(worker) -> None:
    """The worker on the last CPU, this process (and every thread it starts from now) on the others.

    A decode sharing CPUs with the request threads, even at idle priority, evicts their caches
    and draws them across CPUs: on two CPUs it quadrupled the p99 of a trivial query.
    """
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 2:
        return
    os.sched_setaffinity(0, set(cpus[:-1]))
    worker.pin({cpus[-1]})


def load_web_app():
    """The Flask app module in web/ (shipped as data in the wheel)."""
    import importlib.util

    path = resource_dir("web") / "app.py"
    spec = importlib.util.spec_from_file_location("kg_decoder_web_app", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _images(args: argparse.Namespace) -> int:
    store = open_store(args.store, read_only=True)
    document = _document_iri(args.document)
    if not store.select("document_state", document=document):
        raise UnknownEntity(f"no document {document} in the store")
    images = document_images(document, store=store)
    if args.format == "json":
        _emit_jsonl(images)
    else:
        rows = [[image["iri"], _short(image["page_number"] or image["sheet_name"]),
                 " ".join(f"{v:.1f}" for v in image["bbox"]) if image["bbox"] else "",
                 f"{image['width']}x{image['height']}" if image["width"] else "", _short(image["mime_type"]),
                 image["anchor_cell"] or "", image["skipped_reason"] or ("stored" if image["sha256"] else
                                                                         image["source_url"] or "")]
                for image in images]
        print(_table(["image", "page", "bbox", "pixels", "mime", "cell", "bytes"], rows))
    if args.export:
        written = export_images(document, args.export, store=store)
        print(f"{len(written)} images written to {args.export}", file=sys.stderr)
    return 0


def _audit(args: argparse.Namespace) -> int:
    audits = run_audits(open_store(args.store, read_only=True))
    for audit in audits:
        if args.json:
            print(json.dumps(audit.to_json(), ensure_ascii=False))
            continue
        count = f"{len(audit.rows)} found" if audit.kind == "finding" else f"{len(audit.rows)} rows"
        print(f"== {audit.name}: {audit.title} ({count})")
        if audit.rows:
            columns = list(dict.fromkeys(key for row in audit.rows for key in row))
            print(_table(columns, [[_short(row.get(c)) for c in columns] for row in audit.rows]))
        print()
    findings = sum(1 for audit in audits if audit.has_findings)
    if not args.json:
        print(f"{findings} of {sum(1 for a in audits if a.kind == 'finding')} finding audits found something")
    return 1 if args.fail_on_findings and findings else 0


def _short(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def _validate(args: argparse.Namespace) -> int:
    store = open_store(args.store, read_only=True)
    report = validate(store, _document_iri(args.document) if args.document else None)
    if report.conforms:
        print(f"conforms: {report.triples} triples checked against ontology/shapes.ttl")
        return 0
    print(_table(["focus", "path", "message", "value"],
                 [[v.focus, v.path or "", v.message, v.value or ""] for v in report.violations]))
    print(f"{len(report.violations)} violations in {report.triples} triples")
    return 1


def _parse_fact(text: str):
    """A fact written as one N-Triples statement (the final dot may be left out)."""
    statement = text.strip()
    triples, _ = read_facts("fact.nt", data=(statement if statement.endswith(".") else statement + " .").encode(),
                            format="nt")
    if len(triples) != 1:
        raise InvalidSpan("give exactly one fact")
    return triples[0]


def _describe_sources(sources) -> str:
    if not sources:
        return "no source found"
    lines = []
    for number, source in enumerate(sources, start=1):
        document = source.document
        lines.append(f"source {number}: {document.get('file_name') or document['iri']} ({document['mime_type']})")
        lines.append(f"  document  {document['iri']}")
        if source.page_number is not None:
            lines.append(f"  page      {source.page_number}  {source.page or ''}".rstrip())
        if source.section:
            lines.append(f"  section   {source.section}  {' > '.join(source.heading_path)}".rstrip())
        for chunk in source.chunks:
            lines.append(f"  chunk     {chunk}")
        if source.fact:
            lines.append(f"  fact      {source.fact}  (subgraph {source.subgraph})")
        lines.append(f"  span      {source.start}..{source.end} of {source.segment}")
        lines.append(f"  quote     {source.quote!r}")
        for element in source.elements:
            lines.append(f"  element   {element.category} {element.char_offset}+{element.char_length} {element.iri}")
            for cell in element.cells:
                where = f" {cell['reference']}" if cell.get("reference") else ""
                lines.append(f"    cell    row {cell['row']} column {cell['column']}{where}: {cell['text']!r}")
        for box in source.boxes:
            lines.append(f"  box       page {box.page_number} [{box.left:.1f}, {box.top:.1f}, {box.right:.1f}, "
                         f"{box.bottom:.1f}] {box.coordinate_system or ''} ({box.source})")
    return "\n".join(lines)


def _row(path: Path, result: DecodeResult) -> list[str]:
    parts = [_count(result.pages, "page"), _count(result.sections, "section")]
    layout = ", ".join(part for part in parts if part)
    return [str(path), result.format, layout, str(result.elements), str(result.tables), str(result.images),
            result.status]


def _embedded_row(parent: Path, embedded: EmbeddedResult) -> list[str]:
    """A child document's row, named by where it sits: parent > path (file name)."""
    where = f"{'  ' * embedded.depth}> {embedded.path}" + (f" ({embedded.name})" if embedded.name else "")
    if embedded.result is None:
        return [where, "-", "-", "-", "-", "-", f"not decoded: {type(embedded.error).__name__}"]
    return [where] + _row(parent, embedded.result)[1:]


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
        solutions = store.sparql(text)
        if not isinstance(solutions, QuerySolutions):
            raise QueryError("kg-decoder query runs SELECT queries; use the web app's /sparql for ASK, "
                             "CONSTRUCT and DESCRIBE")
        variables = [v.value for v in solutions.variables]
        rows = [[_cell(row[v]) for v in variables] for row in solutions]
    except SyntaxError as exc:
        raise MalformedQuery(f"the query does not parse: {exc}") from None
    except (OSError, RuntimeError, ValueError) as exc:
        raise QueryError(f"the query failed: {exc}") from None
    finally:
        solutions = None
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
