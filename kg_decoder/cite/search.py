"""A quote searched in every document: the text index (:mod:`kg_decoder.graph.text_index`) names the
texts that may hold it, the exact match of :mod:`kg_decoder.cite.quotes` finds it in them (the same
folding as a trace in one document), and the places are ranked: as written first (whitespace aside),
then by document and place. The cost is bounded for anyone: a quote at most
:data:`MAX_QUOTE_CHARACTERS` long, at most :data:`MAX_CANDIDATE_TEXTS` texts looked at, at most
:data:`MAX_RESULTS` places a page, and a time budget.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import Optional, Union

from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..graph.text_index import IndexedText
from ..model import SearchHit, SearchResults
from ..model.errors import InvalidSpan, RequestError, TimeLimit
from .quotes import as_written, find_quote

MAX_QUOTE_CHARACTERS = 2000
MAX_CANDIDATE_TEXTS = 20_000
MAX_RESULTS = 100
SNIPPET_CHARACTERS = 80


@dataclass(frozen=True)
class Place:
    """Where a quote is found: a text the index holds and the span in it."""

    text: IndexedText
    start: int
    end: int
    as_written: bool


def ranked_places(store: KgStore, quote: str, seconds: Optional[float] = None) -> Optional[list[Place]]:
    """Every place ``quote`` is found in the store's texts, ranked; None where the store has no index
    (one opened read-only before its writer made one). RequestError past the bounds (a quote longer
    than :data:`MAX_QUOTE_CHARACTERS`: ``quote-too-long``, 413), TimeLimit past ``seconds``."""
    check_quote(quote)
    check_quote_length(quote)
    deadline = None if seconds is None else time.monotonic() + seconds
    texts = store.search_texts(quote, MAX_CANDIDATE_TEXTS, seconds)
    if texts is None:
        return None
    places = []
    for text in texts:
        if deadline is not None and time.monotonic() > deadline:
            raise TimeLimit(f"the search ran past its time limit of {seconds:g} s: give more of the quote, "
                            f"or a document")
        for start, end in find_quote(text.text, quote):
            places.append(Place(text, start, end, as_written(text.text[start:end], quote)))
    places.sort(key=lambda place: not place.as_written)  # stable: then by document and place
    return places


def check_quote(quote) -> None:
    if not isinstance(quote, str) or not quote.strip():
        raise InvalidSpan("a quote must be non-empty text")


def check_quote_length(quote) -> None:
    """RequestError ``quote-too-long`` (413) for a quote longer than :data:`MAX_QUOTE_CHARACTERS`."""
    if isinstance(quote, str) and len(quote) > MAX_QUOTE_CHARACTERS:
        raise RequestError(f"a quote may be {MAX_QUOTE_CHARACTERS} characters long, not {len(quote)}",
                           code="quote-too-long", http_status=413)


def check_page(limit: int, offset: int) -> None:
    for name, value, low, high in (("limit", limit, 1, MAX_RESULTS), ("offset", offset, 0, MAX_CANDIDATE_TEXTS)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise RequestError(f"{name} must be a whole number from {low} to {high}", code=f"bad-{name}")


@with_store(read_only=True)
def search(query: str, *, store: Union[KgStore, StorePath], limit: int = 10, offset: int = 0,
           seconds: Optional[float] = 30.0, boxes: bool = False) -> SearchResults:
    """The places ``query`` (a quote, folded as :func:`kg_decoder.trace` folds it) is found in every
    document, ranked, ``limit`` of them from ``offset``, each with the text around it; with ``boxes``,
    each traced (page, elements, the boxes on the words). Reads only.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme had a revenue of 12 M.", store=store)
    ...     found = search("revenue of 12", store=store)
    ...     (found.total, found.hits[0].before, found.hits[0].quote, found.hits[0].after)
    (1, 'Acme had a ', 'revenue of 12', ' M.')
    """
    check_page(limit, offset)
    places = ranked_places(store, query, seconds)
    if places is None:
        raise RequestError("the store has no text index yet: open it for writing once, or run kg-decoder reindex",
                           code="no-text-index", http_status=503)
    hits = []
    for place in places[offset:]:
        if len(hits) == limit:
            break
        if place.text.document not in {hit.document for hit in hits} and not store.has_document(place.text.document):
            store.forget_removed(place.text.document)  # removed by a user's update since it was indexed
            continue
        hit = _hit(place)
        if boxes:
            from .trace import trace  # here: trace.py uses this module for a quote in every document

            hit.source = trace(span=(place.text.segment, place.start, place.end), store=store)[0]
        hits.append(hit)
    return SearchResults(query=query, total=len(places), offset=offset, limit=limit, hits=hits)


def _hit(place: Place) -> SearchHit:
    text, start, end = place.text.text, place.start, place.end
    before, after = text[max(0, start - SNIPPET_CHARACTERS):start], text[end:end + SNIPPET_CHARACTERS]
    if start > SNIPPET_CHARACTERS:
        before = re.sub(r"^\S*", "", before)  # a word cut in two is left out
    if end + SNIPPET_CHARACTERS < len(text):
        after = re.sub(r"\S*$", "", after)
    return SearchHit(document=place.text.document, segment=place.text.segment, segment_kind=place.text.kind,
                     start=start, end=end, quote=text[start:end], as_written=place.as_written,
                     before=re.sub(r"\s+", " ", before).lstrip(), after=re.sub(r"\s+", " ", after).rstrip(),
                     page_number=place.text.page_number, file_name=place.text.file_name)


__all__ = ["MAX_CANDIDATE_TEXTS", "MAX_QUOTE_CHARACTERS", "MAX_RESULTS", "Place", "check_page", "check_quote",
           "check_quote_length", "ranked_places", "search"]
