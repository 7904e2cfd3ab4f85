"""A PDF page's text layer read by PDFium alone (``--pdf-reader pdfium``): its characters in lines
(``text_layer.PdfLines``), the lines in blocks, each block typed by unstructured's own rules, and the
page's running heads and feet found by their place and their repetition across pages.

unstructured's ``fast`` reading lays each page out with pdfminer and builds its elements from pdfminer's
text boxes; here the same text layer, already read by PDFium for boxes, tables and verification, is
cut into blocks where its lines part (a wider gap, a change of type size, no overlap along the line)
and each block is typed by ``unstructured.partition.text.element_from_text`` (a header or a footer by
its place on the page, a list item, an e-mail address, an address, narrative text, a title, text), the
texts spaCy reads for it read a group of pages at a time (``text_types``): a ``Title`` is a ``Title``
as unstructured calls it. A block near the top or the foot of the page whose text (its numbers aside)
comes back there on other pages is a running head (``Header``) or foot (``Footer``), kept out of the
body's flow by ``reading_order``. Turned lines are read along their baselines, as ``text_layer``
reads them. The page's reading order is the backend's (``reading_order``: columns by an XY-cut).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable, Optional, Sequence

from ...model import Element
from ..backends.unstructured_glue import unstructured_category
from ..offline import install_offline_spacy_model
from . import text_types
from .geometry import PageGeometry
from .content_words import page_words as content_words
from .pdfminer_words import page_words as pdfminer_words
from .text_layer import PdfLines, reading_key

_BAND = 0.1  # of the page's height: a running head lies within this much of its top, a foot of its foot
_RUNNING_WORDS = 16  # a running head or foot is short
_RUNNING_PAGES = 3  # a text back on this many pages (all of them, in a shorter document) is running
_NUMBER = re.compile(r"\d+")


def pdfium_elements(layer: PdfLines, numbers: list[int], reached: Optional[Callable[[int], None]] = None,
                    every: Sequence[int] = ()) -> list[Element]:
    """The text of the given pages (numbers from 1) read by PDFium, one typed element per block of
    lines, with boxes on the displayed page; running heads and feet marked. ``reached`` is told each
    page of ``every`` (the document's, in order; by default ``numbers``) as the reading passes it.

    The texts spaCy reads are read ``_PAGES_TYPED_TOGETHER`` pages at a time: each of spaCy's passes
    costs about 3.5 ms besides its tokens (a two-page paper's texts read a page at a time cost a quarter
    more). A page is reported once its group is typed (a page without text before any page of the
    group with text, at once)."""
    elements: list[Element] = []
    wanted = set(numbers)
    install_offline_spacy_model()  # unstructured's typing reads with the bundled spaCy model, never a download
    with text_types.batches():
        group: list[tuple[int, Optional[_PageBlocks]]] = []
        for number in sorted(set(every) | wanted):
            if number in wanted:
                group.append((number, _page_blocks(layer, number)))
            elif group:
                group.append((number, None))
            elif reached is not None:
                reached(number)
            if sum(blocks is not None for _, blocks in group) == _PAGES_TYPED_TOGETHER:
                elements += _typed(group, reached)
                group = []
        if group:
            elements += _typed(group, reached)
    elements = _running(elements, layer, numbers)
    return [replace(element, index=index) for index, element in enumerate(elements)]


_PAGES_TYPED_TOGETHER = 8


@dataclass
class _PageBlocks:
    """A page's blocks, each with its corner points (``placed``), in the page's ``PixelSpace``."""

    placed: list
    system: object


def _page_blocks(layer: PdfLines, number: int) -> _PageBlocks:
    """One page's blocks, upright ones first as PDFium hands their lines over, then the turned ones in
    the order a reader who turns the page reads them, the glyphs PDFium cannot map read."""
    from unstructured.documents.coordinates import PixelSpace

    lines = layer.lines(number)
    upright = _rows(_pieces([line for line in lines if line.turn in (0, None)]))  # None: turned several ways
    turned = sorted((line for line in lines if line.turn not in (0, None)), key=reading_key)
    geometry = PageGeometry.of(layer.page(number))
    found = _block_elements(number, _grouped(upright), geometry)
    found += layer.elements(number, turned, turned=True, joined=" ")
    width, height = geometry.size
    # the glyphs PDFium cannot map read first: the texts read ahead are the ones typed
    return _PageBlocks(_unmapped_read(layer.data, number, [(element, _points(element.bbox)) for element in found]),
                       PixelSpace(width=width, height=height))


def _typed(group: list[tuple[int, Optional[_PageBlocks]]], reached: Optional[Callable[[int], None]]) -> list[Element]:
    """The blocks of a group of pages (a page not read: None), each typed as unstructured types a text
    box, the texts spaCy reads for them read in one batch; ``reached`` told each page."""
    from unstructured.partition.text import element_from_text

    reading = {text: None for _, blocks in group if blocks is not None
               for text in text_types.reaching_spacy([(element.text, points) for element, points in blocks.placed],
                                                     blocks.system)}
    pending = text_types.read_texts_ahead(list(reading), typed_here=True)
    text_types.take(pending)
    typed = []
    for number, blocks in group:
        for element, points in blocks.placed if blocks is not None else ():
            known = text_types.category(element.text, points, blocks.system, pending)
            if known is None:
                kind = element_from_text(element.text, coordinates=points, coordinate_system=blocks.system)
                known, text = kind.category, " ".join((kind.text or "").split())
            else:
                text = " ".join(element.text.split())
            if text:
                typed.append(replace(element, category=unstructured_category(known, text), text=text))
        if reached is not None:
            reached(number)
    return typed


_UNMAPPED = "\ufffd"
_MOST_UNMAPPED = 3  # glyphs a word may hold that PDFium cannot map (ffi in "o\ufffdce" is one) and still be read
_LONGEST_RUN = 400  # characters: a longer run of a reader's (a whole paragraph without spaces) is not searched
_IN_WORD = re.compile(r"[^\W\d_]\ufffd|\ufffd[^\W\d_]")  # a letter beside the glyph
_UNMAPPED_TOKEN = re.compile(r"\S*\ufffd\S*")


def _unmapped_read(data: bytes, number: int, placed: list) -> list:
    """The blocks of a page, a word with a glyph PDFium maps to no character (U+FFFD: a ligature of a
    Type 1 font without a ``/ToUnicode``) read as the page's content spells that word through the font's
    own encoding (``content_words``), else as pdfminer reads the page (``patches/pdfminer.py``, which
    also lays out words a content stream draws apart), where one word of the page matches it around the
    glyph; else kept as it is. Only pages with such a glyph inside a word are read again (an icon alone,
    such as an envelope before an e-mail address, is never mapped: pdfminer reads it as ``(cid:0)``), and
    pdfminer only where a glyph beside a letter is left unread by the content."""
    if not any(_IN_WORD.search(element.text) for element, _ in placed):
        return placed
    unread = {token for element, _ in placed for token in _UNMAPPED_TOKEN.findall(element.text)}
    read: dict[str, str] = {}
    for words_of in (content_words, pdfminer_words):
        if not any(_IN_WORD.search(token) for token in unread):  # what is left has no letter beside a glyph
            break
        words = words_of(data, number)
        if words is None:  # the reader refuses what PDFium read: the glyphs stay unmapped
            continue
        for token in sorted(unread):
            again = _read_again(token, words)
            if again != token:
                read[token] = again
                unread.discard(token)
    if not read:
        return placed
    return [(replace(element, text=_UNMAPPED_TOKEN.sub(lambda match: read.get(match.group(0), match.group(0)),
                                                      element.text)) if _UNMAPPED in element.text
             else element, points) for element, points in placed]


def _read_again(token: str, words: set[str]) -> str:
    """``token`` with its unmapped glyphs as a reader of the page's ``words`` reads them: the one word it
    matches whole; else, where it matches only inside words (a line without space glyphs, which PDFium
    spaces by its gaps and a reader may read as one run), the one reading its glyphs have in every match;
    else ``token`` as it is."""
    parts = token.split(_UNMAPPED)
    if not any(letter.isalpha() for letter in "".join(parts)) or len(parts) > _MOST_UNMAPPED + 1:
        return token  # glyphs alone (an icon): nothing to match them by; many: a font PDFium cannot read at all
    pattern = re.compile("(.{1,3}?)".join(re.escape(part) for part in parts))
    # only words holding every letter around the glyphs are tried (each glyph's 1-3 letters make the
    # pattern backtrack: a word that cannot match costs the most)
    candidates = [word for word in words if all(part in word for part in parts) and len(word) <= _LONGEST_RUN]
    whole = {word for word in candidates if pattern.fullmatch(word) and "(cid:" not in word}
    if whole:
        return whole.pop() if len(whole) == 1 else token
    readings = {match.groups() for word in candidates for match in pattern.finditer(word)}
    if len(readings) != 1:
        return token
    glyphs = readings.pop()
    if any("(cid:" in glyph or not glyph.strip() or glyph != glyph.strip() for glyph in glyphs):
        return token
    return parts[0] + "".join(glyph + part for glyph, part in zip(glyphs, parts[1:]))


_ROW_OVERLAP = 0.5  # of the smaller line's height: lines overlapping this much down the page share a row
_ROW_GAP = 0.5  # of the larger line's height: a piece this close after a line's end goes on its row
_COLUMN_GAP = 1.0  # of a line's type size: white this wide between two of its words parts columns


def _pieces(lines: list) -> list:
    """The lines, each cut where white wider than a letter's width or so parts two of its words: PDFium
    reads the lines of two columns (or a table's cells) on one baseline as one line, pdfminer parts
    them (its ``char_margin``)."""
    cut: list = []
    for line in lines:
        size = line.size or (line.box[3] - line.box[1])
        start = 0
        for k in range(1, len(line.words) + 1):
            if k == len(line.words) or line.words[k][1][0] - line.words[k - 1][1][2] > _COLUMN_GAP * size:
                if start == 0 and k == len(line.words):
                    cut.append(line)
                    break
                words = line.words[start:k]
                box = (min(b[0] for _, b in words), min(b[1] for _, b in words), max(b[2] for _, b in words),
                       max(b[3] for _, b in words))
                cut.append(replace(line, text=" ".join(" ".join(text for text, _ in words).split()), box=box,
                                   words=words, word_sizes=line.word_sizes[start:k]))
                start = k
        if not line.words:
            cut.append(line)
    return cut
_WORD_GAP = 0.12  # of the larger line's height: a gap wider than this between the two is a space


def _rows(lines: list) -> list:
    """The upright lines, a piece PDFium broke off a line where its baseline moved (a superscript, an
    index, a footnote mark) joined to the line it goes on: the next line, on the same row, beginning
    close after the other ends."""
    joined: list = []
    for line in lines:
        before = joined[-1] if joined else None
        if before is not None:
            low, high = min(before.box[3] - before.box[1], line.box[3] - line.box[1]), \
                max(before.box[3] - before.box[1], line.box[3] - line.box[1])
            overlap = min(before.box[3], line.box[3]) - max(before.box[1], line.box[1])
            gap = line.box[0] - before.box[2]
            if low > 0 and overlap >= _ROW_OVERLAP * low and -0.2 * high <= gap <= _ROW_GAP * high:
                space = " " if gap > _WORD_GAP * high else ""
                box = (min(before.box[0], line.box[0]), min(before.box[1], line.box[1]),
                       max(before.box[2], line.box[2]), max(before.box[3], line.box[3]))
                joined[-1] = replace(before, text=before.text + space + line.text, box=box,
                                     size=max(before.size, line.size))
                continue
        joined.append(line)
    return joined


_LINE_MARGIN = 0.5  # of a line's height: pdfminer's ``line_margin``, how close lines of a block lie


def _grouped(lines: list) -> list[list]:
    """The lines in blocks as pdfminer groups a page's lines into text boxes: two lines are of one block
    where they lie within half a line's height of each other down the page, overlap across it, are of
    a like height and are aligned (their left edges, right edges or middles within that much); a block
    is every line so linked, its lines top to bottom, the blocks in the order of their first lines."""
    parent = list(range(len(lines)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    order = sorted(range(len(lines)), key=lambda k: lines[k].box[1])
    for at, a in enumerate(order):
        left, top, right, bottom = lines[a].box
        for b in order[at + 1:]:
            other = lines[b].box
            margin = _LINE_MARGIN * max(bottom - top, other[3] - other[1])
            if other[1] > bottom + margin:
                break
            if other[0] >= right or left >= other[2] or abs((bottom - top) - (other[3] - other[1])) > margin:
                continue
            if min(abs(left - other[0]), abs(right - other[2]), abs(left + right - other[0] - other[2]) / 2) <= margin \
                    or _hangs_from(lines[a], lines[b], margin):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for k in range(len(lines)):
        groups.setdefault(root(k), []).append(k)
    return [_in_rows([lines[k] for k in members]) for members in sorted(groups.values(), key=min)]


def _in_rows(lines: list) -> list:
    """A block's lines top to bottom, those of one row (overlapping down the page by half the smaller's
    height: the pieces of a line cut at wide white) left to right."""
    rows: list[list] = []
    for line in sorted(lines, key=lambda line: line.box[1]):
        if rows:
            first = rows[-1][0]
            overlap = min(first.box[3], line.box[3]) - max(first.box[1], line.box[1])
            if overlap >= _ROW_OVERLAP * min(first.box[3] - first.box[1], line.box[3] - line.box[1]):
                rows[-1].append(line)
                continue
        rows.append([line])
    return [line for row in rows for line in sorted(row, key=lambda line: line.box[0])]


_ITEM = re.compile(r"\s*(?:[•·◦▪‣∙○■□➢►–—*-]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])\s")


def _hangs_from(item, line, margin: float) -> bool:
    """Whether ``line`` goes on a list item's first line ``item`` set with a hanging indent: the item
    starts with a bullet or a number, the line lies right below it, indented by less than three of its
    heights (beside the bullet, not under it)."""
    indent = line.box[0] - item.box[0]
    return margin < indent <= 6 * margin and line.box[1] - item.box[3] <= margin and bool(_ITEM.match(item.text))


def _block_elements(number: int, groups: list[list], geometry: PageGeometry) -> list[Element]:
    """An element for each block of lines, its lines' texts joined by a space, its box on the displayed
    page (none where the block lies outside the visible page)."""
    elements = []
    for group in groups:
        box = (min(line.box[0] for line in group), min(line.box[1] for line in group),
               max(line.box[2] for line in group), max(line.box[3] for line in group))
        shown = geometry.clip(box)
        elements.append(Element(0, "NarrativeText", " ".join(line.text for line in group), page_number=number,
                                bbox=tuple(round(v, 3) for v in shown) if shown is not None else None))
    return elements


def _points(box):
    if box is None:
        return None
    left, top, right, bottom = box
    return ((left, top), (left, bottom), (right, bottom), (right, top))


def _running(elements: list[Element], layer: PdfLines, numbers: list[int]) -> list[Element]:
    """The elements, those near the top or the foot of their page whose text (numbers aside) is back
    near the same edge on other pages marked ``Header`` or ``Footer``."""
    heights = {number: PageGeometry.of(layer.page(number)).size[1] for number in numbers}
    seen: dict[tuple, set[int]] = {}  # (edge, text, where down the page) → the pages it is on
    places: list = []
    for element in elements:
        height = heights.get(element.page_number)
        edge = _edge(element, height)
        key = (edge, _NUMBER.sub("#", " ".join(element.text.lower().split()))) if edge else None
        places.append(key)
        if key is not None:  # at about the same height on each page: a step of a fortieth of the page
            for step in (-1, 0, 1):
                seen.setdefault(key + (round(40 * element.bbox[1] / height) + step,), set()).add(element.page_number)
    needed = min(_RUNNING_PAGES, len(numbers))
    marked = []
    for element, key in zip(elements, places):
        at = round(40 * element.bbox[1] / heights[element.page_number]) if key is not None else 0
        if key is not None and needed >= 2 and len(seen[key + (at,)]) >= needed and element.category not in (
                "Header", "Footer"):
            element = replace(element, category="Header" if key[0] == "top" else "Footer")
        marked.append(element)
    return marked


def _edge(element: Element, height) -> str:
    """``top`` or ``foot`` where an element lies wholly within the band of its page's top or foot and
    is short enough to be a running head or foot; else ''."""
    if element.bbox is None or not height or len(element.text.split()) > _RUNNING_WORDS:
        return ""
    if element.bbox[3] <= _BAND * height:
        return "top"
    if element.bbox[1] >= (1 - _BAND) * height:
        return "foot"
    return ""


__all__ = ["pdfium_elements"]
