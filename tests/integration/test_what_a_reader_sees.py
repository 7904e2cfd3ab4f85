"""Nothing a reader sees is lost: a PDF form's field values and its annotations, a document of pictures
and drawings alone, DOCX content controls, insertions, text boxes, footnotes, comments and charts, PPTX
charts, SmartArt and speaker notes, XLSX charts, and OOXML packages known by their content types. Each
new element is read once, in its place, with its box; the store stays SHACL-clean and re-decoding
changes nothing."""

from __future__ import annotations

from datetime import datetime

import drawn_parts as parts
import pytest

import kg_decoder
from boxes import within
from invariants import check_document
from kg_decoder.decode.formats import detect_format
from kg_decoder.model import NO_TEXT_FOUND, RENDERED_PDF_POINTS
from kg_decoder.serve.pages import page_image

PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "
LETTER_HEIGHT = 792.0


@pytest.fixture(scope="module")
def decoded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reader")
    store = kg_decoder.open_store(folder / "store")
    files = {"form": parts.make_form_pdf(folder / "form.pdf"),
             "pictures": parts.make_pictures_pdf(folder / "pictures.pdf"),
             "docx": parts.make_parts_docx(folder / "parts.docx"),
             "pptx": parts.make_parts_pptx(folder / "parts.pptx"),
             "xlsx": parts.make_parts_xlsx(folder / "parts.xlsx")}
    results = {name: kg_decoder.decode(path, store=store) for name, path in files.items()}
    return store, files, results


def properties(store, element: str) -> dict:
    """An element's tg: properties, by local name (values as their lexical form)."""
    rows = store.select_rows(PREFIXES + f"SELECT ?p ?o WHERE {{ GRAPH ?g {{ <{element}> ?p ?o }} }}").rows
    return {p.rsplit("/", 1)[-1]: o for p, o in rows if p.startswith("https://trustgraph.ai/ns/")}


def elements_of(store, document: str, category: str) -> list:
    return [e for e in store.document_elements(document) if e.category == category]


def page_text(store, document: str) -> str:
    return check_document(store, document)["document_text"]


# ---------------------------------------------------------------- PDF forms and annotations


def displayed(rect):
    x0, y0, x1, y1 = rect
    return (x0, LETTER_HEIGHT - y1, x1, LETTER_HEIGHT - y0)


def test_form_fields_are_elements_with_name_type_value_flags_and_their_widget_box(decoded):
    store, _, results = decoded
    document = results["form"].document
    fields = {properties(store, e.element)["fieldName"]: (e, properties(store, e.element))
              for e in elements_of(store, document, "FormField")}
    assert set(fields) == set(parts.FORM_FIELDS)  # the printed field's value is in the text layer already
    for name, (kind, value, rect) in parts.FORM_FIELDS.items():
        element, said = fields[name]
        assert said["fieldType"] == kind and element.page_number == 1
        assert element.bbox == pytest.approx(displayed(rect), abs=0.01)
        assert said["fieldValue"] == value
    assert fields["applicant.amount"][0].text == parts.AMOUNT_SHOWN  # what the field shows
    assert fields["applicant.amount"][1]["shownValue"] == parts.AMOUNT_SHOWN
    assert fields["applicant.name"][1]["readOnly"] == "true" and fields["applicant.name"][1]["required"] == "false"
    assert fields["consent"][1]["required"] == "true" and fields["consent"][0].text == "Yes"
    text = page_text(store, document)
    for value in ("KGFORMNAME", "1123213321", "KGCHOICE Teal", "KGFLATTENED"):  # read once, or not as a copy
        assert text.count(value) == (0 if value == "1123213321" else 1), value
    assert text.index("Name:") < text.index("KGFORMNAME")  # in the page's reading order


def test_annotations_with_text_are_elements_with_type_author_date_and_box(decoded):
    store, _, results = decoded
    document = results["form"].document
    notes = {e.text: (e, properties(store, e.element)) for e in elements_of(store, document, "Annotation")}
    assert set(notes) == {parts.FREE_TEXT, parts.NOTE_TEXT}  # the hidden note is left out
    free, said = notes[parts.FREE_TEXT]
    assert said["annotationType"] == "FreeText" and said["author"] == parts.ANNOTATION_AUTHOR
    assert datetime.fromisoformat(said["modifiedAt"]) == datetime.fromisoformat("2024-03-01T09:30:00+01:00")
    assert free.bbox == pytest.approx(displayed(parts.FREE_TEXT_RECT), abs=0.01)
    note, said = notes[parts.NOTE_TEXT]
    assert said["annotationType"] == "Text" and note.bbox == pytest.approx(displayed(parts.NOTE_RECT), abs=0.01)
    assert parts.HIDDEN_TEXT not in page_text(store, document)


def test_a_quote_of_a_field_value_traces_to_its_widget(decoded):
    store, _, results = decoded
    [source] = kg_decoder.trace(quote=parts.AMOUNT_SHOWN, document=results["form"].document, store=store)
    [box] = source.boxes
    assert source.page_number == 1
    assert (box.left, box.top, box.right, box.bottom) == pytest.approx(
        displayed(parts.FORM_FIELDS["applicant.amount"][2]), abs=0.01)
    assert box.verification == "verified"  # the file itself places the value there


def test_the_form_fields_audit_lists_each_value(decoded):
    store, _, _ = decoded
    rows = {r["fieldName"]: r for r in store.table("audit-form-fields").records()}
    assert set(rows) == set(parts.FORM_FIELDS)
    assert rows["applicant.amount"]["shownValue"] == parts.AMOUNT_SHOWN
    assert rows["colour"]["fieldValue"] == "KGCHOICE Teal" and rows["colour"]["fileName"] == "form.pdf"


# ---------------------------------------------------------------- documents without text


def test_a_pdf_of_pictures_and_drawings_is_decoded_with_its_pages_and_a_warning(decoded):
    store, _, results = decoded
    result = results["pictures"]
    assert result.status == "decoded" and result.pages == 2 and result.images == 1 and result.elements == 0
    assert any(w.startswith(NO_TEXT_FOUND) for w in result.warnings)
    state = check_document(store, result.document)
    assert [s.page_number for s in state["segments"]] == [1, 2]
    [picture] = [e for e in state["elements"] if e.category == "Image"]
    assert picture.page_number == 1 and picture.bbox == pytest.approx((100, 141.89, 400, 341.89), abs=0.5)
    pages = {p.page_number: p.page for p in store.document_pages(result.document)}
    assert page_image(store, pages[2])[:8] == b"\x89PNG\r\n\x1a\n"  # the drawing, for the trace view
    [row] = [r for r in store.table("audit-documents-without-text").records() if r["fileName"] == "pictures.pdf"]
    assert row["pages"] == 2 and row["images"] == 1
    chunked = kg_decoder.chunk_document(result.document, store=store)
    assert chunked.chunks == 0


def test_files_with_nothing_in_them_are_still_refused(store):
    import io

    from pptx import Presentation

    deck = io.BytesIO()
    Presentation().save(deck)  # a presentation without a slide
    for data, name in ((b"", "empty.pdf"), (b"  \n\n ", "blank.txt"), (deck.getvalue(), "deck.pptx")):
        with pytest.raises(kg_decoder.EmptyDocument):
            kg_decoder.decode(data, store=store, file_name=name)
    assert len(store) == 0


# ---------------------------------------------------------------- DOCX


def test_docx_content_controls_insertions_text_boxes_notes_comments_and_charts_are_read_once(decoded):
    store, _, results = decoded
    document = results["docx"].document
    text = page_text(store, document)
    for word in parts.DOCX_WORDS.values():
        assert text.count(word) == 1, word
    order = [text.index(parts.DOCX_WORDS[k]) for k in ("inline", "block", "row", "cell", "inserted", "textbox",
                                                      "footnote", "commented", "comment")]
    assert order == sorted(order)
    kinds = {e.category: e for e in store.document_elements(document)}
    assert kinds["TextBox"].text == parts.DOCX_WORDS["textbox"]
    assert kinds["Footnote"].text == parts.DOCX_WORDS["footnote"]
    comment = properties(store, kinds["Comment"].element)
    assert comment["author"] == parts.COMMENT_AUTHOR and comment["anchorText"] == parts.DOCX_WORDS["commented"]
    assert datetime.fromisoformat(comment["createdAt"]).year >= 2024
    [chart] = [e for e in elements_of(store, document, "Table") if "chartType" in properties(store, e.element)]
    said = properties(store, chart.element)
    assert said["chartType"] == "column" and said["chartTitle"] == parts.CHART_TITLE
    cells = {(c.row, c.column): c.text for c in store.table_cells(chart.element)}
    assert cells[(0, 1)] == "Revenue" and cells[(1, 0)] == "North" and cells[(1, 1)] == "12.5"
    assert cells[(2, 2)] == "3.5"


def test_each_new_docx_element_has_its_box_on_the_rendering(decoded):
    store, _, results = decoded
    document = results["docx"].document
    elements = {e.category: e for e in store.document_elements(document) if e.category != "Image"}
    for category in ("TextBox", "Footnote", "Comment", "Table", "ChartText"):
        placed = [e for e in store.document_elements(document) if e.category == category]
        assert placed and all(e.bbox and e.coordinate_system == RENDERED_PDF_POINTS for e in placed), category
    # a chart's category label traces to its words where the rendering draws them, checked there
    first = kg_decoder.trace(quote="North", document=document, store=store)[0]
    assert [(b.source, b.verification) for b in first.boxes] == [("characters", "verified")]
    paragraph = next(e for e in store.document_elements(document) if parts.DOCX_WORDS["commented"] in (e.text or ""))
    comment = elements["Comment"]  # the box of the words it marks, inside their paragraph's
    assert comment.rendered_page_number == paragraph.rendered_page_number
    assert paragraph.left <= comment.left and comment.right <= paragraph.right + 1
    assert comment.top >= paragraph.top - 1 and comment.bottom <= paragraph.bottom + 1
    assert not [r for r in store.table("audit-elements-without-position").records() if r["document"] == document]


# ---------------------------------------------------------------- PPTX and XLSX


def test_pptx_charts_smartart_and_notes_are_elements_with_the_frames_box(decoded):
    store, _, results = decoded
    document = results["pptx"].document
    inches = lambda frame: (frame[0] * 72, frame[1] * 72, (frame[0] + frame[2]) * 72, (frame[1] + frame[3]) * 72)
    [chart] = [e for e in elements_of(store, document, "Table") if "chartType" in properties(store, e.element)]
    assert chart.page_number == 1 and chart.bbox == pytest.approx(inches(parts.CHART_FRAME), abs=0.01)
    assert properties(store, chart.element)["chartType"] == "column"
    assert {(c.row, c.column): c.text for c in store.table_cells(chart.element)}[(2, 1)] == "7.25"
    smartart = elements_of(store, document, "SmartArt")
    assert [(e.text, e.page_number) for e in smartart] == [(t, 2) for t, _ in parts.SMARTART_NODES]
    depths = [properties(store, e.element).get("headingDepth") for e in smartart]
    assert depths == [str(d) for _, d in parts.SMARTART_NODES]
    assert all(e.bbox == pytest.approx(inches(parts.SMARTART_FRAME), abs=0.01) for e in smartart)
    [notes] = elements_of(store, document, "SpeakerNotes")
    assert notes.text == parts.NOTES and notes.page_number == 1
    text = page_text(store, document)
    assert "KGTRANSITION" not in text and text.count("KGQ1") == 1
    # the title twice: the table's caption, and the text the chart draws (placed where it is drawn)
    [drawn_title] = [e for e in elements_of(store, document, "ChartText") if e.text == parts.CHART_TITLE]
    assert text.count(parts.CHART_TITLE) == 2 and drawn_title.page_number == 1


def test_xlsx_charts_sit_on_their_sheet_with_their_anchor_cell_and_a_chart_sheet_is_a_page(decoded):
    store, _, results = decoded
    document = results["xlsx"].document
    charts = [(e, properties(store, e.element)) for e in elements_of(store, document, "Table")
              if "chartType" in properties(store, e.element)]
    assert [(e.page_number, said.get("anchorCell"), said["sheetName"]) for e, said in charts] == [
        (1, "E2", "Data"), (2, None, "Overview")]
    assert {(c.row, c.column): c.text for c in store.table_cells(charts[0][0].element)}[(1, 2)] == "4"
    [note] = [e for e in store.document_elements(document) if "KGSHEETNOTE" in (e.text or "")]
    assert note.page_number == 3  # unstructured numbers worksheets alone; the chart sheet is page 2


# ---------------------------------------------------------------- the store


def test_the_store_is_shacl_clean_and_decoding_again_changes_nothing(decoded):
    store, files, _ = decoded
    report = kg_decoder.validate(store=store)
    assert report.conforms, report.violations[:5]
    before = store.quads()
    assert all(kg_decoder.decode(path, store=store).status == "unchanged" for path in files.values())
    assert store.quads() == before


def test_the_shapes_refuse_a_form_field_without_its_name(decoded):
    store, _, results = decoded
    [field] = elements_of(store, results["form"].document, "FormField")[:1]
    lines = [f'<{field.element}> <https://trustgraph.ai/ns/fieldType> "text" .',
             f'<{field.element}> <https://trustgraph.ai/ns/fieldName> "a" .',
             f'<{field.element}> <https://trustgraph.ai/ns/fieldName> "b" .']
    report = kg_decoder.validate(store=store, data="\n".join(lines))
    assert not report.conforms


# ---------------------------------------------------------------- detection


@pytest.mark.parametrize("made, old, new, expected", [
    ("docx", "wordprocessingml.document.main+xml", "wordprocessingml.template.main+xml", "docx"),
    ("pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml",
     "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml", "pptx"),
    ("xlsx", "spreadsheetml.sheet.main+xml", "spreadsheetml.template.main+xml", "xlsx"),
])
def test_ooxml_templates_and_macro_enabled_files_are_known_by_their_main_part(decoded, made, old, new, expected):
    _, files, _ = decoded
    changed = parts.with_main_content_type(files[made].read_bytes(), old, new)
    assert detect_format(changed, "renamed.bin").name == expected


def test_a_zip_that_is_no_office_package_stays_unsupported():
    from fixtures import zip_bytes

    with pytest.raises(kg_decoder.UnsupportedFormat):
        detect_format(zip_bytes({"[Content_Types].xml": b"<Types/>", "notes.txt": b"hello"}), "x.zip")
    binary = zip_bytes({"[Content_Types].xml": b'<Types><Override PartName="/xl/workbook.bin" ContentType='
                                               b'"application/vnd.ms-excel.sheet.binary.macroEnabled.main"/></Types>',
                        "xl/workbook.bin": b"\0"})
    with pytest.raises(kg_decoder.UnsupportedFormat):
        detect_format(binary, "book.xlsb")


def test_an_author_blocks_e_mail_addresses_are_no_titles(tmp_path):
    """#54: e-mail addresses were typed ``Title`` (a short line without a full stop), so a heading-led
    chunking started a section at "{zshen, ruochen}@allenai.org"; they are ``EmailAddress`` elements."""
    text = (b"Layout analysis\n\n{zshen, ruochen}@allenai.org\n\njane.doe@example.org\n\n"
            b"We present a toolkit that reads the layout of scanned pages and runs on any machine.")
    with kg_decoder.open_store(tmp_path / "store") as store:
        decoded = kg_decoder.decode(text, store=store, file_name="authors.txt", partition_cache=False)
        categories = {e.text: e.category for e in store.document_elements(decoded.document)}
    assert categories["{zshen, ruochen}@allenai.org"] == categories["jane.doe@example.org"] == "EmailAddress"
    assert not any(category == "Title" and "@" in text for text, category in categories.items())
