"""What the command line prints: tables, JSON lines, a trace in words."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from decimal import Decimal
from pathlib import Path
from typing import Iterable, Optional, Sequence

from ..model import DecodeResult, EmbeddedResult, TraceSource, to_jsonable
from ..serve.version_views import VerdictChainView


def table(header: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell.

    >>> print(table(["a", "bb"], [["1", "2"]]))
    a  bb
    -  --
    1  2
    """
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(header, widths)).rstrip(),
             "  ".join("-" * width for width in widths)]
    lines += ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines)


# Characters JSON leaves as they are that many line readers (Python's str.splitlines among them) take
# for line ends: escaped, so a JSON line is one line to every reader.
_LINE_ENDS = str.maketrans({"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"})


def json_line(record: dict) -> str:
    """One JSON line: UTF-8 text as it is, but no character any line reader takes for a line end.

    >>> json_line({"text": "a\u2028b"}).splitlines()
    ['{"text": "a\\\\u2028b"}']
    """
    return json.dumps(to_jsonable(record), ensure_ascii=False).translate(_LINE_ENDS) + "\n"


def emit_jsonl(records: Iterable[dict]) -> None:
    for record in records:
        sys.stdout.write(json_line(record))
    sys.stdout.flush()


def short(value) -> str:
    if value is None:
        return ""
    if isinstance(value, (float, Decimal)):
        return f"{value:.3f}"
    return str(value)


DECODE_COLUMNS = ["file", "format", "pages/sections", "elements", "tables", "images", "chunks", "status"]


def decoded_row(path: Path, result: DecodeResult, chunks: Optional[dict[str, int]] = None) -> list[str]:
    """A decoded file's row; ``chunks`` the chunks made per document, when the job chunked ("-": not asked)."""
    parts = [_count(result.pages, "page"), _count(result.sections, "section")]
    layout = ", ".join(part for part in parts if part)
    status = status_with_problems(str(result.status), [problem.code for problem in result.problems])
    version = result.version
    if version is not None and version.new and version.previous is not None:  # bytes stored before may be one
        status += f", version {version.number}"
        if version.facts:
            status += " (" + ", ".join(f"{n} facts {name}" for name, n in version.facts.items() if n) + ")"
    made = str(chunks.get(result.document, 0)) if chunks is not None else "-"
    return [str(path), result.format, layout, str(result.elements), str(result.tables), str(result.images), made,
            status]


def failed_row(where: str, verdict: str) -> list[str]:
    """The row of a file (or an embedded file) that was not decoded, and why."""
    return [where] + ["-"] * (len(DECODE_COLUMNS) - 2) + [verdict]


def status_with_problems(status: str, codes: Sequence[str]) -> str:
    """A decode's status with the readings that failed in a partial one (``kg-decoder query
    audit-partial-decodes`` says where and how)."""
    return status + (f" ({', '.join(sorted(set(codes)))})" if codes else "")


def embedded_row(parent: Path, embedded: EmbeddedResult, chunks: Optional[dict[str, int]] = None) -> list[str]:
    """A child document's row, named by where it sits: parent > path (file name)."""
    where = f"{'  ' * embedded.depth}> {embedded.path}" + (f" ({embedded.name})" if embedded.name else "")
    if embedded.result is None:
        return failed_row(where, f"not decoded: {type(embedded.error).__name__}")
    return [where] + decoded_row(parent, embedded.result, chunks)[1:]


def store_flags(store: str, library: Optional[str] = None, library_options: Sequence[tuple[str, object]] = ()) -> str:
    """The ``--store`` (and library) arguments of a command to print, quoted for a shell; the
    library options' values left for the user to give again (they may be secrets).

    >>> store_flags("http://h:7878", "s3://b/p", [("secret", "S3CRET")])
    '--store http://h:7878 --library s3://b/p --library-option secret=...'
    """
    flags = ["--store", str(store)]
    if library:
        flags += ["--library", str(library)]
    for key, _ in library_options:
        flags += ["--library-option", f"{key}=..."]
    return " ".join(shlex.quote(flag) for flag in flags)


def next_steps(store: str, decoded: list[tuple[Path, DecodeResult]]) -> str:
    """What to do after a decode: serve the store, trace a quote from a decoded file, audit.

    ``store`` is the store's arguments as :func:`store_flags` writes them."""
    program = command_name()
    lines = ["", "Next:",
             f"  browse and query it:  {program} serve {store}   "
             f"(then open http://127.0.0.1:8000/)"]
    # A PDF shows a trace best (the page and the boxes of the words), then any format with pages.
    ranked = sorted(decoded, key=lambda pair: (pair[1].format != "pdf", not pair[1].pages))
    example = next(((path, quote) for path, result in ranked for quote in [_quotable(result)] if quote), None)
    if example is not None:
        path, quote = example
        lines.append(f"  trace a quote:        {program} trace {store} "
                     f"--quote {shlex.quote(quote)} --document {shlex.quote(str(path))}")
    lines.append(f"  audit its coverage:   {program} audit {store}")
    return "\n".join(lines)


def command_name() -> str:
    """kg-decoder as the user ran it, to print commands they can paste."""
    invoked = Path(sys.argv[0])
    if invoked.name == "__main__.py":  # python -m kg_decoder.cli
        return f"{shlex.quote(sys.executable)} -m kg_decoder.cli"
    found = shutil.which(invoked.name)
    if found and Path(found).resolve() == invoked.resolve():
        return invoked.name
    try:
        return shlex.quote(str(invoked.resolve().relative_to(Path.cwd().resolve())))
    except ValueError:
        return shlex.quote(str(invoked))


def _quotable(result: DecodeResult) -> str:
    """Four words of a decoded file that make a quote (a line of plain words), or ''."""
    for text_document in result.text_documents:
        for line in text_document.text.splitlines():
            words = line.split()
            if len(words) >= 4 and all(word.isalpha() for word in words[:4]):
                return " ".join(words[:4])
    return ""


def _count(number: int, noun: str) -> str:
    return "" if not number else f"{number} {noun}{'' if number == 1 else 's'}"


def describe_sources(sources: list[TraceSource], chains: Optional[list[list[VerdictChainView]]] = None) -> str:
    """The trace's sources for a person; ``chains``, per source, its fact's verdict chains (the version
    it was stated in, then what each later version of its source says of it)."""
    if not sources:
        return "no source found"
    lines = []
    for number, source in enumerate(sources, start=1):
        document = source.document
        lines.append(f"source {number}: {document.file_name or document.iri} ({document.mime_type})")
        lines.append(f"  document  {document.iri}")
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
                lines.append(f"    cell    {cell.label}: {cell.text!r}")
        lines.extend(_boxes(source.boxes))
        for chain in chains[number - 1] if chains else []:
            for step in chain.steps:
                place = f"page {step.page_number}" if step.page_number is not None else ""
                if step.previous_page_number is not None and step.previous_page_number != step.page_number:
                    place = f"page {step.previous_page_number} -> {step.page_number}"
                change = f" {step.previous_text!r} -> {step.text!r}" if step.verdict == "changed" else ""
                since = " (no longer in the source since this version)" if step.verdict == "removed" else ""
                said = " ".join(part for part in (step.verdict, place) if part)
                lines.append(f"  version   {step.number} of {chain.source_id} ({step.generated[:10]}): "
                             f"{said}{change}{since}")
        if source.latest is not None:
            lines.append(f"  now at    {source.latest.segment} {source.latest.start}..{source.latest.end}"
                         + (f" page {source.latest.page_number}" if source.latest.page_number is not None else ""))
            lines.extend(_boxes(source.latest.boxes))
    return "\n".join(lines)


def _boxes(boxes) -> list[str]:
    return [f"  box       page {box.page_number} [{box.left:.1f}, {box.top:.1f}, {box.right:.1f}, "
            f"{box.bottom:.1f}] {box.coordinate_system or ''} ({box.source}, {box.verification})" for box in boxes]
