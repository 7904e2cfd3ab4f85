"""Office files whose parts reach outside them: twenty ways a DOCX, PPTX, XLSX, ODT or RTF links a
picture, a text, a template or a workbook by URL or by a path of the machine it is read on.

Each file names ``url`` (a loopback server of the test, which counts requests) and files of
``secrets`` (a folder outside the input: ``secret.png``, ``secret.txt``), and carries the sentinel
word ``KGLINK`` in its own text so a test can see it decoded.
"""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path

from PIL import Image

REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def write_secrets(folder: Path) -> Path:
    """The files the hostile documents point at: a picture and a text a rendering must never show."""
    folder.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (64, 48), (0, 0, 255)).save(folder / "secret.png")
    (folder / "secret.txt").write_text("KGSECRET the machine's own file\n")
    return folder


def _png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), (255, 0, 0)).save(buffer, "PNG")
    return buffer.getvalue()


def _rewrite(package: bytes, edit) -> bytes:
    """The zip ``package`` with ``edit(name, data)`` applied to each member (None drops it)."""
    source = zipfile.ZipFile(io.BytesIO(package))
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = edit(info.filename, source.read(info.filename))
            if data is not None:
                target.writestr(info, data)
    return output.getvalue()


def _docx(picture: bool = False) -> bytes:
    from docx import Document

    document = Document()
    document.add_paragraph("KGLINK a document that reaches outside itself.")
    if picture:
        document.add_picture(io.BytesIO(_png()))
    document.add_paragraph("KGLINK the last paragraph.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def _linked_picture(package: bytes, part_rels: str, part: str, target: str) -> bytes:
    """The package's embedded picture turned into one linked from ``target`` (its bytes dropped)."""

    def edit(name, data):
        if name == part_rels:
            return re.sub(rb'(Type="[^"]+/image" Target=")[^"]+"',
                          lambda m: m.group(1) + target.encode() + b'" TargetMode="External"', data)
        if name == part:
            return data.replace(b"r:embed=", b"r:link=")
        if "/media/" in name:
            return None
        return data

    return _rewrite(package, edit)


def _with_relationship(package: bytes, rels: str, kind: str, target: str, part: str, before: bytes,
                       element: bytes) -> bytes:
    """The package with an external relationship of type ``kind`` added to ``rels`` and ``element``
    (naming it ``rIdX``) put before ``before`` in ``part``."""

    relationship = f'<Relationship Id="rIdX" Type="{REL}/{kind}" Target="{target}" TargetMode="External"/>'.encode()

    def edit(name, data):
        if name == rels:
            return data.replace(b"</Relationships>", relationship + b"</Relationships>")
        if name == part:
            return data.replace(before, element + before, 1)
        return data

    if rels not in zipfile.ZipFile(io.BytesIO(package)).namelist():
        package = _add_members(package, {rels: b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships '
                                               b'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                                               b"</Relationships>"})
    return _rewrite(package, edit)


def _docx_field(instruction: str) -> bytes:
    field = (f'<w:p><w:fldSimple w:instr="{instruction}"><w:r><w:t>KGLINK field</w:t></w:r></w:fldSimple></w:p>'
             .encode())
    return _rewrite(_docx(), lambda name, data: data.replace(b"<w:sectPr", field + b"<w:sectPr", 1)
                    if name == "word/document.xml" else data)


def _pptx_picture() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "KGLINK a slide"
    slide.shapes.add_picture(io.BytesIO(_png()), Inches(1), Inches(2))
    buffer = io.BytesIO()
    presentation.save(buffer)
    return buffer.getvalue()


def _xlsx_external(url: str) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    book.active["A1"] = "KGLINK"
    book.active["B1"] = 3
    buffer = io.BytesIO()
    book.save(buffer)
    link = (b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><externalLink xmlns="http://schemas.'
            b'openxmlformats.org/spreadsheetml/2006/main" xmlns:r="' + REL.encode() + b'"><externalBook r:id="rId1">'
            b'<sheetNames><sheetName val="Sheet1"/></sheetNames></externalBook></externalLink>')
    link_rels = (f'<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.'
                 f'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="{REL}/'
                 f'externalLinkPath" Target="{url}/book.xlsx" TargetMode="External"/></Relationships>').encode()

    def edit(name, data):
        if name == "xl/_rels/workbook.xml.rels":
            return data.replace(b"</Relationships>", f'<Relationship Id="rIdL" Type="{REL}/externalLink" '
                                                     f'Target="externalLinks/externalLink1.xml"/></Relationships>'.encode())
        if name == "xl/workbook.xml":
            return re.sub(rb"(</sheets>)", rb'\1<externalReferences><externalReference xmlns:r="'
                                           + REL.encode() + rb'" r:id="rIdL"/></externalReferences>', data)
        if name == "xl/worksheets/sheet1.xml":
            return data.replace(b"<v>3</v>", b"<f>[1]Sheet1!A1</f><v>3</v>")
        if name == "[Content_Types].xml":
            return data.replace(b"</Types>", b'<Override PartName="/xl/externalLinks/externalLink1.xml" ContentType='
                                             b'"application/vnd.openxmlformats-officedocument.spreadsheetml.'
                                             b'externalLink+xml"/></Types>')
        return data

    return _add_members(_rewrite(buffer.getvalue(), edit), {
        "xl/externalLinks/externalLink1.xml": link, "xl/externalLinks/_rels/externalLink1.xml.rels": link_rels})


def _add_members(package: bytes, members: dict[str, bytes]) -> bytes:
    output = io.BytesIO(package)
    with zipfile.ZipFile(output, "a", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return output.getvalue()


_ODF_NAMESPACES = ('xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
                   'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
                   'xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" '
                   'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0" '
                   'xmlns:xlink="http://www.w3.org/1999/xlink" '
                   'xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"')


def _odf(kind: str, body: str, meta: str = "") -> bytes:
    """An ODF package of ``kind`` (text) with ``body`` inside its office:body."""
    content = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {_ODF_NAMESPACES} '
               f'office:version="1.2"><office:body><office:{kind}>{body}</office:{kind}></office:body>'
               f"</office:document-content>")
    manifest = ('<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:'
                'opendocument:xmlns:manifest:1.0" manifest:version="1.2"><manifest:file-entry manifest:full-path="/" '
                f'manifest:media-type="application/vnd.oasis.opendocument.{kind}"/><manifest:file-entry '
                'manifest:full-path="content.xml" manifest:media-type="text/xml"/><manifest:file-entry '
                'manifest:full-path="meta.xml" manifest:media-type="text/xml"/><manifest:file-entry '
                'manifest:full-path="styles.xml" manifest:media-type="text/xml"/></manifest:manifest>')
    metadata = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-meta {_ODF_NAMESPACES} office:version="1.2">'
                f"<office:meta>{meta}</office:meta></office:document-meta>")
    styles = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-styles {_ODF_NAMESPACES} '
              f'office:version="1.2"><office:styles/></office:document-styles>')
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w") as archive:
        archive.writestr(zipfile.ZipInfo("mimetype"), f"application/vnd.oasis.opendocument.{kind}")
        for name, text in (("content.xml", content), ("styles.xml", styles), ("meta.xml", metadata),
                           ("META-INF/manifest.xml", manifest)):
            archive.writestr(name, text, zipfile.ZIP_DEFLATED)
    return output.getvalue()


def _odf_image(target: str) -> str:
    return (f'<draw:frame draw:name="linked" svg:width="2cm" svg:height="2cm" text:anchor-type="as-char">'
            f'<draw:image xlink:href="{target}" xlink:type="simple" xlink:show="embed" xlink:actuate="onLoad"/>'
            f"</draw:frame>")


def _rtf(field: str) -> bytes:
    return ("{\\rtf1\\ansi\\deff0 {\\fonttbl {\\f0 Times;}}\\f0 KGLINK before the field. "
            "{\\field{\\*\\fldinst " + field + "}{\\fldrslt KGLINK result}} after the field.\\par }").encode()


def hostile_office_files(url: str, secrets: Path) -> dict[str, bytes]:
    """Twenty Office files (name -> bytes) that link ``url`` and the files in ``secrets``."""
    picture, text = (secrets / "secret.png").as_uri(), (secrets / "secret.txt").as_uri()
    settings = b"<w:zoom"
    files = {
        "picture-url.docx": _linked_picture(_docx(True), "word/_rels/document.xml.rels", "word/document.xml",
                                            f"{url}/docx-picture.png"),
        "picture-file.docx": _linked_picture(_docx(True), "word/_rels/document.xml.rels", "word/document.xml",
                                             picture),
        "template-url.docx": _with_relationship(_docx(), "word/_rels/settings.xml.rels", "attachedTemplate",
                                                f"{url}/template.dotx", "word/settings.xml", settings,
                                                b'<w:attachedTemplate r:id="rIdX"/>'),
        "subdocument-file.docx": _with_relationship(_docx(), "word/_rels/document.xml.rels", "subDocument", text,
                                                    "word/document.xml", b"<w:sectPr",
                                                    b'<w:p><w:subDoc r:id="rIdX"/></w:p>'),
        "chunk-url.docx": _with_relationship(_docx(), "word/_rels/document.xml.rels", "aFChunk",
                                             f"{url}/chunk.html", "word/document.xml", b"<w:sectPr",
                                             b'<w:altChunk r:id="rIdX"/>'),
        "includepicture-url.docx": _docx_field(f'INCLUDEPICTURE &quot;{url}/field-picture.png&quot; \\d'),
        "includepicture-file.docx": _docx_field(f'INCLUDEPICTURE &quot;{picture}&quot; \\d'),
        "includetext-file.docx": _docx_field(f'INCLUDETEXT &quot;{secrets / "secret.txt"}&quot;'),
        "hyperlink-file.docx": _with_relationship(_docx(), "word/_rels/document.xml.rels", "hyperlink", text,
                                                  "word/document.xml", b"<w:sectPr",
                                                  b'<w:p><w:hyperlink r:id="rIdX"><w:r><w:t>KGLINK link</w:t></w:r>'
                                                  b"</w:hyperlink></w:p>"),
        "picture-url.pptx": _linked_picture(_pptx_picture(), "ppt/slides/_rels/slide1.xml.rels",
                                            "ppt/slides/slide1.xml", f"{url}/pptx-picture.png"),
        "picture-file.pptx": _linked_picture(_pptx_picture(), "ppt/slides/_rels/slide1.xml.rels",
                                             "ppt/slides/slide1.xml", picture),
        "workbook-url.xlsx": _xlsx_external(url),
        "picture-url.odt": _odf("text", f"<text:p>KGLINK before {_odf_image(url + '/odt-picture.png')} after</text:p>"),
        "picture-relative.odt": _odf("text", f"<text:p>KGLINK before {_odf_image('../secrets/secret.png')} "
                                             f"after</text:p>"),
        "picture-file.odt": _odf("text", f"<text:p>KGLINK before {_odf_image(picture)} after</text:p>"),
        "section-file.odt": _odf("text", '<text:p>KGLINK before the section</text:p><text:section text:name="s">'
                                         f'<text:section-source xlink:href="{text}" xlink:type="simple"/>'
                                         "<text:p>cached</text:p></text:section>"),
        "template-url.odt": _odf("text", "<text:p>KGLINK a text with a template</text:p>",
                                 meta=f'<meta:template xlink:type="simple" xlink:href="{url}/template.ott" '
                                      f'xlink:title="t"/>'),
        "object-relative.odt": _odf("text", '<text:p>KGLINK before <draw:frame draw:name="o" svg:width="2cm" '
                                            'svg:height="2cm" text:anchor-type="as-char"><draw:object xlink:href='
                                            '"../secrets/secret.txt" xlink:type="simple" xlink:show="embed" '
                                            'xlink:actuate="onLoad"/></draw:frame> after</text:p>'),
        "includepicture-file.rtf": _rtf(f'INCLUDEPICTURE "{picture}" \\\\d'),
        "includetext-url.rtf": _rtf(f'INCLUDETEXT "{url}/rtf-text.txt"'),
    }
    assert len(files) == 20
    return files
