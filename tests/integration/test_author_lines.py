"""People's names a partitioner calls a ``Title`` (issue 54, item 9): an author block's lines are
``Author`` elements, so a heading-led chunking starts no section at them, while headings made of
capitalised words, even beside an address, stay titles."""

from __future__ import annotations

import pytest

import kg_decoder
from kg_decoder.decode.author_lines import is_name_line

PAPER = (b"Layout analysis for scanned archives\n\n"
         b"Jane Q. Doe\n\n"
         b"Zejiang Shen, Ruochen Zhang\n\n"
         b"Allen Institute for AI\n\n"
         b"jane.doe@example.org\n\n"
         b"We present a toolkit that reads the layout of scanned pages and runs on any machine.\n\n"
         b"Helpful Links\n\n"
         b"The toolkit's pages list the places where its models and its data sets are kept for everyone.\n\n"
         b"Federal Citizen Services Fund\n\n"
         b"The fund pays for the services the agency offers to the public through its offices.\n")


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    folder = tmp_path_factory.mktemp("authors")
    store = kg_decoder.open_store(folder / "store")
    decoded = kg_decoder.decode(PAPER, store=store, file_name="paper.txt", partition_cache=False,
                                section_strategy="heading")
    return store, decoded


def test_an_author_blocks_names_are_authors_and_headings_stay_titles(paper):
    store, decoded = paper
    categories = {e.text: e.category for e in store.document_elements(decoded.document)}
    assert categories["Jane Q. Doe"] == categories["Zejiang Shen, Ruochen Zhang"] == "Author", categories
    assert categories["Helpful Links"] == categories["Federal Citizen Services Fund"] == "Title"


def test_no_section_starts_at_an_authors_name(paper):
    _, decoded = paper
    starts = [text.text.split("\n")[0] for text in decoded.text_documents]
    assert starts[-2:] == ["Helpful Links", "Federal Citizen Services Fund"]
    assert not any(start in ("Jane Q. Doe", "Zejiang Shen, Ruochen Zhang") for start in starts)


@pytest.mark.parametrize("line", ["Lee4, Jacob Carlson3, and Weining Li5", "Ludwig van Beethoven*", "Z. Shen et al."])
def test_lines_of_names(line):
    assert is_name_line(line)


@pytest.mark.parametrize("line", ["Results and discussion", "2.1 Methods", "Table 3", "melissadell,jacob carlson",
                                  "Use of 3D models"])
def test_lines_that_are_no_names(line):
    assert not is_name_line(line)
