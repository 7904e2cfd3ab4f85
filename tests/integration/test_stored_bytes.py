"""Uploaded bytes served back (issue 59, item 7): an uploaded HTML page, SVG or script is never a page
of the server's own origin; only formats that run nothing are shown inline, and everything is
served in a sandbox."""

from __future__ import annotations

from urllib.parse import quote

import pytest

import kg_decoder
from kg_decoder.cli import load_web_app

PAGE = b"<html><body><h1>Quarterly</h1><script>fetch('/sparql', {method: 'POST'})</script></body></html>"


@pytest.fixture(scope="module")
def client():
    with kg_decoder.open_store(None) as store:
        app = load_web_app().create_app(store, isolate=False)
        documents = {name: kg_decoder.decode(data, store=store, file_name=name).document
                     for name, data in (("page.html", PAGE), ("notes.txt", b"Plain words of a note."))}
        yield app.test_client(), documents


def test_an_uploaded_page_is_an_attachment_in_a_sandbox(client):
    client, documents = client
    answer = client.get(f"/api/documents/{quote(documents['page.html'], safe='')}/content")
    assert answer.status_code == 200 and answer.data == PAGE
    assert answer.mimetype != "text/html" and answer.headers["Content-Disposition"].startswith("attachment")
    assert "sandbox" in answer.headers["Content-Security-Policy"]
    assert "script-src 'self'" not in answer.headers["Content-Security-Policy"]
    assert answer.headers["X-Content-Type-Options"] == "nosniff"


def test_plain_text_is_shown_inline_still_sandboxed(client):
    client, documents = client
    answer = client.get(f"/api/documents/{quote(documents['notes.txt'], safe='')}/content")
    assert answer.mimetype == "text/plain" and answer.headers["Content-Disposition"].startswith("inline")
    assert "sandbox" in answer.headers["Content-Security-Policy"]


def test_the_same_bytes_under_another_name_keep_the_first_name_and_answer_to_both():
    with kg_decoder.open_store(None) as store:
        first = kg_decoder.decode(b"Minutes of the harbour committee.", store=store, file_name="minutes.txt")
        quads = store.quads()
        again = kg_decoder.decode(b"Minutes of the harbour committee.", store=store, file_name="copy of minutes.txt")
        assert again.document == first.document and again.status == "unchanged"
        assert again.file_name == "minutes.txt"
        [summary] = store.document_summaries(first.document)
        assert summary.file_name == "minutes.txt"  # not renamed
        assert len(store.quads() - quads) == 1 and quads <= store.quads()  # the other name, nothing decoded again
        for name in ("minutes.txt", "copy of minutes.txt", "old/copy of minutes.txt"):
            assert kg_decoder.cite.documents.document_named(name, store, read_files=False) == first.document
        kg_decoder.decode(b"Minutes of the harbour committee.", store=store, file_name="copy of minutes.txt")
        assert len(store.quads() - quads) == 1  # recorded once
