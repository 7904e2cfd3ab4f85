"""python-docx's and python-pptx's look-ups through compiled expressions (``patches.oxml``): the
elements unstructured gives from real DOCX and PPTX files nobody here wrote are the same either way."""

from __future__ import annotations

import io
import json
from contextlib import contextmanager

import pytest
from conftest import CORPUS, WILD

from kg_decoder.patches import oxml as oxml_lookups


@contextmanager
def _libraries_own():
    """python-docx and python-pptx as they come, within."""
    oxml_lookups.uninstall_compiled_lookups()
    try:
        yield
    finally:
        oxml_lookups.install_compiled_lookups()


def _elements(path) -> list[str] | str:
    """unstructured's elements of ``path`` as JSON, or the error it raised."""
    from kg_decoder.decode import offline

    offline.prepare()  # as a worker does: the spaCy model unstructured types texts with, offline
    from unstructured.partition.docx import partition_docx
    from unstructured.partition.pptx import partition_pptx

    partition = partition_docx if path.suffix == ".docx" else partition_pptx
    try:
        return [json.dumps(e.to_dict(), sort_keys=True, default=str) for e in partition(filename=str(path))]
    except Exception as error:  # a broken file of the wild set: the same error either way
        return f"{type(error).__name__}: {error}"


@pytest.mark.parametrize("folder", [CORPUS, WILD], ids=["corpus", "wild"])
def test_unstructured_gives_the_same_elements_of_every_docx_and_pptx(folder):
    paths = sorted([*folder.glob("*.docx"), *folder.glob("*.pptx")])
    assert len(paths) >= 4
    oxml_lookups.install_compiled_lookups()
    compiled = {path.name: _elements(path) for path in paths}
    with _libraries_own():
        own = {path.name: _elements(path) for path in paths}
    assert compiled == own
    assert sum(isinstance(found, list) and len(found) > 0 for found in own.values()) >= len(paths) * 2 // 3


def test_a_long_body_gives_its_paragraphs_and_tables_in_order():
    import docx
    from docx.oxml.ns import qn

    document = docx.Document()
    for number in range(3000):
        document.add_paragraph(f"paragraph {number}")
        if number % 7 == 0:
            document.add_table(rows=1, cols=2).cell(0, 0).text = f"table {number}"
    inserted = document.element.body.makeelement(qn("w:ins"), {})  # a wrapper: its paragraph is not the body's
    inserted.append(document.element.body.makeelement(qn("w:p"), {}))
    document.element.body.insert(5, inserted)
    data = io.BytesIO()
    document.save(data)
    body = docx.Document(io.BytesIO(data.getvalue())).element.body

    oxml_lookups.install_compiled_lookups()
    compiled = body.inner_content_elements
    with _libraries_own():
        own = body.inner_content_elements
    assert len(own) == 3000 + 429
    assert [id(element) for element in compiled] == [id(element) for element in own]
    assert [element.tag for element in compiled[:3]] == [qn("w:p"), qn("w:tbl"), qn("w:p")]


def test_strings_and_numbers_come_back_as_lxml_gives_them():
    import docx

    document = docx.Document()
    paragraph = document.add_paragraph("numbered", style="List Number")
    oxml_lookups.install_compiled_lookups()
    compiled = paragraph._p.xpath("./w:pPr/w:pStyle/@w:val"), paragraph._p.xpath("count(./w:r)")
    with _libraries_own():
        own = paragraph._p.xpath("./w:pPr/w:pStyle/@w:val"), paragraph._p.xpath("count(./w:r)")
    assert compiled == own == (["ListNumber"], 1.0)


def test_an_expression_that_does_not_compile_fails_as_lxml_made_it_fail():
    """A style id with a quote in it makes python-docx build such an expression."""
    import docx

    styles = docx.Document().styles.element
    oxml_lookups.install_compiled_lookups()
    with pytest.raises(Exception) as compiled:
        styles.xpath('w:style[@w:styleId="a"b"]')
    with _libraries_own():
        with pytest.raises(Exception) as own:
            styles.xpath('w:style[@w:styleId="a"b"]')
    assert type(compiled.value) is type(own.value) and str(compiled.value) == str(own.value)
