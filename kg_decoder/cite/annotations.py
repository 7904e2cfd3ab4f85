"""Trace answers as W3C Web Annotation JSON-LD: a text position (and quote) in the page or
section text, per table cell its place in its table (an RFC 7111 ``cell=row,column`` fragment,
counted from 1, with the cell's label), and per rectangle a region of the page (a PDF ``page=``
fragment refined by a media fragment ``xywh=``) with how far it was checked (``verification``)."""

from __future__ import annotations

from typing import Optional

from ..graph.identifiers import derived_iri
from ..graph.vocabulary import term_context
from ..model import RENDERED_PDF_POINTS, Box, QuotePiece, TraceSource
from ..model.errors import InvalidSpan

ANNOTATION_CONTEXT = "http://www.w3.org/ns/anno.jsonld"
# The terms the annotations use beyond the Web Annotation vocabulary: the tg: vocabulary's.
TG_CONTEXT = term_context("verification", "grounding", "groundingScore", "evidence")
MEDIA_FRAGMENTS = "http://www.w3.org/TR/media-frags/"
PDF_FRAGMENTS = "http://tools.ietf.org/rfc/rfc3778"
CELL_FRAGMENTS = "http://tools.ietf.org/rfc/rfc7111"  # cell=row,column, both from 1


def web_annotations(sources: list[TraceSource]) -> dict:
    """The trace as W3C Web Annotation JSON-LD: a text position in the page or section, the table
    cells it is in (``cell=row,column``, from 1), and the rectangles on the page (a PDF ``page=``
    fragment refined by a media fragment ``xywh=``), each with its ``verification``.

    >>> import kg_decoder
    >>> with kg_decoder.open_store(None) as store:
    ...     _ = kg_decoder.decode(b"Acme had a revenue of 12 M.", store=store)
    ...     collection = web_annotations(kg_decoder.trace(quote="12 M", store=store))
    >>> collection["first"]["items"][0]["target"][0]["selector"][0]
    {'type': 'TextPositionSelector', 'start': 22, 'end': 26}
    """
    if isinstance(sources, TraceSource) or not all(isinstance(s, TraceSource) for s in _listed(sources)):
        raise InvalidSpan("web_annotations takes the list of sources that trace() returns")
    items = []
    for source in sources:
        # A quote in pieces (a table row stored down its columns) targets each piece, in the quote's order.
        pieces = source.pieces or [QuotePiece(source.start, source.end, source.quote)]
        targets: list[dict] = [{
            "source": source.segment,
            "selector": [
                {"type": "TextPositionSelector", "start": piece.start, "end": piece.end},
                {"type": "TextQuoteSelector", "exact": piece.text},
            ],
        } for piece in pieces]
        if source.image:  # the words were read in this picture (its OCR text is the source above)
            targets.append({"id": source.image, "type": "Image"})
        for element in source.elements:
            for cell in element.cells:
                last = f"-{cell.row + cell.row_span - 1},{cell.column + cell.column_span - 1}" \
                    if cell.row_span > 1 or cell.column_span > 1 else ""
                targets.append({"id": cell.iri, "source": element.iri, "label": cell.label,
                                "selector": {"type": "FragmentSelector", "conformsTo": CELL_FRAGMENTS,
                                             "value": f"cell={cell.row},{cell.column}{last}"}})
        for box in source.boxes:
            if box.coordinate_system == RENDERED_PDF_POINTS:  # a page of the document as its renderer drew it
                targets.append({"source": source.document.iri,
                                "renderedVia": {"type": "Software", "name": source.rendered_by or "a renderer"},
                                "selector": _region_selector(box, "application/pdf"),
                                "verification": str(box.verification)})
            else:
                targets.append({"source": source.document.iri,
                                "selector": _region_selector(box, source.document.mime_type),
                                "verification": str(box.verification)})
        annotation = {
            "id": derived_iri("annotation", source.segment, source.start, source.end, source.subgraph or ""),
            "type": "Annotation",
            "motivation": "identifying",
            "target": targets,
        }
        if source.fact:
            annotation["body"] = {"type": "TextualBody", "format": "application/n-triples",
                                  "value": source.fact + " .", **({"id": source.subgraph} if source.subgraph else {})}
        if source.grounding:  # how the fact's evidence was found in its chunk (unsupported: no region targeted)
            annotation["grounding"] = source.grounding
            if source.grounding_score is not None:
                annotation["groundingScore"] = source.grounding_score
            if source.evidence is not None:
                annotation["evidence"] = source.evidence
        items.append(annotation)
    return {"@context": [ANNOTATION_CONTEXT, TG_CONTEXT], "id": "urn:trace", "type": "AnnotationCollection",
            "total": len(items),
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


def _listed(sources) -> list:
    try:
        return list(sources)
    except TypeError:
        raise InvalidSpan("web_annotations takes the list of sources that trace() returns") from None
