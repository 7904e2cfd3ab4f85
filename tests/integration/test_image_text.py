"""Pictures speak: the words OCR reads in a document's pictures are a text document of their own,
kept out of the page text, and a quote from them traces to the picture and to boxes on the page
where the words were drawn (a JPEG placed on a PDF page, a PNG on a slide, a PNG in a DOCX placed on
its LibreOffice rendering)."""

from __future__ import annotations

import io
import json

import drawn_pictures
import pytest
from drawn_pictures import LINES, on_page

import kg_decoder
from boxes import union, within
from invariants import check_chunks, check_document
from kg_decoder.model import PDF_POINTS, RENDERED_PDF_POINTS

QUOTE = "Quorum ledger 4711"
WORDS = " ".join(LINES).split()


@pytest.fixture(scope="module")
def pictured(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pictured")
    store = kg_decoder.open_store(folder / "store")
    pdf, pdf_picture, pdf_box = drawn_pictures.pdf_with_picture(folder / "figure.pdf")
    pptx, pptx_picture, pptx_box = drawn_pictures.pptx_with_picture(folder / "figure.pptx")
    docx, docx_picture = drawn_pictures.docx_with_picture(folder / "figure.docx")
    return {"store": store, "folder": folder,
            "pdf": (kg_decoder.decode(pdf, store=store), pdf_picture, pdf_box, pdf),
            "pptx": (kg_decoder.decode(pptx, store=store), pptx_picture, pptx_box, pptx),
            "docx": (kg_decoder.decode(docx, store=store), docx_picture, None, docx)}


@pytest.mark.parametrize("kind", ["pdf", "pptx", "docx"])
def test_a_pictures_words_are_its_own_text_document_never_the_page_text(pictured, kind):
    store = pictured["store"]
    result = pictured[kind][0]
    [image_text] = [t for t in result.text_documents if t.kind == "image"]
    assert image_text.text.split() == WORDS
    [picture] = kg_decoder.document_images(result.document, store=store)
    assert image_text.derived_from == picture.iri and image_text.char_offset is None
    assert [image_text.text[e.char_offset:e.char_offset + e.char_length] for e in image_text.element_offsets] == WORDS
    for other in result.text_documents:
        if other.kind != "image":
            assert not any(word in other.text for word in ("Zanzibar", "Quorum", "4711"))
    check_document(store, result.document)
    assert kg_decoder.validate(store=store, document=result.document).conforms


@pytest.mark.parametrize("kind", ["pdf", "pptx"])
def test_a_quote_from_a_placed_picture_traces_to_the_picture_and_where_its_words_were_drawn(pictured, kind):
    store = pictured["store"]
    result, picture, picture_box, _ = pictured[kind]
    [source] = kg_decoder.trace(quote=QUOTE, document=result.document, store=store)
    [image] = kg_decoder.document_images(result.document, store=store)
    assert source.segment_kind == "image" and source.image == image.iri and source.quote == QUOTE
    assert source.page_number == 1 and source.page is not None
    assert [e.category for e in source.elements] == ["OcrWord"] * 3
    boxes = source.boxes
    assert len(boxes) == 3 and {b.coordinate_system for b in boxes} == {PDF_POINTS}
    size = (boxes[0].page_width, boxes[0].page_height)
    for box, word in zip(boxes, QUOTE.split()):
        assert within((box.left, box.top, box.right, box.bottom), on_page(picture.words[word], picture_box), size)


def test_a_quote_from_a_docx_picture_traces_to_the_picture_on_the_rendered_page(pictured):
    store = pictured["store"]
    result, picture, _, _ = pictured["docx"]
    [image] = kg_decoder.document_images(result.document, store=store)
    assert image.coordinate_system == RENDERED_PDF_POINTS and image.bbox  # placed on the rendering
    [source] = kg_decoder.trace(quote=QUOTE, document=result.document, store=store)
    assert source.image == image.iri and source.rendered_by.startswith("LibreOffice")
    assert {b.coordinate_system for b in source.boxes} == {RENDERED_PDF_POINTS}
    size = (source.boxes[0].page_width, source.boxes[0].page_height)
    for box, word in zip(source.boxes, QUOTE.split()):
        assert within((box.left, box.top, box.right, box.bottom), on_page(picture.words[word], image.bbox), size)


def test_chunks_of_a_pictures_text_cite_its_words_and_the_annotation_carries_their_region(pictured):
    store = pictured["store"]
    result, picture, picture_box, _ = pictured["pdf"]
    kg_decoder.chunk_document(result.document, store=store, chunk_size=64)
    check_chunks(store, result.document, 64)
    [image_chunk] = [c for c in kg_decoder.document_chunks(result.document, store=store)
                     if c.segment == next(t.iri for t in result.text_documents if t.kind == "image")]
    [anchor] = image_chunk.anchors
    drawn = union([on_page(box, picture_box) for box in picture.words.values()])
    assert anchor.page_number == 1 and within(anchor.bbox, drawn, (anchor.page_width, anchor.page_height))
    [source] = kg_decoder.trace(quote=QUOTE, document=result.document, store=store)
    assert source.chunks == [image_chunk.iri]
    targets = kg_decoder.web_annotations([source])["first"]["items"][0]["target"]
    assert {"id": source.image, "type": "Image"} in targets
    regions = [t["selector"] for t in targets if isinstance(t.get("selector"), dict)]
    assert len(regions) == 3 and all(r["value"] == "page=1" for r in regions)
    x, y, w, h = (float(v) for v in regions[0]["refinedBy"]["value"].split(":")[1].split(","))
    first = on_page(picture.words["Quorum"], picture_box)
    assert within((x * 6.12, y * 7.92, (x + w) * 6.12, (y + h) * 7.92), first, (612, 792))


def test_re_decoding_gives_the_same_quads_and_the_parse_cache_keeps_the_words(pictured, tmp_path):
    store = pictured["store"]
    _, _, _, pdf = pictured["pdf"]
    before = sorted(str(q) for q in store.source_quads(pictured["pdf"][0].document))
    again = kg_decoder.decode(pdf, store=store)
    assert again.status == "unchanged"
    other = kg_decoder.open_store(tmp_path / "other")
    fresh = kg_decoder.decode(pdf, store=other)
    assert fresh.document == pictured["pdf"][0].document
    after = sorted(str(q) for q in other.source_quads(fresh.document))
    strip = [q for q in before if "Time" not in q]
    assert strip == [q for q in after if "Time" not in q]


def test_which_pictures_are_read_and_why_the_others_are_not(tmp_path):
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    def png(image):
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        return buffer.getvalue()

    tiny = png(Image.new("RGB", (12, 12), "black"))
    plain = png(Image.new("RGB", (300, 200), (40, 120, 200)))
    path = tmp_path / "pictures.pdf"
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    page.drawString(72, 720, "Pictures with no words.")
    page.drawImage(ImageReader(io.BytesIO(tiny)), 72, 600, 12, 12)
    page.drawImage(ImageReader(io.BytesIO(plain)), 72, 300, 300, 200)
    page.showPage()
    page.save()
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store)
        reasons = sorted(row[0] for row in store.select_rows(
            "PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?why WHERE { GRAPH ?g { ?i tg:ocrSkippedReason ?why } }").rows)
        assert len(reasons) == 2 and "too small" in reasons[0] and "plain picture" in reasons[1]
        assert [t.kind for t in result.text_documents] == ["page"]
        assert kg_decoder.validate(store=store, document=result.document).conforms
        # "on" reads every picture (no text in these), "off" none and says nothing
        on = kg_decoder.decode(path, store=store, image_ocr="on")
        assert on.document == result.document and on.status == "decoded"
        assert sorted(row[0] for row in store.select_rows(
            "PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?why WHERE { GRAPH ?g { ?i tg:ocrSkippedReason ?why } }"
        ).rows) == ["no text found", "no text found"]
        kg_decoder.decode(path, store=store, image_ocr="off")
        assert store.select_rows("PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?why WHERE "
                                 "{ GRAPH ?g { ?i tg:ocrSkippedReason ?why } }").rows == []
        # an image file's picture is its page: its words are the page text, not read twice
        image_file = tmp_path / "words.png"
        image_file.write_bytes(drawn_pictures.draw_picture("PNG").data)
        decoded = kg_decoder.decode(image_file, store=store)
        assert [t.kind for t in decoded.text_documents] == ["page"] and "Zanzibar" in decoded.text_documents[0].text


def test_the_audits_list_pictures_no_chunk_covers_and_doubtful_ocr(tmp_path):
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    from fixtures import FONT

    font = ImageFont.truetype(str(FONT), 22)
    image = Image.new("RGB", (600, 200), "white")
    draw = ImageDraw.Draw(image)
    draw.text((20, 30), "Faded invoice number 8841", font=font, fill=(90, 90, 90))
    draw.text((20, 100), "Received with thanks", font=font, fill=(90, 90, 90))
    blurred = io.BytesIO()
    image.filter(ImageFilter.GaussianBlur(2.4)).save(blurred, "PNG")
    from docx import Document
    from docx.shared import Inches

    document = Document()
    document.add_paragraph("A sharp figure and a faded one.")
    document.add_picture(io.BytesIO(drawn_pictures.draw_picture("PNG").data), width=Inches(4))
    document.add_picture(io.BytesIO(blurred.getvalue()), width=Inches(4))
    path = tmp_path / "faded.docx"
    document.save(path)
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store)
        [sharp] = [t for t in result.text_documents if t.kind == "image"]  # the faded one is no text document
        stored = {row[0]: (float(row[1]), row[2]) for row in store.select_rows(
            "PREFIX tg: <https://trustgraph.ai/ns/> SELECT ?t ?c ?why WHERE { GRAPH ?g { ?t a tg:ImageText ; "
            "tg:confidence ?c . OPTIONAL { ?t tg:notChunkedReason ?why } } }").rows}
        [faded] = [iri for iri in stored if iri != sharp.iri]
        assert stored[faded][0] < 0.6 <= stored[sharp.iri][0] and stored[sharp.iri][1] is None
        assert "below 0.6" in stored[faded][1]  # the graph says why it is not chunked
        doubtful = store.table("audit-images-low-ocr-confidence").records()
        assert [row["imageText"] for row in doubtful] == [faded]
        assert 0 < int(doubtful[0]["doubtfulWords"]) <= int(doubtful[0]["words"])
        unchunked = store.table("audit-images-text-not-chunked").records()
        assert sorted(row["imageText"] for row in unchunked) == sorted([sharp.iri, faded])
        assert {row["chunked"] for row in unchunked} == {False}
        kg_decoder.chunk_document(result.document, store=store)
        [left] = store.table("audit-images-text-not-chunked").records()  # stored and audited, never chunked
        assert left["imageText"] == faded and "confidence" in left["reason"]
        chunks = kg_decoder.document_chunks(result.document, store=store)
        assert any("Zanzibar" in chunk.text for chunk in chunks)
        assert not any(word in chunk.text for chunk in chunks for word in ("Faded", "invoice", "8841", "Received"))
        assert kg_decoder.validate(store=store, document=result.document).conforms
        # a caller who trusts OCR more chunks it too
        trusting = kg_decoder.decode(path, store=store, min_image_text_confidence=0.0)
        assert len([t for t in trusting.text_documents if t.kind == "image"]) == 2


def test_emit_jsonl_offers_each_pictures_text_for_extractors(pictured, tmp_path, cli):
    _, _, _, pdf = pictured["pdf"]
    done = cli("decode", str(pdf), "--store", str(tmp_path / "store"), "--emit", "jsonl")
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    images = [line for line in lines if line.get("kind") == "image"]
    assert len(images) == 1 and images[0]["text"].split() == WORDS
    assert images[0]["derived_from"].startswith("urn:image:") and images[0]["char_offset"] is None
    assert [w["char_length"] for w in images[0]["elements"]] == [len(word) for word in WORDS]


def test_the_parse_cache_keeps_the_words_and_a_spent_time_limit_leaves_pictures_unread(pictured):
    import importlib
    import time

    from kg_decoder.model import DecodeOptions, PartitionSource

    store = pictured["store"]
    result, _, _, pdf = pictured["pdf"]
    regrouped = kg_decoder.decode(pdf, store=store, section_strategy="count", section_element_count=1)
    assert regrouped.partition_source == PartitionSource.PARSE_CACHE
    [cached] = [t for t in regrouped.text_documents if t.kind == "image"]
    assert cached.text == next(t.text for t in result.text_documents if t.kind == "image")

    image_text = importlib.import_module("kg_decoder.decode.image_text")
    backends = importlib.import_module("kg_decoder.decode.backends")
    partitioned = backends.partition_document(pdf.read_bytes(), "pdf", DecodeOptions(image_ocr="off"))
    [picture] = [e for e in partitioned.elements if e.is_image]
    assert picture.image_text is None and picture.image_text_skipped is None
    spent = time.monotonic() - 10 * DecodeOptions.timeout_seconds  # as if the document's time had run out
    image_text.read_image_texts(partitioned, DecodeOptions(), started=spent)
    assert picture.image_text is None and "time limit" in picture.image_text_skipped


def test_pictures_read_in_one_tesseract_run_or_ahead_read_as_each_alone(pictured):
    """Several pictures given to one tesseract run, and pictures read in a thread while the PDF is
    partitioned, get the very words, boxes and confidences of one run per picture after it."""
    import importlib
    import time

    from PIL import Image, ImageOps

    from kg_decoder.model import DecodeOptions

    image_text = importlib.import_module("kg_decoder.decode.image_text")
    backends = importlib.import_module("kg_decoder.decode.backends")
    pdf = pictured["pdf"][3]
    partitioned = backends.partition_document(pdf.read_bytes(), "pdf", DecodeOptions(image_ocr="off"))
    [picture] = [e for e in partitioned.elements if e.is_image]
    greys = []
    for turn in (0, 180):
        with Image.open(io.BytesIO(picture.image_data)) as opened:
            greys.append((ImageOps.grayscale(opened.rotate(turn, expand=True)), 1.0))
    together = image_text.read_words_of(greys, "eng")
    alone = [image_text.read_words(grey, "eng", scale) for grey, scale in greys]
    assert together == alone and len(together[0]) >= len(WORDS)

    ahead = image_text.PicturesReadAhead([picture], DecodeOptions(), time.monotonic())
    image_text.read_image_texts(partitioned, DecodeOptions(), ahead=ahead)
    read_ahead = picture.image_text
    picture.image_text = None
    image_text.read_image_texts(partitioned, DecodeOptions())
    assert read_ahead is not None and read_ahead == picture.image_text and read_ahead.text.split() == WORDS


def test_a_documents_pictures_are_read_by_as_many_tesseract_runs_side_by_side_as_its_cpus(monkeypatch):
    """Four pictures on a share of two CPUs: two runs of two pictures each, at the same time (tesseract
    reads on one thread); each picture gets the words it gets alone."""
    import importlib
    import threading
    import time

    from kg_decoder.decode.processes import THREADS_VARIABLE
    from kg_decoder.model import DecodeOptions, Element, Partitioned

    image_text = importlib.import_module("kg_decoder.decode.image_text")
    monkeypatch.setenv(THREADS_VARIABLE, "2")
    runs: list[tuple[int, float, float]] = []
    read_words_of = image_text.read_words_of
    lock = threading.Lock()

    def timed(pictures, *args, **kwargs):
        started = time.monotonic()
        try:
            return read_words_of(pictures, *args, **kwargs)
        finally:
            with lock:
                runs.append((len(pictures), started, time.monotonic()))

    monkeypatch.setattr(image_text, "read_words_of", timed)
    pictures = []
    for fmt in ("PNG", "JPEG", "BMP", "TIFF"):  # the same words in four files of distinct bytes
        data = drawn_pictures.draw_picture(fmt).data
        pictures.append(Element(len(pictures), "Image", "", page_number=1, image_data=data, image_width=900,
                                image_height=300))
    partitioned = Partitioned(format="pdf", elements=pictures, pages=[])
    image_text.read_image_texts(partitioned, DecodeOptions())
    assert all(picture.image_text.text.split() == WORDS for picture in pictures)
    assert sorted(size for size, _, _ in runs) == [2, 2]
    (_, first_start, first_end), (_, second_start, second_end) = sorted(runs, key=lambda run: run[1])
    assert second_start < first_end  # side by side, not one after the other


def test_a_slice_of_a_pages_background_is_not_given_to_tesseract_but_a_picture_of_words_is():
    """A page background cut into strips (ICDAR's eu-011: a bar down the margin, an edge line) makes no
    shape the size of a letter: it is passed over with its reason, while the same strip with a word
    written on it is read."""
    import importlib

    from PIL import Image, ImageDraw, ImageFont

    from fixtures import FONT
    from kg_decoder.model import DecodeOptions, Element, Partitioned

    image_text = importlib.import_module("kg_decoder.decode.image_text")
    pictures = []
    for words in ("", "Quorum ledger"):
        strip = Image.new("RGB", (1253, 195), (253, 253, 253))
        draw = ImageDraw.Draw(strip)
        draw.rectangle((53, 0, 99, 194), fill=(0, 130, 205))
        draw.line((1252, 0, 1252, 194), fill=(230, 60, 60))
        draw.text((200, 70), words, font=ImageFont.truetype(str(FONT), 40), fill="black")
        buffer = io.BytesIO()
        strip.save(buffer, "PNG")
        pictures.append(Element(len(pictures), "Image", "", page_number=1, image_data=buffer.getvalue(),
                                image_width=1253, image_height=195))
    image_text.read_image_texts(Partitioned(format="pdf", elements=pictures, pages=[]), DecodeOptions())
    background, written = pictures
    assert background.image_text is None
    assert background.image_text_skipped == "not read: no shape in the picture the size of a letter"
    assert written.image_text is not None and written.image_text.text.split() == ["Quorum", "ledger"]
