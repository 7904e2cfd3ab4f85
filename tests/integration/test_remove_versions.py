"""A document removed (``kg-decoder remove``) takes the versions it was with it: its source's history
keeps the others, the latest one left is the latest, a source with none left is gone, and SHACL
stays clean."""

from __future__ import annotations

import pytest

import kg_decoder
from kg_decoder.cite.versions import source_versions
from kg_decoder.model.errors import UnknownEntity


def test_removing_versions_documents_mends_the_sources_history(tmp_path):
    with kg_decoder.open_store(tmp_path / "store") as store:
        documents = [kg_decoder.decode(f"Draft number {n} of the notes.".encode(), store=store,
                                       source_id="notes").document for n in (1, 2, 3)]
        other = kg_decoder.decode(b"Another source entirely.", store=store, source_id="other").document

        store.remove_document(documents[1])
        assert [(v.number, v.latest) for v in source_versions("notes", store=store)] == [(1, False), (3, True)]
        store.remove_document(documents[2])  # the latest: the one before it is the latest now
        assert [(v.number, v.latest) for v in source_versions("notes", store=store)] == [(1, True)]
        assert kg_decoder.validate(store=store).conforms
        again = kg_decoder.decode(b"Draft number 4 of the notes.", store=store, source_id="notes")
        assert again.version.number == 2 and again.version.previous == source_versions("notes", store=store)[0].version

        for document in (documents[0], again.document):
            store.remove_document(document)
        with pytest.raises(UnknownEntity):
            source_versions("notes", store=store)
        assert [(v.number, v.latest) for v in source_versions("other", store=store)] == [(1, True)]
        assert store.has_document(other) and kg_decoder.validate(store=store).conforms
