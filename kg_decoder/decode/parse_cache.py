"""The parse cache: partitioning results on disk beside the store, so re-decoding the same bytes
with other section settings does not partition again.

Keyed by the sha256 of the bytes, the settings that change partitioning (format, strategy, OCR
languages, whether a password was given, rendered positions, pictures' OCR, PDF tables; for JSON the section size, which its structure is split
by) and the versions of kg-decoder and unstructured. Each
entry is one file written to a temporary name and renamed into place, so two processes writing
the same entry both leave a whole file; a damaged entry is ignored and replaced. The folder is
kept under a size bound by removing the least recently used entries.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import tempfile
from pathlib import Path
from typing import Optional

from ..model import DecodeOptions, Partitioned

DEFAULT_MAX_BYTES = 1024 * 1024 * 1024
# 2: Partitioned.warnings, Element.table; 3: PDF boxes on the displayed page, the text-layer fallback;
# 4: elements placed on a rendering (Element.rendered_page, Partitioned.rendering and page_numbers_from);
# 5: pictures' OCR text (Element.image_text, image_text_skipped), turned PDF text, Partitioned.title, PDF
# tables (Element.cell_places), confidence (Element.confidence, Page.confidence); 6: boxes checked by a second
# reading (Element.verification), Office tables' cell boxes; 7: Partitioned.problems, Element.properties;
# 8: a flowing document's page numbers from its rendering, a sheet cell's line breaks unescaped; 9: a PDF
# text layer's plausibility (Page.plausibility), doubted layers read again by OCR; 10: a PDF page's elements in
# reading order (its columns one after the other); 11: PDF lines with Hangul words whole, a glyph drawn twice
# read once, blanks as single spaces; SmartArt nodes and a chart's drawn texts (ChartText) on the rendering.
# 12: an e-mail address unstructured calls a Title is an EmailAddress. 13: the boxes a slide's file states
# (a table, a chart's data) checked by the slide's rendering. 14: ligatures stored as their letters (ﬁ: fi).
# 15: people's names in an author block a partitioner calls a Title are Authors.
_FORMAT = b"kg-decoder-partition-cache-16\n"


class PartitionCache:
    """Partitioned results by key, in ``folder``, at most ``max_bytes`` on disk.

    >>> import tempfile
    >>> from kg_decoder.model import Element
    >>> cache = PartitionCache(tempfile.mkdtemp())
    >>> key = cache.key("ab" * 32, "text", DecodeOptions(), {"unstructured": "0.27"})
    >>> cache.get(key) is None
    True
    >>> cache.put(key, Partitioned("text", [Element(0, "NarrativeText", "hi")]))
    >>> cache.get(key).elements[0].text
    'hi'
    """

    def __init__(self, folder: str | os.PathLike, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        self.folder = Path(folder)
        self.max_bytes = max_bytes

    @staticmethod
    def key(sha256: str, format_name: str, options: DecodeOptions, versions: dict[str, str]) -> str:
        """The cache key of partitioning these bytes this way with these versions."""
        parts = [sha256, format_name, options.strategy, options.ocr_languages, str(bool(options.password)),
                 f"rendered-positions={options.rendered_positions}", f"image-ocr={options.image_ocr}",
                 f"pdf-tables={options.pdf_tables}", f"pdf-reader={options.pdf_reader}", f"max-image-pixels={options.max_image_pixels}",
                 *(f"{name}={version}" for name, version in sorted(versions.items()))]
        if format_name in ("json", "jsonl"):  # JSON is split by its structure up to the section size
            parts.append(f"size={options.section_max_size}")
        if options.encoding:
            parts.append(f"encoding={options.encoding.lower()}")
        return hashlib.sha256("|".join(parts).encode("utf-8")).hexdigest()

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / key

    def get(self, key: str) -> Optional[Partitioned]:
        path = self._path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        if not data.startswith(_FORMAT):
            return None
        try:
            value = pickle.loads(data[len(_FORMAT):])
        except Exception:  # a damaged or foreign entry: partition again and overwrite it
            return None
        if not isinstance(value, Partitioned):
            return None
        try:
            os.utime(path)  # recently used: kept longest
        except OSError:
            pass
        return value

    def put(self, key: str, value: Partitioned) -> None:
        """Store an entry (atomically); then trim the cache to its size bound. Failures only cost the cache."""
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".incoming-")
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(_FORMAT)
                    pickle.dump(value, stream, protocol=pickle.HIGHEST_PROTOCOL)
                os.replace(temporary, path)
            except BaseException:
                Path(temporary).unlink(missing_ok=True)
                raise
            self._trim()
        except OSError:
            return

    def _trim(self) -> None:
        entries = []
        for path in self.folder.glob("??/*"):
            if path.name.startswith(".incoming-"):
                continue
            try:
                stat = path.stat()
            except OSError:
                continue
            entries.append((stat.st_mtime, stat.st_size, path))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            path.unlink(missing_ok=True)  # another process may have removed it already
            total -= size

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.folder.glob("??/*") if p.is_file())
