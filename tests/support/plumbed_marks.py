"""pdfplumber's reading of a PDF page as the table finder reads one (the reading it took its marks from
before PDFium's, ``decode/tables/page_marks.py``): the reference PDFium's marks are held to."""

from __future__ import annotations

from kg_decoder.decode.tables.page_marks import PageMarks, Rule, Word, merge_collinear


def marks_from_pdfplumber(plumber_page) -> PageMarks:
    """Words (x tolerance 1.5, y tolerance 2) and ruling lines of a pdfplumber page, on the displayed
    MediaBox."""
    words = [Word(w["text"], float(w["x0"]), float(w["top"]), float(w["x1"]), float(w["bottom"]),
                  float(w.get("size") or (w["bottom"] - w["top"])), bool(w.get("upright", True)))
             for w in plumber_page.extract_words(x_tolerance=1.5, y_tolerance=2, keep_blank_chars=False,
                                                 extra_attrs=["size"])
             if w["text"].strip()]
    horizontal, vertical = [], []
    for edge in plumber_page.edges:  # lines, rectangles' sides and curves' segments
        x0, x1, top, bottom = float(edge["x0"]), float(edge["x1"]), float(edge["top"]), float(edge["bottom"])
        # By their extent, not pdfplumber's orientation: it calls a line "v" unless its ends are exactly level,
        # and a page turned by /Rotate leaves them 1e-13 apart.
        if bottom - top <= 1 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 1 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    for rect in plumber_page.rects:  # thin filled rectangles drawn as rules
        x0, x1, top, bottom = float(rect["x0"]), float(rect["x1"]), float(rect["top"]), float(rect["bottom"])
        if bottom - top <= 2.5 and x1 - x0 > 2:
            horizontal.append(Rule((top + bottom) / 2, x0, x1))
        elif x1 - x0 <= 2.5 and bottom - top > 2:
            vertical.append(Rule((x0 + x1) / 2, top, bottom))
    slanted = []
    for line in plumber_page.lines:
        if abs(float(line["x1"]) - float(line["x0"])) > 1 and abs(float(line["bottom"]) - float(line["top"])) > 1:
            slanted.append((float(line["x0"]), float(line["top"]), float(line["x1"]), float(line["bottom"])))
    for curve in plumber_page.curves:
        slanted.append((float(curve["x0"]), float(curve["top"]), float(curve["x1"]), float(curve["bottom"])))
    return PageMarks(float(plumber_page.width), float(plumber_page.height), words,
                     merge_collinear(horizontal), merge_collinear(vertical), slanted)


__all__ = ["marks_from_pdfplumber"]
