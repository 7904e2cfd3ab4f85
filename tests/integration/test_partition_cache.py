"""The parse cache: same bytes, same partition settings and versions -> no second partitioning."""

from __future__ import annotations

import multiprocessing
import os

import kg_decoder
from kg_decoder.model import DecodeOptions, Element, Partitioned
from kg_decoder.decode.parse_cache import PartitionCache
from kg_decoder.decode.worker import shared_worker


class CountingWorker:
    """The real worker, counting how often it had to partition (not reuse the cache)."""

    def __init__(self):
        self.calls = 0

    def build_document(self, plain, job, progress=None):
        built = shared_worker().build_document(plain, job, progress)
        self.calls += built.result.partition_source == "partitioned"
        return built


def test_other_section_settings_reuse_the_partitioning(generated, tmp_path):
    path = generated["generated.docx"].path
    worker = CountingWorker()
    store = kg_decoder.open_store(tmp_path / "cached")
    kg_decoder.decode(path, store=store, worker=worker)
    heading = kg_decoder.decode(path, store=store, worker=worker, section_strategy="heading")
    sized = kg_decoder.decode(path, store=store, worker=worker, section_strategy="size", section_max_size=50)
    assert worker.calls == 1 and heading.sections > 1 and sized.sections > 1
    from_cache = {q for q in store.quads() if "Time" not in str(q.predicate)}
    fresh = kg_decoder.open_store(tmp_path / "uncached")
    kg_decoder.decode(path, store=fresh, worker=worker, section_strategy="size", section_max_size=50,
                      partition_cache=False)
    assert worker.calls == 2
    assert {q for q in fresh.quads() if "Time" not in str(q.predicate)} == from_cache  # the same graph
    kg_decoder.decode(path, store=store, worker=worker, strategy="fast")  # a partition setting: partition again
    assert worker.calls == 3


def test_a_damaged_entry_is_partitioned_again_and_replaced(generated, tmp_path):
    path = generated["generated.md"].path
    worker = CountingWorker()
    store = kg_decoder.open_store(tmp_path / "store")
    first = kg_decoder.decode(path, store=store, worker=worker)
    [entry] = [p for p in (tmp_path / "store" / "partition-cache").glob("??/*")]
    entry.write_bytes(entry.read_bytes()[:40])
    again = kg_decoder.decode(path, store=store, worker=worker, section_strategy="heading")
    assert worker.calls == 2 and again.elements == first.elements
    assert PartitionCache(tmp_path / "store" / "partition-cache").get(entry.name) is not None


def test_the_cache_stays_under_its_size_bound_dropping_the_least_recently_used(tmp_path):
    cache = PartitionCache(tmp_path, max_bytes=20_000)
    keys = []
    for number in range(30):
        key = PartitionCache.key(f"{number:064x}", "text", DecodeOptions(), {"unstructured": "x"})
        cache.put(key, Partitioned("text", [Element(0, "NarrativeText", "w" * 2000)]))
        keys.append(key)
        os.utime(cache._path(key), (number, number))  # a clear order of use
        cache.get(keys[0])  # the first stays in use
    assert cache.size() <= 20_000
    assert cache.get(keys[0]) is not None and cache.get(keys[-1]) is not None
    assert cache.get(keys[1]) is None


def test_versions_and_partition_settings_are_in_the_key():
    base = PartitionCache.key("ab" * 32, "pdf", DecodeOptions(), {"unstructured": "0.27.1"})
    assert base != PartitionCache.key("ab" * 32, "pdf", DecodeOptions(), {"unstructured": "0.27.2"})
    assert base != PartitionCache.key("ab" * 32, "pdf", DecodeOptions(strategy="ocr_only"), {"unstructured": "0.27.1"})
    assert base != PartitionCache.key("ab" * 32, "pdf", DecodeOptions(ocr_languages="eng+heb"),
                                      {"unstructured": "0.27.1"})
    assert base == PartitionCache.key("ab" * 32, "pdf", DecodeOptions(section_strategy="heading"),
                                      {"unstructured": "0.27.1"})
    assert base == PartitionCache.key("ab" * 32, "pdf", DecodeOptions(section_max_size=10), {"unstructured": "0.27.1"})
    json_key = PartitionCache.key("ab" * 32, "json", DecodeOptions(), {"unstructured": "0.27.1"})
    assert json_key != PartitionCache.key("ab" * 32, "json", DecodeOptions(section_max_size=10),
                                          {"unstructured": "0.27.1"})


def _writer(folder, key, text, rounds):
    cache = PartitionCache(folder)
    for _ in range(rounds):
        cache.put(key, Partitioned("text", [Element(0, "NarrativeText", text)]))


def test_two_processes_writing_one_entry_leave_it_whole(tmp_path):
    key = PartitionCache.key("cd" * 32, "text", DecodeOptions(), {})
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_writer, args=(str(tmp_path), key, letter * 50_000, 40)) for letter in "ab"]
    for process in writers:
        process.start()
    cache = PartitionCache(tmp_path)
    seen = set()
    while any(p.is_alive() for p in writers):
        value = cache.get(key)
        if value is not None:
            seen.add(value.elements[0].text[:1])
            assert value.elements[0].text in ("a" * 50_000, "b" * 50_000)
    for process in writers:
        process.join()
        assert process.exitcode == 0
    assert cache.get(key).elements[0].text in ("a" * 50_000, "b" * 50_000)
    assert not list(tmp_path.glob("??/.incoming-*"))


def test_decode_and_chunk_report_their_stages(generated, tmp_path):
    from kg_decoder.cite.chunks import chunk_document

    store = kg_decoder.open_store(tmp_path / "store")
    seen = []
    result = kg_decoder.decode(generated["generated.pdf"].path, store=store, progress=seen.append)
    assert [p.stage for p in seen] == ["read", "detect"] + ["partition"] * 4 + ["tables"] * 2 + [
        "partition", "group", "map", "write quads", "write quads", "done"]
    # each page as the PDF reader reaches it, reported across the worker's process boundary
    assert [p.message for p in seen[3:6]] == ["partition 1/3 pages", "partition 2/3 pages", "partition 3/3 pages"]
    assert [p.message for p in seen[6:8]] == ["find tables", "0 tables found"]
    assert "3 pages" in seen[8].message and seen[12].current == seen[12].total == result.quads
    again = []
    kg_decoder.decode(generated["generated.pdf"].path, store=store, section_strategy="count", progress=again.append)
    assert "from the parse cache" in again[2].message
    chunked = []
    chunk_document(result.document, store=store, progress=chunked.append)
    assert [(p.current, p.total) for p in chunked if p.stage == "chunk"][-1] == (3, 3)  # every page, the blank too
    in_worker = []  # the same reports come across from the worker process
    chunk_document(result.document, store=store, progress=in_worker.append, in_worker=True, chunk_size=64)
    assert [(p.stage, p.current, p.total) for p in in_worker if p.stage == "chunk"] == [
        (p.stage, p.current, p.total) for p in chunked if p.stage == "chunk"]
