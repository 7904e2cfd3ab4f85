"""Generated fixtures of every format, each with sentinel strings that must reach the text.

Each fixture says what decoding it must give: format, sentinels, page count for
page-based formats, whether a table must be present. Files are made with the
format's own writer library (reportlab, python-docx, python-pptx, openpyxl,
pandoc, LibreOffice), never by hand-typing bytes, except for plain-text formats.
"""

from __future__ import annotations

import email.message
import io
import json
import subprocess
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
OCR_WORDS = "QUIXOTIC ZEBRA JUMPS"


@dataclass
class Fixture:
    name: str
    path: Path
    format: str
    sentinels: list[str]
    pages: Optional[int] = None
    table: bool = False
    categories: set[str] = field(default_factory=set)
    options: dict = field(default_factory=dict)


def zip_bytes(members: dict[str, bytes]) -> bytes:
    """A ZIP archive of the given members (for hand-made Office look-alikes and bombs)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


# Where the reportlab PDF draws its first sentinel: PDF user space (origin bottom-left), points.
PDF_SENTINEL_POSITION = (72.0, 700.0)
PDF_FONT_SIZE = 14


def make_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=letter)
    pdf.setFont("Helvetica-Bold", 20)
    pdf.drawString(72, 740, "KGSENT PDF Title")
    pdf.setFont("Helvetica", PDF_FONT_SIZE)
    pdf.drawString(*PDF_SENTINEL_POSITION, "KGSENTPDFONE appears at a known place.")
    pdf.showPage()
    pdf.showPage()  # page 2 stays blank
    pdf.setFont("Helvetica", PDF_FONT_SIZE)
    pdf.drawString(72, 400, "KGSENTPDFTHREE on the third page.")
    pdf.save()


def make_text_image(path: Path, fmt: str, words: str = OCR_WORDS):
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (1400, 400), "white")
    draw = ImageDraw.Draw(image)
    draw.text((60, 140), words, fill="black", font=ImageFont.truetype(FONT, 72))
    image.save(path, format=fmt, **({"resolution": 200.0} if fmt == "PDF" else {}))


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.add_heading("KGSENT DOCX Title", level=1)
    document.add_paragraph("KGSENTDOCXBODY is a paragraph under the first heading.")
    document.add_heading("KGSENT DOCX Subheading", level=2)
    document.add_paragraph("KGSENTDOCXNESTED sits in the nested section.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate(table.rows):
        for c, cell in enumerate(row.cells):
            cell.text = f"KGSENTCELL{r}{c}"
    document.save(path)


def make_pptx(path: Path) -> None:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "KGSENT PPTX Title"
    slide.placeholders[1].text = "KGSENTPPTXBULLET first point"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "KGSENT PPTX Table slide"
    shape = slide.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(2))
    for r in range(2):
        for c in range(2):
            shape.table.cell(r, c).text = f"KGSENTPPTCELL{r}{c}"
    deck.slides.add_slide(deck.slide_layouts[6])  # a blank third slide
    deck.save(path)


def make_xlsx(path: Path) -> None:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    sheet.title = "Alpha"
    sheet.append(["Name", "Value"])
    sheet.append(["KGSENTXLSXALPHA", 1])
    second = book.create_sheet("Beta")
    second.append(["Key", "Amount"])
    second.append(["KGSENTXLSXBETA", 2])
    book.save(path)


def libreoffice_convert(source: Path, target_ext: str, out_dir: Path) -> Path:
    subprocess.run(
        ["soffice", "--headless", "--norestore", f"-env:UserInstallation=file://{out_dir}/lo-profile",
         "--convert-to", target_ext, "--outdir", str(out_dir), str(source)],
        check=True, capture_output=True, timeout=180,
    )
    return out_dir / f"{source.stem}.{target_ext}"


def pandoc_convert(markdown: str, target: str, path: Path) -> None:
    import pypandoc

    pypandoc.convert_text(markdown, target, format="md", outputfile=str(path),
                          extra_args=["--metadata", "title=KGSENT Pandoc Book"])


MARKDOWN = """# KGSENT Markdown Title

KGSENTMDBODY is the first paragraph.

## KGSENT Markdown Subheading

KGSENTMDNESTED is under the subheading.

| Item | Price |
|------|-------|
| KGSENTMDCELL | 1.99 |
"""

HTML = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>KGSENT HTML</title></head><body>
<h1>KGSENT HTML Title</h1>
<p>KGSENTHTMLBODY with a &lt;script&gt; shown as text.</p>
<img src="https://example.invalid/picture.png" alt="KGSENTALTTEXT">
<table><tr><th>Col</th><th>Val</th></tr><tr><td>KGSENTHTMLCELL</td><td>7</td></tr></table>
</body></html>
"""

# Plain text in the encodings a demanding user meets; each with a sentinel in its own script.
ENCODED_TEXTS = {
    "utf-8": "KGSENTUTF8 Grüße aus Köln — naïve café. שלום עולם. 你好，世界。",
    "utf-16": "KGSENTUTF16 Texte en UTF-16 avec des accents : été, à bientôt, garçon.",
    "gb18030": "KGSENTGB 这是一个用于测试的中文文档。我们希望解码器能够正确识别编码，并且保留所有的汉字。" * 3,
    "big5": "KGSENTBIG5 這是一個用於測試的繁體中文文件。我們希望解碼器能夠正確識別編碼，並且保留所有的漢字。" * 3,
    "windows-1255": "KGSENTHEB זהו מסמך בדיקה בעברית. אנחנו מקווים שהמפענח יזהה את הקידוד וישמור על כל האותיות." * 3,
    "windows-1256": "KGSENTARAB هذه وثيقة اختبار باللغة العربية. نأمل أن يتعرف المفكك على الترميز ويحافظ على جميع الحروف." * 3,
    "shift_jis": "KGSENTSJIS これはテスト用の日本語の文書です。デコーダーが文字コードを正しく認識することを期待します。" * 3,
}


def make_all(root: Path) -> list[Fixture]:
    """Write every fixture under ``root``; return what each must decode to."""
    root.mkdir(parents=True, exist_ok=True)
    fixtures: list[Fixture] = []

    def add(name, fmt, sentinels, **kw):
        fixtures.append(Fixture(name, root / name, fmt, sentinels, **kw))

    make_pdf(root / "generated.pdf")
    add("generated.pdf", "pdf", ["KGSENTPDFONE", "KGSENTPDFTHREE"], pages=3)
    make_text_image(root / "scanned.pdf", "PDF")
    add("scanned.pdf", "pdf", ["QUIXOTIC", "ZEBRA"], pages=1)
    for ext, fmt, pil in (("png", "png", "PNG"), ("jpg", "jpeg", "JPEG"), ("tiff", "tiff", "TIFF")):
        make_text_image(root / f"words.{ext}", pil)
        add(f"words.{ext}", fmt, ["QUIXOTIC", "ZEBRA"], pages=1)
    make_docx(root / "generated.docx")
    add("generated.docx", "docx", ["KGSENTDOCXBODY", "KGSENTDOCXNESTED", "KGSENTCELL11"], table=True,
        categories={"Title", "Table"})
    make_pptx(root / "generated.pptx")
    add("generated.pptx", "pptx", ["KGSENT PPTX Title", "KGSENTPPTXBULLET", "KGSENTPPTCELL11"], pages=3, table=True)
    make_xlsx(root / "generated.xlsx")
    add("generated.xlsx", "xlsx", ["KGSENTXLSXALPHA", "KGSENTXLSXBETA"], pages=2, table=True)
    libreoffice_convert(root / "generated.docx", "doc", root)
    add("generated.doc", "doc", ["KGSENTDOCXBODY", "KGSENTCELL11"])  # LibreOffice's DOC keeps cells as text
    libreoffice_convert(root / "generated.pptx", "ppt", root)
    add("generated.ppt", "ppt", ["KGSENTPPTXBULLET", "KGSENTPPTCELL11"], table=True)
    libreoffice_convert(root / "generated.docx", "odt", root)
    add("generated.odt", "odt", ["KGSENTDOCXBODY", "KGSENTCELL11"], table=True)
    pandoc_convert(MARKDOWN, "epub", root / "generated.epub")
    add("generated.epub", "epub", ["KGSENTMDBODY", "KGSENTMDNESTED", "KGSENTMDCELL"], table=True)
    (root / "generated.md").write_text(MARKDOWN, encoding="utf-8")
    add("generated.md", "markdown", ["KGSENTMDBODY", "KGSENTMDNESTED", "KGSENTMDCELL"], table=True,
        categories={"Title", "Table"})
    (root / "generated.html").write_text(HTML, encoding="utf-8")
    add("generated.html", "html", ["KGSENTHTMLBODY", "KGSENTHTMLCELL", "<script>"], table=True)
    for encoding, text in ENCODED_TEXTS.items():
        name = f"text-{encoding}.txt"
        (root / name).write_bytes(text.encode(encoding))
        add(name, "text", [text.split()[0], text.split()[1]])
    (root / "generated.csv").write_text("name,city\nKGSENTCSV,Lisbon\nOther,Porto\n", encoding="utf-8")
    add("generated.csv", "csv", ["KGSENTCSV", "Lisbon"], table=True)
    (root / "generated.tsv").write_text("name\tcity\nKGSENTTSV\tHaifa\n", encoding="utf-8")
    add("generated.tsv", "tsv", ["KGSENTTSV", "Haifa"], table=True)
    (root / "generated.rst").write_text(
        "KGSENT RST Title\n================\n\nKGSENTRSTBODY paragraph.\n\nSub\n---\n\nKGSENTRSTNESTED text.\n",
        encoding="utf-8")
    add("generated.rst", "rst", ["KGSENTRSTBODY", "KGSENTRSTNESTED"])
    (root / "generated.org").write_text("* KGSENT Org Title\nKGSENTORGBODY paragraph.\n** Sub\nKGSENTORGNESTED.\n",
                                        encoding="utf-8")
    add("generated.org", "org", ["KGSENTORGBODY", "KGSENTORGNESTED"])
    (root / "generated.rtf").write_text(
        r"{\rtf1\ansi\deff0{\fonttbl{\f0 Times;}}{\pard\b KGSENT RTF Title\b0\par}"
        r"{\pard KGSENTRTFBODY paragraph.\par}}", encoding="ascii")
    add("generated.rtf", "rtf", ["KGSENTRTFBODY"])
    message = email.message.EmailMessage()
    message["From"] = "alice@example.invalid"
    message["To"] = "bob@example.invalid"
    message["Subject"] = "KGSENT mail"
    message.set_content("KGSENTEMLBODY is the body of this message.\n\nSecond paragraph.")
    (root / "generated.eml").write_bytes(bytes(message))
    add("generated.eml", "eml", ["KGSENTEMLBODY"])
    (root / "generated.xml").write_text(
        "<?xml version='1.0'?><catalog><book><title>KGSENTXMLTITLE</title><note>KGSENTXMLNOTE</note></book></catalog>",
        encoding="utf-8")
    add("generated.xml", "xml", ["KGSENTXMLTITLE", "KGSENTXMLNOTE"])
    (root / "generated.json").write_text(json.dumps([{"name": "KGSENTJSONA"}, {"name": "KGSENTJSONB"}]),
                                         encoding="utf-8")
    add("generated.json", "json", ["KGSENTJSONA", "KGSENTJSONB"])
    (root / "generated.jsonl").write_text('{"id": 1, "text": "KGSENTJSONLA"}\n{"id": 2, "text": "KGSENTJSONLB"}\n',
                                          encoding="utf-8")
    add("generated.jsonl", "jsonl", ["KGSENTJSONLA", "KGSENTJSONLB"])
    return fixtures
