"""The words in a document's pictures, read by OCR (tesseract), kept apart from the page text.

Runs in the partition worker after the backend found the pictures, so the parse cache keeps the
result and the document's time limit covers it. Each picture gets an :class:`ImageText` (its words
with their boxes in the picture's pixels and tesseract's confidence) or the reason it was not read:
too small to hold a word, too large, plain (one colour: a rule, a fill), already the page's own OCR
text, no text found, or the document's time running out.
"""

from __future__ import annotations

import io
import time
from functools import lru_cache
from typing import Optional

from ..model import DecodeOptions, Element, ImageText, OcrWord, Partitioned, Problem
from .images import describe_image

# In "auto": smaller pictures cannot hold a legible word (an icon, a bullet); "on" reads them anyway.
MIN_SIDE_PIXELS = 16
MIN_PIXELS = 2_000
# A picture over this is not read in any mode (a poster-size scan would take minutes).
MAX_PIXELS = 40_000_000
# Below this contrast (standard deviation of grey levels) a picture is a plain fill or rule.
MIN_CONTRAST = 6.0
# tesseract reads text best at a cap height of 20-40 px: pictures are enlarged towards this long side.
TARGET_LONG_SIDE = 2000
MAX_ENLARGE = 4.0
# Words below this confidence with no letter or digit are marks (rules, dots, icons), not words.
MARK_CONFIDENCE = 0.6
# Of the document's time limit, OCR of pictures may use what is left after this share.
TIME_SHARE = 0.6
TIME_LIMIT_SKIP = "not read: the document's time limit was near"
# Fields of tesseract's TSV output (image_to_data).
_LINE_KEYS = ("block_num", "par_num", "line_num")


def read_image_texts(partitioned: Partitioned, options: DecodeOptions, started: Optional[float] = None) -> None:
    """Give every picture of the document its OCR text, or the reason it has none (in place).

    ``started``: when the document's decode began (``time.monotonic()``), for its time limit.
    """
    if options.image_ocr == "off":
        return
    started = time.monotonic() if started is None else started
    budget = options.timeout_seconds * TIME_SHARE if options.timeout_seconds else None
    ocr_pages = {page.number for page in partitioned.pages if page.strategy in ("ocr_only", "hi_res")}
    read: dict[bytes, tuple[Optional[ImageText], Optional[str]]] = {}  # a logo on every page is read once
    for element in partitioned.elements:
        if not element.is_image or element.image_data is None:
            continue
        reason = _not_worth_reading(element, partitioned, ocr_pages, options)
        if reason is None and budget is not None and time.monotonic() - started > budget:
            reason = TIME_LIMIT_SKIP
        if reason is not None:
            element.image_text_skipped = reason
            continue
        if element.image_data not in read:
            left = budget - (time.monotonic() - started) if budget is not None else 0
            try:
                read[element.image_data] = image_text(element.image_data, options.ocr_languages, options.image_ocr,
                                                      timeout=max(left, 1.0) if budget is not None else 0)
            except Exception as exc:  # an odd picture must not cost the document its text
                partitioned.problems.append(Problem.of("picture-ocr-failed", "OCR of a picture failed", exc,
                                                       element.page_number, "Image"))
                read[element.image_data] = (None, "not read: OCR failed on this picture")
        element.image_text, element.image_text_skipped = read[element.image_data]


def _not_worth_reading(element: Element, partitioned: Partitioned, ocr_pages: set[int],
                       options: DecodeOptions) -> Optional[str]:
    if partitioned.format in ("png", "jpeg", "tiff"):
        return "not read apart: this picture is the page, whose text is its OCR"
    if element.page_number in ocr_pages:
        return "not read apart: the page's text is already its OCR"
    _, width, height = describe_image(element.image_data)  # the bytes' own size: a PDF may state another
    if not width or not height:
        return "not read: the picture's pixels cannot be decoded"
    if width * height > min(MAX_PIXELS, options.max_image_pixels):
        return f"not read: {width * height} pixels, too large to read"
    if options.image_ocr == "auto" and (min(width, height) < MIN_SIDE_PIXELS or width * height < MIN_PIXELS):
        return f"not read: {width}x{height} pixels, too small to hold a word"
    return None


def image_text(data: bytes, languages: str, mode: str = "auto",
               timeout: float = 0) -> tuple[Optional[ImageText], Optional[str]]:
    """The words tesseract reads in a picture, or (None, why not).

    Boxes are in the picture's own pixels (as its bytes decode), whatever enlargement the reading used.
    """
    from PIL import Image, ImageOps, ImageStat

    with Image.open(io.BytesIO(data)) as opened:
        opened.seek(0)
        picture = on_white(opened)
    grey = ImageOps.grayscale(picture)
    if mode == "auto" and ImageStat.Stat(grey).stddev[0] < MIN_CONTRAST:
        return None, "not read: a plain picture, with no contrast to hold text"
    scale = min(MAX_ENLARGE, max(1.0, TARGET_LONG_SIDE / max(grey.size)))
    if scale > 1.0:
        grey = grey.resize((round(grey.width * scale), round(grey.height * scale)), Image.Resampling.LANCZOS)
    words = read_words(grey, languages, scale, timeout=timeout)
    if not words:
        return None, "no text found"
    text, placed = _laid_out(words)
    confidence = round(sum(word.confidence for word in placed) / len(placed), 4)
    return ImageText(text=text, languages=languages, confidence=confidence, words=placed,
                     engine=tesseract_version(), pixel_size=picture.size), None


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
    import unstructured_pytesseract as tesseract

    data = tesseract.image_to_data(grey, lang=languages, config=f"--psm {psm}", output_type=tesseract.Output.DICT,
                                   timeout=timeout)
    words = []
    for k, raw in enumerate(data["text"]):
        text = (raw or "").strip()
        confidence = float(data["conf"][k])
        if not text or confidence < 0:
            continue
        confidence = min(confidence / 100.0, 1.0)
        if confidence < MARK_CONFIDENCE and not any(c.isalnum() for c in text):
            continue
        left, top = data["left"][k] / scale, data["top"][k] / scale
        box = (round(left, 2), round(top, 2), round(left + data["width"][k] / scale, 2),
               round(top + data["height"][k] / scale, 2))
        words.append((tuple(data[key][k] for key in _LINE_KEYS), text, box, round(confidence, 4)))
    return words


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


__all__ = ["image_text", "on_white", "read_image_texts", "read_words", "tesseract_version"]
