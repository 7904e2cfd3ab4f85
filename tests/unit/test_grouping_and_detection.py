"""Pure parts: options, detection, grouping, assembly (no partitioning)."""

from __future__ import annotations

import pytest
from fixtures import zip_bytes

from kg_decoder import DecodeOptions, EmptyDocument, InvalidOption, UnsafeDocument, UnsupportedFormat
from kg_decoder.decode.assembly import SEPARATOR, assemble, element_text
from kg_decoder.decode.formats import detect_format
from kg_decoder.decode.grouping import group
from kg_decoder.model import Element, Page


def els(*specs):
    """Elements from (category, text[, depth]) tuples."""
    out = []
    for i, spec in enumerate(specs):
        category, text, *rest = spec
        out.append(Element(i, category, text, depth=rest[0] if rest else None,
                           html=f"<table><tr><td>{text}</td></tr></table>" if category == "Table" else None))
    return out


def sections(elements, **options):
    segments = group(elements, [], False, DecodeOptions(**options))
    assemble(segments, elements)
    return segments


def test_options_are_validated():
    with pytest.raises(InvalidOption):
        DecodeOptions(section_strategy="chapters")
    with pytest.raises(InvalidOption):
        DecodeOptions(section_element_count=0)
    with pytest.raises(InvalidOption):
        DecodeOptions(ocr_languages="eng; rm -rf /")


def test_whole_document_is_one_section():
    segments = sections(els(("Title", "A"), ("NarrativeText", "b")))
    assert len(segments) == 1 and segments[0].text == "A" + SEPARATOR + "b"


def test_heading_sections_nest_and_close_at_equal_or_higher_level():
    elements = els(("NarrativeText", "pre"), ("Title", "One", 0), ("NarrativeText", "a"), ("Title", "One.1", 1),
                   ("NarrativeText", "b"), ("Title", "One.1.1", 2), ("Title", "One.2", 1), ("Title", "Two", 0),
                   ("NarrativeText", "c"))
    segments = sections(elements, section_strategy="heading")
    shape = [(s.title, s.parent, s.level, s.text) for s in segments]
    assert shape == [
        (None, None, None, "pre"),
        ("One", None, 0, "One\n\na"),
        ("One.1", 1, 1, "One.1\n\nb"),
        ("One.1.1", 2, 2, "One.1.1"),
        ("One.2", 1, 1, "One.2"),
        ("Two", None, 0, "Two\n\nc"),
    ]
    # A section's extent covers its nested sections: "One" runs up to "Two".
    document = SEPARATOR.join(s.text for s in segments)
    one = segments[1]
    assert document[one.char_offset: one.char_offset + one.extent_length] == "One\n\na\n\nOne.1\n\nb\n\nOne.1.1\n\nOne.2"


def test_heading_falls_back_to_one_section_without_titles():
    segments = sections(els(("NarrativeText", "a"), ("NarrativeText", "b")), section_strategy="heading")
    assert len(segments) == 1


def test_element_type_splits_where_text_and_tables_alternate():
    elements = els(("NarrativeText", "a"), ("Title", "b"), ("Table", "t1"), ("Table", "t2"), ("NarrativeText", "c"))
    segments = sections(elements, section_strategy="element-type")
    assert [s.elements for s in segments] == [[0, 1], [2, 3], [4]]


def test_count_strategy_and_images_do_not_count():
    elements = els(("NarrativeText", "a"), ("Image", ""), ("NarrativeText", "b"), ("NarrativeText", "c"))
    segments = sections(elements, section_strategy="count", section_element_count=2)
    assert [s.elements for s in segments] == [[0, 2], [3]]
    assert segments[0].images == [1]
    assert "Image" not in segments[0].text


def test_size_strategy_never_splits_an_element_and_respects_the_limit():
    elements = els(("NarrativeText", "x" * 30), ("NarrativeText", "y" * 30), ("NarrativeText", "z" * 100),
                   ("NarrativeText", "w" * 10))
    segments = sections(elements, section_strategy="size", section_max_size=70)
    assert [s.elements for s in segments] == [[0, 1], [2], [3]]
    assert all(len(s.text) <= 70 for s in segments if len(s.elements) > 1)


def test_pages_exist_even_when_empty_and_sections_within_pages_derive_from_them():
    elements = [Element(0, "Title", "T", page_number=1, depth=0), Element(1, "NarrativeText", "a", page_number=1),
                Element(2, "NarrativeText", "b", page_number=3)]
    pages = [Page(1), Page(2), Page(3)]
    plain = group(elements, pages, True, DecodeOptions())
    assert [(s.kind, s.page_number, s.elements) for s in plain] == [("page", 1, [0, 1]), ("page", 2, []),
                                                                     ("page", 3, [2])]
    nested = group(elements, pages, True, DecodeOptions(section_strategy="count", section_element_count=1,
                                                         section_within_pages=True))
    document = assemble(nested, elements)
    kinds = [(s.kind, s.page_number, s.parent) for s in nested]
    # An empty page still exists; it simply holds no section.
    assert kinds == [("page", 1, None), ("section", 1, 0), ("section", 1, 0), ("page", 2, None),
                     ("page", 3, None), ("section", 3, 4)]
    assert nested[3].text == "" and not nested[3].carries_text
    for segment in nested:  # a page's text is the span of its sections in the document text
        assert document[segment.char_offset: segment.char_offset + len(segment.text)] == segment.text
    assert nested[0].text == "T" + SEPARATOR + "a"


def test_tables_are_html_and_images_are_left_out():
    assert element_text(Element(0, "Table", "a", html="<table><tr><td>a</td></tr></table>")).startswith("<table>")
    elements = els(("NarrativeText", "a"), ("Image", "alt words"), ("Table", "cell"))
    segment = sections(elements)[0]
    assert segment.text == "a" + SEPARATOR + "<table><tr><td>cell</td></tr></table>"
    assert "alt words" not in segment.text


def test_detection_uses_bytes_and_extension_only_for_ties(generated):
    docx = generated["generated.docx"].path.read_bytes()
    assert detect_format(docx, "renamed.pdf").name == "docx"
    assert detect_format(b"a,b\n1,2\n", "x.csv").name == "csv"
    assert detect_format(b"# Title\n\ntext\n", "x.md").name == "markdown"
    assert detect_format(b"# Title\n\ntext\n", None).name == "text"
    assert detect_format(b"%PDF-1.7\n", "x.txt").name == "pdf"
    assert detect_format(b'{"a": 1}', None).name == "json"
    assert detect_format(b"whatever", None, mime_type="text/markdown").name == "markdown"


def test_detection_refuses_empty_unsupported_and_bombs():
    with pytest.raises(EmptyDocument):
        detect_format(b"", "x.txt")
    with pytest.raises(UnsupportedFormat):
        detect_format(bytes(range(256)) * 64, "x.bin")
    with pytest.raises(UnsupportedFormat):
        detect_format(zip_bytes({"a.txt": b"hello"}), "x.zip")
    bomb = zip_bytes({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"\0" * (64 * 1024 * 1024)})
    with pytest.raises(UnsafeDocument):
        detect_format(bomb, "bomb.docx")
