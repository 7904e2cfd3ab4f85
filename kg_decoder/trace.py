"""Trace-back: from a fact, a span or a quote to the document, page, section, chunk,
elements, table cells and the rectangles on the page that hold the words.

Every lookup starts from a bound IRI (the fact's triple term, a chunk, a segment),
so the time a trace takes depends on the size of one page or section, not on the
size of the store. For a PDF page with a text layer the rectangles are the tight
boxes of the exact characters, one per line, from the PDF's own glyph positions;
elsewhere they are the boxes of the elements.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Optional, Sequence, Union

from .errors import InvalidSpan, UnknownEntity
from .facts import quote_pattern, to_triple
from .identifiers import derived_iri
from .pdf_text import page_characters, span_line_boxes
from .store import KgStore, open_store
from .vocabulary import TG

ANNOTATION_CONTEXT = "http://www.w3.org/ns/anno.jsonld"
MEDIA_FRAGMENTS = "http://www.w3.org/TR/media-frags/"
PDF_FRAGMENTS = "http://tools.ietf.org/rfc/rfc3778"


@dataclass
class Box:
    """A rectangle on a page: ``source`` says whether it bounds the exact characters or a whole element."""

    page_number: int
    left: float
    top: float
    right: float
    bottom: float
    page_width: Optional[float]
    page_height: Optional[float]
    coordinate_system: Optional[str]
    source: str  # "characters" or "element"
    element: str


@dataclass
class TracedElement:
    iri: str
    category: str
    text: str
    char_offset: int
    char_length: int
    page_number: Optional[int] = None
    sheet_name: Optional[str] = None
    cells: list[dict] = field(default_factory=list)


@dataclass
class TraceSource:
    """One place a fact or span comes from. ``start``/``end`` are offsets in the segment's text."""

    document: dict
    segment: str
    segment_kind: str
    start: int
    end: int
    quote: str
    page_number: Optional[int] = None
    page: Optional[str] = None
    section: Optional[str] = None
    heading_path: list[str] = field(default_factory=list)
    chunks: list[str] = field(default_factory=list)
    chunk_span: Optional[tuple[int, int]] = None
    subgraph: Optional[str] = None
    fact: Optional[str] = None
    elements: list[TracedElement] = field(default_factory=list)
    boxes: list[Box] = field(default_factory=list)

    def to_json(self) -> dict:
        return asdict(self)


def trace(fact: Optional[Sequence] = None, span: Optional[Sequence] = None, quote: Optional[str] = None,
          document: Optional[str] = None, *, store: Union[KgStore, str, os.PathLike]) -> list[TraceSource]:
    """Where a fact, a span or a quote comes from; exactly one of ``fact``, ``span``, ``quote``.

    ``fact`` is ``(s, p, o)`` (terms, or strings as :func:`kg_decoder.facts.to_triple`
    reads them); ``span`` is ``(segment_or_chunk_iri, start, end)``; ``quote`` is text
    searched in ``document`` (an IRI) or, without one, in every document. A fact no
    subgraph contains and a quote found nowhere give an empty list.
    """
    if sum(x is not None for x in (fact, span, quote)) != 1:
        raise InvalidSpan("trace needs exactly one of fact, span or quote")
    if not isinstance(store, KgStore):
        store = open_store(store)
    tracer = _Tracer(store)
    if fact is not None:
        return tracer.fact(fact)
    if span is not None:
        try:
            iri, start, end = span
        except (TypeError, ValueError):
            raise InvalidSpan("a span is (segment_or_chunk_iri, start, end)") from None
        return tracer.span(iri, start, end)
    return tracer.quote(quote, document)


class _Tracer:
    def __init__(self, store: KgStore) -> None:
        self.store = store

    # ---------------------------------------------------------------- entry points

    def fact(self, fact: Sequence) -> list[TraceSource]:
        triple = to_triple(fact)
        sources = []
        for row in self.store.select("fact_sources", s=triple.subject, p=triple.predicate, o=triple.object):
            if not self.store.select("entity_types", entity=row["chunk"]):
                continue  # the chunk was replaced by a later decode or chunking: the audit lists these
            chunk_span = None
            if "charOffset" in row:
                chunk_span = (row["charOffset"], row["charOffset"] + row["charLength"])
            for source in self._chunk_span(row["chunk"], chunk_span):
                source.subgraph = row["subgraph"]
                source.fact = str(triple)
                sources.append(source)
        return sources

    def span(self, iri: str, start: int, end: int) -> list[TraceSource]:
        if not isinstance(iri, str) or not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
            raise InvalidSpan("a span is an IRI and two integer offsets")
        types = {row["type"] for row in self.store.select("entity_types", entity=iri)}
        if TG + "Chunk" in types:
            return self._chunk_span(iri, (start, end), strict=True)
        if types & {TG + "Page", TG + "Section"}:
            return [self._segment_span(iri, start, end)]
        raise UnknownEntity(f"no page, section or chunk {iri} in the store")

    def quote(self, quote: str, document: Optional[str]) -> list[TraceSource]:
        if not isinstance(quote, str) or not quote.strip():
            raise InvalidSpan("a quote must be non-empty text")
        if document is not None and not self.store.select("document_state", document=document):
            raise UnknownEntity(f"no document {document} in the store")
        rows = (self.store.select("text_documents", document=document) if document is not None
                else self.store.select("text_documents"))
        pattern = quote_pattern(quote)
        sources = []
        for row in rows:
            text = self.store.library.get(row["sha256"]).decode("utf-8")
            for match in pattern.finditer(text):
                sources.append(self._segment_span(row["segment"], match.start(), match.end(), text=text))
        return sources

    # ---------------------------------------------------------------- chunks

    def _chunk_span(self, chunk: str, span: Optional[tuple[int, int]], strict: bool = False) -> list[TraceSource]:
        rows = self.store.select("chunk_info", chunk=chunk)
        if not rows:
            raise UnknownEntity(f"no chunk {chunk} in the store")
        info = rows[0]
        chunk_text = self.store.library.get(info["sha256"]).decode("utf-8")
        body_start, body_length = info["prefixLength"], info["charLength"]
        if span is None:
            span = (body_start, body_start + body_length)
        start, end = span
        if strict and not 0 <= start < end <= len(chunk_text):
            raise InvalidSpan(f"the span {start}..{end} is not inside the chunk (0..{len(chunk_text)})")
        segment_start = info["charOffset"] + min(max(start - body_start, 0), body_length)
        segment_end = info["charOffset"] + min(max(end - body_start, 0), body_length)
        segment_text = None
        if segment_end <= segment_start:
            # The span lies in text the chunk repeats for context (a table header, a heading):
            # cite the place that text comes from, the last occurrence before the chunk.
            segment_text = self._segment_text(info["segment"])
            found = segment_text.rfind(chunk_text[start:end], 0, info["charOffset"] + body_length)
            if found < 0:
                segment_start, segment_end = info["charOffset"], info["charOffset"] + body_length
            else:
                segment_start, segment_end = found, found + (end - start)
        source = self._segment_span(info["segment"], segment_start, segment_end, text=segment_text)
        source.chunks = [chunk]
        source.chunk_span = (start, end)
        return [source]

    # ---------------------------------------------------------------- segments

    def _segment_text(self, segment: str) -> str:
        info = self._segment_info(segment)
        return self.store.library.get(info["sha256"]).decode("utf-8")

    def _segment_info(self, segment: str) -> dict:
        rows = self.store.select("segment_info", segment=segment)
        if not rows:
            raise UnknownEntity(f"no page or section {segment} in the store")
        return rows[0]

    def _segment_span(self, segment: str, start: int, end: int, text: Optional[str] = None) -> TraceSource:
        info = self._segment_info(segment)
        if text is None:
            text = self.store.library.get(info["sha256"]).decode("utf-8")
        if not 0 <= start < end <= len(text):
            raise InvalidSpan(f"the span {start}..{end} is not inside the {info['kind']} (0..{len(text)})")
        about = self.store.select("document_info", document=info["document"])[0]
        document = {"iri": info["document"], "title": about.get("title"), "file_name": about.get("fileName"),
                    "mime_type": about["mimeType"], "format": about["format"]}
        source = TraceSource(document=document, segment=segment, segment_kind=info["kind"], start=start, end=end,
                             quote=text[start:end], page_number=info.get("pageNumber"), page=self._page_of(info))
        if info["kind"] == "section":
            source.section = segment
            source.heading_path = [row["title"] for row in self.store.select("section_path", section=segment)]
        source.chunks = [row["chunk"] for row in self.store.select("segment_chunks", segment=segment)
                         if row["charOffset"] < end and row["charOffset"] + row["charLength"] > start]
        elements = [row for row in self.store.select("segment_text_elements", segment=segment)
                    if row["charOffset"] < end and row["charOffset"] + row["charLength"] > start]
        pdf = self._pdf_bytes(about["sha256"]) if about["format"] == "pdf" else None
        for row in elements:
            traced = TracedElement(iri=row["element"], category=row["category"], text=row["text"],
                                   char_offset=row["charOffset"], char_length=row["charLength"],
                                   page_number=row.get("pageNumber"), sheet_name=row.get("sheetName"))
            if row["category"] == "Table":
                traced.cells = self._cells(row, start, end)
            source.elements.append(traced)
            source.boxes.extend(self._boxes(row, start, end, pdf, info))
        if source.page_number is None:
            numbers = sorted({e.page_number for e in source.elements if e.page_number is not None})
            source.page_number = numbers[0] if numbers else None
        return source

    def _page_of(self, info: dict) -> Optional[str]:
        """The page a segment is, or the page a section inside a page derives from."""
        if info["kind"] == "page":
            return info["segment"]
        parent = info.get("parent")
        if parent and any(row["type"] == TG + "Page" for row in self.store.select("entity_types", entity=parent)):
            return parent
        return None

    def _cells(self, table: dict, start: int, end: int) -> list[dict]:
        cells = []
        for row in self.store.select("table_cells", table=table["element"]):
            if "charOffset" not in row:
                continue
            cell_start = table["charOffset"] + row["charOffset"]
            if cell_start < end and cell_start + row["charLength"] > start or (
                    row["charLength"] == 0 and start <= cell_start < end):
                cells.append({"iri": row["cell"], "row": row["row"], "column": row["column"],
                              "row_span": row["rowSpan"], "column_span": row["columnSpan"], "text": row.get("text"),
                              "header": row["header"], "reference": row.get("reference")})
        return cells

    def _pdf_bytes(self, sha256: str) -> Optional[tuple[str, bytes]]:
        if sha256 not in self.store.library:
            return None
        return sha256, self.store.library.get(sha256)

    def _boxes(self, element: dict, start: int, end: int, pdf: Optional[tuple[str, bytes]], info: dict) -> list[Box]:
        if "left" not in element:
            return []
        region = (element["left"], element["top"], element["right"], element["bottom"])
        page_number = element.get("pageNumber") or info.get("pageNumber")
        common = dict(page_number=page_number, page_width=element.get("pageWidth"),
                      page_height=element.get("pageHeight"), coordinate_system=element.get("coordinateSystem"),
                      element=element["element"])
        if pdf is not None and page_number is not None and element["category"] != "Table":
            chars = page_characters(pdf[1], page_number, key=pdf[0])
            local_start = max(start, element["charOffset"]) - element["charOffset"]
            local_end = min(end, element["charOffset"] + element["charLength"]) - element["charOffset"]
            lines = span_line_boxes(chars, region, element["text"], local_start, local_end, key=(pdf[0], page_number))
            if lines:
                return [Box(left=l, top=t, right=r, bottom=b, source="characters", **common) for l, t, r, b in lines]
        return [Box(left=region[0], top=region[1], right=region[2], bottom=region[3], source="element", **common)]


# ---------------------------------------------------------------- W3C Web Annotation


def web_annotations(sources: list[TraceSource]) -> dict:
    """The trace as W3C Web Annotation JSON-LD: a text position in the page or section, and the
    rectangles on the page (a PDF ``page=`` fragment refined by a media fragment ``xywh=``)."""
    items = []
    for source in sources:
        targets: list[dict] = [{
            "source": source.segment,
            "selector": [
                {"type": "TextPositionSelector", "start": source.start, "end": source.end},
                {"type": "TextQuoteSelector", "exact": source.quote},
            ],
        }]
        for box in source.boxes:
            targets.append({"source": source.document["iri"],
                            "selector": _region_selector(box, source.document.get("mime_type"))})
        annotation = {
            "id": derived_iri("annotation", source.segment, source.start, source.end, source.subgraph or ""),
            "type": "Annotation",
            "motivation": "identifying",
            "target": targets,
        }
        if source.fact:
            annotation["body"] = {"type": "TextualBody", "format": "application/n-triples",
                                  "value": source.fact + " .", **({"id": source.subgraph} if source.subgraph else {})}
        items.append(annotation)
    return {"@context": ANNOTATION_CONTEXT, "id": "urn:trace", "type": "AnnotationCollection", "total": len(items),
            "first": {"type": "AnnotationPage", "items": items}}


def _region_selector(box: Box, mime_type: Optional[str]) -> dict:
    if box.page_width and box.page_height:
        x, y = 100 * box.left / box.page_width, 100 * box.top / box.page_height
        w, h = 100 * (box.right - box.left) / box.page_width, 100 * (box.bottom - box.top) / box.page_height
        value = f"xywh=percent:{x:.3f},{y:.3f},{w:.3f},{h:.3f}"
    else:
        value = (f"xywh={box.left:.0f},{box.top:.0f},{box.right - box.left:.0f},{box.bottom - box.top:.0f}")
    region = {"type": "FragmentSelector", "conformsTo": MEDIA_FRAGMENTS, "value": value}
    if mime_type == "application/pdf":
        return {"type": "FragmentSelector", "conformsTo": PDF_FRAGMENTS, "value": f"page={box.page_number}",
                "refinedBy": region}
    return region


__all__ = ["Box", "TraceSource", "TracedElement", "trace", "web_annotations"]
