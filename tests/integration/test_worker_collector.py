"""A decoding worker keeps what its warm-up loaded (modules, parsers, models) out of the garbage
collector's full collections: they walked all of it each time a decode's own objects set one off; and
collects its young objects less often."""

from __future__ import annotations

import kg_decoder
from kg_decoder.decode.worker import YOUNG_OBJECTS_COLLECTED, PartitionWorker


def test_a_warm_worker_freezes_what_its_warm_up_loaded_and_decodes_as_before(tmp_path, corpus_dir):
    worker = PartitionWorker()
    try:
        state = worker.call("kg_decoder.decode.worker:collector_state")
        frozen = state["frozen"]
        assert frozen > 100_000  # spaCy's model, unstructured, pdfminer, the layout model...
        assert state["young_collected_after"] == YOUNG_OBJECTS_COLLECTED > 700  # not Python's default
        with kg_decoder.open_store(tmp_path / "store") as store:
            result = kg_decoder.decode(corpus_dir / "layout-parser-paper-fast.pdf", store=store, worker=worker)
            assert result.status == "decoded" and result.pages == 2
        after = worker.call("kg_decoder.decode.worker:collector_state")["frozen"]
        assert after <= frozen  # frozen once, not after each decode
    finally:
        worker.close()
