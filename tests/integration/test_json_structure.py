"""JSON and JSON lines decode by their structure: sections that keep objects and arrays whole up
to the size limit, each recording its JSON Pointer."""

from __future__ import annotations

import json

import kg_decoder
from invariants import check_document


def resolve(document, pointer: str):
    """RFC 6901."""
    value = document
    for step in pointer.split("/")[1:] if pointer else []:
        step = step.replace("~1", "/").replace("~0", "~")
        value = value[int(step)] if isinstance(value, list) else value[step]
    return value


def pointer_sections(store, document):
    rows = store.document_segments(document)
    pointers = {q.subject.value: q.object.value for q in store.quads()
                if q.predicate.value.endswith("/jsonPointer") and q.subject.value.startswith("urn:section:")}
    return [(pointers[row.segment], store.text(row.sha256)) for row in rows]


DOCUMENT = {
    "title": "KGSENTJSONSTRUCT",
    "items": [{"name": f"item {i}", "address": {"street": f"{i} Long Street " * 8, "city": "Porto"}}
              for i in range(12)],
    "odd/key~name": {"value": 1},
    "notes": "short",
}


def test_objects_stay_whole_up_to_the_limit_and_split_deeper_only_when_needed(store):
    data = json.dumps(DOCUMENT).encode()
    result = kg_decoder.decode(data, store=store, file_name="data.json", section_max_size=300)
    check_document(store, result.document)
    sections = pointer_sections(store, result.document)
    assert len(sections) == result.sections > 12
    leaves = 0
    for pointer, text in sections:
        value = resolve(DOCUMENT, pointer)
        assert json.loads(text) == value  # the section is exactly that part of the document
        assert len(text) <= 300 or not isinstance(value, (dict, list))
        parent = resolve(DOCUMENT, pointer.rsplit("/", 1)[0]) if pointer else None
        assert parent is None or len(json.dumps(parent, ensure_ascii=False, indent=2)) > 300  # split only when needed
        leaves += 1
    assert "/odd~1key~0name" in {p for p, _ in sections}
    assert {"/items/0", "/title", "/notes"} <= {p for p, _ in sections}
    small = json.dumps({"a": [1, 2], "b": {"c": "KGSENTSMALL"}}).encode()
    whole = kg_decoder.decode(small, store=store, file_name="small.json")  # fits the default limit
    assert [p for p, _ in pointer_sections(store, whole.document)] == [""]
    again = kg_decoder.decode(data, store=store, file_name="data.json", section_max_size=100000)
    assert [p for p, _ in pointer_sections(store, again.document)] == [""]  # the cache knows the limit


def test_json_lines_are_known_by_their_content(store, tmp_path):
    lines = b'{"id": 1, "text": "KGSENTLINEONE"}\n{"id": 2, "text": "KGSENTLINETWO"}\n'
    for name in ("records.txt", "records.log", None):
        result = kg_decoder.decode(lines, store=store, file_name=name)
        assert result.format == "jsonl", name
    sections = pointer_sections(store, result.document)
    assert [p for p, _ in sections] == ["/0", "/1"]
    assert json.loads(sections[1][1])["text"] == "KGSENTLINETWO"
    not_lines = kg_decoder.decode(b'{"id": 1}\nplain words\n', store=store, file_name="mixed.txt")
    assert not_lines.format == "text"


def test_another_section_strategy_still_applies_to_json(store):
    data = json.dumps(DOCUMENT).encode()
    result = kg_decoder.decode(data, store=store, file_name="data.json", section_max_size=300,
                               section_strategy="count", section_element_count=5)
    elements = store.document_elements(result.document)
    assert result.sections == -(-len(elements) // 5) and len(elements) > 5
    check_document(store, result.document)
