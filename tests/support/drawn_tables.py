"""PDF pages with tables drawn at known places, in the styles tables come in: ruled (a full grid),
booktabs (three horizontal rules), borderless (aligned columns only), with spanning cells (a header
over two columns, a stub over two rows) and with a cell of two lines. For every cell the test knows
its row, column, spans, text and where its words were drawn (top-left origin, PDF points).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

PAGE = (612.0, 792.0)
SIZE = 10.0
ROW = 20.0  # row height
PAD = 5.0  # text inset from the cell's left edge
ASCENT, DESCENT = 0.718, 0.207  # Helvetica's cap height and descent, per point of size

Box = tuple[float, float, float, float]


@dataclass
class DrawnCell:
    row: int
    column: int
    text: str
    box: Box  # where its words are
    row_span: int = 1
    column_span: int = 1
    header: bool = False


@dataclass
class DrawnTable:
    style: str
    page: int
    box: Box  # the extent of its words
    cells: list[DrawnCell] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return max(c.row + c.row_span for c in self.cells)

    @property
    def columns(self) -> int:
        return max(c.column + c.column_span for c in self.cells)


PROSE = ("Tables carry most of the facts a reader traces back to a report. This paragraph is prose and "
         "must never be read as a table, however its lines fall on the page.")

REGIONS = [["Region", "2021", "2022", "2023"], ["North", "1,204", "1,377", "1,512"],
           ["South", "988", "1,021", "1,130"], ["East", "2,310", "2,205", "2,498"], ["West", "754", "802", "911"]]


def _text_box(canvas, x: float, baseline: float, text: str) -> Box:
    width = canvas.stringWidth(text, "Helvetica", SIZE)
    return (x, baseline - ASCENT * SIZE, x + width, baseline + DESCENT * SIZE)


class _Drawer:
    def __init__(self, path: Path) -> None:
        from reportlab.pdfgen import canvas

        self.canvas = canvas.Canvas(str(path), pagesize=PAGE)
        self.page = 1
        self.tables: list[DrawnTable] = []

    def line(self, x0: float, y0: float, x1: float, y1: float, width: float = 0.6) -> None:
        self.canvas.setLineWidth(width)
        self.canvas.line(x0, PAGE[1] - y0, x1, PAGE[1] - y1)

    def write(self, x: float, baseline: float, text: str) -> Box:
        self.canvas.setFont("Helvetica", SIZE)
        self.canvas.drawString(x, PAGE[1] - baseline, text)
        return _text_box(self.canvas, x, baseline, text)

    def prose(self, top: float) -> None:
        words, line, lines = PROSE.split(), "", []
        for word in words:
            if self.canvas.stringWidth(f"{line} {word}", "Helvetica", SIZE) > 440:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        lines.append(line)
        for k, text in enumerate(lines):
            self.write(72, top + 14 * k, text)

    def grid_table(self, style: str, left: float, top: float, widths: list[float], rows: list[list[str]],
                   header_rows: int = 1) -> DrawnTable:
        table = DrawnTable(style, self.page, (0, 0, 0, 0))
        xs = [left + sum(widths[:k]) for k in range(len(widths) + 1)]
        for r, row in enumerate(rows):
            for c, text in enumerate(row):
                box = self.write(xs[c] + PAD, top + r * ROW + 14, text)
                table.cells.append(DrawnCell(r, c, text, box, header=r < header_rows))
        bottom = top + len(rows) * ROW
        if style == "ruled":
            for r in range(len(rows) + 1):
                self.line(xs[0], top + r * ROW, xs[-1], top + r * ROW)
            for x in xs:
                self.line(x, top, x, bottom)
        elif style == "booktabs":
            self.line(xs[0], top, xs[-1], top, 1.2)
            self.line(xs[0], top + header_rows * ROW, xs[-1], top + header_rows * ROW)
            self.line(xs[0], bottom, xs[-1], bottom, 1.2)
        table.box = _union([cell.box for cell in table.cells])
        self.tables.append(table)
        return table

    def spanned_table(self, left: float, top: float) -> DrawnTable:
        """A ruled table: "Region" spans two header rows, "Sales" spans the two year columns, and a
        cell holds two lines."""
        table = DrawnTable("spans", self.page, (0, 0, 0, 0))
        widths = [120.0, 90.0, 90.0]
        xs = [left + sum(widths[:k]) for k in range(len(widths) + 1)]
        heights = [ROW, ROW, ROW, 2 * ROW, ROW]
        ys = [top + sum(heights[:k]) for k in range(len(heights) + 1)]
        def cell(r, c, text, row_span=1, column_span=1, header=False, lines=None):
            boxes = []
            for k, piece in enumerate(lines or [text]):
                boxes.append(self.write(xs[c] + PAD, ys[r] + 14 + k * 14, piece))
            table.cells.append(DrawnCell(r, c, text, _union(boxes), row_span, column_span, header))
        cell(0, 0, "Region", row_span=2, header=True)
        cell(0, 1, "Sales", column_span=2, header=True)
        cell(1, 1, "2022", header=True)
        cell(1, 2, "2023", header=True)
        cell(2, 0, "Alpine valleys")
        cell(2, 1, "3,150")
        cell(2, 2, "3,402")
        cell(3, 0, "Coastal lowlands and islands", lines=["Coastal lowlands", "and islands"])
        cell(3, 1, "2,877")
        cell(3, 2, "2,990")
        cell(4, 0, "Plateau")
        cell(4, 1, "1,045")
        cell(4, 2, "1,118")
        for r in (0, 2, 3, 4, 5):
            self.line(xs[0], ys[r], xs[-1], ys[r])
        self.line(xs[1], ys[1], xs[-1], ys[1])  # under "Sales" only
        self.line(xs[0], ys[0], xs[0], ys[-1])
        self.line(xs[1], ys[0], xs[1], ys[-1])
        self.line(xs[2], ys[1], xs[2], ys[-1])  # not through "Sales"
        self.line(xs[3], ys[0], xs[3], ys[-1])
        table.box = _union([c.box for c in table.cells])
        self.tables.append(table)
        return table

    def next_page(self) -> None:
        self.canvas.showPage()
        self.page += 1

    def save(self) -> None:
        self.canvas.showPage()
        self.canvas.save()


def tables_pdf(path: Path) -> tuple[Path, list[DrawnTable]]:
    """Four pages: a ruled table under prose; a booktabs table; a borderless table; the spanning table.
    A fifth page is prose only."""
    drawer = _Drawer(path)
    drawer.prose(72)
    drawer.grid_table("ruled", 72, 140, [110, 80, 80, 80], REGIONS)
    drawer.next_page()
    drawer.prose(72)
    drawer.grid_table("booktabs", 90, 150, [120, 90, 90, 90], REGIONS)
    drawer.next_page()
    drawer.prose(72)
    drawer.grid_table("borderless", 72, 150, [120, 90, 90, 90], REGIONS)
    drawer.next_page()
    drawer.prose(72)
    drawer.spanned_table(100, 150)
    drawer.next_page()
    drawer.prose(72)
    drawer.prose(300)
    drawer.save()
    return path, drawer.tables


def _union(boxes: list[Box]) -> Box:
    return (min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes))


SCANNED = [["Station", "Rain (mm)", "Snow (cm)"], ["Davos", "1,024", "388"], ["Arosa", "1,187", "412"],
           ["Zermatt", "712", "295"], ["Samedan", "698", "301"]]


def scanned_table_pdf(path: Path, dpi: int = 200) -> tuple[Path, DrawnTable]:
    """A page that is only a picture (a scan at ``dpi``) of prose and a ruled table of small print
    (10 pt type); every cell's ruled box is known, in points."""
    import io

    from PIL import Image, ImageDraw, ImageFont

    from fixtures import FONT

    scale = dpi / 72
    image = Image.new("L", (round(PAGE[0] * scale), round(PAGE[1] * scale)), 255)
    draw = ImageDraw.Draw(image)
    body = ImageFont.truetype(str(FONT), round(SIZE * scale))
    draw.text((72 * scale, 72 * scale), "Winter records of the alpine stations, as measured.", font=body, fill=0)
    left, top, widths = 72.0, 150.0, [120.0, 100.0, 100.0]
    xs = [left + sum(widths[:k]) for k in range(len(widths) + 1)]
    ys = [top + ROW * k for k in range(len(SCANNED) + 1)]
    table = DrawnTable("scanned", 1, (xs[0], ys[0], xs[-1], ys[-1]))
    for r, row in enumerate(SCANNED):
        for c, text in enumerate(row):
            draw.text(((xs[c] + PAD) * scale, (ys[r] + 4) * scale), text, font=body, fill=0)
            table.cells.append(DrawnCell(r, c, text, (xs[c], ys[r], xs[c + 1], ys[r + 1]), header=r == 0))
    for y in ys:
        draw.line([(xs[0] * scale, y * scale), (xs[-1] * scale, y * scale)], fill=0, width=3)
    for x in xs:
        draw.line([(x * scale, ys[0] * scale), (x * scale, ys[-1] * scale)], fill=0, width=3)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    page = canvas.Canvas(str(path), pagesize=PAGE)
    page.drawImage(ImageReader(io.BytesIO(buffer.getvalue())), 0, 0, *PAGE)
    page.showPage()
    page.save()
    return path, table
