"""Benchmark: the text-layer plausibility check (``kg_decoder.decode.pdf.text_plausibility``) over
every page with a text layer of every PDF in the shared folders: how many pages it scores, which it
doubts (each with its score and the first words of its layer, to judge by eye whether the layer is
garbage or a false alarm), and the share of scored pages doubted.

The text scored is the one a decode scores: PDFium's text of the page (``get_text_bounded``), as
``pdf._inspect_pdf`` reads it. Nothing is OCR'd: this measures the check, not the re-reading.

    .venv/bin/python bench/text_layer_plausibility.py [FOLDER ...] [--all]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
SHARED = REPO.parent / "shared"
FOLDERS = [SHARED / "wild", SHARED / "corpus", SHARED / "tables-icdar2013"]


def main() -> None:
    import pypdfium2 as pdfium

    from kg_decoder.decode.pdf.text_plausibility import doubted, plausibility

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path, default=FOLDERS)
    parser.add_argument("--all", action="store_true", help="print every scored page, not only the doubted")
    args = parser.parse_args()
    scored = unjudged = files = 0
    doubts = []
    spent = 0.0
    for folder in args.folders:
        for path in sorted(folder.glob("*.pdf")):
            try:
                pdf = pdfium.PdfDocument(str(path))
            except Exception:  # encrypted, broken: the decode refuses it before any page is scored
                continue
            files += 1
            try:
                for index in range(len(pdf)):
                    try:
                        text = pdf[index].get_textpage().get_text_bounded()
                    except Exception:
                        continue
                    if not text.strip():
                        continue
                    started = time.perf_counter()
                    score, letters = plausibility(text)
                    spent += time.perf_counter() - started
                    if score is None:
                        unjudged += 1
                        continue
                    scored += 1
                    row = (f"{folder.name}/{path.name}", index + 1, score, letters, " ".join(text.split())[:110])
                    if doubted(score):
                        doubts.append(row)
                    if args.all:
                        print("%-60s p%-3d %.3f %6d  %s" % row)
            finally:
                pdf.close()
    print(f"\n{files} PDFs, {scored} pages scored ({unjudged} with a text layer too short to judge), "
          f"{len(doubts)} doubted ({len(doubts) / max(scored, 1):.1%}); scoring took {spent * 1000 / max(scored, 1):.2f} ms a page")
    for row in doubts:
        print("%-60s p%-3d %.3f %6d  %s" % row)


if __name__ == "__main__":
    main()
