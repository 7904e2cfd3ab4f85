"""The words in a document's pictures, read by OCR (tesseract), kept apart from the page text.

Runs in the partition worker after the backend found the pictures, so the parse cache keeps the
result and the document's time limit covers it. Each picture gets an :class:`ImageText` (its words
with their boxes in the picture's pixels and tesseract's confidence) or the reason it was not read:
too small to hold a word, too large, plain (one colour: a rule, a fill; no shape the size of a
letter: a slice of a page's background), already the page's own OCR text, no text found, or the
document's time running out.
"""

from __future__ import annotations

import io
import os
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from ..model import DecodeOptions, Element, ImageText, OcrWord, Partitioned, Problem
from .images import describe_image
from .processes import cpu_share

# In "auto": smaller pictures cannot hold a legible word (an icon, a bullet); "on" reads them anyway.
MIN_SIDE_PIXELS = 16
MIN_PIXELS = 2_000
# A picture over this is not read in any mode (a poster-size scan would take minutes).
MAX_PIXELS = 40_000_000
# Below this contrast (standard deviation of grey levels) a picture is a plain fill or rule.
MIN_CONTRAST = 6.0
# A picture whose ink (grey levels this far from its most common one) makes no shape smaller than the
# picture across and down, and at most this many shapes, holds no letter: a slice of a page's background
# (a bar, an edge line). Looked for only up to SHAPES_MAX_PIXELS (the look costs about 30 ms a million).
INK_DIFFERENCE = 40
MAX_PLAIN_SHAPES = 2
SHAPES_MAX_PIXELS = 4_000_000
# Small pictures are enlarged towards this long side before tesseract reads them. Measured on crops of
# born-digital pages drawn at 0.6-1.3 pixels a point (bench/picture_ocr_scale.py): towards 1400 pixels
# tesseract reads as many of their words as towards 2000 (recall 0.611 and 0.607, the same mean
# confidence) from 44 % fewer pixels, in 12 % less time; a hatched chart took about a third less.
TARGET_LONG_SIDE = 1400
MAX_ENLARGE = 4.0
# Words below this confidence with no letter or digit are marks (rules, dots, icons), not words.
MARK_CONFIDENCE = 0.6
# Of the document's time limit, OCR of pictures may use what is left after this share.
TIME_SHARE = 0.6
TIME_LIMIT_SKIP = "not read: the document's time limit was near"
# Pictures read by one tesseract run: enough to pay its start-up once for most documents, few enough
# that a batch cut short by the time limit loses little.
BATCH_PICTURES = 8
BATCH_PIXELS = 40_000_000
# Fields of tesseract's TSV output (image_to_data).
_LINE_KEYS = ("block_num", "par_num", "line_num")
# A picture's reading: its text, or why it has none, and the problem reading it met.
_Reading = tuple[Optional[ImageText], Optional[str], Optional[Problem]]


def read_image_texts(partitioned: Partitioned, options: DecodeOptions, started: Optional[float] = None,
                     ahead: "Optional[PicturesReadAhead]" = None) -> None:
    """Give every picture of the document its OCR text, or the reason it has none (in place).

    ``started``: when the document's decode began (``time.monotonic()``), for its time limit. Pictures
    are read a batch at a time by one tesseract run (:func:`read_words_of`); a batch tesseract fails on
    is read again a picture at a time, so only the odd picture goes without its text. ``ahead``: the
    pictures a thread began reading before the partition (their readings are taken, not made again).
    """
    if options.image_ocr == "off":
        return
    started = time.monotonic() if started is None else started
    time_left = _time_left(options, started)
    ocr_pages = {page.number for page in partitioned.pages if page.strategy in ("ocr_only", "hi_res")}
    read = ahead.take() if ahead is not None else {}  # by the picture's bytes: a logo on every page is read once
    to_read: dict[bytes, Optional[int]] = {}  # the pictures still to read, with the page each is first on
    waiting: list[Element] = []
    for element in partitioned.elements:
        if not element.is_image or element.image_data is None:
            continue
        reason = _not_worth_reading(element, partitioned, ocr_pages, options)
        if reason is not None:
            element.image_text_skipped = reason
            continue
        waiting.append(element)
        if element.image_data not in read:
            to_read.setdefault(element.image_data, element.page_number)
    _read_pictures(to_read, read, options, time_left)
    reported: set[bytes] = set()
    for element in waiting:
        element.image_text, element.image_text_skipped, problem = read[element.image_data]
        if problem is not None and element.image_data not in reported:
            partitioned.problems.append(problem)
            reported.add(element.image_data)


class PicturesReadAhead:
    """Pictures read by OCR in a thread of their own while the document is partitioned (tesseract is a
    process of its own, and Pillow lets go of the interpreter while it decodes and scales): found
    before the partition, their words then cost the decode little time beside it. Only the checks
    that need no partition are made here (size, contrast); :func:`read_image_texts` makes the others
    and takes the readings of the pictures it keeps."""

    def __init__(self, pictures: list[Element], options: DecodeOptions, started: float) -> None:
        self._read: dict[bytes, _Reading] = {}
        self._stop = threading.Event()
        distinct = {picture.image_data: picture.page_number for picture in pictures
                    if picture.image_data is not None and options.image_ocr != "off"}
        self._thread = threading.Thread(target=self._read_all, args=(distinct, options, started),
                                        name="pictures-ocr", daemon=True)
        self._thread.start()

    def _read_all(self, pictures: dict[bytes, Optional[int]], options: DecodeOptions, started: float) -> None:
        worth = {data: page for data, page in pictures.items() if _too_small_or_large(data, options) is None}
        _read_pictures(worth, self._read, options, _time_left(options, started), self._stop.is_set)

    def take(self) -> dict[bytes, _Reading]:
        """The readings made, once the thread is done."""
        self._thread.join()
        return dict(self._read)

    def stop(self) -> None:
        """No more pictures started (the partition failed); the batch tesseract is reading ends on its own."""
        self._stop.set()


def _not_worth_reading(element: Element, partitioned: Partitioned, ocr_pages: set[int],
                       options: DecodeOptions) -> Optional[str]:
    if partitioned.format in ("png", "jpeg", "tiff"):
        return "not read apart: this picture is the page, whose text is its OCR"
    if element.page_number in ocr_pages:
        return "not read apart: the page's text is already its OCR"
    return _too_small_or_large(element.image_data, options)


def _too_small_or_large(data: bytes, options: DecodeOptions) -> Optional[str]:
    _, width, height = describe_image(data)  # the bytes' own size: a PDF may state another
    if not width or not height:
        return "not read: the picture's pixels cannot be decoded"
    if width * height > min(MAX_PIXELS, options.max_image_pixels):
        return f"not read: {width * height} pixels, too large to read"
    if options.image_ocr == "auto" and (min(width, height) < MIN_SIDE_PIXELS or width * height < MIN_PIXELS):
        return f"not read: {width}x{height} pixels, too small to hold a word"
    return None


@dataclass
class _Prepared:
    """A picture as tesseract reads it: greyscale, enlarged ``scale`` times; ``size``: its own pixels."""
    grey: object
    scale: float
    size: tuple[int, int]
    page_number: Optional[int] = None  # where it is first shown, for a problem's place


def _prepare(data: bytes, mode: str, page_number: Optional[int]) -> "_Prepared | str":
    """The picture made ready for tesseract, or why it is not worth reading."""
    from PIL import Image, ImageOps, ImageStat

    with Image.open(io.BytesIO(data)) as opened:
        opened.seek(0)
        picture = on_white(opened)
    grey = ImageOps.grayscale(picture)
    if mode == "auto" and ImageStat.Stat(grey).stddev[0] < MIN_CONTRAST:
        return "not read: a plain picture, with no contrast to hold text"
    if mode == "auto" and grey.width * grey.height <= SHAPES_MAX_PIXELS and not _may_hold_letters(grey):
        return "not read: no shape in the picture the size of a letter"
    scale = min(MAX_ENLARGE, max(1.0, TARGET_LONG_SIDE / max(grey.size)))
    if scale > 1.0:
        grey = grey.resize((round(grey.width * scale), round(grey.height * scale)), Image.Resampling.LANCZOS)
    return _Prepared(grey, scale, picture.size, page_number)


def _may_hold_letters(grey) -> bool:
    """Whether the ink of a greyscale picture makes a shape smaller than the picture both across and
    down (a letter with room around it), or more shapes than a plain picture has (a word cropped to
    its letters' height: each letter is a shape)."""
    import cv2
    import numpy as np

    pixels = np.asarray(grey)
    levels, counts = np.unique(pixels // 8, return_counts=True)
    background = int(levels[counts.argmax()]) * 8 + 4
    ink = (np.abs(pixels.astype(np.int16) - background) > INK_DIFFERENCE).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    height, width = pixels.shape
    shapes = [(w, h) for _, _, w, h, area in stats[1:count] if area >= 3]
    return len(shapes) > MAX_PLAIN_SHAPES or any(2 <= h < 0.9 * height and w < 0.9 * width for w, h in shapes)


def _time_left(options: DecodeOptions, started: float):
    """A function giving the seconds left for reading pictures (None: no limit)."""
    budget = options.timeout_seconds * TIME_SHARE if options.timeout_seconds else None
    return lambda: None if budget is None else budget - (time.monotonic() - started)


def _read_pictures(pictures: dict[bytes, Optional[int]], read: dict, options: DecodeOptions, time_left,
                   stopped=lambda: False) -> None:
    """Read the pictures (their bytes, with the page each is first on) into ``read``, a batch at a time,
    within the time left; ``stopped`` says when to start no more. tesseract reads on one thread: the
    batches are read side by side by as many runs as this process's share of the CPUs (a document of
    charts waited for them one after the other), while the next pictures are made ready here."""
    runs = max(1, min(cpu_share(), len(pictures)))
    size = min(BATCH_PICTURES, -(-len(pictures) // runs))
    with ThreadPoolExecutor(runs, thread_name_prefix="pictures-batch") as pool:
        started: list[Future] = []

        def start(batch: list[tuple[bytes, _Prepared]]) -> None:
            if batch:
                started.append(pool.submit(lambda: stopped() or _read_batch(batch, read, options.ocr_languages,
                                                                            time_left)))

        batch: list[tuple[bytes, _Prepared]] = []
        for data, page_number in pictures.items():
            if stopped():
                break
            prepared = _prepared_or_reading(data, options, page_number, time_left, read)
            if prepared is not None:
                batch.append((data, prepared))
            if len(batch) == size or sum(p.grey.width * p.grey.height for _, p in batch) > BATCH_PIXELS:
                start(batch)
                batch = []
        if not stopped():
            start(batch)
        for run in started:
            run.result()


def _prepared_or_reading(data: bytes, options: DecodeOptions, page_number: Optional[int], time_left,
                         read: dict) -> Optional[_Prepared]:
    """The picture made ready to read, or None with its reading (why it is not read) put in ``read``."""
    left = time_left()
    if left is not None and left <= 0:
        read[data] = (None, TIME_LIMIT_SKIP, None)
        return None
    try:
        prepared = _prepare(data, options.image_ocr, page_number)
    except Exception as exc:  # an odd picture must not cost the document its text
        read[data] = _failed(page_number, exc)
        return None
    if isinstance(prepared, str):
        read[data] = (None, prepared, None)
        return None
    return prepared


def _read_batch(batch: list[tuple[bytes, _Prepared]], read: dict, languages: str, time_left) -> None:
    """Read the batch's pictures into ``read`` (by their bytes), within the time left."""
    if not batch:
        return
    left = time_left()
    if left is not None and left <= 0:
        for data, _ in batch:
            read[data] = (None, TIME_LIMIT_SKIP, None)
        return
    try:
        words = read_words_of([(p.grey, p.scale) for _, p in batch], languages,
                              timeout=max(left, 1.0) if left is not None else 0)
    except Exception as exc:
        if len(batch) > 1:
            for one in batch:
                _read_batch([one], read, languages, time_left)
            return
        read[batch[0][0]] = _failed(batch[0][1].page_number, exc)
        return
    for (data, prepared), found in zip(batch, words):
        read[data] = (*_image_text(found, languages, prepared.size), None) if found else (None, "no text found", None)


def _failed(page_number: Optional[int], exc: Exception) -> _Reading:
    problem = Problem.of("picture-ocr-failed", "OCR of a picture failed", exc, page_number, "Image")
    return None, "not read: OCR failed on this picture", problem


def _image_text(words: list, languages: str, size: tuple[int, int]) -> tuple[ImageText, None]:
    text, placed = _laid_out(words)
    confidence = round(sum(word.confidence for word in placed) / len(placed), 4)
    return ImageText(text=text, languages=languages, confidence=confidence, words=placed,
                     engine=tesseract_version(), pixel_size=size), None


def on_white(image):
    """The picture as RGB, transparent parts on white (as a page shows them)."""
    from PIL import Image

    if image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info):
        rgba = image.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        return Image.alpha_composite(background, rgba).convert("RGB")
    return image.convert("RGB")


def read_words(grey, languages: str, scale: float, psm: int = 3,
               timeout: float = 0) -> list[tuple[tuple[int, int, int], str, tuple, float]]:
    """tesseract's words in a greyscale picture enlarged ``scale`` times: (block, paragraph and line
    numbers, text, box in the picture's own pixels, confidence 0..1), in reading order, marks left out.
    ``psm``: tesseract's page segmentation mode (3: find the blocks; 6: one block, as a table cell);
    ``timeout``: seconds tesseract may take (0: no limit), past which it is stopped (RuntimeError)."""
    return read_words_of([(grey, scale)], languages, psm, timeout)[0]


def read_words_of(pictures: list, languages: str, psm: int = 3, timeout: float = 0) -> list[list]:
    """:func:`read_words` of several (greyscale picture, scale) pairs in one tesseract run: its start-up
    (about 0.2 s of loading the language models) is paid once, not once a picture. tesseract's LSTM
    engine reads each picture of a list on its own, so the words are those of one run per picture."""
    with tempfile.TemporaryDirectory(prefix="kg-ocr-") as folder:
        names = []
        for k, (grey, _) in enumerate(pictures):
            names.append(os.path.join(folder, f"{k}.pgm"))
            grey.save(names[-1], format="PPM")  # uncompressed: no PNG encoding, the same pixels
        listing = os.path.join(folder, "pictures.txt")
        with open(listing, "w", encoding="utf-8") as out:
            out.write("\n".join(names) + "\n")
        base = os.path.join(folder, "words")
        command = [_tesseract_command(), names[0] if len(names) == 1 else listing, base, "-l", languages,
                   "--psm", str(psm), "-c", "tessedit_create_tsv=1"]
        try:
            run = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 timeout=timeout or None, check=False)
        except subprocess.TimeoutExpired as exc:
            raise RuntimeError(f"tesseract stopped after {timeout:.1f} s") from exc
        if run.returncode:
            raise RuntimeError(f"tesseract failed ({run.returncode}): "
                               f"{run.stdout.decode('utf-8', 'replace').strip()[-300:]}")
        with open(base + ".tsv", encoding="utf-8") as tsv:
            rows = tsv.read().strip("\n").split("\n")
    words: list[list] = [[] for _ in pictures]
    header = rows[0].split("\t") if rows else []
    column = {name: k for k, name in enumerate(header)}
    for line in rows[1:]:
        row = line.split("\t")
        row += [""] * (len(header) - len(row))  # a last word read as nothing ends without its field
        word = _word(row, column, pictures[int(row[column["page_num"]]) - 1][1])
        if word is not None:
            words[int(row[column["page_num"]]) - 1].append(word)
    return words


def _word(row: list[str], column: dict[str, int], scale: float):
    """One TSV row as (line numbers, text, box in the picture's own pixels, confidence), or None for a
    row that is no word (a block, paragraph or line: confidence -1) or a mark."""
    text = row[column["text"]].strip()
    confidence = int(float(row[column["conf"]]))  # as pytesseract reads it: whole percents
    if not text or confidence < 0:
        return None
    confidence = min(confidence / 100.0, 1.0)
    if confidence < MARK_CONFIDENCE and not any(c.isalnum() for c in text):
        return None
    left, top = int(row[column["left"]]) / scale, int(row[column["top"]]) / scale
    box = (round(left, 2), round(top, 2), round(left + int(row[column["width"]]) / scale, 2),
           round(top + int(row[column["height"]]) / scale, 2))
    return tuple(int(row[column[key]]) for key in _LINE_KEYS), text, box, round(confidence, 4)


def _tesseract_command() -> str:
    import unstructured_pytesseract as tesseract

    return tesseract.pytesseract.tesseract_cmd  # the binary unstructured's own OCR runs


def _laid_out(words) -> tuple[str, list[OcrWord]]:
    """The words as text: spaces within a line, a newline between lines, a blank line between blocks.

    >>> text, placed = _laid_out([((1, 1, 1), "Total", (0, 0, 5, 2), 0.9), ((1, 1, 1), "12", (6, 0, 8, 2), 0.8),
    ...                           ((2, 1, 1), "Notes", (0, 5, 5, 7), 0.7)])
    >>> text, [text[w.start:w.start + len(w.text)] for w in placed]
    ('Total 12\\n\\nNotes', ['Total', '12', 'Notes'])
    """
    parts: list[str] = []
    placed: list[OcrWord] = []
    length = 0
    previous = None
    for line, text, box, confidence in words:
        if previous is not None:
            separator = " " if line == previous else ("\n" if line[0] == previous[0] else "\n\n")
            parts.append(separator)
            length += len(separator)
        placed.append(OcrWord(text=text, start=length, box=box, confidence=confidence))
        parts.append(text)
        length += len(text)
        previous = line
    return "".join(parts), placed


@lru_cache(maxsize=1)
def tesseract_version() -> str:
    import unstructured_pytesseract as tesseract

    return f"tesseract {tesseract.get_tesseract_version()}"


__all__ = ["PicturesReadAhead", "on_white", "read_image_texts", "read_words", "read_words_of", "tesseract_version"]
