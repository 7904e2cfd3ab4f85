"""A quote searched in every document: its places in the store's texts (:mod:`kg_decoder.cite.places`:
the text index names the texts, the exact match finds it in them, ranked, read window by window
within bounds), a page of them with the text around each, and with ``boxes`` each one traced.
"""

from __future__ import annotations

import html
import re
from typing import Optional, Union

from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..model import SearchHit, SearchResults
from ..model.errors import RequestError
from .places import Place, check_page, ranked_places
from .trace import trace

SNIPPET_CHARACTERS = 80


@with_store(read_only=True)
def search(query: str, *, store: Union[KgStore, StorePath], limit: int = 10, offset: int = 0,
           seconds: Optional[float] = 30.0, boxes: bool = False) -> SearchResults:
    """The places ``query`` (a quote, folded as :func:`kg_decoder.trace` folds it) is found in every
    document, ranked, ``limit`` of them from ``offset``, each with the text around it; with ``boxes``,
    each traced (page, elements, the boxes on the words). ``total`` counts the places in the texts
    read for the page: the total where ``total_exact``, else a lower bound. Reads only.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme had a revenue of 12 M.", store=store)
    ...     found = search("revenue of 12", store=store)
    ...     (found.total, found.total_exact, found.hits[0].before, found.hits[0].quote, found.hits[0].after)
    (1, True, 'Acme had a ', 'revenue of 12', ' M.')
    """
    check_page(limit, offset)
    ranked = ranked_places(store, query, seconds, wanted=offset + limit)
    if ranked is None:
        raise RequestError("the store has no text index yet: open it for writing once, or run kg-decoder reindex",
                           code="no-text-index", http_status=503)
    hits = []
    for place in ranked.places[offset:]:
        if len(hits) == limit:
            break
        if place.text.document not in {hit.document for hit in hits} and not store.has_document(place.text.document):
            store.text_index.forget_removed(place.text.document)  # removed by a user's update since it was indexed
            continue
        hit = _hit(place)
        if boxes:
            hit.source = trace(span=(place.text.segment, place.start, place.end), store=store)[0]
        hits.append(hit)
    return SearchResults(query=query, total=len(ranked.places), total_exact=ranked.exact, offset=offset, limit=limit,
                         hits=hits)


def _hit(place: Place) -> SearchHit:
    text, start, end = place.text.text, place.start, place.end
    before, after = text[max(0, start - SNIPPET_CHARACTERS):start], text[end:end + SNIPPET_CHARACTERS]
    if _in_table(text, start):  # its cells' words
        before, after = _cell_words(re.sub(r"^[^<]*>", "", before)), _cell_words(re.sub(r"<[^>]*$", "", after))
    if start > SNIPPET_CHARACTERS:
        before = re.sub(r"^\S*", "", before)  # a word cut in two is left out
    if end + SNIPPET_CHARACTERS < len(text):
        after = re.sub(r"\S*$", "", after)
    return SearchHit(document=place.text.document, segment=place.text.segment, segment_kind=place.text.kind,
                     start=start, end=end, quote=text[start:end], as_written=place.as_written,
                     before=re.sub(r"\s+", " ", before).lstrip(), after=re.sub(r"\s+", " ", after).rstrip(),
                     page_number=place.text.page_number, file_name=place.text.file_name)


def _in_table(text: str, start: int) -> bool:
    """Whether ``text[start]`` is inside a table's markup (its tag in any case, with attributes or not).

    >>> [_in_table(t, t.index("x")) for t in ("<TABLE border=1><tr><td>x", "<table></table> x", "a x")]
    [True, False, False]
    """
    before = text[:start].lower()
    return before.rfind("<table") > before.rfind("</table>")


def _cell_words(markup: str) -> str:
    """A piece of a table's markup as its cells read: tags apart, entities read.

    >>> _cell_words("Q1</td><td>12 &amp; 13</td></tr>")
    'Q1  12 & 13  '
    """
    return html.unescape(re.sub(r"<[^<>]*>", " ", markup))


__all__ = ["SNIPPET_CHARACTERS", "search"]
