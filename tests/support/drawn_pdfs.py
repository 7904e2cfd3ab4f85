"""PDFs drawn with reportlab where the test knows where every word went, and the same page
placed on a page whose geometry makes boxes go wrong: a MediaBox with a negative origin, a CropBox
inside a larger MediaBox, /Rotate 90, 180 and 270 (the content turned so the page displays upright,
as scanners and landscape layouts write it) and a /UserUnit.

A word's box is where a viewer shows it: its advance across, the font's ascent to descent up and
down (what a viewer's selection covers), in points from the displayed page's top-left corner.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from fixtures import FONT

PAGE = (612.0, 792.0)
SIZE = 12.0
CROP = (100.0, 200.0, 520.0, 700.0)  # x0, y0, x1, y1 in the plain page's user space
GEOMETRIES = ("plain", "negative-origin", "cropbox", "rotate-90", "rotate-180", "rotate-270", "user-unit")

Box = tuple[float, float, float, float]


@dataclass
class Drawn:
    path: Path
    page_number: int
    quote: str
    boxes: list[Box]  # one per line the quote covers, on the displayed page
    page_size: tuple[float, float]  # the displayed page's width and height
    image: Optional[Box] = None  # where a picture on the page is, on the displayed page


class _Page:
    """A reportlab canvas that records where the runs it draws sit (top-left origin, line height)."""

    def __init__(self, path: Path, font: str = "Helvetica") -> None:
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.ttfonts import TTFont
        from reportlab.pdfgen import canvas

        if font == "DejaVuSans" and "DejaVuSans" not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(TTFont("DejaVuSans", FONT))
        self.font = font
        self.face = pdfmetrics.getFont(font).face
        self.width = pdfmetrics.stringWidth
        self.canvas = canvas.Canvas(str(path), pagesize=PAGE)
        self.canvas.setFont(font, SIZE)

    def draw(self, x: float, baseline: float, text: str) -> None:
        self.canvas.drawString(x, baseline, text)

    def box(self, x: float, baseline: float, text: str, start: int, end: int) -> Box:
        """Where ``text[start:end]`` is when ``text`` is drawn at (x, baseline)."""
        left = x + self.width(text[:start], self.font, SIZE)
        right = x + self.width(text[:end], self.font, SIZE)
        ascent, descent = self.face.ascent / 1000 * SIZE, self.face.descent / 1000 * SIZE
        return (left, PAGE[1] - (baseline + ascent), right, PAGE[1] - (baseline + descent))

    def next_page(self) -> None:
        self.canvas.showPage()
        self.canvas.setFont(self.font, SIZE)

    def save(self) -> None:
        self.canvas.save()


def _span(text: str, words: str) -> tuple[int, int]:
    start = text.index(words)
    return start, start + len(words)


def geometry_page(folder: Path, geometry: str) -> Drawn:
    """Two pages; on the second, a sentence at a known place; placed with ``geometry``."""
    plain = folder / "plain.pdf"
    page = _Page(plain)
    page.draw(72, 700, "The first page says nothing of interest here.")
    page.next_page()
    line = "Quarterly revenue rose by twelve percent in the north."
    page.draw(150, 430, line)
    page.draw(150, 400, "A second line keeps the paragraph honest.")
    picture = (300.0, 250.0, 80.0, 50.0)  # x, y (bottom-left), width, height
    page.canvas.drawImage(_picture(folder), *picture)
    page.save()
    box = page.box(150, 430, line, *_span(line, "rose by twelve percent"))
    image = (picture[0], PAGE[1] - picture[1] - picture[3], picture[0] + picture[2], PAGE[1] - picture[1])
    path = folder / f"{geometry}.pdf"
    size = PAGE
    if geometry == "plain":
        path = plain
    else:
        _place(plain, path, geometry)
        if geometry == "cropbox":  # the visible area starts at the CropBox's top-left corner
            box, image = _cropped(box), _cropped(image)
            size = (CROP[2] - CROP[0], CROP[3] - CROP[1])
    return Drawn(path, 2, "rose by twelve percent", [box], size, image)


def _cropped(box: Box) -> Box:
    top = PAGE[1] - CROP[3]
    return (box[0] - CROP[0], box[1] - top, box[2] - CROP[0], box[3] - top)


def _picture(folder: Path) -> str:
    from PIL import Image

    path = folder / "picture.png"
    image = Image.new("RGB", (160, 100), "white")
    for x in range(160):
        for y in range(100):
            if (x // 20 + y // 20) % 2:
                image.putpixel((x, y), (30, 60, 200))
    image.save(path)
    return str(path)


def _place(source: Path, target: Path, geometry: str) -> None:
    """The pages of ``source`` with ``geometry``; each displays as the original did (but the crop)."""
    import pypdf
    from pypdf import Transformation
    from pypdf.generic import FloatObject, NameObject, RectangleObject

    writer = pypdf.PdfWriter(clone_from=str(source))
    width, height = PAGE
    for page in writer.pages:
        if geometry == "negative-origin":
            page.add_transformation(Transformation().translate(-300, -400))
            page.mediabox = RectangleObject((-300, -400, width - 300, height - 400))
        elif geometry == "cropbox":
            page.cropbox = RectangleObject(CROP)
        elif geometry.startswith("rotate-"):
            turn = int(geometry.split("-")[1])
            # Turn the content counter-clockwise by the page's /Rotate, so the page displays upright.
            shift = {90: (height, 0), 180: (width, height), 270: (0, width)}[turn]
            page.add_transformation(Transformation().rotate(turn).translate(*shift))
            page.mediabox = RectangleObject((0, 0, height, width) if turn in (90, 270) else (0, 0, width, height))
            page.rotation = turn
        elif geometry == "user-unit":
            page[NameObject("/UserUnit")] = FloatObject(2.0)
        if "/CropBox" in page and geometry != "cropbox":
            del page["/CropBox"]
    writer.write(str(target))


def ligatures(folder: Path) -> Drawn:
    """Words drawn with the ligature glyphs ﬁ, ﬀ, ﬃ (so the text layer holds U+FB01, U+FB00, U+FB03)."""
    path = folder / "ligatures.pdf"
    page = _Page(path, font="DejaVuSans")
    line = "The e\ufb03cient sta\ufb00 \ufb01nished the o\ufb03ce report."
    page.draw(90, 600, line)
    page.save()
    return Drawn(path, 1, "efficient staff finished the office",
                 [page.box(90, 600, line, *_span(line, "e\ufb03cient sta\ufb00 \ufb01nished the o\ufb03ce"))], PAGE)


def hyphenated(folder: Path) -> Drawn:
    """A word broken at a line end: ``docu-`` / ``ment``."""
    path = folder / "hyphenated.pdf"
    page = _Page(path)
    first, second = "The auditors signed the docu-", "ment was filed in March of that year."
    page.draw(90, 600, first)
    page.draw(90, 585, second)
    page.save()
    return Drawn(path, 1, "the document was filed",
                 [page.box(90, 600, first, *_span(first, "the docu-")),
                  page.box(90, 585, second, *_span(second, "ment was filed"))], PAGE)


def two_columns(folder: Path) -> Drawn:
    """A sentence that runs from the foot of the left column to the head of the right one."""
    path = folder / "two-columns.pdf"
    page = _Page(path)
    left = ["Columns are how journals set", "their pages, and a sentence", "often runs across"]
    right = ["both columns without a break.", "The reader follows it down", "and up again with ease."]
    for row, (a, b) in enumerate(zip(left, right)):
        page.draw(72, 600 - 15 * row, a)
        page.draw(330, 600 - 15 * row, b)
    page.save()
    return Drawn(path, 1, "often runs across both columns",
                 [page.box(72, 570, left[2], 0, len(left[2])),
                  page.box(330, 600, right[0], *_span(right[0], "both columns"))], PAGE)


def table_rows(folder: Path) -> Drawn:
    """A table whose label and value columns stand far apart, so a row is stored cell by cell down
    its columns; a quote copied from a viewer reads it across the row."""
    path = folder / "table.pdf"
    page = _Page(path)
    rows = [("Revenue", "12.5"), ("Operating costs", "7.1"), ("Net profit", "5.4")]
    for number, (label, value) in enumerate(rows):
        page.draw(72, 600 - 16 * number, label)
        page.draw(420, 600 - 16 * number, value)
    page.save()
    return Drawn(path, 1, "Operating costs 7.1",
                 [page.box(72, 584, rows[1][0], 0, len(rows[1][0])),
                  page.box(420, 584, rows[1][1], 0, len(rows[1][1]))], PAGE)


OUT_OF_ORDER = [
    "The harbour trust met four times in the year under review.",
    "Its auditors wrote that the review has not found any breach.",
    "Harbour dues rose by nine percent while dredging costs fell.",
    "A new contract for the dredging was signed in the spring.",
    "Three berths were opened to the ferries from the islands.",
    "Waiting time for cargo ships dropped to under two days.",
    "The board thanks the pilots for a year without accidents.",
    "Plans for the next year include a second container crane.",
    "The trust will publish its accounts in the autumn as usual.",
    "Questions may be sent to the secretary of the harbour trust.",
]


def out_of_order(folder: Path) -> tuple[Path, list[tuple[str, Box]]]:
    """A page whose lines sit evenly from its top to its foot (pdfminer reads it as one element holding
    the whole page, in reading order) but are drawn in a shuffled order, each under another current
    transformation matrix: plain, flipped (y down, text matrix flipped back) and turned a quarter
    (text matrix turned back), so every line shows upright where it belongs. Quotes with the box of
    their words: each whole line, and three words from its middle."""
    path = folder / "out-of-order.pdf"
    page = _Page(path)
    canvas = page.canvas
    order = [3, 8, 0, 6, 1, 9, 4, 2, 7, 5]
    quotes = []
    for number, line in enumerate(OUT_OF_ORDER):
        baseline = 752 - 14 * number
        middle = " ".join(line.split()[2:5])
        quotes += [(line, page.box(72, baseline, line, 0, len(line))),
                   (middle, page.box(72, baseline, line, *_span(line, middle)))]
    for turn, number in enumerate(order):
        x, baseline = 72, 752 - 14 * number
        canvas.saveState()
        text = canvas.beginText()
        text.setFont(page.font, SIZE)
        if turn % 3 == 0:
            text.setTextOrigin(x, baseline)
        elif turn % 3 == 1:  # y runs down the page, as generators that draw from the top-left write it
            canvas.transform(1, 0, 0, -1, 0, PAGE[1])
            text.setTextTransform(1, 0, 0, -1, x, PAGE[1] - baseline)
        else:  # a quarter turn: (u, v) shows at (PAGE width - v, u)
            canvas.transform(0, 1, -1, 0, PAGE[0], 0)
            text.setTextTransform(0, -1, 1, 0, baseline, PAGE[0] - x)
        text.textLine(OUT_OF_ORDER[number])
        canvas.drawText(text)
        canvas.restoreState()
    page.save()
    return path, quotes
