"""The coverage dashboard: charts drawn from the shipped audits, as bars the page draws in SVG.

Each chart names the audit whose rows it draws (its SPARQL is that ``queries/audit-*.rq``) and
each bar links to what it counts. The geometry is worked out here, in the chart's own units
(:data:`WIDTH` wide), so the template only places rectangles and text.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Optional
from urllib.parse import quote, urlencode

from ..graph.store import KgStore
from ..model import Rows
from ..model.errors import UnknownEntity, refuses_input
from ..quality.audits import audit_definitions

WIDTH = 420  # the bars' full length, in the SVG's units
LABEL_WIDTH = 230  # room for a bar's label on its left
LABEL_LETTERS = 26  # letters of a label that fit there: 34 ran past the chart's left edge in Chromium
ROW_HEIGHT = 22
MOST_BARS = 25  # a chart over many documents shows the largest


@dataclass
class Piece:
    """One stretch of a bar: its value, where it starts and how long it is, its kind (a CSS class)."""

    value: float
    kind: str
    x: float = 0.0
    width: float = 0.0


@dataclass
class Bar:
    label: str
    pieces: list[Piece]
    href: str
    note: str = ""  # what the bar says at its end ("12", "87 %")
    y: float = 0.0

    @property
    def total(self) -> float:
        return sum(piece.value for piece in self.pieces)

    @property
    def title(self) -> str:
        return f"{self.label}: " + ", ".join(f"{piece.kind} {_number(piece.value)}" for piece in self.pieces)

    @property
    def short_label(self) -> str:
        """The label as it fits left of its bar (12 px sans-serif: at most ``LABEL_LETTERS`` of the widest
        letters); a cut one ends in an ellipsis (the bar's tooltip has it whole)."""
        if len(self.label) <= LABEL_LETTERS:
            return self.label
        return self.label[:LABEL_LETTERS - 1].rstrip() + "…"


@dataclass
class Chart:
    """A chart: its bars, the audit behind it, the legend of its kinds of pieces."""

    name: str
    title: str
    caption: str
    audit: str
    bars: list[Bar]
    legend: list[str] = field(default_factory=list)
    left_out: int = 0  # bars not drawn (more than MOST_BARS)
    scale: Optional[float] = None  # the value of a full-length bar (None: the largest bar's)
    width: int = WIDTH
    label_width: int = LABEL_WIDTH
    row_height: int = ROW_HEIGHT

    @property
    def height(self) -> int:
        return max(1, len(self.bars)) * self.row_height + 8

    @property
    def rows_url(self) -> str:
        return f"/dashboard/rows/{self.audit}"

    @property
    def sparql_url(self) -> str:
        return "/query?" + urlencode({"name": self.audit})

    def laid_out(self) -> "Chart":
        """The bars placed: each piece's x and width, each bar's y."""
        largest = self.scale or max((bar.total for bar in self.bars), default=0) or 1
        for row, bar in enumerate(self.bars):
            bar.y = 4 + row * self.row_height
            x = 0.0
            for piece in bar.pieces:
                piece.x, piece.width = x, self.width * piece.value / largest
                x += piece.width
        return self


def dashboard(store: KgStore) -> list[Chart]:
    """The coverage charts of a store, in the order a reviewer reads them."""
    counts = store.table("audit-document-counts").records()
    return [chart.laid_out() for chart in (
        _documents_by_format(store.table("audit-documents-by-format")),
        _pages_per_document(counts),
        _verified_boxes(store.table("audit-boxes-by-format")),
        _ocr_confidence(store.table("audit-ocr-confidence")),
        _chunks_without_facts(counts, store.table("audit-chunks-without-facts")),
        _refused_and_failed(store.table("audit-failed-or-fallback")),
    )]


def audit_rows(store: KgStore, name: str) -> Rows:
    """The rows of a shipped audit, for the page behind a chart; UnknownEntity for another name."""
    if name not in {audit.name for audit in audit_definitions()}:
        raise UnknownEntity(f"no audit {name[:100]} (see the SPARQL page's audits)")
    return store.table(name)


def _documents_by_format(table: Rows) -> Chart:
    by_format: dict[str, Counter] = defaultdict(Counter)
    for row in table.records():
        by_format[row["format"]][row["status"]] += row["documents"]
    bars = [Bar(label=fmt, pieces=[Piece(counts["decoded"], "decoded"), Piece(counts["decoded in part"], "in-part")],
                href="/documents?" + urlencode({"format": fmt}), note=_number(sum(counts.values())))
            for fmt, counts in sorted(by_format.items(), key=lambda item: (-sum(item[1].values()), item[0]))]
    return Chart("documents-by-format", "Documents by format and status",
                 "Documents decoded whole and in part (a reading failed on a page or a part), per format.",
                 "audit-documents-by-format", bars, legend=["decoded", "in-part"])


def _pages_per_document(counts: list[dict]) -> Chart:
    paged = sorted((row for row in counts if row["pages"]), key=lambda row: (-row["pages"], row.get("fileName") or ""))
    bars = [Bar(label=row.get("fileName") or row["document"], pieces=[Piece(row["pages"], "pages")],
                href=_document_url(row["document"]), note=_number(row["pages"])) for row in paged[:MOST_BARS]]
    return Chart("pages-per-document", "Pages per document",
                 "Pages (slides, sheets) of each document of a page-based format, the largest first.",
                 "audit-document-counts", bars, left_out=max(0, len(paged) - MOST_BARS))


def _verified_boxes(table: Rows) -> Chart:
    bars = []
    for row in table.records():
        share = float(row.get("share") or 0)
        bars.append(Bar(label=row["format"], pieces=[Piece(100 * share, "verified"), Piece(100 - 100 * share, "rest")],
                        href="/documents?" + urlencode({"format": row["format"]}),
                        note=f"{100 * share:.0f} % of {row['elements']}"))
    return Chart("verified-boxes", "Elements with a verified box, per format",
                 "The share of each format's text elements whose box a second reading of the page bears out: "
                 "how often a citation points at the words themselves.",
                 "audit-boxes-by-format", bars, legend=["verified", "rest"], scale=100)


def _ocr_confidence(table: Rows) -> Chart:
    bins: dict[int, Counter] = {step: Counter() for step in range(10)}
    for row in table.records():
        bins[min(9, int(float(row["confidence"]) * 10))][row["kind"]] += 1
    bars = [Bar(label=f"{step / 10:.1f} – {(step + 1) / 10:.1f}",
                pieces=[Piece(kinds["page"], "page"), Piece(kinds["picture"], "picture")],
                href="/dashboard/rows/audit-ocr-confidence", note=_number(sum(kinds.values())))
            for step, kinds in sorted(bins.items(), reverse=True)]
    if not any(bar.total for bar in bars):
        bars = []
    return Chart("ocr-confidence", "OCR confidence of pages and pictures",
                 "How many pages read by OCR and pictures whose words OCR read have each mean word confidence "
                 "(tesseract's, 0 to 1); under 0.8 for a page or 0.6 for a picture, check by eye.",
                 "audit-ocr-confidence", bars, legend=["page", "picture"])


def _chunks_without_facts(counts: list[dict], without: Rows) -> Chart:
    missing = Counter(row["document"] for row in without.records())
    chunked = sorted((row for row in counts if row["chunks"]),
                     key=lambda row: (-missing[row["document"]], row.get("fileName") or ""))
    bars = [Bar(label=row.get("fileName") or row["document"],
                pieces=[Piece(row["chunks"] - missing[row["document"]], "with-facts"),
                        Piece(missing[row["document"]], "without-facts")],
                href=_document_url(row["document"]) + "#chunks",
                note=f"{missing[row['document']]} of {row['chunks']}") for row in chunked[:MOST_BARS]]
    return Chart("chunks-without-facts", "Chunks without facts",
                 "Each chunked document's chunks: those facts are cited to and those without any, most "
                 "without first.",
                 "audit-chunks-without-facts", bars, legend=["with-facts", "without-facts"],
                 left_out=max(0, len(chunked) - MOST_BARS))


def _refused_and_failed(table: Rows) -> Chart:
    codes: dict[str, Counter] = defaultdict(Counter)
    for row in table.records():
        if row["problem"] == "failed":
            code = (row.get("reason") or "").split(":", 1)[0]
            codes[code]["refused" if refuses_input(code) else "failed"] += 1
    bars = [Bar(label=code, pieces=[Piece(kinds["refused"], "refused"), Piece(kinds["failed"], "failed")],
                href="/dashboard/rows/audit-failed-or-fallback", note=_number(sum(kinds.values())))
            for code, kinds in sorted(codes.items(), key=lambda item: (-sum(item[1].values()), item[0]))]
    return Chart("refused-and-failed", "Refused and failed inputs",
                 "Files not decoded, by error: refused for what they are (encrypted, empty, damaged...) or "
                 "failed for want of something the job needed.",
                 "audit-failed-or-fallback", bars, legend=["refused", "failed"])


def _document_url(iri: str) -> str:
    return "/documents/" + quote(iri, safe="")


def _number(value: float) -> str:
    return f"{value:g}"
