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


KOREAN_FONT = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf"  # Debian's fonts-nanum (scripts/setup.sh)
# Korean lines set as Korean word processors export justified text: each glyph placed on its own, the
# line's spare room spread between all its glyphs (so a word's syllables stand about 0.2 em apart).
KOREAN_LINES = ["서울시 커피전문점 매출은 지난해보다 크게 늘었습니다.",
                "소비자 조사에서 응답자 대부분이 가격을 꼽았습니다.",
                "전문점 수는 강남구에서 가장 많았습니다."]
KOREAN_UNSPACED = "작년 전문점 매출 합계"  # its words parted by room alone: no space glyph drawn
KOREAN_TABBED = "구분\t매출\t증가율"  # a TAB character drawn between words
KOREAN_CODE = "KSA-0117"  # a margin code, a glyph a line down the margin, drawn twice (fake bold)
KOREAN_TURNED = "문서번호 2024"  # a margin code up the left margin, glyph by glyph, drawn twice (fake bold)


def korean(folder: Path) -> tuple[Path, list[tuple[str, Box]]]:
    """A Korean page as a Hangul word processor exports it: justified lines with each glyph placed on
    its own (0.2 em between a word's syllables), a line whose words are parted by room alone, a line
    with TABs between its words, a margin code stacked a glyph a line and another turned up the left
    margin glyph by glyph, each drawn twice a third of a point apart (fake bold). The lines as a
    reader reads them, each with its box."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont
    from reportlab.pdfgen import canvas as canvases

    if "NanumGothic" not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(TTFont("NanumGothic", KOREAN_FONT))
    face = pdfmetrics.getFont("NanumGothic").face
    ascent, descent = face.ascent / 1000 * SIZE, face.descent / 1000 * SIZE
    path = folder / "korean.pdf"
    canvas = canvases.Canvas(str(path), pagesize=PAGE)
    drawn: list[tuple[str, Box]] = []

    def glyph_by_glyph(x: float, baseline: float, glyphs: list[str], extra: float) -> float:
        text = canvas.beginText()
        text.setFont("NanumGothic", SIZE)
        for glyph in glyphs:
            text.setTextOrigin(x, baseline)
            text.textOut(glyph)
            x += pdfmetrics.stringWidth(glyph, "NanumGothic", SIZE) + extra
        canvas.drawText(text)
        return x - extra

    baseline = 720.0
    for line in KOREAN_LINES:
        right = glyph_by_glyph(72, baseline, list(line), 0.2 * SIZE)
        drawn.append((line, (72, PAGE[1] - baseline - ascent, right, PAGE[1] - baseline - descent)))
        baseline -= 1.6 * SIZE
    baseline -= SIZE
    x = 72.0
    words = KOREAN_UNSPACED.split()
    for number, word in enumerate(words):  # a word's syllables 0.05 em apart, the words 0.35 em
        x = glyph_by_glyph(x, baseline, list(word), 0.05 * SIZE)
        x += 0.35 * SIZE if number < len(words) - 1 else 0
    drawn.append((KOREAN_UNSPACED, (72, PAGE[1] - baseline - ascent, x, PAGE[1] - baseline - descent)))
    baseline -= 2.6 * SIZE
    canvas.setFont("NanumGothic", SIZE)
    canvas.drawString(72, baseline, KOREAN_TABBED)
    width = pdfmetrics.stringWidth(KOREAN_TABBED, "NanumGothic", SIZE)
    drawn.append((KOREAN_TABBED.replace("\t", " "),
                  (72, PAGE[1] - baseline - ascent, 72 + width, PAGE[1] - baseline - descent)))
    canvas.setFont("NanumGothic", 8)
    for shift in (0.0, 0.3):
        for number, glyph in enumerate(KOREAN_CODE):
            canvas.drawString(560 + shift, 600 - 10 * number, glyph)
        along = 300.0
        for glyph in KOREAN_TURNED:  # turned a quarter, reading upwards, each glyph a text object
            canvas.saveState()
            canvas.translate(40 + shift, along)
            canvas.rotate(90)
            canvas.setFont("NanumGothic", 8)
            canvas.drawString(0, 0, glyph)
            canvas.restoreState()
            along += pdfmetrics.stringWidth(glyph, "NanumGothic", 8)
    canvas.save()
    return path, drawn
