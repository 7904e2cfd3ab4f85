"""Pictures of known words drawn with a known font, placed in documents where the test knows where
every word of the picture lands on the page: a JPEG on a PDF page at a known rectangle, a PNG in a
DOCX, a PNG on a PPTX slide at a known shape box.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from fixtures import FONT

# Words no page text holds, so a quote of them can only come from the picture.
LINES = ("Zanzibar widgets shipped", "Quorum ledger 4711")
PIXELS = (900, 300)  # the picture's size
FONT_PIXELS = 40
ORIGIN = (40, 60)  # the first line's top-left corner in the picture
LINE_STEP = 110

Box = tuple[float, float, float, float]


@dataclass
class Picture:
    data: bytes
    words: dict[str, Box]  # each word's ink box in the picture's pixels


def draw_picture(fmt: str = "PNG") -> Picture:
    """Black words on white, with a coloured bar (not text) under them."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(str(FONT), FONT_PIXELS)
    image = Image.new("RGB", PIXELS, "white")
    draw = ImageDraw.Draw(image)
    words: dict[str, Box] = {}
    for number, line in enumerate(LINES):
        x, y = ORIGIN[0], ORIGIN[1] + number * LINE_STEP
        for word in line.split():
            draw.text((x, y), word, font=font, fill="black")
            words[word] = tuple(float(v) for v in draw.textbbox((x, y), word, font=font))
            x = draw.textbbox((x, y), word + " ", font=font)[2]
    draw.rectangle((40, 270, 860, 290), fill=(30, 90, 200))
    buffer = io.BytesIO()
    image.save(buffer, fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return Picture(buffer.getvalue(), words)


def on_page(box: Box, picture_box: Box) -> Box:
    """A box in the picture's pixels where the picture is drawn into ``picture_box`` on a page."""
    left, top, right, bottom = picture_box
    sx, sy = (right - left) / PIXELS[0], (bottom - top) / PIXELS[1]
    return (left + box[0] * sx, top + box[1] * sy, left + box[2] * sx, top + box[3] * sy)


def pdf_with_picture(path: Path, picture_box: Box = (72.0, 300.0, 432.0, 420.0)) -> tuple[Path, Picture, Box]:
    """A one-page PDF (612x792 pt) with a line of text and the JPEG drawn at ``picture_box``
    (left, top, right, bottom in points from the top-left corner)."""
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    picture = draw_picture("JPEG")
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    page.setFont("Helvetica", 12)
    page.drawString(72, 720, "The figure below shows the shipping summary.")
    left, top, right, bottom = picture_box
    page.drawImage(ImageReader(io.BytesIO(picture.data)), left, 792 - bottom, right - left, bottom - top)
    page.showPage()
    page.save()
    return path, picture, picture_box


def docx_with_picture(path: Path) -> tuple[Path, Picture]:
    from docx import Document
    from docx.shared import Inches

    picture = draw_picture("PNG")
    document = Document()
    document.add_paragraph("The figure below shows the shipping summary.")
    document.add_picture(io.BytesIO(picture.data), width=Inches(4))
    document.add_paragraph("Text after the figure.")
    document.save(path)
    return path, picture


def pptx_with_picture(path: Path, picture_box: Box = (100.0, 150.0, 460.0, 270.0)) -> tuple[Path, Picture, Box]:
    """A slide (720x540 pt) with a title and the PNG at ``picture_box`` in points."""
    from pptx import Presentation
    from pptx.util import Pt

    picture = draw_picture("PNG")
    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Shipping summary"
    left, top, right, bottom = picture_box
    slide.shapes.add_picture(io.BytesIO(picture.data), Pt(left), Pt(top), Pt(right - left), Pt(bottom - top))
    presentation.save(path)
    return path, picture, picture_box
