"""A SmartArt diagram's texts on a slide (issue 54, item 8) trace to the words the
rendering draws, verified by its characters, not to a dotted box around the whole frame."""

from __future__ import annotations

import pytest

import kg_decoder


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
