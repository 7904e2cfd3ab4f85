"""Images as stored provenance entities, never as text: every format, known counts and places."""

from __future__ import annotations

import base64
import io
import json
import shutil
import subprocess
import sys
import zipfile

import pytest
from PIL import Image

import kg_decoder
from kg_decoder.cite.chunks import chunk_document, document_chunks
from kg_decoder.cite.images import document_images, export_images

ALT = "KGSENTALTPICTURE"


def picture(color, size=(40, 30), fmt="PNG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, fmt)
    return buffer.getvalue()


RED, BLUE = picture((255, 0, 0)), picture((0, 0, 255), (24, 24))
GREEN_JPEG = picture((0, 160, 0), (50, 20), "JPEG")


def same_pixels(first: bytes, second: bytes) -> bool:
    with Image.open(io.BytesIO(first)) as a, Image.open(io.BytesIO(second)) as b:
        return a.size == b.size and a.convert("RGB").tobytes() == b.convert("RGB").tobytes()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """Documents with a known number of pictures at known places, written with each format's own writer."""
    folder = tmp_path_factory.mktemp("pictures")
    (folder / "red.png").write_bytes(RED)
    (folder / "blue.png").write_bytes(BLUE)
    (folder / "green.jpg").write_bytes(GREEN_JPEG)

    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(folder / "pictures.pdf"), pagesize=(612, 792))
    pdf.drawString(72, 740, "KGSENTPICPDF text above the pictures.")
    pdf.drawImage(str(folder / "red.png"), 100, 500, width=200, height=150)   # box 100,142 .. 300,292
    pdf.drawString(72, 450, "Text between the pictures.")
    pdf.drawImage(str(folder / "green.jpg"), 300, 200, width=100, height=40)  # box 300,552 .. 400,592
    pdf.showPage()
    pdf.drawString(72, 700, "Second page, no picture.")
    pdf.save()

    import docx
    from docx.shared import Inches

    document = docx.Document()
    document.sections[0].header.paragraphs[0].add_run().add_picture(str(folder / "blue.png"), width=Inches(0.3))
    document.add_paragraph("KGSENTPICDOCX first paragraph.")
    document.add_picture(str(folder / "red.png"), width=Inches(1))
    document.add_paragraph("After the body picture.")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "cell text"
    table.rows[0].cells[1].paragraphs[0].add_run().add_picture(str(folder / "green.jpg"), width=Inches(0.5))
    document.save(folder / "pictures.docx")

    from pptx import Presentation
    from pptx.util import Inches as PptInches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "KGSENTPICPPTX slide one"
    slide = deck.slides.add_slide(deck.slide_layouts[5])
    slide.shapes.title.text = "Slide two holds the picture"
    slide.shapes.add_picture(str(folder / "red.png"), PptInches(1), PptInches(2), PptInches(3), PptInches(2))
    deck.save(folder / "pictures.pptx")

    from openpyxl import Workbook
    from openpyxl.drawing.image import Image as SheetImage

    book = Workbook()
    book.active.title = "First"
    book.active.append(["KGSENTPICXLSX", 1])
    second = book.create_sheet("Pictures")
    second.append(["name", "value"])
    second.add_image(SheetImage(str(folder / "red.png")), "C3")
    book.save(folder / "pictures.xlsx")

    red_uri = "data:image/png;base64," + base64.b64encode(RED).decode()
    (folder / "pictures.html").write_text(
        f"<html><body><p>KGSENTPICHTML before.</p><img src='{red_uri}' alt='{ALT}'>"
        "<p>Between the pictures.</p><img src='https://example.invalid/remote.png' alt='remote picture'>"
        "<p>After.</p></body></html>", encoding="utf-8")
    (folder / "pictures.md").write_text(
        f"# KGSENTPICMD\n\nIntro paragraph.\n\n![{ALT}]({red_uri})\n\nMiddle paragraph.\n\n"
        "![remote](https://example.invalid/remote.png)\n", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def decoded(made, corpus_dir, tmp_path_factory):
    store = kg_decoder.open_store(tmp_path_factory.mktemp("pictures-store"))
    results = {}
    for name in ("pictures.pdf", "pictures.docx", "pictures.pptx", "pictures.xlsx", "pictures.html", "pictures.md"):
        results[name] = kg_decoder.decode(made / name, store=store)
    for name in ("embedded-images-tables.pdf", "winter-sports.epub"):
        results[name] = kg_decoder.decode(corpus_dir / name, store=store)
    results["red.png"] = kg_decoder.decode(made / "red.png", store=store)
    for result in results.values():
        chunk_document(result.document, store=store, chunk_size=64)
    return store, results


def images_of(decoded, name):
    store, results = decoded
    return document_images(results[name].document, store=store)


def stored(decoded, image) -> bytes:
    return decoded[0].blob(image.sha256)


def test_pdf_image_objects_with_their_placement(decoded):
    red, green = images_of(decoded, "pictures.pdf")
    assert decoded[1]["pictures.pdf"].images == 2
    assert (red.page_number, green.page_number) == (1, 1)
    for image, expected in ((red, (100, 142, 300, 292)), (green, (300, 552, 400, 592))):
        assert all(abs(a - b) <= 0.01 * 612 for a, b in zip(image.bbox, expected)), image.bbox
        assert image.coordinate_system == "pdf-points-top-left" and image.page_height == 792.0
    assert (red.width, red.height, red.mime_type) == (40, 30, "image/png")
    assert same_pixels(stored(decoded, red), RED)
    assert green.mime_type == "image/jpeg" and stored(decoded, green) == GREEN_JPEG  # the DCT stream as is
    assert red.follows and green.follows and red.follows != green.follows


def test_corpus_pdf_image_is_the_one_poppler_extracts(decoded, tmp_path):
    if shutil.which("pdfimages") is None:
        pytest.fail("poppler-utils (pdfimages) is not installed; scripts/setup.sh installs it")
    from conftest import CORPUS

    [image] = images_of(decoded, "embedded-images-tables.pdf")
    subprocess.run(["pdfimages", "-j", str(CORPUS / "embedded-images-tables.pdf"), str(tmp_path / "x")], check=True)
    [extracted] = sorted(tmp_path.glob("x-*"))
    assert stored(decoded, image) == extracted.read_bytes()
    assert image.page_number == 1 and image.mime_type == "image/jpeg"
    width, height = image.page_width, image.page_height
    left, top, right, bottom = image.bbox
    assert 0 <= left < right <= width and 0 <= top < bottom <= height


def test_docx_pictures_of_body_table_and_header_in_reading_order(decoded, made):
    images = images_of(decoded, "pictures.docx")
    with zipfile.ZipFile(made / "pictures.docx") as archive:
        media = {archive.read(n) for n in archive.namelist() if n.startswith("word/media/")}
    assert len(images) == 3
    assert {stored(decoded, image) for image in images} == media
    body, cell, header = images
    assert same_pixels(stored(decoded, body), RED) and same_pixels(stored(decoded, header), BLUE)
    store = decoded[0]
    follows = {e.element: e.text or "" for e in store.document_elements(decoded[1]["pictures.docx"].document)}
    assert "KGSENTPICDOCX" in follows[body.follows]
    assert "cell text" in follows[cell.follows]


def test_pptx_picture_has_slide_and_box_in_slide_points(decoded):
    [image] = images_of(decoded, "pictures.pptx")
    assert image.page_number == 2 and same_pixels(stored(decoded, image), RED)
    assert image.coordinate_system == "pdf-points-top-left"
    width, height = image.page_width, image.page_height
    assert (width, height) == (720.0, 540.0)  # 10 x 7.5 inches
    assert all(abs(a - b) <= 0.01 * width for a, b in zip(image.bbox, (72, 144, 288, 288))), image.bbox


def test_xlsx_picture_is_anchored_to_its_cell(decoded, made):
    [image] = images_of(decoded, "pictures.xlsx")
    assert (image.sheet_name, image.anchor_cell, image.page_number) == ("Pictures", "C3", 2)
    with zipfile.ZipFile(made / "pictures.xlsx") as archive:
        [media] = [archive.read(n) for n in archive.namelist() if n.startswith("xl/media/")]
    assert stored(decoded, image) == media


@pytest.mark.parametrize("name", ["pictures.html", "pictures.md"])
def test_markup_data_uri_is_stored_and_a_remote_src_is_only_recorded(decoded, name):
    inline, remote = images_of(decoded, name)
    assert stored(decoded, inline) == RED and inline.mime_type == "image/png"
    assert inline.alt_text == ALT and inline.source_url is None
    assert remote.source_url == "https://example.invalid/remote.png" and remote.sha256 is None
    assert remote.skipped_reason is None  # a URL is its reference; nothing was fetched


def test_epub_images_come_from_the_package(decoded, corpus_dir):
    images = images_of(decoded, "winter-sports.epub")
    assert images and all(image.sha256 for image in images)
    with zipfile.ZipFile(corpus_dir / "winter-sports.epub") as archive:
        members = {archive.read(n) for n in archive.namelist() if n.lower().endswith((".jpg", ".jpeg", ".png"))}
    assert {stored(decoded, image) for image in images} <= members


def test_a_standalone_image_is_its_page_and_one_image(decoded, made):
    [image] = images_of(decoded, "red.png")
    assert stored(decoded, image) == RED
    assert image.bbox == (0.0, 0.0, 40.0, 30.0) and image.coordinate_system == "pixels-top-left"
    assert decoded[1]["red.png"].pages == 1


def test_no_image_bytes_base64_or_alt_text_reach_any_text(decoded):
    store, results = decoded
    forbidden = [ALT, base64.b64encode(RED).decode()[:40], "remote picture", "KGSENTALT"]
    for name, result in results.items():
        texts = [t.text for t in result.text_documents]
        texts += [c.text for c in document_chunks(result.document, store=store)]
        for row in store.text_segments(result.document):
            texts.append(store.text(row.sha256))
        for text in texts:
            assert not any(word in text for word in forbidden), (name, text[:200])
            assert "\x89PNG" not in text and "data:image" not in text


def test_image_counts_on_pages_and_in_the_summary(decoded):
    store, results = decoded
    pages = store.document_segments(results["pictures.pdf"].document)
    counts = {row.page_number: int(next(q.object.value for q in store.source_quads(row.segment)
                                         if q.predicate.value.endswith("/imageCount"))) for row in pages}
    assert counts == {1: 2, 2: 0}
    assert results["pictures.docx"].images == 3 and results["pictures.xlsx"].images == 1


def test_images_over_the_limits_are_recorded_not_stored(made, tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    result = kg_decoder.decode(made / "pictures.docx", store=store, max_image_bytes=10)
    images = document_images(result.document, store=store)
    assert len(images) == 3 and all(i.sha256 is None and "over the limit" in i.skipped_reason for i in images)
    assert all(i.width and i.mime_type for i in images)  # the metadata is kept
    assert "KGSENTPICDOCX" in result.text_documents[0].text  # decoding went on
    by_pixels = kg_decoder.decode(made / "pictures.pdf", store=store, max_image_pixels=1000)
    red, green = document_images(by_pixels.document, store=store)
    assert red.sha256 is None and "1200 pixels" in red.skipped_reason
    assert green.sha256 is not None  # 50 x 20 = 1000 pixels: within the limit


def test_cli_lists_and_exports_images(decoded, made, tmp_path):
    store, results = decoded
    store.flush()
    done = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "images", str(made / "pictures.docx"),
                           "--store", str(store.path), "--export", str(tmp_path / "out"), "--format", "json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    listed = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(listed) == 3
    written = sorted((tmp_path / "out").iterdir())
    assert [p.read_bytes() for p in written] == [store.blob(i["sha256"]) for i in listed]
    assert export_images(results["pictures.docx"].document, tmp_path / "again", store=store)
