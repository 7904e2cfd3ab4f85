"""Office documents whose pages are known: a DOCX with a hard page break and an odd-page section
break (and the rendered page breaks Word records where its layout began a page), a table and a
picture; a PPTX with a text box and a table at known places. And poppler's word boxes on a PDF, the engine
the tests check rendered positions against."""

from __future__ import annotations

import io
import re
import subprocess
from pathlib import Path

DOCX_PAGES = [  # (text, page Word's recorded layout puts it on)
    ("Quarterly report", 1),
    ("The first page introduces the report and its authors.", 1),
    ("The second page holds the table of regional revenue.", 2),
    ("Region Revenue North 12.5", 2),
    ("On the third page the auditors signed the statement in March.", 3),
]
DOCX_QUOTE = "auditors signed the statement"
PPTX_QUOTE = "margins grew in every region"


def make_paged_docx(path: Path) -> Path:
    import docx
    from docx.enum.section import WD_SECTION
    from docx.oxml import OxmlElement
    from docx.shared import Inches
    from PIL import Image

    def rendered_break(paragraph) -> None:
        """What Word records where its layout began a new page: a run holding w:lastRenderedPageBreak."""
        run = OxmlElement("w:r")
        run.append(OxmlElement("w:lastRenderedPageBreak"))
        paragraph._p.insert(1 if paragraph._p.pPr is not None else 0, run)

    document = docx.Document()
    document.add_heading(DOCX_PAGES[0][0], 1)
    document.add_paragraph(DOCX_PAGES[1][0])
    document.add_page_break()
    rendered_break(document.add_paragraph(DOCX_PAGES[2][0]))
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Region", "Revenue"), ("North", "12.5")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    picture = io.BytesIO()
    Image.new("RGB", (120, 60), (40, 90, 200)).save(picture, "PNG")
    picture.seek(0)
    document.add_picture(picture, width=Inches(1.5))
    document.add_section(WD_SECTION.ODD_PAGE)
    rendered_break(document.add_paragraph(DOCX_PAGES[4][0]))
    document.save(path)
    return path


SLIDE_TABLE = [("Region", "Revenue", "Margin"), ("North", "12.5", "8%"), ("South coast", "7.25", "11%")]
SLIDE_TABLE_AT = (1.0, 1.5)  # inches from the slide's left and top
SLIDE_TABLE_WIDTHS = (2.5, 1.5, 2.0)  # inches
SLIDE_TABLE_HEIGHT = 0.6  # inches per row


def make_placed_pptx(path: Path) -> Path:
    """Two slides; on the second a text box and a table at known places (``slide_table_cells``)."""
    from pptx import Presentation
    from pptx.util import Inches, Pt

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])  # blank
    slide.shapes.add_textbox(Inches(1), Inches(1), Inches(6), Inches(1)).text_frame.text = "An opening slide"
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    box = slide.shapes.add_textbox(Inches(4), Inches(5), Inches(5), Inches(1)).text_frame
    box.text = f"This year {PPTX_QUOTE} we serve."
    box.paragraphs[0].runs[0].font.size = Pt(18)
    x, y = SLIDE_TABLE_AT
    rows, columns = len(SLIDE_TABLE), len(SLIDE_TABLE[0])
    frame = slide.shapes.add_table(rows, columns, Inches(x), Inches(y), Inches(sum(SLIDE_TABLE_WIDTHS)),
                                   Inches(SLIDE_TABLE_HEIGHT * rows))
    for c, width in enumerate(SLIDE_TABLE_WIDTHS):
        frame.table.columns[c].width = Inches(width)
    for r, row in enumerate(SLIDE_TABLE):
        frame.table.rows[r].height = Inches(SLIDE_TABLE_HEIGHT)
        for c, text in enumerate(row):
            frame.table.cell(r, c).text = text
    deck.save(path)
    return path


def slide_table_cells() -> dict[str, tuple[float, float, float, float]]:
    """Each cell of the second slide's table by its text, with its rectangle on the slide in points."""
    x, y = SLIDE_TABLE_AT
    cells = {}
    for r, row in enumerate(SLIDE_TABLE):
        for c, text in enumerate(row):
            left, top = x + sum(SLIDE_TABLE_WIDTHS[:c]), y + SLIDE_TABLE_HEIGHT * r
            cells[text] = tuple(72 * v for v in (left, top, left + SLIDE_TABLE_WIDTHS[c], top + SLIDE_TABLE_HEIGHT))
    return cells


def poppler_words(pdf: Path) -> list[tuple[int, str, tuple[float, float, float, float]]]:
    """Every word poppler reads on a PDF: (page, word, box top-left origin)."""
    out = subprocess.run(["pdftotext", "-bbox-layout", str(pdf), "-"], capture_output=True, text=True).stdout
    words = []
    for number, page in enumerate(out.split("<page ")[1:], start=1):
        for match in re.finditer(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">(.*?)</word>',
                                 page):
            words.append((number, match.group(5), tuple(float(match.group(i)) for i in range(1, 5))))
    return words


def poppler_box(pdf: Path, phrase: str) -> tuple[int, tuple[float, float, float, float]]:
    """The page and union box of the first run of words that reads ``phrase``."""
    words = poppler_words(pdf)
    wanted = phrase.split()
    for i in range(len(words) - len(wanted) + 1):
        run = words[i:i + len(wanted)]
        if [w[1] for w in run] == wanted and len({w[0] for w in run}) == 1:
            boxes = [w[2] for w in run]
            return run[0][0], (min(b[0] for b in boxes), min(b[1] for b in boxes),
                               max(b[2] for b in boxes), max(b[3] for b in boxes))
    raise AssertionError(f"poppler does not read {phrase!r} on one line of {pdf}")

