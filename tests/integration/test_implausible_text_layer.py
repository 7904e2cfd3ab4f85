"""A scanned page whose invisible OCR text layer was read in the wrong language (Latin look-alikes of
Russian, as tesseract's English model reads a Russian form) is doubted, not trusted (issue 54, item 5):
the page records its text layer's word plausibility, OCR reads it afresh in the languages the caller
gives and replaces the layer where it reads better, a layer kept is no surer than its plausibility,
its largest words are no title, and an audit lists the page. The control, the same picture under a
correct invisible layer, is neither doubted nor read again."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont
from reportlab.lib.utils import ImageReader
from reportlab.pdfgen import canvas

import kg_decoder
from kg_decoder.decode.pdf.text_plausibility import DOUBTED_BELOW, plausibility
from fixtures import FONT
from invariants import check_document

# What the picture shows: Portuguese, with the accents an English reading loses.
SHOWN = ("Relatório anual da associação",
         "A direção aprovou o orçamento para o próximo ano",
         "sem alterações e com a participação de todos os",
         "membros da comissão de avaliação regional.")
# What tesseract's English model read on a Russian form (kept as it read it): the garbage layer.
GARBAGE = ("HaumeHoBaHue opraHu3aunu: O6LeECTBO C OTPAHNYEHHON",
           "Meknapauna o COOTBeETCTBUN NpoAYKUNN TpeboBaHuaM TeXHMUYeCKOrO",
           "3aABUTeNb NPOCUT 3aperucTpupoBaTb AekKNapauiuto Ha OCHOBAaHMN",
           "Agpec Mecta HaxoxKdeHua: ropon Mocksa, ynuua JIeHvHa, IVIs:t 15")
TOPS = (200, 420, 510, 600)  # each line's top in the picture's pixels
PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "


def scan_with_layer(path, layer: tuple[str, ...]):
    """One page: a 200 dpi picture of ``SHOWN``, and over it an invisible text layer (render mode 3,
    as OCR software writes one) of ``layer``, a line over each line of the picture."""
    image = Image.new("RGB", (1700, 2200), "white")
    draw = ImageDraw.Draw(image)
    for k, line in enumerate(SHOWN):  # a heading, then body text
        draw.text((150, TOPS[k]), line, font=ImageFont.truetype(str(FONT), 64 if k == 0 else 44), fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    page = canvas.Canvas(str(path), pagesize=(612, 792))
    page.drawImage(ImageReader(io.BytesIO(buffer.getvalue())), 0, 0, 612, 792)
    text = page.beginText()
    text.setTextRenderMode(3)
    for k, line in enumerate(layer):
        text.setFont("Helvetica", 20 if k == 0 else 14)
        text.setTextOrigin(54, 792 - (TOPS[k] + 36) * 72 / 200)
        text.textLine(line)
    page.drawText(text)
    page.showPage()
    page.save()
    return path


def page_facts(store, document) -> dict:
    rows = store.select_rows(PREFIXES + f"""SELECT ?p ?o WHERE {{ GRAPH ?g {{
        ?page a tg:Page ; prov:wasDerivedFrom <{document}> ; ?p ?o }} }}""").rows
    return {str(p).rsplit("/", 1)[-1]: (o.value if hasattr(o, "value") else o) for p, o in rows}


def title(store, document) -> str:
    rows = store.select_rows(PREFIXES + f"""PREFIX dcterms: <http://purl.org/dc/terms/>
        SELECT ?t WHERE {{ GRAPH ?g {{ <{document}> dcterms:title ?t }} }}""").rows
    return " ".join(str(t.value if hasattr(t, "value") else t) for (t,) in rows)


def element_confidences(store, document) -> list[float]:
    rows = store.select_rows(PREFIXES + f"""SELECT ?c WHERE {{ GRAPH ?g {{
        ?e a tg:Element ; prov:wasDerivedFrom+ <{document}> ; tg:confidence ?c }} }}""").rows
    return [float(c.value if hasattr(c, "value") else c) for (c,) in rows]


def test_a_garbage_layer_is_read_again_and_a_good_one_is_trusted(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        garbage = kg_decoder.decode(scan_with_layer(tmp_path / "garbage.pdf", GARBAGE), store=store,
                                    image_ocr="off", ocr_languages="por")
        control = kg_decoder.decode(scan_with_layer(tmp_path / "control.pdf", SHOWN), store=store,
                                    image_ocr="off", ocr_languages="por")
        for result in (garbage, control):
            check_document(store, result.document)
        assert kg_decoder.validate(store=store).conforms

        # the garbage layer: measured, doubted, and replaced by OCR in the language asked for
        read = garbage.text_documents[0].text
        assert "HaumeHoBaHue" not in read and "Meknapauna" not in read
        assert "orçamento" in read and "associação" in read  # por, not eng: the accents are read
        facts = page_facts(store, garbage.document)
        assert float(facts["textLayerPlausibility"]) < DOUBTED_BELOW
        assert facts["partitionStrategy"] == "ocr_only"
        assert 0.6 < float(facts["confidence"]) < 1.0
        assert all(c < 1.0 for c in element_confidences(store, garbage.document))
        assert title(store, garbage.document).startswith("Relatório")

        # the control: the same picture under its own words, trusted as it is, not read again
        assert " ".join(control.text_documents[0].text.split()) == " ".join(" ".join(SHOWN).split())
        facts = page_facts(store, control.document)
        assert float(facts["textLayerPlausibility"]) == 1.0
        assert facts["partitionStrategy"] == "fast" and "confidence" not in facts
        assert set(element_confidences(store, control.document)) == {1.0}

        listed = store.table("audit-pages-implausible-text-layer").records()
        assert [(row["document"], row["pageNumber"], row["reading"]) for row in listed] == [
            (garbage.document, 1, "ocr")]
        assert store.table("audit-pages-low-ocr-confidence").rows == []

    with kg_decoder.open_store(None) as elsewhere:  # the same bytes read afresh read the same
        again = kg_decoder.decode(tmp_path / "garbage.pdf", store=elsewhere, image_ocr="off", ocr_languages="por",
                                  partition_cache=False)
        assert again.document == garbage.document and again.text_documents[0].text == read


def test_a_garbage_layer_no_ocr_may_read_is_kept_doubted(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(scan_with_layer(tmp_path / "garbage.pdf", GARBAGE), store=store,
                                   image_ocr="off", strategy="fast")
        check_document(store, result.document)
        assert "HaumeHoBaHue" in result.text_documents[0].text  # kept: nothing read it better
        facts = page_facts(store, result.document)
        plausibility = float(facts["textLayerPlausibility"])
        assert plausibility < DOUBTED_BELOW and float(facts["confidence"]) == plausibility
        assert facts["partitionStrategy"] == "fast"
        assert set(element_confidences(store, result.document)) == {plausibility}
        assert "HaumeHoBaHue" not in title(store, result.document)  # a doubted layer's largest words are no title
        [row] = store.table("audit-pages-implausible-text-layer").records()
        assert (row["document"], row["reading"], float(row["confidence"])) == (result.document, "layer kept",
                                                                               plausibility)
        assert store.table("audit-pages-low-ocr-confidence").rows == []
        [source] = kg_decoder.trace(quote="Meknapauna", document=result.document, store=store)
        assert {box.verification for box in source.boxes} == {"unverified"}  # the layer vouches for no box


TECHNICAL = ("The method getElementById returns the element whose id matches. Call addEventListener on the "
             "returned node to register a handler; preventDefault stops the default action, and "
             "stopPropagation keeps the event from bubbling. Use querySelectorAll for several nodes and "
             "classList.toggle to switch a class. The innerHTML property sets markup, while textContent "
             "sets plain text: document.getElementById(\"main\").innerHTML = renderTemplate(data);")
GERMAN = ("Die Rechtsschutzversicherung der Müller GmbH übernimmt im Durchschnitt die Kosten des Verfahrens. "
          "Herr McDonald, Geschäftsführer, prüft mit dem Angstschweiß eines Anfängers die Durchschnittswerte "
          "der Haftpflichtversicherung, und die Kraftfahrzeugsteuer wird im Frühjahr fällig.")


def test_prose_of_code_and_of_long_german_words_is_no_garbage(tmp_path):
    """A page of prose naming a program's identifiers (CamelCase) and one of German compounds (long
    runs of consonants): born-digital text layers, scored plausible, not doubted, not read again."""
    for text in (TECHNICAL, GERMAN):
        score, _ = plausibility(text)
        assert score >= DOUBTED_BELOW, (score, text[:40])
    path = tmp_path / "prose.pdf"
    drawing = canvas.Canvas(str(path))
    for page_text in (TECHNICAL, GERMAN):
        text = drawing.beginText(60, 780)
        words = page_text.split()
        for start in range(0, len(words), 11):
            text.textLine(" ".join(words[start:start + 11]))
        drawing.drawText(text)
        drawing.showPage()
    drawing.save()
    with kg_decoder.open_store(tmp_path / "store") as store:
        result = kg_decoder.decode(path, store=store, image_ocr="off")
        assert store.table("audit-pages-implausible-text-layer").rows == []
        assert store.document_elements(result.document)
        assert all(c == 1.0 for c in element_confidences(store, result.document))  # trusted as read
