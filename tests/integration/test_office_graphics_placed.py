"""A chart's and a SmartArt diagram's texts on a slide (issue 54, item 8) trace to the words the
rendering draws, verified by its characters, not to a dotted box around the whole frame."""

from __future__ import annotations

import pytest

import kg_decoder

CATEGORIES = ["Espresso", "Latte", "Mocha"]
SERIES = {"Harbour branch": (12.5, 30.1, 8.4), "Station branch": (9.0, 22.3, 11.7)}


def make_chart_slide(path) -> None:
    """A slide with a titled column chart: axis titles, a legend, data labels; the slide's own title
    names two of its categories (drawn first on the slide: the chart's labels are still found)."""
    from pptx import Presentation
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    presentation = Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Latte and Mocha sales"
    data = CategoryChartData()
    data.categories = CATEGORIES
    for name, values in SERIES.items():
        data.add_series(name, values)
    frame = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1.8), Inches(8), Inches(5), data)
    chart = frame.chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Cups sold per branch"
    chart.has_legend = True
    chart.value_axis.has_title = True
    chart.value_axis.axis_title.text_frame.text = "Thousand cups"
    chart.category_axis.has_title = True
    chart.category_axis.axis_title.text_frame.text = "Drink"
    chart.plots[0].has_data_labels = True
    presentation.save(path)


FRAME = (72.0, 129.6, 648.0, 489.6)  # the chart frame's box on the slide, points


@pytest.fixture(scope="module")
def chart_slide(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chart")
    make_chart_slide(folder / "chart.pptx")
    store = kg_decoder.open_store(folder / "store")
    return store, kg_decoder.decode(folder / "chart.pptx", store=store)


def test_a_charts_texts_are_elements_placed_on_the_rendering(chart_slide):
    store, decoded = chart_slide
    texts = {e.text: e for e in store.document_elements(decoded.document) if e.category == "ChartText"}
    wanted = ["Cups sold per branch", "Thousand cups", "Drink", *SERIES, *CATEGORIES, "12.5", "30.1", "9", "22.3"]
    assert set(wanted) <= set(texts), sorted(texts)
    for text in wanted:
        element = texts[text]
        assert element.coordinate_system.startswith("rendered"), (text, element.bbox)
        box = element.bbox
        assert FRAME[0] - 1 <= box[0] < box[2] <= FRAME[2] + 1 and FRAME[1] - 1 <= box[1] < box[3] <= FRAME[3] + 1
        assert (box[2] - box[0]) * (box[3] - box[1]) < 0.1 * (FRAME[2] - FRAME[0]) * (FRAME[3] - FRAME[1]), text


@pytest.mark.parametrize("quote", ["Cups sold per branch", "Latte", "Station branch", "Thousand cups", "30.1"])
def test_a_quote_from_a_chart_traces_to_a_verified_box_on_its_words(chart_slide, quote):
    store, decoded = chart_slide
    first = kg_decoder.trace(quote=quote, document=decoded.document, store=store)[0]
    [box] = first.boxes
    assert first.page_number == 1 and box.source == "characters" and box.verification == "verified"
    assert (box.right - box.left) < 0.5 * (FRAME[2] - FRAME[0]), box


@pytest.fixture(scope="module")
def smartart_slide(tmp_path_factory):
    import drawn_parts

    folder = tmp_path_factory.mktemp("smartart")
    path = drawn_parts.make_smartart_pptx(folder / "smartart.pptx")
    store = kg_decoder.open_store(folder / "store")
    return store, kg_decoder.decode(path, store=store)


def test_smartart_nodes_are_placed_on_their_shapes_and_quotes_trace_to_their_words(smartart_slide):
    import drawn_parts

    store, decoded = smartart_slide
    nodes = [e for e in store.document_elements(decoded.document) if e.category == "SmartArt"]
    assert [e.text for e in nodes] == [text for text, _ in drawn_parts.SMARTART_NODES]
    frame_left, frame_top = (72 * v for v in drawn_parts.SMARTART_FRAME[:2])
    for k, (node, (_, depth)) in enumerate(zip(nodes, drawn_parts.SMARTART_NODES)):
        shape = (frame_left + 72 * (0.2 + 1.9 * k), frame_top + 72 * (0.5 + 1.2 * depth))  # its box's corner
        shape += (shape[0] + 72 * 1.7, shape[1] + 72 * 0.9)
        assert node.coordinate_system.startswith("rendered"), node.bbox
        assert shape[0] - 1 <= node.bbox[0] < node.bbox[2] <= shape[2] + 1, (node.text, node.bbox, shape)
        assert shape[1] - 1 <= node.bbox[1] < node.bbox[3] <= shape[3] + 1, (node.text, node.bbox, shape)
    [source] = kg_decoder.trace(quote="KGBUILD Build", document=decoded.document, store=store)
    [box] = source.boxes
    assert box.source == "characters" and box.verification == "verified"
    assert box.left >= frame_left + 72 * 2.1 - 1 and box.right <= frame_left + 72 * 3.8 + 1, box


def test_a_chart_slides_chunk_has_one_anchor_per_kind_of_box_and_the_audit_lists_it_once(chart_slide):
    """The chunk holds the chart's data (a table on the frame the file states) and its drawn labels
    (boxes on the rendering): two anchors on page 1, not one node with both boxes (which the audit
    listed twice), and the frame's box is checked by the rendering's characters, not "unverified"."""
    store, decoded = chart_slide
    kg_decoder.chunk_document(decoded.document, store=store)
    [chunk] = kg_decoder.document_chunks(decoded.document, store=store)
    kinds = sorted((a.coordinate_system, a.verification) for a in chunk.anchors)
    assert kinds == [("pdf-points-top-left", "element"), ("rendered-pdf-points-top-left", "verified")]
    frame = next(a for a in chunk.anchors if not a.coordinate_system.startswith("rendered"))
    assert frame.bbox == FRAME
    audits = {a.name: a for a in kg_decoder.run_audits(store)}
    rows = audits["audit-chunk-anchors-not-verified"].table.records()
    assert [(r["chunk"], r["pageNumber"], r["boxes"], r["verification"]) for r in rows] == [
        (chunk.iri, 1, "pdf-points-top-left", "element")]
