"""Trace-back: from a fact, a span or a quote to the document, page, section, chunk,
elements, table cells and the rectangles on the page that hold the words.

Every lookup starts from a bound IRI (the fact's triple term, a chunk, a segment),
so the time a trace takes depends on the size of one page or section, not on the
size of the store. Where the page can be read (a PDF's text layer, the rendering an
Office document was placed on) the rectangles are the boxes of the exact characters,
one per line, each checked by that reading (``verified``, see
:mod:`kg_decoder.cite.verification`); elsewhere, or where no box on the words passes,
they are the boxes of the elements, marked as such.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional, Sequence, Union

from ..decode.renders import kept_rendering
from ..graph.rows import DocumentInfo, SegmentRow, TextElement
from ..graph.opening import with_store
from ..graph.store import KgStore, StorePath
from ..graph.terms import to_triple
from ..model import (RENDERED_PDF_POINTS, Box, DocumentRef, PageText, QuotePiece, TracedCell, TracedElement,
                     TraceSource, Verification)
from ..model.errors import InvalidSpan, UnknownEntity
from .glyphs import DrawnDocument, aligned_characters, line_boxes, page_characters, quotes_in_layer
from .quotes import as_written, find_quote, holds_words
from .page_boxes import FLOWING, OWN_BOX, fill_gaps, markup_text, on_a_later_page, placed_boxes
from .places import Place, check_page, check_quote, ranked_places
from .verification import checked_lines, spells
from .versions import verdict_steps


@with_store(read_only=True)
def trace(fact: Optional[Sequence] = None, span: Optional[Sequence] = None, quote: Optional[str] = None,
          document: Optional[str] = None, *, store: Union[KgStore, StorePath],
          limit: Optional[int] = None, offset: int = 0, seconds: Optional[float] = None) -> list[TraceSource]:
    """Where a fact, a span or a quote comes from; exactly one of ``fact``, ``span``, ``quote``.

    ``fact`` is ``(s, p, o)`` (terms, or strings as :func:`kg_decoder.graph.terms.to_triple`
    reads them); ``span`` is ``(segment_or_chunk_iri, start, end)``; ``quote`` is text
    searched in ``document`` (an IRI) or, without one, in every document, as an extractor
    writes it (ligatures, hyphenation, quotes and whitespace folded: see
    :mod:`kg_decoder.cite.quotes`); places that hold it as written come first. A fact no
    subgraph contains and a quote found nowhere give an empty list. ``limit`` and ``offset`` page a
    quote's places (within ``check_page``'s bounds when given: every place is ranked, one page traced).
    Without a document, the text index names the texts to look in (:mod:`kg_decoder.cite.places`: a
    quote of three letters or more, bounded, within ``seconds``), read only until the page is full
    (ranked as written first within each window read); without ``limit``, every place, where the
    index names at most :data:`~kg_decoder.cite.places.MAX_CANDIDATE_TEXTS` texts. Reads only.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     decoded = kg_decoder.decode(b"Acme had a revenue of 12 M.", store=store)
    ...     [source] = trace(quote="revenue of 12", store=store)
    ...     (source.quote, source.start, source.segment_kind)
    ('revenue of 12', 11, 'section')
    """
    if sum(x is not None for x in (fact, span, quote)) != 1:
        raise InvalidSpan("trace needs exactly one of fact, span or quote")
    tracer = _Tracer(store)
    if fact is not None:
        return tracer.fact(fact)
    if span is not None:
        try:
            iri, start, end = span
        except (TypeError, ValueError):
            raise InvalidSpan("a span is (segment_or_chunk_iri, start, end)") from None
        return tracer.span(iri, start, end)
    return tracer.quote(quote, document, limit, offset, seconds)


class _Tracer:
    def __init__(self, store: KgStore) -> None:
        self.store = store
        self._renderings: dict[str, Optional[DrawnDocument]] = {}
        # A segment's elements and chunks, read once a trace: a common quote's places crowd into the
        # same long sections, and each place read them all again (100 places of "of the" in one
        # document's section: 92 s of 98).
        self._elements: dict[str, list] = {}
        self._chunks: dict[str, list] = {}

    # ---------------------------------------------------------------- entry points

    def fact(self, fact: Sequence) -> list[TraceSource]:
        triple = to_triple(fact)
        sources = []
        for row in self.store.fact_sources(triple.subject, triple.predicate, triple.object):
            if row.chunk is None or row.grounding == "unsupported" and "Chunk" not in self.store.entity_kinds(row.chunk):
                continue  # an unsupported fact no chunk holds: audit-facts-unsupported lists it
            chain = verdict_steps(self.store, row.subgraph)
            latest = self._latest_place(chain)
            if "Chunk" not in self.store.entity_kinds(row.chunk):
                # The chunk was replaced by a later decode or chunking (the fact is detached from it until the
                # next chunking anchors it again: the audit lists these), or its version was pruned: where a
                # later version holds the fact is all there is to give.
                found = [latest] if latest is not None else []
            else:
                chunk_span = None
                if row.char_offset is not None and row.char_length is not None:
                    chunk_span = (row.char_offset, row.char_offset + row.char_length)
                # An unsupported fact's chunk is where it was looked for, not where it is: never a box.
                found = self._chunk_span(row.chunk, chunk_span, boxes=row.grounding != "unsupported")
            for source in found:
                source.subgraph = row.subgraph
                source.fact = str(triple)
                source.verdicts = chain
                source.latest = latest if latest is not source else None
                source.grounding, source.evidence = row.grounding, row.evidence
                source.grounding_score = None if row.grounding_score is None else float(row.grounding_score)
                sources.append(source)
        return sources

    def _latest_place(self, chain: list) -> Optional[TraceSource]:
        """Where the newest version of a fact's source holds it (traced, with boxes), unless it was removed."""
        if not chain:
            return None
        step = max(chain, key=lambda s: (s.generated, s.version))  # the newest, of whichever source
        if step.verdict == "removed" or step.segment is None:
            return None
        if not self.store.entity_kinds(step.segment):
            return None  # that version's document was decoded again with other settings
        return self._segment_span(step.segment, step.start, step.end)

    def span(self, iri: str, start: int, end: int) -> list[TraceSource]:
        if not isinstance(iri, str) or not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise InvalidSpan("a span is an IRI and two integer offsets")
        kinds = self.store.entity_kinds(iri)
        if "Chunk" in kinds:
            return self._chunk_span(iri, (start, end), strict=True)
        if kinds & {"Page", "Section", "ImageText"}:
            return [self._segment_span(iri, start, end)]
        raise UnknownEntity(f"no page, section, picture's text or chunk {iri:.200} in the store")

    def quote(self, quote: str, document: Optional[str], limit: Optional[int] = None, offset: int = 0,
              seconds: Optional[float] = None) -> list[TraceSource]:
        check_quote(quote)
        if limit is not None or offset:
            check_page(1 if limit is None else limit, offset)
        if document is not None and not self.store.has_document(document):
            raise UnknownEntity(f"no document {str(document):.200} in the store")
        if document is None:
            ranked = ranked_places(self.store, quote, seconds, wanted=None if limit is None else offset + limit)
            if ranked is not None:
                return self._places(ranked.places, limit, offset)
        # Every place ranked first (cheap), then only the page asked for traced (boxes, verification).
        texts: dict[str, str] = {}
        places: list[tuple[str, int, int]] = []
        for segment in self.store.text_segments(document):
            text = self.store.text(segment.sha256, segment.segment)
            found = find_quote(text, quote)
            if found:
                texts[segment.segment] = text
                places.extend((segment.segment, start, end) for start, end in found)
        places.sort(key=lambda place: not as_written(texts[place[0]][place[1]:place[2]], quote))  # stable
        end_of_page = None if limit is None else offset + limit
        if not places and document is not None:
            return self._quote_as_laid_out(quote, document)[offset:end_of_page]
        return [self._segment_span(segment, start, end, text=texts[segment])
                for segment, start, end in places[offset:end_of_page]]

    def _places(self, places: list[Place], limit: Optional[int], offset: int) -> list[TraceSource]:
        """The places the index led to, traced from ``offset`` on, ``limit`` of them; a place whose
        text the graph no longer holds (removed by a user's update) is left out of the index."""
        sources: list[TraceSource] = []
        for place in places[offset:]:
            if limit is not None and len(sources) >= limit:
                break
            try:
                sources.append(self._segment_span(place.text.segment, place.start, place.end, text=place.text.text))
            except UnknownEntity:
                self.store.text_index.forget_removed(place.text.document)
        return sources

    def _quote_as_laid_out(self, quote: str, document: str) -> list[TraceSource]:
        """A quote in a PDF's text as its pages lay it out, line by line (the order a viewer's
        selection copies): for a quote the stored text does not hold in one run, as where a table's
        row is stored cell by cell down its columns. Each match is mapped back, character by
        character, to the segment text that holds it."""
        about = self.store.document_info(document)
        pdf = self._document(about) if about.format == "pdf" else None
        if pdf is None:
            return []
        sources = []
        for segment in self.store.text_segments(document):
            rows = [row for row in self.store.segment_text_elements(segment.segment)
                    if row.bbox is not None and row.page_number is not None and row.text]
            text = None
            for number in sorted({row.page_number for row in rows}):
                if not holds_words(" ".join(row.text for row in rows if row.page_number == number), quote):
                    continue  # the page's own text lacks a word of the quote: no need to read the page
                page = page_characters(pdf, number)
                matches = quotes_in_layer(page, quote) if page is not None else []
                if not matches:
                    continue
                text = text if text is not None else self.store.text(segment.sha256, segment.segment)
                owner: dict[int, tuple[TextElement, int]] = {}  # page character → (element, segment offset)
                for row in rows:
                    if row.page_number != number:
                        continue
                    if row.category == "Table":  # its text in the segment is markup: align the cells' words
                        stored, where = markup_text(text[row.char_offset:row.char_offset + row.char_length])
                    else:
                        stored, where = row.text, range(len(row.text))
                    aligned = aligned_characters(page, row.bbox, stored, key=(pdf.key, number))
                    for local, indices in enumerate(aligned):
                        for index in indices:
                            owner.setdefault(index, (row, row.char_offset + where[local]))
                for indices in matches:
                    fill_gaps(indices, owner, page, text)
                    if all(index in owner for index in indices):  # else part of it is in another segment
                        sources.append(self._pieces_source(segment.segment, text, page, indices, owner))
        return sources

    def _pieces_source(self, segment: str, text: str, page: PageText, indices: list[int],
                       owner: dict[int, tuple[TextElement, int]]) -> TraceSource:
        """The source of a quote found on the page at the characters ``indices``: one span of the
        segment's text if they hold it in one run, else its pieces, each with its boxes."""
        pieces: list[list[int]] = []
        for index in indices:
            offset = owner[index][1]
            if pieces and pieces[-1][0] <= offset and not text[pieces[-1][1]:offset].strip():
                pieces[-1][1] = max(pieces[-1][1], offset + 1)  # the same run, or whitespace before it
            else:
                pieces.append([offset, offset + 1])
        spans = [(start, end) for start, end in pieces]
        source = self._segment_span(segment, min(start for start, _ in spans), max(end for _, end in spans),
                                    text=text)
        if len(spans) == 1:
            return source
        def touches(start: int, end: int) -> bool:
            return any(start < piece_end and end > piece_start for piece_start, piece_end in spans)

        source.pieces = [QuotePiece(start, end, text[start:end]) for start, end in spans]
        source.quote = " ".join(piece.text for piece in source.pieces)
        source.elements = [e for e in source.elements if touches(e.char_offset, e.char_offset + e.char_length)]
        source.chunks = [row.chunk for row in self.store.segment_chunks(segment)
                         if touches(row.char_offset, row.char_offset + row.char_length)]
        by_element: dict[str, tuple[TextElement, list[int]]] = {}
        for index in indices:
            element = owner[index][0]
            by_element.setdefault(element.element, (element, []))[1].append(index)
        source.boxes = []
        for element, mine in by_element.values():
            lines = line_boxes(page, mine)
            if spells(page, lines, "".join(page.chars[index].char for index in mine)):
                source.boxes += placed_boxes(element, element.page_number, lines, "characters", Verification.VERIFIED)
            else:
                source.boxes += placed_boxes(element, element.page_number, [element.bbox], "element",
                                             Verification.ELEMENT)
        return source

    # ---------------------------------------------------------------- chunks

    def _chunk_span(self, chunk: str, span: Optional[tuple[int, int]], strict: bool = False,
                    boxes: bool = True) -> list[TraceSource]:
        info = self.store.chunk_info(chunk)
        if info is None:
            raise UnknownEntity(f"no chunk {chunk} in the store")
        chunk_text = self.store.text(info.sha256, chunk)
        body_start, body_length = info.prefix_length, info.char_length
        if span is None:
            span = (body_start, body_start + body_length)
        start, end = span
        if strict and not 0 <= start < end <= len(chunk_text):
            raise InvalidSpan(f"the span {start}..{end} is not inside the chunk (0..{len(chunk_text)})")
        segment_start = info.char_offset + min(max(start - body_start, 0), body_length)
        segment_end = info.char_offset + min(max(end - body_start, 0), body_length)
        segment_text = None
        if segment_end <= segment_start:
            # The span lies in text the chunk repeats for context (a table header, a heading):
            # cite the place that text comes from, the last occurrence before the chunk.
            segment_text = self._segment_text(info.segment)
            found = segment_text.rfind(chunk_text[start:end], 0, info.char_offset + body_length)
            if found < 0:
                segment_start, segment_end = info.char_offset, info.char_offset + body_length
            else:
                segment_start, segment_end = found, found + (end - start)
        source = self._segment_span(info.segment, segment_start, segment_end, text=segment_text, boxes=boxes)
        source.chunks = [chunk]
        source.chunk_span = (start, end)
        return [source]

    # ---------------------------------------------------------------- segments

    def _segment_text(self, segment: str) -> str:
        info = self._segment_info(segment)
        return self.store.text(info.sha256, segment)

    def _segment_info(self, segment: str) -> SegmentRow:
        info = self.store.segment_info(segment)
        if info is None:
            raise UnknownEntity(f"no page or section {segment} in the store")
        return info

    def _segment_span(self, segment: str, start: int, end: int, text: Optional[str] = None,
                      boxes: bool = True) -> TraceSource:
        info = self._segment_info(segment)
        if text is None:
            text = self.store.text(info.sha256, segment)
        if not 0 <= start < end <= len(text):
            raise InvalidSpan(f"the span {start}..{end} is not inside the {info.kind} (0..{len(text)})")
        about = self.store.document_info(info.document)
        document = DocumentRef(iri=info.document, mime_type=about.mime_type, format=about.format, title=about.title,
                               file_name=about.file_name)
        source = TraceSource(document=document, segment=segment, segment_kind=info.kind, start=start, end=end,
                             quote=text[start:end], page_number=info.page_number, page=self._page_of(info))
        if info.kind == "section":
            source.section = segment
            source.heading_path = [row.title for row in self.store.section_titles(segment)]
        if info.kind == "image":
            source.image = info.image
        if segment not in self._chunks:
            self._chunks[segment] = self.store.segment_chunks(segment)
            self._elements[segment] = self.store.segment_text_elements(segment)
        source.chunks = [row.chunk for row in self._chunks[segment]
                         if row.char_offset < end and row.char_offset + row.char_length > start]
        elements = [row for row in self._elements[segment]
                    if row.char_offset < end and row.char_offset + row.char_length > start]
        for row in elements:
            traced = TracedElement(iri=row.element, category=row.category, text=row.text or "",
                                   char_offset=row.char_offset, char_length=row.char_length,
                                   page_number=row.page_number, sheet_name=row.sheet_name)
            if row.category == "Table":
                traced.cells = self._cells(row, start, end)
            source.elements.append(traced)
            if not boxes:
                continue
            placed_cells = [cell for cell in traced.cells if cell.bbox is not None]
            if placed_cells:  # a table found on a page: the quote is in these cells, there
                source.boxes.extend(self._cell_boxes(row, placed_cells, start, end, text,
                                                     self._drawn_page(about, row, info)))
            else:
                source.boxes.extend(self._boxes(row, start, end, self._drawn_page(about, row, info)))
        if source.page_number is None:  # a section: the page its boxes are drawn on, where the quote begins
            drawn = [box.page_number for box in source.boxes if box.page_number is not None]
            numbers = sorted({e.page_number for e in source.elements if e.page_number is not None})
            source.page_number = drawn[0] if drawn else numbers[0] if numbers else None
        if any(box.coordinate_system == RENDERED_PDF_POINTS for box in source.boxes):
            run = self.store.rendering_run(info.document)
            source.rendered_by = run.renderer if run else None
        return source

    def _page_of(self, info: SegmentRow) -> Optional[str]:
        """The page a segment is, the page a section inside a page derives from, or the page of the
        page or section a picture whose text this is sits in."""
        if info.kind == "page":
            return info.segment
        if info.kind == "image":
            holder = self.store.segment_info(info.image_segment) if info.image_segment else None
            return self._page_of(holder) if holder is not None else None
        if info.parent and "Page" in self.store.entity_kinds(info.parent):
            return info.parent
        return None

    def _cells(self, table: TextElement, start: int, end: int) -> list[TracedCell]:
        cells = []
        for row in self.store.table_cells(table.element):
            if row.char_offset is None or row.char_length is None:
                continue
            cell_start = table.char_offset + row.char_offset
            if cell_start < end and cell_start + row.char_length > start or (
                    row.char_length == 0 and start <= cell_start < end):
                cells.append(TracedCell(iri=row.cell, row=row.row + 1, column=row.column + 1, row_span=row.row_span,
                                        column_span=row.column_span, text=row.text, header=row.header,
                                        reference=row.reference, confidence=row.confidence, bbox=row.bbox,
                                        char_offset=row.char_offset, char_length=row.char_length,
                                        page_width=row.page_width, page_height=row.page_height,
                                        coordinate_system=row.coordinate_system))
        return cells

    def _cell_boxes(self, table: TextElement, cells: list[TracedCell], start: int, end: int, text: str,
                    drawn: tuple[Optional[int], Optional[DrawnDocument]]) -> list[Box]:
        """The quote's part in each cell: the boxes of its characters where the page can be read and
        they pass its check, else the cell's box."""
        page_number, document = drawn
        page = page_characters(document, page_number) if document is not None and page_number else None
        boxes = []
        for cell in cells:
            cell_start = table.char_offset + (cell.char_offset or 0)
            cell_end = cell_start + (cell.char_length or 0)
            lines = None
            if page is not None and cell_start < end and cell_end > start:
                stored, where = markup_text(text[cell_start:cell_end])
                inside = [k for k, offset in enumerate(where) if start <= cell_start + offset < end]
                if inside:
                    lines = checked_lines(page, cell.bbox, stored, inside[0], inside[-1] + 1,
                                          key=(document.key, page_number, "cell"))
            if lines:
                source, rectangles, verification = "characters", lines, Verification.VERIFIED
            else:
                source, rectangles = "cell", [cell.bbox]
                verification = Verification.ELEMENT if page is not None else Verification.UNVERIFIED
            boxes += [Box(left=left, top=top, right=right, bottom=bottom, source=source,
                          page_number=table.rendered_page_number or table.page_number, page_width=cell.page_width,
                          page_height=cell.page_height, coordinate_system=cell.coordinate_system, element=cell.iri,
                          verification=verification)
                      for left, top, right, bottom in rectangles]
        return boxes

    def _document(self, about: DocumentInfo) -> Optional[DrawnDocument]:
        """The document's own bytes, for its backend to read its pages."""
        if about.sha256 not in self.store.library:
            return None
        return DrawnDocument(about.sha256, self.store.blob(about.sha256), about.format)

    def _drawn_page(self, about: DocumentInfo, element: TextElement,
                    info: SegmentRow) -> tuple[Optional[int], Optional[DrawnDocument]]:
        """The page an element's box is on, and the document whose characters are drawn there: a PDF
        itself, or the rendering of a document its elements were placed on (made when it was decoded:
        a trace never renders)."""
        if element.rendered_page_number is not None:
            return element.rendered_page_number, self._rendering(about)
        page_number = element.page_number or info.page_number
        return page_number, self._document(about) if about.format == "pdf" else None

    def _rendering(self, about: DocumentInfo) -> Optional[DrawnDocument]:
        if about.sha256 not in self._renderings:
            path = kept_rendering(self.store, about.sha256)
            self._renderings[about.sha256] = DrawnDocument(f"{about.sha256}/rendering", b"", about.format,
                                                           Path(path).read_bytes()) if path else None
        return self._renderings[about.sha256]

    def _boxes(self, element: TextElement, start: int, end: int,
               drawn: tuple[Optional[int], Optional[DrawnDocument]]) -> list[Box]:
        region = element.bbox
        if region is None:
            return []
        page_number, document = drawn
        if element.category in OWN_BOX:
            return placed_boxes(element, page_number, [region], OWN_BOX[element.category], Verification.VERIFIED)
        page = page_characters(document, page_number) if document is not None and page_number is not None else None
        if page is None:
            return placed_boxes(element, page_number, [region], "element", Verification.UNVERIFIED)
        if element.category != "Table":  # a table's cells are traced apart
            local_start = max(start, element.char_offset) - element.char_offset
            local_end = min(end, element.char_offset + element.char_length) - element.char_offset
            lines = checked_lines(page, region, element.text or "", local_start, local_end,
                                  key=(document.key, page_number))
            if lines:
                return placed_boxes(element, page_number, lines, "characters", Verification.VERIFIED)
            if document.rendered is not None and document.format_name in FLOWING:
                found = on_a_later_page(document, page_number, element.text or "", local_start, local_end)
                if found is not None:
                    return placed_boxes(element, found[0], found[1], "characters", Verification.VERIFIED)
        return placed_boxes(element, page_number, [region], "element", Verification.ELEMENT)


__all__ = ["trace"]
