"""Benchmark: how far a picture is enlarged before tesseract reads it, against the words it finds and
the time it takes. The pictures are crops of born-digital pages (the ICDAR 2013 half and the corpus's
layout-parser paper) drawn small, at 0.6 to 1.3 pixels per point, as text shows in a screenshot or a
chart pasted into a document; the truth is PDFium's text layer inside each crop (words of two
characters or more, a margin of 6 points in from the crop's edges).

Each rule is run on the same crops: ``longN`` enlarges the picture towards a long side of N pixels
(at most 4 times; what decode does, ``image_text.TARGET_LONG_SIDE``), ``hNc`` towards a median
letter height of N pixels, at most as much as ``long2000``. Prints, per rule, the share of the truth's
words read (as a multiset, letters and digits only, case folded), tesseract's seconds, the pixels it
read and its mean word confidence; ``--by-scale`` adds the recall per drawing scale.

    OMP_THREAD_LIMIT=1 .venv/bin/python bench/picture_ocr_scale.py [--rules long2000,long1400,h20c]
        [--seed 7] [--by-scale]

Measured (2026-12-03, 61 crops, seed 7): long2000 recall 0.6073 in 90.1 s of tesseract, mean
confidence 0.718; long1400 0.6112 in 79.0 s, 0.717 (44 % fewer pixels); h20c 0.6112 in 85.5 s.
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import re
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
SCALES = (0.6, 0.8, 1.0, 1.3)  # pixels per point the crops are drawn at
MARGIN = 6  # points in from a crop's edges where truth words are taken (a cut word is no truth)


def _normal(word: str) -> str:
    return re.sub(r"[^0-9a-z]", "", word.lower())


def crops(seed: int) -> list[tuple[float, object, list[str]]]:
    """(drawing scale, greyscale crop, truth words) of up to two pages of each PDF."""
    import pypdfium2 as pdfium
    from PIL import ImageOps

    chance = random.Random(seed)
    files = sorted((SHARED / "tables-icdar2013").glob("*.pdf")) + [SHARED / "corpus" / "layout-parser-paper-fast.pdf"]
    found = []
    for path in files:
        pdf = pdfium.PdfDocument(str(path))
        for index in range(min(len(pdf), 2)):
            page = pdf[index]
            width, height = page.get_size()
            textpage = page.get_textpage()
            if textpage.count_chars() < 200:
                continue
            scale = chance.choice(SCALES)
            crop_width = min(chance.randint(400, 700), int(width * scale))
            crop_height = min(chance.randint(250, 600), int(height * scale))
            points_wide, points_high = crop_width / scale, crop_height / scale
            if points_wide > width or points_high > height:
                continue
            left, bottom = chance.uniform(0, width - points_wide), chance.uniform(0, height - points_high)
            inside = textpage.get_text_bounded(left + MARGIN, bottom + MARGIN, left + points_wide - MARGIN,
                                               bottom + points_high - MARGIN)
            truth = [w for w in (_normal(word) for word in inside.split()) if len(w) >= 2]
            if len(truth) < 8:
                continue
            drawn = page.render(scale=scale, crop=(left, bottom, width - left - points_wide,
                                                   height - bottom - points_high)).to_pil()
            found.append((scale, ImageOps.grayscale(drawn), truth))
    return found


def letter_height(grey) -> float | None:
    """The median height of the ink's shapes that may be letters (None: fewer than five)."""
    import cv2
    import numpy as np

    pixels = np.asarray(grey)
    levels, counts = np.unique(pixels // 8, return_counts=True)
    background = int(levels[counts.argmax()]) * 8 + 4
    ink = (np.abs(pixels.astype(np.int16) - background) > 40).astype(np.uint8)
    count, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    heights = [h for _, _, w, h, area in stats[1:count] if area >= 3 and 3 <= h <= 0.3 * pixels.shape[0] and w <= 3 * h]
    return float(np.median(heights)) if len(heights) >= 5 else None


def enlargement(rule: str, grey) -> float:
    by_long_side = min(4.0, max(1.0, float(rule[4:] if rule.startswith("long") else 2000) / max(grey.size)))
    if rule.startswith("long"):
        return by_long_side
    height = letter_height(grey)
    return by_long_side if height is None else min(by_long_side, max(1.0, float(rule[1:].rstrip("c")) / height))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rules", default="long2000,long1400,h20c")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--by-scale", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # as a decode runs tesseract (offline.prepare)
    from PIL import Image

    from kg_decoder.decode.image_text import read_words_of

    rules = args.rules.split(",")
    pictures = crops(args.seed)
    totals = collections.defaultdict(lambda: [0, 0, 0.0, 0, 0.0, 0])  # hits, truth, seconds, pixels, confidence, words
    by_scale = collections.defaultdict(lambda: [0, 0])
    for scale, grey, truth in pictures:
        for rule in rules:
            factor = enlargement(rule, grey)
            read = grey.resize((round(grey.width * factor), round(grey.height * factor)),
                               Image.Resampling.LANCZOS) if factor > 1 else grey
            started = time.perf_counter()
            words = read_words_of([(read, factor)], "eng")[0]
            seconds = time.perf_counter() - started
            got = collections.Counter(_normal(word[1]) for word in words)
            hits = sum(min(count, got[word]) for word, count in collections.Counter(truth).items())
            total = totals[rule]
            total[0] += hits
            total[1] += len(truth)
            total[2] += seconds
            total[3] += read.width * read.height
            total[4] += sum(word[3] for word in words)
            total[5] += len(words)
            by_scale[(scale, rule)][0] += hits
            by_scale[(scale, rule)][1] += len(truth)
    print(f"{len(pictures)} crops")
    for rule in rules:
        hits, truth, seconds, pixels, confidence, words = totals[rule]
        print(f"{rule:9s} recall {hits / truth:.4f} ({hits}/{truth})  tesseract {seconds:6.1f} s  "
              f"{pixels / 1e6:6.1f} Mpx  mean confidence {confidence / max(words, 1):.3f}")
    if args.by_scale:
        for (scale, rule), (hits, truth) in sorted(by_scale.items()):
            print(f"  drawn at {scale}: {rule:9s} recall {hits / truth:.4f}")


if __name__ == "__main__":
    main()
