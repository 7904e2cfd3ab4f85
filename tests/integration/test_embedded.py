"""Embedded files and attachments decode as child documents linked to their parent."""

from __future__ import annotations

import io
import struct
import subprocess
import sys
import zipfile

import pytest
import rdflib
from rdflib.namespace import RDFS

import fixtures
import kg_decoder
from embedding_fixtures import (email_with, nested_zip_bomb, ole_package, ole_paragraph_after, outlook_message,
                                with_parts)
from invariants import check_document
from kg_decoder.quality.audits import run_audits
from kg_decoder.graph.resources import resource_dir
from kg_decoder.quality.validation import validate

TG = "https://trustgraph.ai/ns/"
NOTES = "KGSENTNOTES the glacier survey notes, packaged inside the report. " * 100
PREFIXES = "PREFIX tg: <https://trustgraph.ai/ns/> PREFIX prov: <http://www.w3.org/ns/prov#> "


def workbook_bytes(word: str) -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    book.active.append(["Ledger", "Amount"])
    book.active.append([word, 7])
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def document_bytes(word: str) -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph(f"{word} is written in the embedded Word document.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def report_docx(tmp_path_factory) -> bytes:
    """A DOCX with an embedded workbook (an OOXML part), a packaged text file and a packaged ZIP bomb."""
    path = tmp_path_factory.mktemp("embedded") / "report.docx"
    fixtures.make_docx(path)
    package = with_parts(path.read_bytes(), {
        "word/embeddings/Microsoft_Excel_Worksheet.xlsx": workbook_bytes("KGSENTLEDGER"),
        "word/embeddings/oleObject1.bin": ole_package("survey-notes.txt", NOTES.encode()),
        "word/embeddings/oleObject2.bin": ole_package("archive.zip", nested_zip_bomb()),
    }, {"word/document.xml": [("rIdEmb1", "embeddings/oleObject1.bin"), ("rIdEmb2", "embeddings/oleObject2.bin")]})
    return ole_paragraph_after(package, "KGSENTDOCXNESTED", "rIdEmb1")


def text_of(store, document: str) -> str:
    return "\n".join(store.text(row.sha256) for row in store.document_segments(document))


def ask(store, query: str) -> list[dict]:
    """A SPARQL SELECT through the public API: rows of plain values."""
    return store.select_rows(PREFIXES + query).records()


def holds(store, pattern: str) -> bool:
    return bool(ask(store, f"SELECT * WHERE {{ GRAPH <urn:graph:source> {{ {pattern} }} }} LIMIT 1"))


def test_files_embedded_in_a_docx_become_child_documents_and_a_nested_zip_bomb_is_refused(store, report_docx):
    result = kg_decoder.decode(report_docx, store=store, file_name="report.docx")
    assert result.status == "decoded" and result.format == "docx"
    children = {e.path: e for e in result.embedded}
    assert set(children) == {"word/embeddings/Microsoft_Excel_Worksheet.xlsx", "word/embeddings/oleObject1.bin",
                             "word/embeddings/oleObject2.bin"}

    workbook = children["word/embeddings/Microsoft_Excel_Worksheet.xlsx"].result
    notes = children["word/embeddings/oleObject1.bin"]
    bomb = children["word/embeddings/oleObject2.bin"]
    assert workbook.format == "xlsx" and "KGSENTLEDGER" in text_of(store, workbook.document)
    # the OLE package is unwrapped: the child is the packaged file, bytes for bytes, under its own name
    assert notes.name == "survey-notes.txt" and notes.result.format == "text"
    assert store.content(notes.result.document) == NOTES.encode()
    assert isinstance(bomb.error, kg_decoder.UnsafeDocument) and bomb.name == "archive.zip"

    # the parent's text and entities are its own; each child's are the child's
    parent_text = text_of(store, result.document)
    assert "KGSENTDOCXBODY" in parent_text and "KGSENTLEDGER" not in parent_text and "KGSENTNOTES" not in parent_text
    for child in (workbook, notes.result):
        check_document(store, child.document)
    # the packaged file sits in a paragraph of its own (its icon): it is placed after the text before it
    [placed] = ask(store, f"""SELECT ?text WHERE {{ GRAPH <urn:graph:source> {{
        <{notes.result.document}> tg:embeddedAt ?element . ?element tg:text ?text }} }}""")
    assert placed["text"] == "KGSENTDOCXNESTED sits in the nested section."
    alone = kg_decoder.decode(report_docx, store=store.path.parent / "alone", embedded_depth=0)
    assert alone.embedded == [] and (alone.elements, alone.pages, alone.sections) == (
        result.elements, result.pages, result.sections)

    links = {(row["child"], row["path"]) for row in ask(store, f"""
        SELECT ?child ?path WHERE {{ GRAPH <urn:graph:source> {{
          ?child tg:embeddedIn <{result.document}> ; tg:embeddedPath ?path ; a tg:Document }} }}""")}
    assert links == {(workbook.document, "word/embeddings/Microsoft_Excel_Worksheet.xlsx"),
                     (notes.result.document, "word/embeddings/oleObject1.bin")}
    # the refused child is a failed decoding informed by the parent's decoding; the audit lists it
    failures = ask(store, f"""SELECT ?code ?name WHERE {{ GRAPH <urn:graph:source> {{
        ?failure a tg:FailedDecoding ; tg:errorCode ?code ; tg:fileName ?name ; prov:wasInformedBy ?decoding .
        ?decoding prov:used <{result.document}> }} }}""")
    assert [(row["code"], row["name"]) for row in failures] == [("unsafe-document", "archive.zip")]
    audit = {a.name: a for a in run_audits(store)}["audit-failed-or-fallback"]
    assert any("archive.zip" in str(row) for row in audit.table.rows)

    report = validate(store)
    assert report.conforms, report.violations[:3]


def test_an_embedding_on_a_slide_or_sheet_names_that_page(store, tmp_path):
    deck = tmp_path / "deck.pptx"
    fixtures.make_pptx(deck)
    pptx = with_parts(deck.read_bytes(), {"ppt/embeddings/Microsoft_Word_Document.docx": document_bytes("KGSENTSLIDE")},
                      {"ppt/slides/slide2.xml": [("rIdEmb1", "../embeddings/Microsoft_Word_Document.docx")]})
    book = tmp_path / "book.xlsx"
    fixtures.make_xlsx(book)
    xlsx = with_parts(book.read_bytes(), {"xl/embeddings/oleObject1.bin": ole_package("beta.txt", NOTES.encode())},
                      {"xl/worksheets/sheet2.xml": [("rIdEmb1", "../embeddings/oleObject1.bin")]})
    for data, name, page_number, word in ((pptx, "deck.pptx", 2, "KGSENTSLIDE"), (xlsx, "book.xlsx", 2, "KGSENTNOTES")):
        result = kg_decoder.decode(data, store=store, file_name=name)
        [child] = result.embedded
        assert word in text_of(store, child.result.document)
        [row] = ask(store, f"""SELECT ?number WHERE {{ GRAPH <urn:graph:source> {{
            <{child.result.document}> tg:embeddedOn ?page ; tg:embeddedIn <{result.document}> .
            ?page tg:pageNumber ?number ; prov:wasDerivedFrom <{result.document}> }} }}""")
        assert int(row["number"]) == page_number
        # new settings give the parent new pages: the child's link follows, none is left dangling
        again = kg_decoder.decode(data, store=store, file_name=name, section_within_pages=True)
        [row] = ask(store, f"""SELECT (COUNT(?page) AS ?links) WHERE {{ GRAPH <urn:graph:source> {{
            <{again.embedded[0].result.document}> tg:embeddedOn ?page . ?page tg:pageNumber ?n }} }}""")
        assert int(row["links"]) == 1
    assert validate(store).conforms


def test_an_email_attachment_from_the_corpus_is_a_child_and_survives_re_decoding_either(store, corpus_dir):
    path = corpus_dir / "fake-email-attachment.eml"
    result = kg_decoder.decode(path, store=store)
    [attachment] = result.embedded
    assert attachment.name == "fake-attachment.txt" and attachment.path == "attachment 1"
    assert text_of(store, attachment.result.document).strip() == "Hey this is a fake attachment!"
    assert "fake attachment" not in text_of(store, result.document)
    assert "Here's the attachments!" in text_of(store, result.document)
    link = f"<{attachment.result.document}> tg:embeddedIn <{result.document}>"

    again = kg_decoder.decode(path, store=store)
    assert again.status == "unchanged" and again.embedded[0].status == "unchanged"
    # new settings replace the parent's decode; the child and its link stay
    kg_decoder.decode(path, store=store, section_strategy="count", section_element_count=2)
    assert holds(store, link) and store.document_summaries(attachment.result.document)
    # and re-decoding the child on its own keeps where it was found
    kg_decoder.decode(corpus_dir / "fake-email-attachment.eml", store=store, embedded_depth=0)
    child_bytes = store.content(attachment.result.document)
    kg_decoder.decode(child_bytes, store=store, file_name="fake-attachment.txt", section_strategy="count")
    assert holds(store, link)
    assert validate(store).conforms


def test_outlook_attachments_are_children_too(store):
    table = b"city,glaciers\nKGSENTMSGCSV,12\nPorto,0\n"
    message = outlook_message("KGSENTMSG quarterly survey", "KGSENTMSGBODY see the two files attached.",
                              [("notes.txt", b"KGSENTMSGNOTES written in the attached text file.\n"),
                               ("glaciers.csv", table)])
    result = kg_decoder.decode(message, store=store, file_name="survey.msg")
    assert result.format == "msg" and "KGSENTMSGBODY" in text_of(store, result.document)
    assert "KGSENTMSGNOTES" not in text_of(store, result.document)
    notes, csv = result.embedded
    assert (notes.name, notes.result.format, csv.name, csv.result.format) == ("notes.txt", "text", "glaciers.csv", "csv")
    assert "KGSENTMSGNOTES" in text_of(store, notes.result.document)
    assert store.content(csv.result.document) == table
    assert validate(store).conforms


def message_chain(levels: int) -> bytes:
    """A message with a message attached with a message attached..., each body naming its level."""
    data = email_with(f"level {levels}", f"KGSENTLEVEL{levels} is the innermost message.", [])
    for level in range(levels - 1, -1, -1):
        data = email_with(f"level {level}", f"KGSENTLEVEL{level} forwards the next one.",
                          [(f"level{level + 1}.eml", "message/rfc822", data)])
    return data


def test_recursion_stops_at_the_depth_limit(store):
    chain = message_chain(5)
    result = kg_decoder.decode(chain, store=store, file_name="chain.eml")
    found = [e for top in result.embedded for e in top.walk()]
    assert [e.depth for e in found] == [1, 2, 3]
    assert [e.result.format for e in found] == ["eml"] * 3
    assert "KGSENTLEVEL3" in text_of(store, found[-1].result.document)
    everything = "".join(store.blob(row["sha256"]).decode("utf-8", "replace")
                         for row in ask(store, "SELECT ?sha256 WHERE { GRAPH <urn:graph:source> "
                                               "{ ?s a tg:Section ; tg:sha256 ?sha256 } }"))
    assert "KGSENTLEVEL3" in everything and "KGSENTLEVEL4" not in everything

    shallow = kg_decoder.decode(chain, store=store.path.parent / "shallow", file_name="chain.eml", embedded_depth=1)
    assert [e.depth for top in shallow.embedded for e in top.walk()] == [1]


def test_the_total_size_limit_refuses_what_does_not_fit_and_the_parent_still_decodes(store):
    small, large = b"KGSENTSMALL attachment text.\n" * 10, b"KGSENTLARGE attachment text.\n" * 400
    message = email_with("two attachments", "KGSENTBODY of the message.",
                         [("small.txt", "text/plain", small), ("large.txt", "text/plain", large)])
    result = kg_decoder.decode(message, store=store, file_name="two.eml", max_embedded_bytes=len(small) + 100)
    small_entry, large_entry = result.embedded
    assert small_entry.result.status == "decoded"
    assert isinstance(large_entry.error, kg_decoder.DocumentTooLarge) and "limit" in large_entry.error.message
    assert "KGSENTBODY" in text_of(store, result.document)


def damaged(package: bytes, part: str) -> bytes:
    """``package`` with the compressed bytes of ``part`` scrambled (its CRC no longer matches)."""
    info = zipfile.ZipFile(io.BytesIO(package)).getinfo(part)
    name_length, extra_length = struct.unpack_from("<HH", package, info.header_offset + 26)
    start = info.header_offset + 30 + name_length + extra_length + 10
    return package[:start] + bytes(b ^ 0x5A for b in package[start:start + 40]) + package[start + 40:]


def test_a_damaged_embedded_part_is_a_typed_error_and_the_parent_decodes(store, tmp_path):
    path = tmp_path / "report.docx"
    fixtures.make_docx(path)
    package = with_parts(path.read_bytes(), {"word/embeddings/Microsoft_Excel_Worksheet.xlsx":
                                             workbook_bytes("KGSENTDAMAGED")}, {})
    result = kg_decoder.decode(damaged(package, "word/embeddings/Microsoft_Excel_Worksheet.xlsx"), store=store,
                               file_name="report.docx")
    assert result.status == "decoded" and "KGSENTDOCXBODY" in text_of(store, result.document)
    [child] = result.embedded
    assert isinstance(child.error, kg_decoder.CorruptDocument) and "cannot be read" in child.error.message


def test_every_embedding_term_is_declared(store, report_docx, corpus_dir):
    kg_decoder.decode(report_docx, store=store, file_name="report.docx")
    ontology = rdflib.Graph().parse(resource_dir("ontology") / "tg.ttl")
    used = {q.predicate.value for q in store.quads() if q.predicate.value.startswith(TG + "embedded")}
    assert used == {TG + "embeddedIn", TG + "embeddedPath", TG + "embeddedAt"}
    for iri in used | {TG + "embeddedOn"}:
        node = rdflib.URIRef(iri)
        for predicate in (RDFS.label, RDFS.comment, RDFS.domain, RDFS.range):
            assert (node, predicate, None) in ontology, (iri, predicate)


def test_cli_lists_the_children_and_reports_a_refused_one_on_one_line(tmp_path, report_docx):
    path = tmp_path / "report.docx"
    path.write_bytes(report_docx)
    run = subprocess.run([sys.executable, "-m", "kg_decoder.cli", "decode", str(path), "--store",
                          str(tmp_path / "store"), "--no-progress"], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    assert "> word/embeddings/oleObject1.bin (survey-notes.txt)" in run.stdout
    assert "not decoded: UnsafeDocument" in run.stdout
    errors = [line for line in run.stderr.splitlines() if line.startswith("kg-decoder:")]
    assert len(errors) == 1 and "oleObject2.bin: UnsafeDocument" in errors[0]
