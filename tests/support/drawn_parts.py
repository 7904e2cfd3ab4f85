"""Documents whose words sit where a plain reader of the text flow misses them: a PDF form filled in
(reportlab draws the fields) with annotations (pypdf writes them), a PDF of pictures and drawings
alone, a DOCX with content controls (block, inline, row, cell), a tracked insertion, a text box, a
footnote, a comment and a chart, a PPTX with a chart, a table, SmartArt and speaker notes, an XLSX with
a chart on a sheet and a chart sheet. Each word a test looks for is a sentinel of its own."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

# PDF form: (field name, type, value it holds, what it shows) and where reportlab draws each widget.
FORM_FIELDS = {
    "applicant.name": ("text", "KGFORMNAME Ada Lovelace", (200, 700, 420, 720)),
    "applicant.amount": ("text", "1123213321", (200, 660, 420, 680)),
    "consent": ("checkbox", "Yes", (200, 620, 216, 636)),
    "colour": ("choice", "KGCHOICE Teal", (200, 580, 420, 600)),
}
AMOUNT_SHOWN = "1,123,213,321.00"
FREE_TEXT = "KGFREETEXT reviewed by the clerk"
NOTE_TEXT = "KGSTICKYNOTE check the amount"
HIDDEN_TEXT = "KGHIDDENNOTE nobody sees this"
ANNOTATION_AUTHOR = "Grace Hopper"
FREE_TEXT_RECT = (72, 500, 300, 530)
NOTE_RECT = (430, 655, 450, 675)
FLATTENED = "KGFLATTENED Already printed"  # a value the page's text layer holds at its widget too


def make_form_pdf(path: Path) -> Path:
    """A filled-in form: labels in the text layer, four fields (one read-only, one required) whose
    widgets reportlab draws; then pypdf adds a free-text annotation, a sticky note, a hidden note,
    sets the amount field's appearance to its formatted value, and adds a field whose value the page
    already prints at its place (a flattened copy)."""
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    draft = io.BytesIO()
    pdf = canvas.Canvas(draft, pagesize=letter)
    pdf.setFont("Helvetica-Bold", 16)
    pdf.drawString(72, 740, "Application form")
    pdf.setFont("Helvetica", 11)
    labels = {"applicant.name": "Name:", "applicant.amount": "Amount:", "consent": "I consent:",
              "colour": "Colour:"}
    for name, (kind, value, (x0, y0, x1, y1)) in FORM_FIELDS.items():
        pdf.drawString(72, y0 + 4, labels[name])
        common = dict(name=name, x=x0, y=y0, width=x1 - x0, height=y1 - y0, borderWidth=1)
        if kind == "text":
            pdf.acroForm.textfield(value=value, fieldFlags="readOnly" if name == "applicant.name" else "", **common)
        elif kind == "checkbox":
            pdf.acroForm.checkbox(checked=True, buttonStyle="check", name=name, x=x0, y=y0, size=x1 - x0,
                                  fieldFlags="required")
        else:
            pdf.acroForm.choice(value=value, options=["KGCHOICE Olive", value], **common)
    pdf.drawString(200, 544, FLATTENED)
    pdf.acroForm.textfield(name="printed", value=FLATTENED, x=196, y=538, width=260, height=20, borderWidth=0)
    pdf.showPage()
    pdf.save()
    return _annotate(draft.getvalue(), path)


def _annotate(data: bytes, path: Path) -> Path:
    from pypdf import PdfReader, PdfWriter
    from pypdf.annotations import FreeText, Text
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject, NumberObject, TextStringObject

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    page = writer.pages[0]
    free = FreeText(text=FREE_TEXT, rect=FREE_TEXT_RECT, font="Helvetica", font_size="12pt")
    free[NameObject("/T")] = TextStringObject(ANNOTATION_AUTHOR)
    free[NameObject("/M")] = TextStringObject("D:20240301093000+01'00'")
    writer.add_annotation(0, free)
    note = Text(text=NOTE_TEXT, rect=NOTE_RECT)
    note[NameObject("/T")] = TextStringObject(ANNOTATION_AUTHOR)
    writer.add_annotation(0, note)
    hidden = Text(text=HIDDEN_TEXT, rect=(430, 600, 450, 620))
    hidden[NameObject("/F")] = NumberObject(2)
    writer.add_annotation(0, hidden)
    for annotation in page["/Annots"]:  # the amount shows as its format action would write it
        annotation = annotation.get_object()
        if annotation.get("/T") == "applicant.amount":
            stream = DecodedStreamObject()
            stream.set_data(f"/Tx BMC q BT /Helv 11 Tf 0 g 2 6 Td ({AMOUNT_SHOWN}) Tj ET Q EMC".encode())
            stream.update({NameObject("/Type"): NameObject("/XObject"), NameObject("/Subtype"): NameObject("/Form"),
                           NameObject("/BBox"): annotation["/Rect"].__class__([NumberObject(0), NumberObject(0),
                                                                            NumberObject(220), NumberObject(20)]),
                           NameObject("/Resources"): _helvetica(writer)})
            annotation[NameObject("/AP")] = DictionaryObject({NameObject("/N"): writer._add_object(stream)})
    writer.write(str(path))
    return path


def _helvetica(writer):
    from pypdf.generic import DictionaryObject, NameObject

    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica"),
                             NameObject("/Encoding"): NameObject("/WinAnsiEncoding")})
    return DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject("/Helv"): writer._add_object(font)})})


def make_pictures_pdf(path: Path) -> Path:
    """Two pages without text: a picture of a blank card, then a drawing (lines and a filled circle)."""
    from PIL import Image
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    picture = io.BytesIO()
    Image.new("RGB", (300, 200), (230, 200, 120)).save(picture, "PNG")
    picture.seek(0)
    pdf = canvas.Canvas(str(path), pagesize=A4)
    pdf.drawImage(ImageReader(picture), 100, 500, width=300, height=200)
    pdf.showPage()
    pdf.setLineWidth(3)
    pdf.line(50, 50, 500, 700)
    pdf.circle(300, 400, 80, fill=1)
    pdf.showPage()
    pdf.save()
    return path


# ---------------------------------------------------------------- DOCX

DOCX_WORDS = {
    "inline": "KGINLINE Northwind Ltd",
    "block": "KGBLOCK The block control holds this sentence.",
    "row": "KGROWCONTROL",
    "cell": "KGCELLCONTROL",
    "inserted": "KGINSERTED words added in review",
    "textbox": "KGTEXTBOX Call the front desk",
    "footnote": "KGFOOTNOTE Source: the annual report.",
    "comment": "KGCOMMENT Please confirm this figure.",
    "commented": "KGANCHORED revenue grew by ten percent",
}
COMMENT_AUTHOR = "Ada Reviewer"
CHART_TITLE = "KGCHART Revenue by region"
CHART_DATA = {"categories": ["North", "South"], "series": {"Revenue": (12.5, 7.25), "Cost": (4.0, 3.5)}}

_NAMESPACES = ('xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" '
               'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships" '
               'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
               'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
               'xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart" '
               'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
               'xmlns:wps="http://schemas.microsoft.com/office/word/2010/wordprocessingShape" '
               'xmlns:v="urn:schemas-microsoft-com:vml"')


def _chart_data():
    """CHART_DATA as python-pptx's chart data."""
    from pptx.chart.data import CategoryChartData

    data = CategoryChartData()
    data.categories = CHART_DATA["categories"]
    for name, values in CHART_DATA["series"].items():
        data.add_series(name, values)
    return data


def chart_xml(title: str = CHART_TITLE) -> bytes:
    """A clustered column chart part (python-pptx writes it) with a title, two series and two categories."""
    from pptx.chart.xmlwriter import ChartXmlWriter
    from pptx.enum.chart import XL_CHART_TYPE

    xml = ChartXmlWriter(XL_CHART_TYPE.COLUMN_CLUSTERED, _chart_data()).xml
    titled = ('<c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>' + title + '</a:t></a:r></a:p></c:rich></c:tx>'
              '<c:overlay val="0"/></c:title><c:autoTitleDeleted val="0"/>')
    return xml.replace("<c:chart>", "<c:chart>" + titled, 1).encode("utf-8")


def make_parts_docx(path: Path) -> Path:
    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml

    def xml(markup: str):
        return parse_xml(markup.replace("{ns}", _NAMESPACES))

    document = docx.Document()
    body = document.element.body
    document.add_heading("KGHEADING Contract summary", 1)
    paragraph = document.add_paragraph("The client is")
    paragraph._p.append(xml('<w:sdt {ns}><w:sdtPr><w:alias w:val="Client"/></w:sdtPr><w:sdtContent><w:r>'
                            f'<w:t xml:space="preserve"> {DOCX_WORDS["inline"]}</w:t></w:r></w:sdtContent></w:sdt>'))
    body.insert(len(body) - 1, xml('<w:sdt {ns}><w:sdtPr/><w:sdtContent><w:p><w:r>'
                                   f'<w:t>{DOCX_WORDS["block"]}</w:t></w:r></w:p></w:sdtContent></w:sdt>'))
    table = document.add_table(rows=1, cols=2)
    table.style = "Table Grid"
    table.cell(0, 0).text, table.cell(0, 1).text = "Item", "Amount"

    def cell(text: str) -> str:
        return f'<w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr><w:p><w:r><w:t>{text}</w:t></w:r></w:p></w:tc>'

    table._tbl.append(xml('<w:sdt {ns}><w:sdtPr/><w:sdtContent><w:tr>' + cell(DOCX_WORDS["row"]) + cell("10")
                          + '</w:tr></w:sdtContent></w:sdt>'))
    table._tbl.append(xml('<w:tr {ns}><w:sdt><w:sdtPr/><w:sdtContent>' + cell(DOCX_WORDS["cell"])
                          + '</w:sdtContent></w:sdt>' + cell("20") + '</w:tr>'))
    inserted = document.add_paragraph("The draft said nothing more; ")
    inserted._p.append(xml('<w:ins {ns} w:id="90" w:author="Editor" w:date="2024-01-01T00:00:00Z"><w:r>'
                           f'<w:t>{DOCX_WORDS["inserted"]}</w:t></w:r></w:ins>'))
    anchor = document.add_paragraph("Directions for visitors are in the box beside this paragraph.")
    box = (f'<w:txbxContent><w:p><w:r><w:t>{DOCX_WORDS["textbox"]}</w:t></w:r></w:p></w:txbxContent>')
    anchor._p.append(xml(
        '<w:r {ns}><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
        '<wp:anchor distT="0" distB="0" distL="114300" distR="114300" simplePos="0" relativeHeight="2" behindDoc="0"'
        ' locked="0" layoutInCell="1" allowOverlap="1"><wp:simplePos x="0" y="0"/>'
        '<wp:positionH relativeFrom="column"><wp:posOffset>3200000</wp:posOffset></wp:positionH>'
        '<wp:positionV relativeFrom="paragraph"><wp:posOffset>300000</wp:posOffset></wp:positionV>'
        '<wp:extent cx="2400000" cy="500000"/><wp:effectExtent l="0" t="0" r="0" b="0"/><wp:wrapSquare wrapText="bothSides"/>'
        '<wp:docPr id="10" name="Text Box 10"/><wp:cNvGraphicFramePr/><a:graphic>'
        '<a:graphicData uri="http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp>'
        '<wps:cNvSpPr txBox="1"/><wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="2400000" cy="500000"/></a:xfrm>'
        '<a:prstGeom prst="rect"><a:avLst/></a:prstGeom></wps:spPr><wps:txbx>' + box + '</wps:txbx><wps:bodyPr/>'
        '</wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing></mc:Choice><mc:Fallback><w:pict>'
        '<v:shape style="width:189pt;height:39pt"><v:textbox>' + box + '</v:textbox></v:shape></w:pict>'
        '</mc:Fallback></mc:AlternateContent></w:r>'))
    for _ in range(6):  # room below the text box, so it stays on the page beside its paragraph
        document.add_paragraph("")
    noted = document.add_paragraph("Revenue is reported yearly.")
    noted._p.append(xml('<w:r {ns}><w:rPr><w:vertAlign w:val="superscript"/></w:rPr>'
                        '<w:footnoteReference w:id="1"/></w:r>'))
    footnotes = ('<w:footnotes ' + _NAMESPACES + '>'
                 '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
                 '<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r>'
                 '</w:p></w:footnote><w:footnote w:id="1"><w:p><w:r><w:footnoteRef/></w:r><w:r>'
                 f'<w:t xml:space="preserve"> {DOCX_WORDS["footnote"]}</w:t></w:r></w:p></w:footnote></w:footnotes>')
    part = Part(PackURI("/word/footnotes.xml"),
                "application/vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml",
                footnotes.encode("utf-8"), document.part.package)
    document.part.relate_to(part, RT.FOOTNOTES)
    commented = document.add_paragraph("In the year under review ")
    run = commented.add_run(DOCX_WORDS["commented"])
    commented.add_run(", as the table shows.")
    document.add_comment(run, text=DOCX_WORDS["comment"], author=COMMENT_AUTHOR, initials="AR")
    document.add_paragraph("The chart below sums it up.")
    chart = Part(PackURI("/word/charts/chart1.xml"), "application/vnd.openxmlformats-officedocument.drawingml.chart+xml",
                 chart_xml(), document.part.package)
    relationship = document.part.relate_to(chart, RT.CHART)
    holder = document.add_paragraph()
    holder._p.append(xml(
        '<w:r {ns}><w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="4572000" cy="2743200"/>'
        '<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="20" name="Chart 20"/><wp:cNvGraphicFramePr/>'
        '<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/chart">'
        f'<c:chart r:id="{relationship}"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>'))
    document.add_paragraph("KGCLOSING The end of the summary.")
    document.save(path)
    return path


# ---------------------------------------------------------------- PPTX and XLSX

SMARTART_NODES = [("KGPLAN Plan", 0), ("KGBUILD Build", 0), ("KGTEST Test the build", 1), ("KGSHIP Ship", 0)]
NOTES = "KGNOTES Mention the pilot customers."
PPTX_TABLE = [["Quarter", "Units"], ["KGQ1", "120"]]
CHART_FRAME = (1.0, 1.5, 6.0, 4.5)  # inches: left, top, width, height of the chart on slide 1
SMARTART_FRAME = (0.5, 1.0, 8.0, 5.0)  # on slide 2


def make_parts_pptx(path: Path) -> Path:
    """Slide 1: a title, a chart and a table, with speaker notes; slide 2: a SmartArt diagram (its data
    part written by hand: four nodes, one a child of the second)."""
    from pptx import Presentation
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])  # title only
    slide.shapes.title.text = "KGSLIDETITLE Results"
    data = _chart_data()
    left, top, width, height = (Inches(v) for v in CHART_FRAME)
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, left, top, width, height, data)
    frame.chart.has_title = True
    frame.chart.chart_title.text_frame.text = CHART_TITLE
    table = slide.shapes.add_table(2, 2, Inches(7.2), Inches(2), Inches(2.5), Inches(1)).table
    for r, row in enumerate(PPTX_TABLE):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    slide.notes_slide.notes_text_frame.text = NOTES
    second = deck.slides.add_slide(deck.slide_layouts[6])
    buffer = io.BytesIO()
    deck.save(buffer)
    return _with_smartart(buffer.getvalue(), path, second.part.partname.lstrip("/"))


def make_smartart_pptx(path: Path) -> Path:
    """One slide with a SmartArt diagram drawn as PowerPoint saves it: its data part and the drawing
    of its shapes (``dsp:drawing``, what other programs draw), each node a box in a row."""
    from pptx import Presentation

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[6])
    buffer = io.BytesIO()
    deck.save(buffer)
    return _with_smartart(buffer.getvalue(), path, slide.part.partname.lstrip("/"), drawn=True)


def _smartart_drawing() -> str:
    """The shapes of the SmartArt nodes, a box each in a row (EMU, inside the frame)."""
    shapes = []
    for k, (text, depth) in enumerate(SMARTART_NODES, start=1):
        x, y = int((0.2 + 1.9 * (k - 1)) * 914400), int((0.5 + 1.2 * depth) * 914400)
        width, height = int(1.7 * 914400), int(0.9 * 914400)
        shapes.append(f'<dsp:sp modelId="{k}"><dsp:nvSpPr><dsp:cNvPr id="{k}" name=""/><dsp:cNvSpPr/></dsp:nvSpPr>'
                      f'<dsp:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{width}" cy="{height}"/>'
                      '</a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></dsp:spPr><dsp:txBody><a:bodyPr '
                      'anchor="ctr"/><a:lstStyle/><a:p><a:pPr algn="ctr"/><a:r><a:rPr lang="en-GB" sz="1400"/>'
                      f'<a:t>{text}</a:t></a:r></a:p></dsp:txBody></dsp:sp>')
    return ('<dsp:drawing xmlns:dgm="http://schemas.openxmlformats.org/drawingml/2006/diagram" '
            'xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" '
            'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"><dsp:spTree><dsp:nvGrpSpPr>'
            '<dsp:cNvPr id="0" name=""/><dsp:cNvGrpSpPr/></dsp:nvGrpSpPr><dsp:grpSpPr/>'
            f'{"".join(shapes)}</dsp:spTree></dsp:drawing>')


def _with_smartart(data: bytes, path: Path, slide_part: str, drawn: bool = False) -> Path:
    """The deck with a SmartArt frame on ``slide_part`` and its data part (``drawn``: and the drawing
    of its shapes, which the data part names as PowerPoint writes it)."""
    import posixpath

    source = zipfile.ZipFile(io.BytesIO(data))
    dgm = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
    points = ['<dgm:pt modelId="0" type="doc"><dgm:prSet/><dgm:spPr/></dgm:pt>']
    links = []
    parents = {0: "0"}
    for k, (text, depth) in enumerate(SMARTART_NODES, start=1):
        points.append(f'<dgm:pt modelId="{k}"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/><a:p><a:r><a:t>{text}</a:t>'
                      '</a:r></a:p></dgm:t></dgm:pt>')
        points.append(f'<dgm:pt modelId="p{k}" type="parTrans"><dgm:prSet/><dgm:spPr/><dgm:t><a:bodyPr/><a:p>'
                      '<a:r><a:t>KGTRANSITION</a:t></a:r></a:p></dgm:t></dgm:pt>')
        parent = parents[depth]
        order = sum(1 for link in links if f'srcId="{parent}"' in link)
        links.append(f'<dgm:cxn modelId="c{k}" srcId="{parent}" destId="{k}" srcOrd="{order}" destOrd="0"/>')
        parents[depth + 1] = str(k)
    # listed out of order on purpose: the diagram's order is its connections'
    drawing_ext = ('<dgm:extLst><a:ext uri="http://schemas.microsoft.com/office/drawing/2008/diagram">'
                   '<dsp:dataModelExt xmlns:dsp="http://schemas.microsoft.com/office/drawing/2008/diagram" '
                   'relId="rIdDrw" minVer="http://schemas.openxmlformats.org/drawingml/2006/diagram"/></a:ext>'
                   '</dgm:extLst>') if drawn else ""
    data_xml = (f'<dgm:dataModel xmlns:dgm="{dgm}" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main">'
                f'<dgm:ptLst>{"".join(reversed(points))}</dgm:ptLst><dgm:cxnLst>{"".join(links)}</dgm:cxnLst>'
                f'{drawing_ext}</dgm:dataModel>')
    left, top, width, height = (int(v * 914400) for v in SMARTART_FRAME)
    frame = ('<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="40" name="Diagram 40"/><p:cNvGraphicFramePr/><p:nvPr/>'
             f'</p:nvGraphicFramePr><p:xfrm><a:off x="{left}" y="{top}"/><a:ext cx="{width}" cy="{height}"/></p:xfrm>'
             f'<a:graphic><a:graphicData uri="{dgm}"><dgm:relIds xmlns:dgm="{dgm}" r:dm="rIdDgm" r:lo="rIdDgm"'
             ' r:qs="rIdDgm" r:cs="rIdDgm"/></a:graphicData></a:graphic></p:graphicFrame>')
    folder, name = posixpath.split(slide_part)
    rels_part = posixpath.join(folder, "_rels", name + ".rels")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            raw = source.read(info)
            if info.filename == slide_part:
                raw = raw.replace(b"</p:spTree>", frame.encode() + b"</p:spTree>", 1)
            elif info.filename == rels_part:
                raw = raw.replace(b"</Relationships>", b'<Relationship Id="rIdDgm" Type="http://schemas.openxml'
                                  b'formats.org/officeDocument/2006/relationships/diagramData" '
                                  b'Target="../diagrams/data1.xml"/></Relationships>', 1)
                if drawn:
                    raw = raw.replace(b"</Relationships>", b'<Relationship Id="rIdDrw" Type="http://schemas.microsoft'
                                      b'.com/office/2007/relationships/diagramDrawing" '
                                      b'Target="../diagrams/drawing1.xml"/></Relationships>', 1)
            elif info.filename == "[Content_Types].xml":
                raw = raw.replace(b"</Types>", b'<Override PartName="/ppt/diagrams/data1.xml" ContentType="application/'
                                  b'vnd.openxmlformats-officedocument.drawingml.diagramData+xml"/></Types>', 1)
                if drawn:
                    raw = raw.replace(b"</Types>", b'<Override PartName="/ppt/diagrams/drawing1.xml" ContentType='
                                      b'"application/vnd.ms-office.drawingml.diagramDrawing+xml"/></Types>', 1)
            target.writestr(info, raw)
        target.writestr("ppt/diagrams/data1.xml", data_xml)
        if drawn:
            target.writestr("ppt/diagrams/drawing1.xml", _smartart_drawing())
    path.write_bytes(out.getvalue())
    return path


def make_parts_xlsx(path: Path) -> Path:
    """Sheet "Data" with a table and a bar chart anchored at E2; then a chart sheet "Overview"; then a
    sheet "Notes" with one line."""
    from openpyxl import Workbook
    from openpyxl.chart import BarChart, Reference

    book = Workbook()
    sheet = book.active
    sheet.title = "Data"
    rows = [["Region", "Revenue", "Cost"]] + [[c, *(s[k] for s in CHART_DATA["series"].values())]
                                             for k, c in enumerate(CHART_DATA["categories"])]
    for row in rows:
        sheet.append(row)

    def bar_chart() -> BarChart:
        chart = BarChart()
        chart.title = CHART_TITLE
        chart.add_data(Reference(sheet, min_col=2, min_row=1, max_col=3, max_row=3), titles_from_data=True)
        chart.set_categories(Reference(sheet, min_col=1, min_row=2, max_row=3))
        return chart

    sheet.add_chart(bar_chart(), "E2")
    overview = book.create_chartsheet("Overview")
    overview.add_chart(bar_chart())
    book.create_sheet("Notes").append(["KGSHEETNOTE the last sheet"])
    book.save(path)
    return path


def with_main_content_type(data: bytes, old: str, new: str) -> bytes:
    """An OOXML package whose main part declares another content type (a template, a macro-enabled
    file), written with [Content_Types].xml last so libmagic sees no Office file in its first bytes."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        types = source.read("[Content_Types].xml").replace(old.encode(), new.encode())
        for info in source.infolist():
            if info.filename != "[Content_Types].xml":
                target.writestr(info.filename, source.read(info))
        target.writestr("[Content_Types].xml", types)
    return out.getvalue()


def make_damaged_form_pdf(path: Path) -> Path:
    """The filled-in form of ``make_form_pdf`` with its catalog's form dictionary damaged (a number where
    the dictionary should be): its page's text reads, its fields and annotations cannot."""
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import NameObject, NumberObject

    writer = PdfWriter(clone_from=PdfReader(make_form_pdf(path)))
    writer._root_object[NameObject("/AcroForm")] = NumberObject(5)
    writer.write(str(path))
    return path
