"""Where a quote is in the store's texts, read as a search and a trace without a document share it: the
text index (:mod:`kg_decoder.graph.text_index`) names the texts that may hold it, the exact match of
:mod:`kg_decoder.cite.quotes` finds it in them (the same folding as a trace in one document), and the
places are ranked.

The texts are read in windows, in the order the index holds them (:data:`FIRST_WINDOW` texts, then
twice as many each time, at most :data:`LARGEST_WINDOW`), only until the page asked for is full: a
first page costs the same in a small and a large store, however many texts hold the quote. The
places are ranked as written first (whitespace aside) within each window, then in the index's order;
the windows being the same for every page, paging from offset 0 on meets every place exactly once.
The total is then what the windows read held: "at least" where texts were left unread. The cost is
bounded for anyone: a quote at most :data:`MAX_QUOTE_CHARACTERS` long, a page at most
:data:`MAX_RESULTS` places from an offset of at most :data:`MAX_OFFSET`, a time budget; every place
at once (a trace without a document) only where the index names at most :data:`MAX_CANDIDATE_TEXTS`
texts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

from ..graph.store import KgStore
from ..graph.text_index import IndexedText
from ..model.errors import InvalidSpan, RequestError, TimeLimit
from .quotes import as_written, find_quote

MAX_QUOTE_CHARACTERS = 2000
MAX_CANDIDATE_TEXTS = 20_000
MAX_OFFSET = 20_000
MAX_RESULTS = 100
FIRST_WINDOW = 16  # the exact match costs about a millisecond a text of a few thousand characters
LARGEST_WINDOW = 1024


@dataclass(frozen=True)
class Place:
    """Where a quote is found: a text the index holds and the span in it."""

    text: IndexedText
    start: int
    end: int
    as_written: bool


@dataclass(frozen=True)
class RankedPlaces:
    """The places read for a page: ``places`` ranked from the first on; ``exact`` when every text the
    index named was read (``len(places)`` is then the total, else a lower bound)."""

    places: list[Place]
    exact: bool


def ranked_places(store: KgStore, quote: str, seconds: Optional[float] = None,
                  wanted: Optional[int] = None) -> Optional[RankedPlaces]:
    """The places ``quote`` is found in the store's texts, ranked, read window by window until at
    least ``wanted`` are found (None: every place); None where the store has no index (one opened
    read-only before its writer made one). RequestError past the bounds (a quote longer than
    :data:`MAX_QUOTE_CHARACTERS`: ``quote-too-long``, 413; every place asked where the index names
    more than :data:`MAX_CANDIDATE_TEXTS` texts: ``quote-too-common``), TimeLimit past ``seconds``."""
    check_quote(quote)
    check_quote_length(quote)
    deadline = None if seconds is None else time.monotonic() + seconds
    places: list[Place] = []
    after: Optional[int] = 0
    window, read = FIRST_WINDOW, 0
    while after is not None and (wanted is None or len(places) < wanted):
        if wanted is None and read >= MAX_CANDIDATE_TEXTS:
            raise RequestError(f"the quote is in more than {MAX_CANDIDATE_TEXTS} texts: give more of it, a document, "
                               f"or a page (limit)", code="quote-too-common")
        found = store.text_index.search(quote, after, window, None if deadline is None else deadline - time.monotonic())
        if found is None:
            return None
        texts, after = found
        read += len(texts)
        in_window = []
        for text in texts:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeLimit(f"the search ran past its time limit of {seconds:g} s: give more of the quote, "
                                f"or a document")
            for start, end in find_quote(text.text, quote):
                in_window.append(Place(text, start, end, as_written(text.text[start:end], quote)))
        in_window.sort(key=lambda place: not place.as_written)  # stable: then in the index's order
        places += in_window
        window = min(2 * window, LARGEST_WINDOW)
    return RankedPlaces(places, exact=after is None)


def check_quote(quote) -> None:
    if not isinstance(quote, str) or not quote.strip():
        raise InvalidSpan("a quote must be non-empty text")
    try:
        quote.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate, which JSON can carry
        raise InvalidSpan("a quote must be Unicode text (it holds a lone surrogate)") from None


def check_quote_length(quote) -> None:
    """RequestError ``quote-too-long`` (413) for a quote longer than :data:`MAX_QUOTE_CHARACTERS`."""
    if isinstance(quote, str) and len(quote) > MAX_QUOTE_CHARACTERS:
        raise RequestError(f"a quote may be {MAX_QUOTE_CHARACTERS} characters long, not {len(quote)}",
                           code="quote-too-long", http_status=413)


def check_page(limit: int, offset: int) -> None:
    for name, value, low, high in (("limit", limit, 1, MAX_RESULTS), ("offset", offset, 0, MAX_OFFSET)):
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            raise RequestError(f"{name} must be a whole number from {low} to {high}", code=f"bad-{name}")


__all__ = ["FIRST_WINDOW", "LARGEST_WINDOW", "MAX_CANDIDATE_TEXTS", "MAX_OFFSET", "MAX_QUOTE_CHARACTERS", "MAX_RESULTS",
           "Place", "RankedPlaces", "check_page", "check_quote", "check_quote_length", "ranked_places"]
