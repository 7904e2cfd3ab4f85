"""The text index beside the graph: every page's, section's and picture's text in SQLite FTS5 with the
``trigram`` tokenizer, for finding a quote among a million documents without reading every text.

It is derived from the graph and can be rebuilt from it (``kg-decoder reindex``). What it indexes
is each text folded as two readings of the same words are compared
(:func:`kg_decoder.model.folded_letters`: compatibility forms such as ligatures, case, typographic
quotes, whitespace and hyphens folded away), so a quote folded the same way is a substring of the
folded text of every place the exact match in :mod:`kg_decoder.cite.quotes` can find: the index
gives candidates, never misses one, and the exact match decides. A trigram index finds any
substring of three characters or more.

The index also keeps each text as stored (so candidates are matched without reading the library)
and, per document, the decode activity it holds and when that decode ended: its watermark, the
latest such time, is where catching up with the graph starts (:mod:`kg_decoder.graph.indexing`).
Each write method is one SQLite transaction. Several processes may read and write one index file
(SQLite's write-ahead log); a reader opened ``read_only`` never writes.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterable, Iterator, Optional

from ..model import folded_letters
from ..model.errors import RequestError, StoreError, TimeLimit

INDEX_FILE = "text-index.sqlite3"
SCHEMA_VERSION = "1"
MIN_KEY_LETTERS = 3  # a trigram index finds substrings of three characters or more

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
  document TEXT PRIMARY KEY, activity TEXT NOT NULL, ended TEXT NOT NULL, file_name TEXT);
CREATE TABLE IF NOT EXISTS segments (
  id INTEGER PRIMARY KEY, document TEXT NOT NULL, segment TEXT NOT NULL, kind TEXT NOT NULL,
  position INTEGER NOT NULL, page_number INTEGER, text TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS segments_by_document ON segments (document, position);
CREATE VIRTUAL TABLE IF NOT EXISTS segment_keys USING fts5(key, content='', tokenize='trigram case_sensitive 1');
CREATE TABLE IF NOT EXISTS trigram_counts (trigram TEXT PRIMARY KEY, texts INTEGER NOT NULL) WITHOUT ROWID;
"""
# A quote is looked up by its RAREST_TRIGRAMS rarest trigrams (an AND, positions left to the exact
# match): FTS5 reads every listed trigram's whole list of texts, for a phrase as for an AND, so the cost
# is that of the lists read; a phrase lists every trigram of the quote. Where the rarest are so common
# that more than AS_PHRASE_PAST texts are expected to hold them all by chance (as if held
# independently), the phrase is cheaper: FTS5 checks the positions, the exact match in Python would
# cost about a millisecond a text.
RAREST_TRIGRAMS = 6
AS_PHRASE_PAST = 50
COUNTED_PER_STATEMENT = 100  # trigram counts written by one statement (see TextIndex._count)


@dataclass(frozen=True)
class IndexedText:
    """A page's, section's or picture's text as the index holds it (``position``: its index in the document)."""

    document: str
    segment: str
    kind: str
    position: int
    text: str
    page_number: Optional[int] = None
    file_name: Optional[str] = None  # the document's, as the index holds it (read back only)


@dataclass(frozen=True)
class HeldDecode:
    """The decode of a document whose texts the index holds."""

    document: str
    activity: str
    ended: str
    file_name: Optional[str] = None


def sortable_time(value: str) -> str:
    """An xsd:dateTime as text that sorts as the time does: in UTC, with six digits of a second
    (Oxigraph writes ``10:00:00.5Z`` and ``10:00:00Z``, which sort after ``10:00:00.51Z`` as text)."""
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return value
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return parsed.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def search_key(text: str) -> str:
    """What the index holds of ``text`` and what a quote is looked up by.

    >>> search_key("E\ufb03cient docu-\\nment"), search_key("efficient document")
    ('efficientdocument', 'efficientdocument')
    """
    return folded_letters(text)


_PACKED_FROM = 1000  # letters from which numpy cuts a text's trigrams faster than a set of slices


def trigrams(key: str) -> list[str]:
    """The distinct trigrams of a folded text, as FTS5's ``trigram`` tokenizer cuts them.

    >>> trigrams("abcab")
    ['abc', 'bca', 'cab']
    """
    if len(key) < _PACKED_FROM:
        return sorted({key[i:i + 3] for i in range(len(key) - 2)})
    # Each trigram packed in one number (21 bits a code point), made distinct and sorted by numpy: the
    # numbers sort as the strings do (by code point), and a long document's text is cut in a sixth of
    # the time a set of slices takes. A sort and a mask, not np.unique (numpy 2's hashes, then sorts:
    # 230 against 35 us for 2 800 trigrams); the strings read as numpy's 3-letter strings, not sliced
    # (50 against 230 us), save where a letter is NUL, which numpy's strings drop at their end.
    import numpy as np

    codes = np.frombuffer(key.encode("utf-32-le", "surrogatepass"), dtype="<u4").astype(np.uint64)
    packed = np.sort((codes[:-2] << np.uint64(42)) | (codes[1:-1] << np.uint64(21)) | codes[2:])
    packed = packed[np.concatenate(([True], packed[1:] != packed[:-1]))]
    low = np.uint64((1 << 21) - 1)
    letters = np.stack([packed >> np.uint64(42), (packed >> np.uint64(21)) & low, packed & low], axis=1)
    letters = letters.astype("<u4")
    if not letters.all():
        joined = letters.tobytes().decode("utf-32-le", "surrogatepass")
        return [joined[i:i + 3] for i in range(0, len(joined), 3)]
    return letters.view("<U3").ravel().tolist()


class TextIndex:
    """The SQLite file at ``path`` (``None``: in memory, for a store in memory)."""

    def __init__(self, path: Optional[Path], read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._lock = threading.RLock()
        try:
            if path is None:
                self._db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            elif read_only:
                self._db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False,
                                           isolation_level=None)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=30)
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA synchronous=NORMAL")
            if not read_only:
                self._db.executescript(_SCHEMA)
                self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
                # Merge the pieces one commit per document leaves sooner than FTS5's defaults (4 and 16): a
                # lookup reads a few pieces, not hundreds (p50 2.8 ms, not 10.8, at 6 000 texts; 13 % more
                # writing time, itself under 1 % of a decode's).
                self._db.execute("INSERT INTO segment_keys (segment_keys, rank) VALUES ('automerge', 2)")
                self._db.execute("INSERT INTO segment_keys (segment_keys, rank) VALUES ('crisismerge', 4)")
                if self._db.execute("SELECT 1 FROM meta WHERE name = 'trigram_counts'").fetchone() is None:
                    self._count_trigrams()  # an index made before the counts were kept
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open the text index at {path}: {exc}") from None

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        if self.read_only:
            raise StoreError(f"the text index at {self.path} is open read-only")
        with self._lock, self._sqlite_errors():
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    @contextmanager
    def _reading(self) -> Iterator[None]:
        with self._lock, self._sqlite_errors():
            yield

    @contextmanager
    def _sqlite_errors(self) -> Iterator[None]:
        """SQLite's errors (a full disk, a lock held past its timeout, a damaged file) as StoreError."""
        try:
            yield
        except sqlite3.Error as exc:
            raise StoreError(f"the text index at {self.path} failed: {exc} (`kg-decoder reindex` rebuilds it)") from None

    # ------------------------------------------------------------ what it holds

    def held(self, document: str) -> Optional[HeldDecode]:
        with self._reading():
            row = self._db.execute("SELECT document, activity, ended, file_name FROM documents WHERE document = ?",
                                   (document,)).fetchone()
        return HeldDecode(*row) if row else None

    def held_decodes(self) -> dict[str, HeldDecode]:
        """Every document the index holds, with its decode."""
        with self._reading():
            rows = self._db.execute("SELECT document, activity, ended, file_name FROM documents").fetchall()
        return {row[0]: HeldDecode(*row) for row in rows}

    def watermark(self) -> Optional[str]:
        """When the latest decode the index holds ended (None: it holds none)."""
        with self._reading():
            row = self._db.execute("SELECT value FROM meta WHERE name = 'watermark'").fetchone()
        return row[0] if row else None

    def document_count(self) -> int:
        with self._reading():
            return self._db.execute("SELECT count(*) FROM documents").fetchone()[0]

    def segment_count(self, document: Optional[str] = None) -> int:
        with self._reading():
            if document is None:
                return self._db.execute("SELECT count(*) FROM segments").fetchone()[0]
            return self._db.execute("SELECT count(*) FROM segments WHERE document = ?", (document,)).fetchone()[0]

    def texts(self, document: str) -> list[IndexedText]:
        with self._reading():
            rows = self._db.execute("SELECT document, segment, kind, position, text, page_number FROM segments "
                                    "WHERE document = ? ORDER BY position", (document,)).fetchall()
        return [IndexedText(*row) for row in rows]

    # ------------------------------------------------------------ writing

    def put(self, held: HeldDecode, texts: Iterable[IndexedText]) -> bool:
        """Hold ``texts`` as the document's, replacing what it held; one transaction. Not when the index
        already holds a decode of the document that ended later (another process caught up first)."""
        return bool(self.put_many([(held, list(texts))]))

    def put_many(self, documents: list[tuple[HeldDecode, list[IndexedText]]]) -> int:
        """:meth:`put` for several documents in one transaction (a rebuild's batches); how many it put."""
        put, counts = 0, Counter()
        with self._transaction() as db:
            for held, texts in documents:
                before = db.execute("SELECT ended FROM documents WHERE document = ?", (held.document,)).fetchone()
                if before is not None and sortable_time(before[0]) > sortable_time(held.ended):
                    continue
                self._delete(db, held.document, counts)
                db.execute("INSERT INTO documents VALUES (?, ?, ?, ?)",
                           (held.document, held.activity, held.ended, held.file_name))
                for text in texts:
                    cursor = db.execute("INSERT INTO segments (document, segment, kind, position, page_number, text) "
                                        "VALUES (?, ?, ?, ?, ?, ?)", (text.document, text.segment, text.kind,
                                                                      text.position, text.page_number, text.text))
                    key = search_key(text.text)
                    db.execute("INSERT INTO segment_keys (rowid, key) VALUES (?, ?)", (cursor.lastrowid, key))
                    counts.update(trigrams(key))
                watermark = db.execute("SELECT value FROM meta WHERE name = 'watermark'").fetchone()
                if watermark is None or sortable_time(held.ended) > sortable_time(watermark[0]):
                    db.execute("INSERT OR REPLACE INTO meta VALUES ('watermark', ?)", (held.ended,))
                put += 1
            self._count(db, counts)
        return put

    def remove(self, document: str) -> None:
        """Forget a document's texts; one transaction."""
        with self._transaction() as db:
            counts = Counter()
            self._delete(db, document, counts)
            self._count(db, counts)

    def clear(self) -> None:
        """Forget everything (before a rebuild); one transaction."""
        with self._transaction() as db:
            db.execute("DELETE FROM segments")
            db.execute("DELETE FROM documents")
            db.execute("DELETE FROM meta WHERE name = 'watermark'")
            db.execute("INSERT INTO segment_keys (segment_keys) VALUES ('delete-all')")
            db.execute("DELETE FROM trigram_counts")

    def optimize(self) -> None:
        """Merge the full-text index into one b-tree (after a rebuild: a lookup then reads each trigram's
        list of texts in one piece; at 6 000 texts, p50 0.9 ms against 10.8 ms after one commit per
        document with FTS5's default merging)."""
        with self._transaction() as db:
            db.execute("INSERT INTO segment_keys (segment_keys) VALUES ('optimize')")
        with self._reading():
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def _count_trigrams(self) -> None:
        """The number of texts holding each trigram, from the full-text index itself (one pass)."""
        with self._transaction() as db:
            db.execute("CREATE VIRTUAL TABLE temp.trigram_vocabulary USING fts5vocab(main, segment_keys, 'row')")
            db.execute("DELETE FROM trigram_counts")
            db.execute("INSERT INTO trigram_counts SELECT term, doc FROM temp.trigram_vocabulary")
            db.execute("DROP TABLE temp.trigram_vocabulary")
            db.execute("INSERT OR REPLACE INTO meta VALUES ('trigram_counts', '1')")

    @staticmethod
    def _count(db: sqlite3.Connection, counts: Counter) -> None:
        """Add ``counts`` (texts more or fewer holding each trigram) to the counts; once a transaction,
        trigrams shared by its texts written once."""
        # COUNTED_PER_STATEMENT rows a statement: executemany's cost is mostly its own, per row (a
        # six-page paper's 1 800 trigrams, 3.5 against 2.2 ms); longer statements cost more to prepare.
        rows = [value for trigram, texts in counts.items() if texts for value in (trigram, texts)]
        for start in range(0, len(rows), 2 * COUNTED_PER_STATEMENT):
            values = rows[start:start + 2 * COUNTED_PER_STATEMENT]
            db.execute(f"INSERT INTO trigram_counts VALUES {','.join(['(?, ?)'] * (len(values) // 2))} "
                       f"ON CONFLICT (trigram) DO UPDATE SET texts = texts + excluded.texts", values)

    @staticmethod
    def _delete(db: sqlite3.Connection, document: str, counts: Counter) -> None:
        # A contentless FTS5 table forgets a row when told the values it was given.
        for rowid, text in db.execute("SELECT id, text FROM segments WHERE document = ?", (document,)).fetchall():
            key = search_key(text)
            db.execute("INSERT INTO segment_keys (segment_keys, rowid, key) VALUES ('delete', ?, ?)", (rowid, key))
            counts.subtract(trigrams(key))
        db.execute("DELETE FROM segments WHERE document = ?", (document,))
        db.execute("DELETE FROM documents WHERE document = ?", (document,))

    # ------------------------------------------------------------ looking up

    def candidates(self, quote: str, after: int = 0, count: int = 100,
                   seconds: Optional[float] = None) -> tuple[list[IndexedText], Optional[int]]:
        """The next ``count`` texts whose folded form holds ``quote`` folded, in the order the index
        holds them, from after the index's key ``after`` (0: the first): a superset of where the exact
        match finds it; with where the next window starts (None: no text is left). Only a window is
        read, so its cost does not grow with the texts that hold the quote. RequestError
        ``quote-too-short`` for a quote of fewer than three letters folded; TimeLimit past ``seconds``."""
        key = search_key(quote)
        if len(key) < MIN_KEY_LETTERS:
            raise RequestError(f"a quote searched in every document needs {MIN_KEY_LETTERS} letters or more "
                               f"(spaces and hyphens aside): give a longer quote or a document",
                               code="quote-too-short")
        with self._lock, self._time_budget(seconds):
            lookup = self._lookup(key)
            ids = [row[0] for row in self._db.execute(
                "SELECT rowid FROM segment_keys WHERE segment_keys MATCH ? AND rowid > ? ORDER BY rowid LIMIT ?",
                (lookup, after, count))] if lookup else []
            rows = self._db.execute(
                "SELECT s.document, s.segment, s.kind, s.position, s.text, s.page_number, d.file_name "
                "FROM segments s LEFT JOIN documents d ON d.document = s.document "
                f"WHERE s.id IN ({','.join('?' * len(ids))}) ORDER BY s.id", ids).fetchall() if ids else []
        return [IndexedText(*row) for row in rows], (ids[-1] if len(ids) == count else None)

    def _lookup(self, key: str) -> str:
        """The FTS5 query for a folded quote: its rarest trigrams (see RAREST_TRIGRAMS), or the phrase.
        Either finds every text that holds ``key``; the exact match drops the others. FTS5 reads a
        query as C text, so a trigram with a null character is left out ("": none is left)."""
        held = [trigram for trigram in trigrams(key) if "\x00" not in trigram]
        if not held:
            return ""
        texts = self._db.execute("SELECT max(id) FROM segments").fetchone()[0] or 1
        try:
            counts = dict(self._db.execute(f"SELECT trigram, texts FROM trigram_counts WHERE trigram IN "
                                           f"({','.join('?' * len(held))})", held).fetchall())
        except sqlite3.OperationalError:  # an index made before the counts, opened read-only
            return " AND ".join('"' + term.replace('"', '""') + '"' for term in held[:RAREST_TRIGRAMS]) \
                if "\x00" in key else '"' + key.replace('"', '""') + '"'
        chosen = sorted(held, key=lambda t: (counts.get(t, 0), t))[:RAREST_TRIGRAMS]  # one no text holds: 0
        expected = float(texts)
        for trigram in chosen:
            expected *= counts.get(trigram, 0) / texts
        terms = [key] if expected > AS_PHRASE_PAST and "\x00" not in key else chosen
        return " AND ".join('"' + term.replace('"', '""') + '"' for term in terms)

    @contextmanager
    def _time_budget(self, seconds: Optional[float]) -> Iterator[None]:
        if seconds is None:
            yield
            return
        deadline = time.monotonic() + seconds
        self._db.set_progress_handler(lambda: time.monotonic() > deadline, 10_000)
        try:
            yield
        except sqlite3.OperationalError as exc:
            if "interrupted" in str(exc):
                raise TimeLimit(f"the search ran past its time limit of {seconds:g} s: give more of the quote, "
                                f"or a document") from None
            raise StoreError(f"the text index at {self.path} failed: {exc}") from None
        finally:
            self._db.set_progress_handler(None, 0)

    def size_bytes(self) -> int:
        """The index's size on disk (pages in use)."""
        with self._reading():
            pages = self._db.execute("PRAGMA page_count").fetchone()[0]
            free = self._db.execute("PRAGMA freelist_count").fetchone()[0]
            size = self._db.execute("PRAGMA page_size").fetchone()[0]
        return (pages - free) * size


__all__ = ["INDEX_FILE", "HeldDecode", "IndexedText", "TextIndex", "search_key", "trigrams"]
