"""The command line's arguments: one sub-parser per command, and the options objects they give."""

from __future__ import annotations

import argparse
import os

from .versions import add_version_commands
from ..model import (IMAGE_OCR_MODES, PDF_READERS, SECTION_STRATEGIES, STRATEGIES, ChunkOptions, CrawlOptions,
                     DecodeOptions, software_versions)

AUDIT_TIMEOUT_SECONDS = 60.0
DESCRIPTION = "Decode documents into a knowledge graph of provenance; chunk, trace, audit and serve it."


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kg-decoder", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"kg-decoder {software_versions()['kg-decoder']}")
    commands = parser.add_subparsers(dest="command", required=True)

    _decode_command(commands)
    _chunk_and_fact_commands(commands)
    _reading_commands(commands)
    _serve_command(commands)
    _mcp_command(commands)
    _store_commands(commands)
    return parser


def _decode_command(commands) -> None:
    """The decode command."""
    run = commands.add_parser("decode", help="decode files or folders (recursively) into the store")
    run.add_argument("paths", nargs="+", metavar="PATH")
    _store_arguments(run)
    run.add_argument("--strategy", choices=STRATEGIES, default="auto",
                     help="PDF/image partition strategy (auto: text layer, OCR where there is none)")
    run.add_argument("--ocr-languages", default="eng", help="tesseract languages, e.g. eng or eng+heb")
    run.add_argument("--section-strategy", choices=SECTION_STRATEGIES, default="whole-document")
    run.add_argument("--section-element-count", type=int, default=20)
    run.add_argument("--section-max-size", type=int, default=4000)
    run.add_argument("--section-within-pages", action="store_true",
                     help="apply the section strategy inside each page of page-based formats")
    run.add_argument("--no-rendered-positions", dest="rendered_positions", action="store_false",
                     help="do not place DOCX, ODT, RTF, DOC and slide text on a LibreOffice rendering "
                          "(faster; their elements then have no page box)")
    run.add_argument("--no-pdf-tables", dest="pdf_tables", action="store_false",
                     help="do not look for tables on PDF pages (faster; their cells are then loose lines of text)")
    run.add_argument("--pdf-reader", choices=PDF_READERS, default=DecodeOptions.pdf_reader,
                     help="who reads a PDF page's text layer: pdfium (its characters in blocks typed by "
                          "unstructured's rules) or unstructured (its fast strategy, pdfminer's layout)")
    run.add_argument("--image-ocr", choices=IMAGE_OCR_MODES, default=DecodeOptions.image_ocr,
                     help="read the words in pictures with OCR (auto: not tiny or plain pictures; off: faster)")
    run.add_argument("--min-image-text-confidence", type=float, default=DecodeOptions.min_image_text_confidence,
                     metavar="0..1", help="a picture's OCR text with a lower mean word confidence is stored and "
                                          "audited but not chunked (default: %(default)s)")
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
    run.add_argument("--progress-jsonl", action="store_true",
                     help="print each progress report as a JSON line on stderr (for programs driving the CLI)")
    run.add_argument("--chunk", action="store_true", help="chunk each decoded document as well")
    run.add_argument("--fail-on-error", action="store_true",
                     help="exit 1 when any file is not decoded, refused inputs (encrypted, empty, damaged...) "
                          "included; without it only a job that could not do its work exits 1")
    run.add_argument("--no-partition-cache", action="store_true",
                     help="partition again even when the same bytes were partitioned the same way before")
    run.add_argument("--retry-partial", action="store_true",
                     help="decode again files the store holds a partial decode of (a reading failed in them: see "
                          "audit-partial-decodes), once the cause is mended")
    run.add_argument("--no-record-failures", action="store_true",
                     help="do not record failed decodes in the store (the failed-or-fallback audit lists them)")
    _pixel_argument(run)
    run.add_argument("--server", metavar="URL",
                     help="send the files to a running kg-decoder serve (its /api/documents) instead of opening "
                          "the store; needs --token")
    run.add_argument("--token", default=os.environ.get("KG_DECODER_WRITE_TOKEN"),
                     help="the server's write token (default: $KG_DECODER_WRITE_TOKEN)")
    run.add_argument("--workers", type=int, default=None, metavar="N",
                     help="documents partitioned at once, each in a worker process of its own (default: the CPUs "
                          "this process may use)")
    run.add_argument("--ray", metavar="ADDRESS",
                     help="decode on a Ray cluster (ADDRESS, or auto for a local one): each task partitions a "
                          "document and commits it to the remote --store and shared --library itself "
                          "(needs kg-decoder[ray])")
    run.add_argument("--source-id", metavar="ID",
                     help="the source this file is a version of (default: its absolute path); new bytes of a "
                          "source make its next version, and the facts cited to the last one get verdicts")
    _chunk_arguments(run)


def _chunk_and_fact_commands(commands) -> None:
    """The chunk, facts, extract commands."""
    chunk = commands.add_parser("chunk", help="chunk decoded documents (all of the store's when none is named)")
    chunk.add_argument("documents", nargs="*", metavar="DOC", help="document IRI, or the path of a decoded file")
    _store_arguments(chunk)
    chunk.add_argument("--emit", choices=["jsonl"], help="print the chunks with their anchors as JSON lines")
    _chunk_arguments(chunk)

    facts = commands.add_parser("facts", help="store facts a downstream extractor took from chunks")
    facts_commands = facts.add_subparsers(dest="facts_command", required=True)
    add = facts_commands.add_parser(
        "add", help="add the triples of FILE: with --chunk, all from that chunk (Turtle, N-Triples or JSON "
                    "lines); without, JSON lines that each name their chunk, their document or nothing, "
                    "each grounded with a verdict (docs/facts.md)")
    add.add_argument("file", metavar="FILE")
    add.add_argument("--chunk", help="IRI of the chunk every fact of FILE was extracted from (else each line "
                                     "names its own, its document, or nothing)")
    _store_arguments(add)
    add.add_argument("--format", choices=["ttl", "nt", "jsonl"], help="file format (default: from the extension)")
    add.add_argument("--extractor", help="name of the extractor, recorded on the extraction activity")
    add.add_argument("--batch-lines", type=int, default=2000, help="lines a transaction, without --chunk "
                                                                   "(default: 2000)")
    add.add_argument("--no-progress", action="store_true", help="no progress bar")
    add.add_argument("--emit", choices=["jsonl"], help="print each line's outcome (grounding, chunk, span, score "
                                                      "or reason) as JSON lines")

    run_extractor = commands.add_parser(
        "extract", help="run an extractor over every chunk (of the store, or of the documents named) and store "
                        "its facts, each grounded with a verdict; resumable (docs/facts.md)")
    run_extractor.add_argument("documents", nargs="*", metavar="DOC",
                               help="document IRI, or the path or name of a decoded file (default: every document)")
    which = run_extractor.add_mutually_exclusive_group(required=True)
    which.add_argument("--with", dest="extractor", metavar="MODULE:FUNCTION",
                       help="a Python callable f(text, chunk_iri) returning triples with quotes; 'spacy': the "
                            "shipped one (spaCy's entities and the sentences that join them)")
    which.add_argument("--with-command", metavar="CMD",
                       help="a command reading chunks as JSON lines on stdin and writing, for each, its triples "
                            "as JSON lines and then {\"done\": true} on stdout")
    _store_arguments(run_extractor)
    run_extractor.add_argument("--extractor-name", help="the extractor's name on its runs (default: the "
                                                        "callable's, or the command line)")
    run_extractor.add_argument("--extractor-version", help="its version: chunks a run of the same name and version "
                                                           "read are skipped (default: the callable's, else "
                                                           "'unversioned')")
    run_extractor.add_argument("--batch-chunks", type=int, default=64,
                               help="chunks a transaction: what an interrupted run does again (default: 64)")
    run_extractor.add_argument("--chunk-seconds", type=float, default=60.0,
                               help="a command's time for one chunk (default: 60)")
    run_extractor.add_argument("--max-output", type=int, default=4_000_000, metavar="BYTES",
                               help="bytes a command may write for one chunk (default: 4000000)")
    run_extractor.add_argument("--no-progress", action="store_true", help="no progress bar")
    run_extractor.add_argument("--emit", choices=["jsonl"], help="print the failed chunks and refused triples as "
                                                                 "JSON lines")


def _reading_commands(commands) -> None:
    """The trace, search, reindex, remove, crawl, query, queries commands."""
    back = commands.add_parser("trace", help="trace a fact, a span or a quote back to its page and rectangle")
    back.add_argument("fact", nargs="?", help='a fact as N-Triples: "<s> <p> <o>" or "<s> <p> \"literal\""')
    back.add_argument("--segment", help="IRI of a page, section or chunk, with --start and --end")
    back.add_argument("--start", type=int)
    back.add_argument("--end", type=int)
    back.add_argument("--quote", help="text to find, in --document or in every document")
    back.add_argument("--document", help="document IRI or the path of a decoded file")
    _page_arguments(back, "(a quote in every document)")
    _store_arguments(back)
    back.add_argument("--format", choices=["text", "json", "jsonld"], default="text",
                      help="jsonld: W3C Web Annotation")

    find = commands.add_parser("search", help="find a quote in every document through the text index: places "
                                              "with the text around them")
    find.add_argument("quote")
    _page_arguments(find, "")
    _store_arguments(find)
    find.add_argument("--format", choices=["text", "json"], default="text")

    rebuild = commands.add_parser("reindex", help="rebuild the text index from the graph (kg-decoder audit compares "
                                                  "the two)")
    _store_arguments(rebuild)

    drop = commands.add_parser("remove", help="remove a document and what derives from it (facts stay)")
    drop.add_argument("document", help="document IRI or the path of a decoded file")
    _store_arguments(drop)

    web = commands.add_parser("crawl", help="crawl a web site from URL (within its host) and decode its pages")
    web.add_argument("url")
    _store_arguments(web)
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
    _pixel_argument(web)

    query = commands.add_parser("query", help="run a SPARQL SELECT (a file, or a name from queries/)")
    query.add_argument("query", help="path of a .rq file, or a name such as audit-segments-without-text")
    _store_arguments(query)
    query.add_argument("--format", choices=["table", "json"], default="table")

    commands.add_parser("queries", help="list the queries shipped in queries/")


def _serve_command(commands) -> None:
    """The serve command."""
    serve = commands.add_parser("serve", help="serve SPARQL, the API and the pages (waitress, threaded)")
    _store_arguments(serve)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--threads", type=int, default=8,
                       help="request threads; the workers take at most all but two of them")
    serve.add_argument("--write-token", default=os.environ.get("KG_DECODER_WRITE_TOKEN"),
                       help="token that uploads, facts and SPARQL Update need (default: $KG_DECODER_WRITE_TOKEN; "
                            "none: read-only)")
    serve.add_argument("--query-timeout", type=float, default=30.0,
                       help="seconds a SPARQL query, update or trace may run before its worker stops it")
    serve.add_argument("--allow-service", action="append", default=[], metavar="URL",
                       help="let SPARQL queries call this remote endpoint (SERVICE), or one under its path; "
                            "repeat for more (default: SERVICE is refused)")
    serve.add_argument("--allow-load", action="append", default=[], metavar="URL",
                       help="let SPARQL updates load documents (LOAD) from this URL, or one under its path; repeat "
                            "for more (default: LOAD is refused)")
    serve.add_argument("--row-cap", type=int, default=100_000)
    serve.add_argument("--request-workers", type=int, default=4,
                       help="worker processes for SPARQL, traces and page drawings (default 4, at most --threads - 2; "
                            "0: that work runs in the server's threads, where nothing can stop it: for measuring only)")
    serve.add_argument("--reserved-workers", type=int, default=1, metavar="N",
                       help="of the request workers, those kept for short requests: a request finding the others "
                            "busy may hold one 2 s at most, unless its client holds a worker or had a request run "
                            "that long in the last 30 s (default 1; at most --request-workers - 1)")
    serve.add_argument("--worker-memory", type=int, default=1024, metavar="MB",
                       help="address space a worker may take beyond what it maps at rest (default 1024 MB)")
    serve.add_argument("--client-slots", type=int, default=2,
                       help="workers one client address may hold at once (default 2; behind a proxy every client "
                            "has the proxy's address)")
    serve.add_argument("--connections-per-client", type=int, default=20, metavar="N",
                       help="connections one client address (an IPv6 one by its /64) may hold open; past it a new "
                            "one is answered 503 and closed (default 20, of 1000 over all clients; behind a proxy "
                            "raise it)")
    serve.add_argument("--request-deadline", type=float, default=10.0, metavar="SECONDS",
                       help="a request's headers must arrive within this of its first byte, and its body at 32 KB/s "
                            "at least once as long again has passed; a slower connection is closed (default 10)")
    serve.add_argument("--trusted-host", action="append", default=[], metavar="HOST",
                       help="answer only requests addressed to this host name (the Host header); repeat for more "
                            "(default: any)")
    serve.add_argument("--write-waiters", type=int, default=2,
                       help="requests that may wait for the store's writer while another writes (default 2; past "
                            "it: 503 busy with Retry-After)")
    serve.add_argument("--write-wait", type=float, default=60.0, metavar="SECONDS",
                       help="seconds a request waits for the store's writer before 503 busy (default 60)")
    serve.add_argument("--sync-facts", type=int, default=10_000, metavar="LINES",
                       help="fact lines a POST /api/facts grounds while its request waits (default 10000); a larger "
                            "post is a job: 202 and its URL")
    serve.add_argument("--job-queue", type=int, default=8, metavar="JOBS",
                       help="async uploads and fact posts queued at once, their bodies on disk (default 8; past it: "
                            "503 busy with Retry-After)")
    serve.add_argument("--no-pin-worker", dest="pin_worker", action="store_false",
                       help="let the decoding worker share every CPU with the request threads (default: the "
                            "worker gets the last CPU, the request threads the others, the request workers all)")
    _pixel_argument(serve)


def _mcp_command(commands) -> None:
    """The mcp command."""
    agents = commands.add_parser("mcp", help="serve the store to agents over the Model Context Protocol (stdio, or "
                                             "streamable HTTP on loopback); needs kg-decoder[mcp]")
    _store_arguments(agents)
    agents.add_argument("--http", type=int, metavar="PORT",
                        help="serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio")
    agents.add_argument("--allow-writes", action="store_true",
                        help="let the decode and add_facts tools write to the store (default: read-only)")
    agents.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="a folder whose files the decode tool may read (symlinks resolved; repeat for more; "
                             "default: none)")
    agents.add_argument("--query-timeout", type=float, default=30.0,
                        help="seconds a tool's search, trace, query or page drawing may run before its worker "
                             "stops it")
    agents.add_argument("--row-cap", type=int, default=1000, help="rows a SPARQL answer may have (default 1000)")
    agents.add_argument("--allow-service", action="append", default=[], metavar="URL",
                        help="let SPARQL queries call this remote endpoint (SERVICE); default: refused")
    agents.add_argument("--request-workers", type=int, default=2,
                        help="worker processes for SPARQL, traces, searches and page drawings (default 2; 0: that "
                             "work runs in the server's threads, where nothing can stop it)")
    agents.add_argument("--worker-memory", type=int, default=1024, metavar="MB",
                        help="address space a worker may take beyond what it maps at rest (default 1024 MB)")
    _pixel_argument(agents)


def _store_commands(commands) -> None:
    """The images, audit, validate, gc, export, import and the versions' commands commands."""
    pictures = commands.add_parser("images", help="list a document's images; --export writes their bytes")
    pictures.add_argument("document", metavar="DOC", help="document IRI, or the path of a decoded file")
    _store_arguments(pictures)
    pictures.add_argument("--export", metavar="DIR", help="write the stored image bytes into DIR")
    pictures.add_argument("--format", choices=["table", "json"], default="table")

    audit = commands.add_parser("audit", help="run the coverage audits (queries/audit-*.rq), a table each")
    _store_arguments(audit)
    audit.add_argument("--json", action="store_true", help="print one JSON object per audit")
    audit.add_argument("--fail-on-findings", action="store_true", help="exit 1 when any audit finds something")
    audit.add_argument("--timeout", type=float, default=AUDIT_TIMEOUT_SECONDS, metavar="SECONDS",
                       help="time allowed to each audit: one past it is stopped and reported, the others still run, "
                            "and the command exits 1 (default: %(default)s)")

    check = commands.add_parser("validate", help="check the store against the SHACL shapes (ontology/shapes.ttl)")
    _store_arguments(check)
    check.add_argument("--document", help="only this document (IRI, or the path of a decoded file)")

    collect = commands.add_parser("gc", help="remove library blobs the graph no longer cites (left by a killed "
                                             "decode); --dry-run lists them")
    _store_arguments(collect)
    collect.add_argument("--dry-run", action="store_true", help="list the blobs, remove nothing")
    collect.add_argument("--wait", type=float, default=60.0,
                         help="seconds to wait for a decode that is writing to finish (default 60)")

    dump = commands.add_parser("export", help="write the whole store (N-Quads and library) into a folder")
    dump.add_argument("folder", metavar="DIR", help="an empty or new folder")
    _store_arguments(dump)

    load = commands.add_parser("import", help="load a folder written by export into the store")
    load.add_argument("folder", metavar="DIR")
    _store_arguments(load)
    for versions in add_version_commands(commands):
        _store_arguments(versions)


def _page_arguments(parser: argparse.ArgumentParser, which: str) -> None:
    parser.add_argument("--limit", type=int, default=None, help=f"at most N places {which} (search: 10)".strip(),
                        metavar="N")
    parser.add_argument("--offset", type=int, default=0, help="skip the first N ranked places", metavar="N")


def _pixel_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-image-pixels", type=int, default=None, metavar="N",
                        help="refuse to decode any picture of more than N pixels (default 100 000 000, or "
                             "$KG_DECODER_MAX_IMAGE_PIXELS), in this process and every worker")


def _store_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", default=os.environ.get("KG_DECODER_STORE", "kg-store"),
                        help="a store folder (the embedded store), a SPARQL server's base URL (http://host:port, "
                             "Oxigraph's layout) or a .toml config naming its endpoints (default: $KG_DECODER_STORE "
                             "or ./kg-store)")
    parser.add_argument("--library", default=os.environ.get("KG_DECODER_LIBRARY"),
                        help="where the bytes are kept: a folder or an fsspec URL such as s3://bucket/prefix "
                             "(default: $KG_DECODER_LIBRARY, else the store folder's library/; a remote store "
                             "needs one)")
    parser.add_argument("--library-option", action="append", default=[], metavar="KEY=VALUE", type=_key_value,
                        help="an fsspec storage option of the library, e.g. endpoint_url=http://127.0.0.1:9000; "
                             "repeat for more")


def _key_value(item: str) -> tuple[str, object]:
    """``KEY=VALUE``; true and false as such (s3fs reads the text "false" as true), the rest as text.

    >>> _key_value("use_ssl=false"), _key_value("endpoint_url=http://127.0.0.1:9000")
    (('use_ssl', False), ('endpoint_url', 'http://127.0.0.1:9000'))
    """
    key, equals, value = item.partition("=")
    if not equals or not key.strip():
        raise argparse.ArgumentTypeError(f"takes KEY=VALUE, not {item!r}")
    return key.strip(), {"true": True, "false": False}.get(value.lower(), value)


def _chunk_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = ChunkOptions()
    parser.add_argument("--chunk-size", type=int, default=defaults.chunk_size, help="tokens per chunk (cl100k_base)")
    parser.add_argument("--overlap", type=int, default=defaults.overlap, help="tokens shared by neighbouring chunks")
    parser.add_argument("--min-chunk-tokens", type=int, default=defaults.min_chunk_tokens,
                        help="shortest chunk a boundary may leave")
    parser.add_argument("--boundary-window", type=int, help="tokens searched back for a boundary (default: size/4)")
    parser.add_argument("--heading-prefix", action="store_true", help="start each chunk with its heading path")


def chunk_options(args: argparse.Namespace) -> ChunkOptions:
    return ChunkOptions(chunk_size=args.chunk_size, overlap=args.overlap, min_chunk_tokens=args.min_chunk_tokens,
                        boundary_window=args.boundary_window, heading_prefix=args.heading_prefix)


def decode_options(args: argparse.Namespace) -> DecodeOptions:
    return DecodeOptions(strategy=args.strategy, ocr_languages=args.ocr_languages,
                         section_strategy=args.section_strategy, section_element_count=args.section_element_count,
                         section_max_size=args.section_max_size, section_within_pages=args.section_within_pages,
                         password=args.password, mime_type=args.mime_type, encoding=args.encoding,
                         max_bytes=args.max_bytes, timeout_seconds=args.timeout, embedded_depth=args.embedded_depth,
                         max_embedded_bytes=args.max_embedded_bytes, rendered_positions=args.rendered_positions,
                         image_ocr=args.image_ocr, pdf_tables=args.pdf_tables, pdf_reader=args.pdf_reader,
                         min_image_text_confidence=args.min_image_text_confidence)
