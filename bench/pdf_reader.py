"""Benchmark: PDFium's reading of PDF pages (``--pdf-reader pdfium``) beside unstructured's ``fast``.

For every PDF with a text layer in the folders, reads each page's text layer both ways, with nothing
else (no tables, forms or OCR): unstructured's ``partition_pdf(strategy="fast")`` and kg-decoder's
PDFium blocks (``decode/pdf/blocks.py``). A block both readings find is a pair of elements on the same
page whose boxes overlap (intersection over union >= 0.5) and whose letters mostly agree (a ratio of
0.9 or more); printed: how many such blocks, the share whose categories agree (issue #52's target:
>= 0.95), the confusion of the others, the words each reading holds that the other does not, and
each reading's time (PDFium's lines, blocks and typing; fast's whole partition).

    .venv/bin/python bench/pdf_reader.py [--folders ../shared/corpus ../shared/tables-icdar2013] [--show 20]
"""

from __future__ import annotations

import argparse
import collections
import difflib
import io
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_LETTERS = re.compile(r"[^\W_]+")


def letters(text: str) -> str:
    return "".join(_LETTERS.findall(text.lower()))


def fast_elements(data: bytes) -> list[tuple[int, str, str, tuple]]:
    from unstructured.partition.pdf import partition_pdf

    found = []
    for item in partition_pdf(file=io.BytesIO(data), strategy="fast"):
        points = item.metadata.coordinates.points if item.metadata.coordinates else None
        box = (points[0][0], points[0][1], points[2][0], points[2][1]) if points else None
        found.append((item.metadata.page_number or 1, item.category, item.text, box))
    return found


def pdfium_read(data: bytes) -> list[tuple[int, str, str, tuple]]:
    import pypdfium2 as pdfium

    from kg_decoder.decode.pdf.backend import LoadedPages
    from kg_decoder.decode.pdf.blocks import pdfium_elements
    from kg_decoder.decode.pdf.text_layer import PdfLines

    pdf = LoadedPages(pdfium.PdfDocument(data))
    try:
        numbers = [n for n in range(1, len(pdf) + 1) if pdf[n - 1].get_textpage().count_chars()]
        return [(e.page_number, e.category, e.text, e.bbox) for e in pdfium_elements(PdfLines(data, pdf), numbers)]
    finally:
        pdf.close()


def iou(a, b) -> float:
    if a is None or b is None:
        return 0.0
    width = min(a[2], b[2]) - max(a[0], b[0])
    height = min(a[3], b[3]) - max(a[1], b[1])
    if width <= 0 or height <= 0:
        return 0.0
    inter = width * height
    return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter)


def pairs(fast: list, ours: list) -> list[tuple]:
    """Blocks both readings find: for each of ours, the fast element on its page it overlaps most."""
    found = []
    for page, category, text, box in ours:
        best, score = None, 0.5
        for other in fast:
            if other[0] == page and (overlap := iou(box, other[3])) >= score:
                best, score = other, overlap
        if best is not None:
            a, b = letters(text), letters(best[2])
            if a and b and difflib.SequenceMatcher(None, a, b, autojunk=False).ratio() >= 0.9:
                found.append((best, (page, category, text, box)))
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folders", nargs="+", default=[str(REPO.parent / "shared" / "corpus"),
                                                          str(REPO.parent / "shared" / "tables-icdar2013")])
    parser.add_argument("--show", type=int, default=20, help="disagreements printed")
    parser.add_argument("--words", type=int, default=0, help="words of fast's PDFium lacks printed per file")
    args = parser.parse_args()
    from kg_decoder.decode import offline

    offline.prepare()
    together, agreed, times = 0, 0, collections.Counter()
    confusion: collections.Counter = collections.Counter()
    shown = []
    words_lost = collections.Counter()
    for path in sorted(p for folder in args.folders for p in Path(folder).glob("*.pdf")):
        data = path.read_bytes()
        try:
            start = time.perf_counter()
            fast = fast_elements(data)
            times["fast"] += time.perf_counter() - start
            start = time.perf_counter()
            ours = pdfium_read(data)
            times["pdfium"] += time.perf_counter() - start
        except Exception as exc:  # an encrypted PDF, a scan
            print(f"{path.name}: not read ({type(exc).__name__})")
            continue
        found = pairs(fast, ours)
        same = sum(a[1] == b[1] for a, b in found)
        together, agreed = together + len(found), agreed + same
        for a, b in found:
            if a[1] != b[1]:
                confusion[(a[1], b[1])] += 1
                shown.append(f"  {path.name} p{b[0]}: fast {a[1]} / pdfium {b[1]}: {b[2][:70]!r}")
        fast_words = collections.Counter(w for e in fast for w in _LETTERS.findall(e[2].lower()))
        our_words = collections.Counter(w for e in ours for w in _LETTERS.findall(e[2].lower()))
        words_lost["fast's words pdfium lacks"] += sum((fast_words - our_words).values())
        words_lost["pdfium's words fast lacks"] += sum((our_words - fast_words).values())
        words_lost["fast's words"] += sum(fast_words.values())
        if args.words:
            print("   lacks:", " ".join(sorted((fast_words - our_words).elements())[:args.words]))
        print(f"{path.name:45} blocks both find {len(found):4}  categories agree {same / max(len(found), 1):.3f}")
    print(f"\nall: {together} blocks both find, categories agree on {agreed / max(together, 1):.3f} (target >= 0.95)")
    for (a, b), count in confusion.most_common():
        print(f"  fast {a:18} pdfium {b:18} {count}")
    print("\n".join(shown[:args.show]))
    for name, count in words_lost.items():
        print(f"{name}: {count}")
    print(f"time: fast {times['fast']:.2f} s, pdfium {times['pdfium']:.2f} s "
          f"({times['pdfium'] / max(times['fast'], 1e-9):.3f} of fast)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
