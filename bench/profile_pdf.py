"""Profile: where the wall time of a PDF decode goes, step by step, on a set of PDFs (by default the
PDFs of ../shared/corpus and the ICDAR 2013 half in ../shared/tables-icdar2013).

Every PDF is decoded with ``kg_decoder.decode`` (everything on: tables, picture OCR...; parse cache
off; a new store per round), in this process: the worker's task (``build_document``) runs here
instead of in a worker process, so each step can be timed by wrapping the function that does it.
What the worker adds on top (sending the bytes and the N-Quads over a socket) is not in the table.
A step's time is its own: time spent in a step it calls is counted to that inner step; what no
wrapped step covers is "other".

The steps, as the decode meets them: reading the file and detecting its format; the store's look-ups
(is the document there already?); PDFium opening the document (page geometry, which pages have a
text layer, turned text); unstructured's ``partition_pdf`` (``fast``): pdfminer's layout of each
page, its texts read by spaCy in one batch a page, unstructured's elements of each page (text
types), the rest of partition_pdf; elements converted; PDFium's text layer where ``fast`` read
nothing; turned text; fonts (declared heights; pdfminer's glyph patch); tables (the pre-signal on
PDFium's reading, the words and rules cells are built from: the words of PDFium's lines of the page,
read once for the whole decode and timed there, and the rules of its paths; the page drawn for the
layout model, the layout model, structure building, the tables put in place of the lines read there
and the text beside them); OCR of pages without a text layer; the document's title; pictures (found by PDFium, then read
by OCR); table matrices; grouping into pages; assembly of the page texts; mapping to quads; N-Quads;
library blobs; the store's write (one transaction).

Two steps run in a thread of their own beside pdfminer's reading: the layout model and the pictures'
tesseract runs. Their time is counted in full, though it overlaps the reading's: the shares then add
up to more than the wall time, and "other" can be negative.

    .venv/bin/python bench/profile_pdf.py [--folders ../shared/corpus ../shared/tables-icdar2013]
        [--rounds 1] [--limit N] [--warm-up FILE]

A wrapped name that no longer exists (the code moved) is reported, not skipped silently: update the
list in ``STEPS``.
"""

from __future__ import annotations

import argparse
import functools
import importlib
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# (step, module, attribute): the function at module.attribute (a class's method with "Class.method") is
# timed as the step. Several functions may share a step; a function imported by name into another
# module is wrapped where the caller looks it up.
STEPS = [
    ("read the file, detect its format", "kg_decoder.decode.pipeline", "read_source"),
    ("read the file, detect its format", "kg_decoder.decode.pipeline", "_detect"),
    ("read the file, detect its format", "kg_decoder.decode.pipeline", "sha256_hex"),
    ("PDFium: open, geometry, text layer present, turned text", "kg_decoder.decode.pdf.backend", "_inspect_pdf"),
    ("unstructured partition_pdf: pdfminer layout of each page", "unstructured.partition.pdf",
     "open_pdfminer_pages_generator"),
    ("unstructured partition_pdf: elements of each page (text types)", "unstructured.partition.pdf",
     "_pdfminer_page_elements"),
    ("unstructured partition_pdf: text types read ahead (a spaCy batch a page)", "kg_decoder.decode.pdf.text_types",
     "read_ahead"),
    ("unstructured partition_pdf: the rest", "kg_decoder.decode.pdf.backend", "call"),
    ("unstructured elements converted, moved onto the page", "kg_decoder.decode.pdf.backend", "convert_all"),
    ("unstructured elements converted, moved onto the page", "kg_decoder.decode.pdf.backend", "_on_displayed_page"),
    ("PDFium text layer (pages fast read nothing)", "kg_decoder.decode.pdf.backend", "text_layer_elements"),
    ("turned text (PDFium)", "kg_decoder.decode.pdf.backend", "turned_text_elements"),
    ("fonts: declared heights, pdfminer glyph patch", "kg_decoder.decode.pdf.fonts", "declared_heights"),
    ("fonts: declared heights, pdfminer glyph patch", "kg_decoder.decode.pdf.text_layer", "declared_heights"),
    ("fonts: declared heights, pdfminer glyph patch", "kg_decoder.patches.pdfminer", "install_type1_fallbacks"),
    ("tables: pre-signal (PDFium words and rules)", "kg_decoder.decode.tables.pdf_pages", "marks_from_pdfium"),
    ("tables: pre-signal (PDFium words and rules)", "kg_decoder.decode.tables.pdf_pages", "table_signal"),
    ("tables: words and rules (the lines' words, PDFium's path segments)", "kg_decoder.decode.tables.pdf_pages",
     "marks_of_page"),
    ("tables: page drawn for the layout model", "kg_decoder.decode.tables.pdf_pages", "page_pixels"),
    ("tables: layout model (its own thread)", "kg_decoder.decode.tables.regions", "LayoutDetector.detect_resized"),
    ("tables: structure (regions, rows, columns, cells)", "kg_decoder.decode.tables.pdf_pages", "tables_on_page"),
    ("tables: elements (markup, boxes on the page)", "kg_decoder.decode.tables.pdf_pages", "_table_element"),
    ("tables: put in place of the lines read there", "kg_decoder.decode.pdf.backend", "replacing"),
    ("tables: text beside a table (PDFium)", "kg_decoder.decode.pdf.backend", "lines_outside"),
    ("PDFium lines of a page (read once for turned text, text beside tables, dropped lines, title)",
     "kg_decoder.decode.pdf.text_layer", "PdfLines.lines"),
    ("PDFium reading: blocks typed by unstructured's rules, running heads", "kg_decoder.decode.pdf.backend",
     "pdfium_elements"),
    ("PDFium reading: glyphs PDFium cannot map, read from the content", "kg_decoder.decode.pdf.blocks", "content_words"),
    ("PDFium reading: glyphs PDFium cannot map, read by pdfminer", "kg_decoder.decode.pdf.blocks", "pdfminer_words"),
    ("OCR of pages without a text layer", "kg_decoder.decode.pdf.backend", "ocr_pages"),
    ("title (metadata, largest type)", "kg_decoder.decode.pdf.backend", "document_title"),
    ("pictures: found (PDFium image objects)", "kg_decoder.decode.pdf.backend", "_pictures"),
    ("pictures: read ahead by OCR (its own thread)", "kg_decoder.decode.image_text", "PicturesReadAhead._read_all"),
    ("pictures: read by OCR after the partition, waiting for the thread", "kg_decoder.decode.backends", "read_image_texts"),
    ("table matrices", "kg_decoder.decode.build", "table_matrix"),
    ("grouping into pages, assembly of their texts", "kg_decoder.decode.build", "complete_pages"),
    ("grouping into pages, assembly of their texts", "kg_decoder.decode.build", "group"),
    ("grouping into pages, assembly of their texts", "kg_decoder.decode.build", "assemble"),
    ("mapping to quads", "kg_decoder.decode.build", "document_quads"),
    ("N-Quads serialised", "kg_decoder.decode.build", "as_nquads"),
    ("library blobs (hashes)", "kg_decoder.decode.build", "_image_blobs"),
    ("library blobs (hashes)", "kg_decoder.decode.build", "_image_text_blobs"),
    ("library blobs (hashes)", "kg_decoder.decode.build", "sha256_hex"),
]
STORE_STEPS = [("store: look-ups before the decode", "document_states"),
               ("store: look-ups before the decode", "document_failure"),
               ("store: write (one transaction), flush", "write_document"),
               ("store: write (one transaction), flush", "flush")]
GENERATORS = {"open_pdfminer_pages_generator"}  # their work happens at each next(): timed there


class Profile:
    """Exclusive time per step: a step's time less the time of the steps it calls."""

    def __init__(self) -> None:
        self.own: dict[str, float] = defaultdict(float)
        self.calls: Counter = Counter()
        self._local = threading.local()

    def _stack(self) -> list:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def timed(self, step: str, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            stack = self._stack()
            stack.append(0.0)
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - started
                inner = stack.pop()
                self.own[step] += elapsed - inner
                self.calls[step] += 1
                if stack:
                    stack[-1] += elapsed

        return wrapper

    def timed_generator(self, step: str, function):
        advance = self.timed(step, next)

        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            iterator = function(*args, **kwargs)
            while True:
                try:
                    item = advance(iterator)
                except StopIteration:
                    return
                yield item

        return wrapper

    def reset(self) -> None:
        self.own.clear()
        self.calls.clear()


def install(profile: Profile) -> list[str]:
    """Wrap every step's function; returns the names that were not found."""
    missing = []
    for step, module_name, attribute in STEPS:
        try:
            owner = importlib.import_module(module_name)
            *path, name = attribute.split(".")
            for part in path:
                owner = getattr(owner, part)
            function = getattr(owner, name)
        except (ImportError, AttributeError):
            missing.append(f"{module_name}.{attribute}")
            continue
        wrap = profile.timed_generator if name in GENERATORS else profile.timed
        setattr(owner, name, wrap(step, function))
    return missing


def watch_store(profile: Profile, store) -> None:
    for step, method in STORE_STEPS:
        setattr(store, method, profile.timed(step, getattr(store, method)))


class InProcessWorker:
    """The decode worker's task run in this process (see the module's docstring)."""

    def build_document(self, plain: bytes, job, progress=None):
        from kg_decoder.decode.build import build_document

        return build_document(plain, job, progress)

    def call(self, name: str, *args, timeout=None, progress=None, crash=None):
        from kg_decoder.decode.worker import _task

        function, takes_progress = _task(name)
        return function(*args, progress=progress) if takes_progress else function(*args)


def prepare() -> None:
    """What the worker does before its first task: no torch, offline models, parsers imported, tesseract
    on one thread."""
    import logging

    sys.modules.setdefault("torch", None)
    from kg_decoder.decode import backends
    from kg_decoder.decode.tables.pdf_pages import detector

    logging.disable(logging.WARNING)  # pdfminer's complaints about odd PDFs (the worker sends them nowhere)
    backends.warm_up_decoding()
    detector()  # the layout model, loaded once per worker


def pdf_files(folders: list[Path]) -> list[Path]:
    return sorted(path for folder in folders for path in folder.glob("*.pdf"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folders", nargs="+", type=Path,
                        default=[SHARED / "corpus", SHARED / "tables-icdar2013"])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--limit", type=int, help="only the first N PDFs (a quick look)")
    parser.add_argument("--warm-up", type=Path, action="append",
                        help="decode this file first instead of the set's two smallest (a file outside the set "
                             "keeps the timed files cold, as a user's new files are; repeatable)")
    args = parser.parse_args()

    prepare()
    import kg_decoder

    profile = Profile()
    missing = install(profile)
    worker = InProcessWorker()
    files = pdf_files(args.folders)[:args.limit]
    total = 0.0
    pages = decoded = 0
    with tempfile.TemporaryDirectory() as folder:
        warm_store = kg_decoder.open_store(Path(folder) / "warm")
        for path in args.warm_up or sorted(files, key=lambda p: p.stat().st_size)[:2]:  # first calls of everything
            try:
                kg_decoder.decode(path, store=warm_store, worker=worker, partition_cache=False)
            except kg_decoder.DecodeError:
                pass
        profile.reset()
        for round_number in range(args.rounds):
            store = kg_decoder.open_store(Path(folder) / f"round-{round_number}")
            watch_store(profile, store)
            for path in files:
                started = time.perf_counter()
                try:
                    result = kg_decoder.decode(path, store=store, worker=worker, partition_cache=False)
                except kg_decoder.DecodeError as error:
                    if round_number == 0:
                        print(f"left out: {path.name}: {error.code}", file=sys.stderr)
                    continue
                store.flush()
                total += time.perf_counter() - started
                pages += result.pages
                decoded += 1
    covered = sum(profile.own.values())
    print(f"{decoded // args.rounds} PDFs, {pages // args.rounds} pages, {args.rounds} round(s): "
          f"{total:.1f} s wall, {1000 * total / max(pages, 1):.0f} ms per page")
    print(f"{'step':64} {'seconds':>8} {'share':>6} {'ms/page':>8} {'calls':>6}")
    rows = sorted(profile.own.items(), key=lambda item: -item[1]) + [("other (not in a step above)", total - covered)]
    for step, seconds in rows:
        print(f"{step:64} {seconds:8.2f} {100 * seconds / total:5.1f}% {1000 * seconds / max(pages, 1):8.1f} "
              f"{profile.calls.get(step, ''):>6}")
    for name in missing:
        print(f"NOT TIMED (not found, update STEPS): {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
