"""The words of one PDF page as pdfminer decodes its glyphs (through each font's own encoding, a
Type 1 font's built-in one too: ``patches.pdfminer``), for the few glyphs PDFium maps to no character
where the page's content stream read alone (``content_words``: no layout, a fifth of the time) has no
word that matches (a word drawn in pieces moved apart, a font whose encoding names no glyphs).

Only where each glyph starts and ends along its baseline is worked out, not its box: about a third of
the time pdfplumber's words of the page take (28 against 95 ms on a page of a LaTeX paper), which
make a box, a font record and a dictionary of every character first.
"""

from __future__ import annotations

import io
from functools import lru_cache
from typing import Optional

_JOIN = 3.0  # points: glyphs closer than this along one baseline are one word (pdfplumber's x_tolerance)
_LEVEL = 3.0  # points: glyphs whose baselines are this close are on one line (its y_tolerance)


def page_words(data: bytes, number: int) -> Optional[set[str]]:
    """The words of page ``number`` (from 1) of a PDF; None where pdfminer cannot read it."""
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    from ...patches import pdfminer as pdfminer_patches

    pdfminer_patches.install_all()
    try:
        document = PDFDocument(PDFParser(io.BytesIO(data)))
        for index, page in enumerate(PDFPage.create_pages(document)):
            if index == number - 1:
                manager = PDFResourceManager(caching=True)
                device = _glyph_runs()(manager)
                PDFPageInterpreter(manager, device).process_page(page)
                return device.words()
    except Exception:  # pdfminer refuses what PDFium read
        return None
    return None


@lru_cache(maxsize=1)
def _glyph_runs() -> type:
    """The device class, made once pdfminer is imported (a decode without such a page never imports it)."""
    from pdfminer.pdfdevice import PDFTextDevice
    from pdfminer.pdffont import PDFUnicodeNotDefined

    class GlyphRuns(PDFTextDevice):
        """Each glyph's text, and where it starts and ends in device space, as pdfminer's
        ``render_string_horizontal`` advances along a string (vertical writing: no words)."""

        def __init__(self, manager) -> None:
            super().__init__(manager)
            self.glyphs: list[tuple[str, float, float, float, float]] = []  # text, x, y, end x, end y

        def render_string_horizontal(self, seq, matrix, pos, font, fontsize, scaling, charspace, wordspace,
                                     rise, dxscale, ncs, graphicstate):
            (x, y) = pos
            (a, b, c, d, e, f) = matrix
            needcharspace = False
            for obj in seq:
                if isinstance(obj, (int, float)):
                    x -= obj * dxscale
                    needcharspace = True
                elif isinstance(obj, bytes):
                    for cid in font.decode(obj):
                        if needcharspace:
                            x += charspace
                        try:
                            text = font.to_unichr(cid)
                        except PDFUnicodeNotDefined:
                            text = f"(cid:{cid})"
                        advance = font.char_width(cid) * fontsize * scaling
                        end = x + advance
                        self.glyphs.append((text, a * x + c * y + e, b * x + d * y + f,
                                            a * end + c * y + e, b * end + d * y + f))
                        x = end
                        if cid == 32 and wordspace:
                            x += wordspace
                        needcharspace = True
            return (x, y)

        def words(self) -> set[str]:
            found: set[str] = set()
            word, last = "", None
            for text, x, y, end_x, end_y in self.glyphs:
                joined = (last is not None and abs(y - last[1]) <= _LEVEL and -_JOIN <= x - last[0] <= _JOIN)
                if not joined or not text.strip():
                    if word:
                        found.add(word)
                    word = ""
                word += text.strip()
                last = (end_x, end_y)
            if word:
                found.add(word)
            return found

    return GlyphRuns


__all__ = ["page_words"]
