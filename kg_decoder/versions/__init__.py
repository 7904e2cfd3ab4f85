"""Versions of a source, a stage of their own above decoding and citing: a decode that names a source
(an id, a file's path, the URL it was fetched from) is recorded as that source's latest version, and
every fact cited to the version before is carried to it with a verdict (:mod:`.record`). Reading
versions, diffs and verdicts is ``cite.versions``; this stage writes them, so decode never calls up.
"""

from __future__ import annotations

from typing import Optional, Union

from ..decode import pipeline
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import DecodeResult
from .changed_quotes import approximate
from .record import carry_facts, record_version


@with_store(read_only=False, create=True)
def decode(source: pipeline.Source, *, store: Union[KgStore, StorePath], source_id: Optional[str] = None,
           fetched: Optional[pipeline.WebFetch] = None, **keywords) -> DecodeResult:
    """Decode a document into ``store`` (:func:`kg_decoder.decode.pipeline.decode`: its keywords, its
    errors) and record it as the latest version of its *source*: ``source_id``, else the file's absolute
    path, else the URL it was ``fetched`` from (bytes without a ``source_id`` are no source's version).
    New bytes of a source make its next version (``result.version``), with a diff of the version before
    and a verdict for every fact cited to it; earlier versions stay.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     first = decode(b"Revenue was 12 M.", store=store, source_id="report")
    ...     second = decode(b"Revenue was 14 M.", store=store, source_id="report")
    ...     (first.version.number, second.version.number, second.version.counts.changed)
    (1, 2, 1)
    """
    result = pipeline.decode(source, store=store, source_id=source_id, fetched=fetched, **keywords)
    key = source_id or pipeline.path_source_id(source) or (fetched.url if fetched is not None else None)
    if key is not None:
        result.version = record_version(store, key, result.document)
    return result


__all__ = ["approximate", "carry_facts", "decode", "record_version"]
