"""How sure the decoder is: every element and table cell carries tg:confidence (1.0 for text read from
a file, tesseract's mean word confidence for OCR text, 0.0 for a padding cell); a page read by OCR
records the mean confidence of its words, and an audit lists the doubtful ones. Scans are read by
kg-decoder's own page OCR, drawn at the resolution chosen by measurement."""

from __future__ import annotations

import io

import drawn_pictures
from PIL import Image, ImageDraw, ImageFilter, ImageFont
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

import kg_decoder
from fixtures import FONT
from invariants import check_document

PARAGRAPHS = ("Quarterly shipments of alpine widgets rose sharply in the northern region.",
              "The committee approved the budget for the coming year without changes.")
PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "


def scanned_pdf(path, blur: float = 0.0):
    """A page that is only a picture of two paragraphs and a heading (no text layer), 200 dpi."""
    image = Image.new("RGB", (1700, 2200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((150, 150), "Annual Shipping Review", font=ImageFont.truetype(str(FONT), 72), fill="black")
    body = ImageFont.truetype(str(FONT), 36)
    for number, paragraph in enumerate(PARAGRAPHS):
        words, lines, line = paragraph.split(), [], ""
        for word in words:
            if len(line) + len(word) > 40:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        lines.append(line)
        for k, text in enumerate(lines):
            draw.text((150, 400 + number * 400 + k * 60), text, font=body, fill="black")
    if blur:
        image = image.filter(ImageFilter.GaussianBlur(blur))
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    page.drawImage(ImageReader(io.BytesIO(buffer.getvalue())), 0, 0, 612, 792)
    page.showPage()
    page.save()
    return path


def confidences(store, document):
    rows = store.select_rows(PREFIXES + f"""SELECT ?kind ?category ?c WHERE {{ GRAPH ?g {{
        ?e prov:wasDerivedFrom+ <{document}> ; a ?type ; tg:confidence ?c . OPTIONAL {{ ?e tg:category ?category }}
        BIND(STRAFTER(STR(?type), STR(tg:)) AS ?kind) }} }}""").rows
    return [(kind, category, float(c)) for kind, category, c in rows]


def test_a_scanned_page_is_read_with_its_confidence_per_paragraph_and_page(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(scanned_pdf(tmp_path / "scan.pdf"), store=store, image_ocr="off")
        assert result.strategy == "ocr_only"
        check_document(store, result.document)
        text = result.text_documents[0].text
        assert all(" ".join(p.split()) in " ".join(text.split()) for p in PARAGRAPHS)
        elements = [e for e in store.document_elements(result.document) if e.category != "Image"]
        assert [e.category for e in elements] == ["Title", "NarrativeText", "NarrativeText"]
        assert all(e.bbox and 0 < e.left < e.right <= 612 and 0 < e.top < e.bottom <= 792 for e in elements)
        found = confidences(store, result.document)
        page = [c for kind, _, c in found if kind == "Page"]
        by_element = [c for kind, _, c in found if kind == "Element"]
        assert len(page) == 1 and 0.85 <= page[0] <= 1.0
        assert len(by_element) == 3 and all(0.8 <= c < 1.0 for c in by_element)
        assert kg_decoder.validate(store=store, document=result.document).conforms
        assert store.table("audit-pages-low-ocr-confidence").rows == []
        [source] = kg_decoder.trace(quote="approved the budget", document=result.document, store=store)
        [box] = source.boxes  # the paragraph's box: no reading of the scan at trace time checks a box on words
        assert (box.source, box.verification) == ("element", "unverified") and abs(box.top - elements[2].top) < 1
        assert {str(e.verification) for e in store.document_text_elements(result.document)} == {"verified"}


def test_a_poor_scan_is_listed_by_the_audit(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        sharp = kg_decoder.decode(scanned_pdf(tmp_path / "sharp.pdf"), store=store, image_ocr="off")
        poor = kg_decoder.decode(scanned_pdf(tmp_path / "poor.pdf", blur=5.5), store=store, image_ocr="off")
        pages = {document: [c for kind, _, c in confidences(store, document) if kind == "Page"]
                 for document in (sharp.document, poor.document)}
        assert pages[poor.document][0] < 0.8 <= pages[sharp.document][0]
        listed = store.table("audit-pages-low-ocr-confidence").records()
        assert [(row["document"], row["pageNumber"]) for row in listed] == [(poor.document, 1)]


def test_an_image_file_is_read_by_ocr_with_its_confidence(tmp_path):
    path = tmp_path / "words.png"
    path.write_bytes(drawn_pictures.draw_picture("PNG").data)
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store)
        assert result.text_documents[0].text.split() == " ".join(drawn_pictures.LINES).split()
        found = confidences(store, result.document)
        assert [kind for kind, _, _ in found].count("Page") == 1
        assert all(0.8 <= c <= 1.0 for kind, _, c in found)
        [source] = kg_decoder.trace(quote="Quorum ledger", document=result.document, store=store)
        [box] = source.boxes  # in the picture's own pixels: the page is the picture
        words = drawn_pictures.draw_picture("PNG").words
        assert abs(box.top - words["Quorum"][1]) < 10 and box.page_width == drawn_pictures.PIXELS[0]


def test_text_read_from_files_is_certain_and_padding_cells_are_not(generated_store):
    store, _ = generated_store
    rows = store.select_rows(PREFIXES + """SELECT ?format ?padding ?c WHERE { GRAPH ?g {
        { ?e a tg:Element ; tg:confidence ?c ; prov:wasDerivedFrom+ ?d . BIND(false AS ?padding)
          FILTER NOT EXISTS { ?e prov:wasDerivedFrom+ ?ocred . ?ocred a tg:Page ; tg:confidence ?read } }
        UNION { ?e a tg:TableCell ; tg:isPadding ?padding ; tg:confidence ?c ; prov:wasDerivedFrom+ ?d }
        ?d a tg:Document ; tg:format ?format } }""").rows
    assert {fmt for fmt, _, _ in rows} >= {"docx", "xlsx", "html", "pptx", "csv"}
    for fmt, padding, c in rows:  # elements of pages read by OCR left out
        assert float(c) == (0.0 if padding in (True, "true") else 1.0), (fmt, padding, c)
    unconfident = store.select_rows(PREFIXES + """SELECT ?e WHERE { GRAPH ?g {
        { ?e a tg:Element } UNION { ?e a tg:TableCell } FILTER NOT EXISTS { ?e tg:confidence ?c } } }""").rows
    assert unconfident == []
