"""Sources and their versions, on both store backends: new bytes of a source make its next version with
a diff and a verdict for every fact cited to the version before; the same bytes change nothing; old
versions stay until pruned; SHACL stays clean and no entity is orphaned."""

from __future__ import annotations

import io
import json

import pytest

import kg_decoder
from kg_decoder.cite.versions import diff_documents, prune_versions, source_versions, verdict_chain
from kg_decoder.graph.remote_store import StoreConfig
from kg_decoder.model.errors import InvalidOption, UnknownEntity

BASE = ["Quarterly report", "Acme had a revenue of 12 M in 2023.", "The board met four times during the year.",
        "Staff grew to 120 people across three offices.", "The outlook remains cautious for next year.",
        "Risks include currency swings and supplier delays."]
QUOTES = {"revenue of 12 M": "changed", "board met four times": "removed", "Staff grew to 120 people": "moved",
          "outlook remains cautious": "current", "currency swings": "current"}
# The board paragraph deleted, a number changed, a paragraph inserted, the staff paragraph moved to the end.
EDITED = ["Quarterly report", "Acme had a revenue of 14 M in 2023.", "The outlook remains cautious for next year.",
          "A new paragraph about hiring plans.", "Risks include currency swings and supplier delays.",
          "Staff grew to 120 people across three offices."]


def text_of(paragraphs: list[str]) -> bytes:
    return "\n\n".join(paragraphs).encode()


def cite(store, document: str, quotes) -> dict[str, str]:
    """Chunk ``document`` and store one fact per quote on the chunk that holds it: quote -> subgraph."""
    kg_decoder.chunk_document(document, store=store)
    chunks = kg_decoder.document_chunks(document, store=store)
    subgraphs = {}
    for number, quote in enumerate(quotes):
        chunk = next(c for c in chunks if quote in c.text)
        added = kg_decoder.add_facts(chunk.iri, [(f"http://ex.org/fact{number}", "http://ex.org/says", quote)],
                                     spans=[{"quote": quote}], store=store)
        subgraphs[quote] = added.subgraphs[0]
    return subgraphs


@pytest.fixture(params=["embedded", "remote"])
def any_store(request, tmp_path):
    if request.param == "embedded":
        with kg_decoder.open_store(tmp_path / "store") as store:
            yield store
        return
    config = StoreConfig.at(request.getfixturevalue("server_url")).with_library(str(tmp_path / "library"))
    with kg_decoder.open_store(config) as store:
        store.sparql_update("CLEAR ALL")
        yield store


def findings(store, name: str) -> list:
    [audit] = [a for a in kg_decoder.run_audits(store=store) if a.name == name]
    return audit.table.rows


def test_every_verdict_and_diff_op_on_a_generated_pair_both_backends(any_store):
    store = any_store
    first = kg_decoder.decode(text_of(BASE), store=store, source_id="report", file_name="report.txt")
    assert first.version.number == 1 and first.version.previous is None
    subgraphs = cite(store, first.document, QUOTES)
    second = kg_decoder.decode(text_of(EDITED), store=store, source_id="report", file_name="report.txt")
    assert second.version.number == 2 and second.version.previous == first.version.version
    counts = second.version.counts
    assert (counts.kept, counts.moved, counts.changed, counts.removed, counts.added) == (3, 1, 1, 1, 1)
    assert second.version.facts == {"current": 2, "moved": 1, "changed": 1, "removed": 1}
    for quote, expected in QUOTES.items():
        [step] = verdict_chain(subgraphs[quote], store=store)
        assert (step.version, step.verdict) == (2, expected), quote
        if expected == "removed":
            assert step.segment is None and step.text is None
        else:  # re-anchored: the span in the new version's text holds the (new) text
            text = store.text(store.content_hash(step.segment), step.segment)
            assert text[step.start:step.end] == step.text
    assert verdict_chain(subgraphs["revenue of 12 M"], store=store)[0].text == "revenue of 14 M"

    versions = source_versions("report", store=store)
    assert [(v.number, v.latest, v.document) for v in versions] == [(1, False, first.document),
                                                                    (2, True, second.document)]
    report = kg_decoder.validate(store=store)
    assert report.conforms, report.violations[:5]
    assert findings(store, "audit-orphan-entities") == []
    stale = {row[0]: row[2] for row in findings(store, "audit-facts-stale")}
    assert stale == {subgraphs[q]: v for q, v in QUOTES.items() if v != "current"}
    [changed] = findings(store, "audit-sources-changed")
    assert changed[:3] == ("report", 2, 2) and changed[4:9] == (3, 1, 1, 1, 1)

    # The same bytes again: nothing changes, on either backend.
    before = store.quads()
    again = kg_decoder.decode(text_of(EDITED), store=store, source_id="report", file_name="report.txt")
    assert again.status == "unchanged" and again.version.number == 2
    assert store.quads() == before

    # Trace of a fact: where it was stated, and where the latest version holds it.
    [source] = kg_decoder.trace(fact=("http://ex.org/fact2", "http://ex.org/says", "Staff grew to 120 people"),
                                store=store)
    assert source.document.iri == first.document and [s.verdict for s in source.verdicts] == ["moved"]
    assert source.latest is not None and source.latest.document.iri == second.document
    assert source.latest.quote == "Staff grew to 120 people"


def test_a_verdict_chain_over_three_versions_and_back_to_earlier_bytes(store):
    first = kg_decoder.decode(text_of(BASE), store=store, source_id="chain")
    subgraphs = cite(store, first.document, ["revenue of 12 M", "Staff grew to 120 people"])
    kg_decoder.decode(text_of(EDITED), store=store, source_id="chain")
    third = kg_decoder.decode(text_of([p.replace("14 M", "15 M") for p in EDITED if "Staff" not in p]), store=store,
                              source_id="chain")
    assert third.version.number == 3
    revenue = verdict_chain(subgraphs["revenue of 12 M"], store=store)
    assert [(s.version, s.verdict, s.text) for s in revenue] == [(2, "changed", "revenue of 14 M"),
                                                                 (3, "changed", "revenue of 15 M")]
    staff = verdict_chain(subgraphs["Staff grew to 120 people"], store=store)
    assert [(s.version, s.verdict) for s in staff] == [(2, "moved"), (3, "removed")]
    # The first bytes again: a fourth version (a source may go back), the removed fact holds again.
    fourth = kg_decoder.decode(text_of(BASE), store=store, source_id="chain")
    assert (fourth.status, fourth.version.number, fourth.version.document) == ("unchanged", 4, first.document)
    assert [s.verdict for s in verdict_chain(subgraphs["revenue of 12 M"], store=store)][-1] == "changed"
    staff = verdict_chain(subgraphs["Staff grew to 120 people"], store=store)
    assert [(s.version, s.verdict, s.text) for s in staff][1:] == [(3, "removed", None),
                                                                   (4, "current", "Staff grew to 120 people")]
    assert kg_decoder.validate(store=store).conforms


def test_a_removed_fact_is_counted_removed_once_and_stays_removed_until_a_version_holds_it(store):
    first = kg_decoder.decode(text_of(BASE), store=store, source_id="gone")
    subgraphs = cite(store, first.document, ["Staff grew to 120 people"])
    without = [p for p in BASE if "Staff" not in p]
    second = kg_decoder.decode(text_of(without), store=store, source_id="gone")
    third = kg_decoder.decode(text_of(without + ["A closing line added later."]), store=store, source_id="gone")
    fourth = kg_decoder.decode(text_of(without + ["Another line, the fourth version."]), store=store,
                               source_id="gone")
    assert [v.facts["removed"] for v in (second.version, third.version, fourth.version)] == [1, 0, 0]
    staff = verdict_chain(subgraphs["Staff grew to 120 people"], store=store)
    assert [(s.version, s.verdict) for s in staff] == [(2, "removed"), (3, "removed"), (4, "removed")]
    [stale] = findings(store, "audit-facts-stale")
    assert stale[0] == subgraphs["Staff grew to 120 people"] and stale[2:4] == ("removed", 4)
    # Each version says what it holds of the fact: pruning the version that removed it keeps the removal.
    kg_decoder.prune_versions(2, "gone", store=store)
    [stale] = findings(store, "audit-facts-stale")
    assert stale[0] == subgraphs["Staff grew to 120 people"] and stale[2:4] == ("removed", 4)
    fifth = kg_decoder.decode(text_of(BASE), store=store, source_id="gone")  # the first bytes: it holds again
    assert fifth.version.number == 5
    staff = verdict_chain(subgraphs["Staff grew to 120 people"], store=store)
    assert [(s.version, s.verdict) for s in staff] == [(3, "removed"), (4, "removed"), (5, "current")]
    assert findings(store, "audit-facts-stale") == []
    assert kg_decoder.validate(store=store).conforms


def test_a_paragraph_moved_to_another_page_is_moved_with_both_pages(store, tmp_path):
    from reportlab.lib.pagesizes import letter
    from reportlab.pdfgen import canvas

    def pdf(pages: list[list[str]]) -> bytes:
        path = tmp_path / "doc.pdf"
        drawing = canvas.Canvas(str(path), pagesize=letter)
        for lines in pages:
            for number, line in enumerate(lines):
                drawing.drawString(72, 700 - 40 * number, line)
            drawing.showPage()
        drawing.save()
        return path.read_bytes()

    page_one = ["The plant in Lyon makes valves.", "Orders rose by 8 percent in spring."]
    page_two = ["The warehouse in Ghent ships parts.", "Margins held at 21 percent overall."]
    first = kg_decoder.decode(pdf([page_one, page_two]), store=store, source_id="plants")
    subgraphs = cite(store, first.document, ["Orders rose by 8 percent", "Margins held at 21 percent"])
    second = kg_decoder.decode(pdf([page_one[:1], page_two + page_one[1:]]), store=store, source_id="plants")
    [orders] = verdict_chain(subgraphs["Orders rose by 8 percent"], store=store)
    assert (orders.verdict, orders.previous_page_number, orders.page_number) == ("moved", 1, 2)
    [margins] = verdict_chain(subgraphs["Margins held at 21 percent"], store=store)
    assert (margins.verdict, margins.page_number) == ("current", 2)
    diff = diff_documents(first.document, second.document, store=store)
    [moved] = [e for e in diff.entries if e.op == "moved"]
    assert (moved.old.page_number, moved.new.page_number) == (1, 2)
    assert moved.old.bbox is not None and moved.new.bbox is not None
    # The trace re-anchors the fact on the new page, with a box checked against the page's characters.
    [source] = kg_decoder.trace(fact=("http://ex.org/fact0", "http://ex.org/says", "Orders rose by 8 percent"),
                                store=store)
    assert source.latest.page_number == 2
    assert source.latest.boxes and all(box.verification == "verified" for box in source.latest.boxes)


def _winter_sports_sentences(corpus_dir) -> list[str]:
    """Real sentences (a corpus book's), no two alike: a neighbour must not pass for an edited quote."""
    import html
    import re
    import zipfile

    book = zipfile.ZipFile(corpus_dir / "winter-sports.epub")
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", "", paragraph)) for name in book.namelist()
                    if name.endswith((".html", ".xhtml")) for paragraph in
                    re.findall(r"<p[^>]*>(.*?)</p>", book.read(name).decode("utf-8", "replace"), re.S))
    sentences = [" ".join(s.split()) for s in re.split(r"(?<=[.!?])\s+", text)]
    unique = [s for s in dict.fromkeys(s for s in sentences if 60 <= len(s) <= 220 and s[0].isupper())]
    return unique[:70]


def test_a_quote_a_page_break_splits_in_the_next_version_is_carried_not_removed(store, corpus_dir):
    """Issue 54: a fact quoting a sentence whole on page 2 of a paragraph running over pages; version 2
    deletes the paragraph's first sentences, so the sentence now begins at page 1's foot and each page's
    element holds part of it. Left as it was, it is current (or moved); one word edited, changed; the
    verdict holds the whole sentence, what the next version looks for."""
    import pypdfium2
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import Paragraph, SimpleDocTemplate

    sentences = _winter_sports_sentences(corpus_dir)

    def pdf(chosen: list[str]) -> bytes:
        out = io.BytesIO()
        text = " ".join(chosen).replace("&", "&amp;").replace("<", "&lt;")
        SimpleDocTemplate(out, pagesize=A4).build([Paragraph(text, getSampleStyleSheet()["BodyText"])])
        return out.getvalue()

    def pages(data: bytes) -> list[str]:
        document = pypdfium2.PdfDocument(data)
        return [" ".join(document[n].get_textpage().get_text_range().split()) for n in range(len(document))]

    first = pdf(sentences)
    split = None
    for deleted in range(1, 6):
        later = pages(pdf(sentences[deleted:]))
        for sentence in sentences:
            words = sentence.split()
            if sentence in pages(first)[1] and not any(sentence in page for page in later) and any(
                    later[0].endswith(" ".join(words[:n])) for n in range(len(words) // 4, 3 * len(words) // 4)):
                split = deleted, sentence
                break
        if split:
            break
    assert split, "no sentence of the text runs over the page break in version 2"
    deleted, quote = split
    word = [w for w in quote.split() if w.isalpha() and len(w) >= 5][-1]
    verdicts = {}
    for name, second in (("as it was", sentences[deleted:]),
                         ("one word edited", [s.replace(word, "amended", 1) if s == quote else s
                                              for s in sentences[deleted:]])):
        source_id = f"split-{len(verdicts)}"
        one = kg_decoder.decode(first, store=store, source_id=source_id, file_name=f"{source_id}.pdf")
        kg_decoder.chunk_document(one.document, store=store)
        chunk = next(c for c in kg_decoder.document_chunks(one.document, store=store) if quote in " ".join(c.text.split()))
        fact = (f"http://example.org/{source_id}", "http://example.org/says", quote)
        kg_decoder.add_facts(chunk.iri, [fact], spans=[{"quote": quote}], store=store)
        kg_decoder.decode(pdf(second), store=store, source_id=source_id, file_name=f"{source_id}.pdf")
        [source] = kg_decoder.trace(fact=fact, store=store)
        verdicts[name] = source.verdicts[-1]
    assert verdicts["as it was"].verdict in ("current", "moved"), verdicts["as it was"]
    assert " ".join(verdicts["as it was"].text.split()) == quote
    assert verdicts["one word edited"].verdict == "changed", verdicts["one word edited"]
    assert "amended" in verdicts["one word edited"].text


def test_prune_keeps_the_latest_versions_and_gc_collects_their_bytes(store):
    documents = []
    for number in range(3):
        result = kg_decoder.decode(text_of([p.replace("12 M", f"{12 + number} M") for p in BASE]), store=store,
                                   source_id="pruned")
        documents.append(result.document)
        if number == 0:
            subgraphs = cite(store, result.document, ["revenue of 12 M"])
    with pytest.raises(InvalidOption):
        prune_versions(0, store=store)
    removed = prune_versions(1, "pruned", store=store)
    assert [v.number for v in removed] == [1, 2]
    assert [(v.number, v.latest) for v in source_versions("pruned", store=store)] == [(3, True)]
    assert not store.has_document(documents[0]) and not store.has_document(documents[1])
    assert store.has_document(documents[2])
    assert kg_decoder.validate(store=store).conforms
    assert store.collect_garbage(wait=5)  # the pruned documents' bytes
    # The fact's first chunk is gone, but the latest version still says where it holds.
    [source] = kg_decoder.trace(fact=("http://ex.org/fact0", "http://ex.org/says", "revenue of 12 M"), store=store)
    assert source.document.iri == documents[2] and source.quote == "revenue of 14 M"
    assert [s.verdict for s in verdict_chain(subgraphs["revenue of 12 M"], store=store)] == ["changed"]
    assert prune_versions(1, store=store) == []


def test_a_path_is_its_source_and_bytes_without_one_are_no_version(store, tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nFirst draft.\n")
    first = kg_decoder.decode(path, store=store)
    assert first.version.source == str(path.resolve())
    path.write_text("# Notes\n\nSecond draft.\n")
    second = kg_decoder.decode(str(path), store=store)
    assert second.version.number == 2 and second.version.counts.changed == 1
    assert kg_decoder.decode(b"loose bytes", store=store).version is None
    with pytest.raises(UnknownEntity):
        source_versions("never-decoded", store=store)
    with pytest.raises(InvalidOption):
        kg_decoder.decode(b"x", store=store, source_id=" ")


def test_a_document_edited_back_holds_its_removed_facts_again(any_store):
    """The first bytes decoded again after an edit: a new version (the bytes were stored before), and
    a fact the edit removed is current again, where it was; it is no longer stale."""
    store = any_store
    first = kg_decoder.decode(text_of(BASE), store=store, source_id="report", file_name="report.txt")
    subgraphs = cite(store, first.document, QUOTES)
    kg_decoder.decode(text_of(EDITED), store=store, source_id="report", file_name="report.txt")
    again = kg_decoder.decode(text_of(BASE), store=store, source_id="report", file_name="report.txt")
    assert (again.status, again.document, again.version.number, again.version.new) == ("unchanged", first.document,
                                                                                         3, True)
    removed = subgraphs["board met four times"]
    assert [(step.version, step.verdict) for step in verdict_chain(removed, store=store)] == [(2, "removed"),
                                                                                             (3, "current")]
    assert removed not in {row[0] for row in findings(store, "audit-facts-stale")}
    # against version 2: the removed fact is current again, the changed one changed back, the moved one moved
    assert again.version.facts == {"current": 3, "moved": 1, "changed": 1, "removed": 0}
    after = kg_decoder.decode(text_of(BASE), store=store, source_id="report", file_name="report.txt")
    assert (after.version.number, after.version.new) == (3, False)  # the same bytes as the latest: nothing new


def test_cli_versions_diff_and_prune(cli, tmp_path):
    store = str(tmp_path / "store")
    path = tmp_path / "report.txt"
    path.write_bytes(text_of(BASE))
    assert cli("decode", str(path), "--store", store, "--no-progress").returncode == 0
    path.write_bytes(text_of(EDITED))
    decoded = cli("decode", str(path), "--store", store, "--no-progress")
    assert "version 2" in decoded.stdout
    listed = cli("versions", str(path), "--store", store)
    assert "2 (latest)" in listed.stdout and "3 kept, 1 moved, 1 changed, 1 removed, 1 added" in listed.stdout
    compared = cli("diff", f"{path}@1", f"{path}@2", "--store", store)
    assert "'2'->'4'" in compared.stdout and "removed" in compared.stdout
    # The file's name names its latest version, NAME@N the others (not 409 ambiguous-document).
    for name, quote, found in (("report.txt", "revenue of 14 M", True), ("report.txt@1", "revenue of 12 M", True),
                               ("report.txt@2", "revenue of 12 M", False)):
        traced = cli("trace", "--quote", quote, "--document", name, "--store", store, "--format", "json")
        assert (traced.returncode, bool(json.loads(traced.stdout))) == ((0, True) if found else (1, False)), name
    assert "has no version 3 (its versions: 1, 2)" in cli("trace", "--quote", "x", "--document", "report.txt@3",
                                                           "--store", store).stderr
    other = tmp_path / "elsewhere" / "report.txt"  # another file of the same name: another source
    other.parent.mkdir()
    other.write_bytes(b"Another report altogether.")
    assert cli("decode", str(other), "--store", store, "--no-progress").returncode == 0
    ambiguous = cli("trace", "--quote", "report", "--document", "report.txt", "--store", store)
    assert ambiguous.returncode == 2 and "(2 sources): name one by its IRI" in ambiguous.stderr
    pruned = cli("prune", "--keep", "1", "--store", store)
    assert pruned.returncode == 0 and "1 versions removed" in pruned.stdout
    missing = cli("versions", "nothing-here", "--store", store)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1


def test_cli_row_of_known_bytes_that_make_a_new_version(cli, tmp_path):
    """A file edited back to bytes the store holds: its row says unchanged bytes and the version they
    make, with the verdict on the fact the edit had removed."""
    store = str(tmp_path / "store")
    path = tmp_path / "report.txt"

    def row(paragraphs) -> str:
        path.write_bytes(text_of(paragraphs))
        return cli("decode", str(path), "--store", store, "--no-progress").stdout.splitlines()[2].split("  ")[-1].strip()

    assert row(BASE) == "decoded"
    with kg_decoder.open_store(store) as opened:
        cite(opened, opened.document_summaries()[0].document, ["board met four times"])
    assert row(EDITED) == "decoded, version 2 (1 facts removed)"
    assert row(BASE) == "unchanged, version 3 (1 facts current)"
    assert row(BASE) == "unchanged"


def test_the_web_app_resolves_no_path_of_its_machine_to_a_source(web_app, tmp_path):
    """A source decoded from a file is named by its path on the command line (a link to it too: the
    path is resolved); a request naming that link finds nothing, the server resolves no path of its own."""
    store = kg_decoder.open_store(tmp_path / "store")
    (tmp_path / "files").mkdir()
    report = tmp_path / "files" / "report.txt"
    report.write_bytes(text_of(BASE))
    kg_decoder.decode(report, store=store)
    link = tmp_path / "link.txt"
    link.symlink_to(report)
    assert [v.number for v in kg_decoder.source_versions(str(link), store=store)] == [1]
    client = web_app.create_app(store, workers=0, isolate=False).test_client()
    assert client.get("/api/versions", query_string={"source": str(report)}).status_code == 200
    assert client.get("/api/versions", query_string={"source": str(link)}).status_code == 404
    assert client.get("/versions", query_string={"source": str(link)}).status_code == 404


def test_http_upload_with_a_source_id_versions_and_diff(web_app, tmp_path):
    store = kg_decoder.open_store(tmp_path / "store")
    app = web_app.create_app(store, write_token="secret", workers=0, isolate=False)
    client = app.test_client()
    auth = {"Authorization": "Bearer secret"}
    documents = []
    for paragraphs in (BASE, EDITED):
        response = client.post("/api/documents", data={"file": (io.BytesIO(text_of(paragraphs)), "report.txt"),
                                                       "source_id": "uploaded-report"}, headers=auth)
        assert response.status_code == 201, response.json
        documents.append(response.json["document"])
    listed = client.get("/api/versions", query_string={"source": "uploaded-report"})
    assert [v["number"] for v in listed.json["versions"]] == [1, 2]
    assert listed.json["versions"][1]["counts"] == {"kept": 3, "moved": 1, "changed": 1, "removed": 1, "added": 1}
    diff = client.get("/api/diff", query_string={"old": documents[0], "new": documents[1]})
    assert diff.status_code == 200 and diff.json["counts"]["changed"] == 1
    assert client.get("/api/versions", query_string={"source": "nothing"}).status_code == 404
    assert client.get("/api/diff").status_code == 400
    page = client.get("/versions", query_string={"source": "uploaded-report"})
    assert page.status_code == 200 and b"(latest)" in page.data and b"/diff?old=" in page.data
    shown = client.get("/diff", query_string={"old": documents[0], "new": documents[1]})
    assert shown.status_code == 200 and b"<del>2</del><ins>4</ins>" in shown.data
    # Each version's document page lists the source's versions; bytes of no source list none.
    first_page = client.get(f"/documents/{documents[0]}").get_data(as_text=True)
    assert "Versions of uploaded-report" in first_page and first_page.count('<tr class="version') == 2
    assert "3 kept, 1 moved, 1 changed, 1 removed, 1 added" in first_page and "(this document)" in first_page
    loose = client.post("/api/documents", data={"file": (io.BytesIO(b"No source here."), "loose.txt")}, headers=auth)
    assert 'id="versions"' not in client.get(f"/documents/{loose.json['document']}").get_data(as_text=True)
    # The documents list tells the two report.txt rows apart; the name opens the latest, NAME@1 the first.
    listed = client.get("/documents").get_data(as_text=True)
    assert "<td>1</td>" in listed and "<td>2 (latest)</td>" in listed
    for name, document in (("report.txt", documents[1]), ("report.txt@1", documents[0])):
        page = client.get(f"/documents/{name}")
        assert page.status_code == 200 and document in page.get_data(as_text=True), name
    store.close()


def test_text_with_line_and_paragraph_separators_is_carried_and_chunked_again(any_store):
    """U+2028, U+2029 and U+0085 inside a quote (Word's soft line breaks come out so) are no line
    ends in an update: a new version carries the fact, chunking again replaces the chunks."""
    store = any_store
    base = ["Quarterly report", "Reorganización de potestades públicas en cuatro escalas\u2028territoriales y "
            "locales.", "Second\u2029paragraph\x85of the page, kept as it is."]
    first = kg_decoder.decode(text_of(base), store=store, source_id="separators", file_name="report.txt")
    quote = "cuatro escalas\u2028territoriales"
    [subgraph] = cite(store, first.document, [quote]).values()
    edited = [base[0], base[1].replace("públicas", "privadas"), base[2]]
    second = kg_decoder.decode(text_of(edited), store=store, source_id="separators", file_name="report.txt")
    assert second.version.number == 2 and second.version.facts["current"] == sum(second.version.facts.values()) == 1
    [step] = verdict_chain(subgraph, store=store)
    assert (step.verdict, step.previous_text, step.text) == ("current", quote, quote)
    kg_decoder.chunk_document(second.document, store=store)
    kg_decoder.chunk_document(second.document, store=store, chunk_size=8, min_chunk_tokens=1)  # replaces them
    chunks = kg_decoder.document_chunks(second.document, store=store)
    assert len(chunks) > 2 and any("Second\u2029paragraph" in chunk.text for chunk in chunks)
