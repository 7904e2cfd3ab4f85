"""The RDF mapping of a decoded document: its record as quads in ``<urn:graph:source>``.

With ``run_mapping.py`` (chunks, facts, failed decodes, where a document came from) the only
modules that know the vocabulary's shape (which predicate on which entity). Pure: they build quads
from the model's records and touch no store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from pyoxigraph import NamedNode

from ..model import RENDERED_PDF_POINTS, DecodeOptions, Element, ElementSpan, Page, Problem, Rendering, Segment
from .identifiers import derived_iri
from .quads import (NQuadsWriter, QuadWriter, activity_iri, bool_literal, describe_agent, describe_box, double_literal,
                    int_literal, text_literal, time_literal, typed_literal)
from .vocabulary import RDF_TYPE, dcterms, prov, tg


@dataclass
class DocumentRecord:
    """Everything the mapping needs about one decode."""

    iri: str
    sha256: str
    byte_size: int
    format: str
    mime_type: str
    file_name: Optional[str]
    title: Optional[str]
    options: DecodeOptions
    strategy: str
    elements: list[Element]
    pages: dict[int, Page]
    segments: list[Segment]
    segment_sha256: list[str]
    document_text_length: int
    started: datetime
    ended: datetime
    versions: dict[str, str]
    page_based: bool = False
    segment_iris: list[str] = field(default_factory=list)
    element_iris: dict[int, str] = field(default_factory=dict)
    # Images whose bytes went to the library (element index -> sha256), and those skipped, with why.
    image_sha256: dict[int, str] = field(default_factory=dict)
    image_skipped: dict[int, str] = field(default_factory=dict)
    # Notes that are no failure ("no text found").
    warnings: list[str] = field(default_factory=list)
    # What could not be read without failing the decode (unreadable pictures, a page OCR failed on).
    problems: list[Problem] = field(default_factory=list)
    # Pictures' OCR text in the library (element index -> sha256 of the text).
    image_text_sha256: dict[int, str] = field(default_factory=dict)
    # The rendering elements were placed on, for formats that state no positions.
    rendering: Optional[Rendering] = None
    # Where the elements' page numbers come from, when not from pages the format draws itself.
    page_numbers_from: Optional[str] = None

    def __post_init__(self):
        settings = self.options.settings_key()
        self.segment_iris = [
            derived_iri(s.kind, self.sha256, settings, s.index) if s.kind == "section"
            else derived_iri("page", self.sha256, settings, s.page_number)
            for s in self.segments
        ]
        self.element_iris = {
            e.index: derived_iri("image" if e.is_image else "element", self.sha256, settings, e.index)
            for e in self.elements
        }

    @property
    def activity_iri(self) -> str:
        return activity_iri(self.sha256, self.options, self.versions)

    def image_text_iri(self, image: int) -> str:
        """The text OCR read in a picture (a text document of its own)."""
        return derived_iri("imagetext", self.sha256, self.options.settings_key(), image)

    def ocr_word_iri(self, image: int, word: int) -> str:
        return derived_iri("ocrword", self.sha256, self.options.settings_key(), image, word)

    def image_texts(self) -> list[Element]:
        """The pictures with OCR text, in document order (their text documents follow the segments')."""
        return [e for e in self.elements if e.is_image and e.image_text is not None]

    def image_text_skipped(self, image: Element) -> Optional[str]:
        """Why a picture's OCR text is no text document (not chunked), or None when it is one."""
        confidence, least = image.image_text.confidence, self.options.min_image_text_confidence
        if confidence >= least:
            return None
        return (f"not chunked: its words' mean OCR confidence {confidence:.2f} is below {least:g} "
                "(stored and audited, not handed to extractors)")

    @property
    def rendering_iri(self) -> str:
        return derived_iri("rendering", self.sha256, self.options.settings_key(),
                           self.rendering.renderer if self.rendering else "")


def document_quads(record: DocumentRecord) -> NQuadsWriter:
    """All quads of one decode: document, activity, agent, pages, sections, elements, images."""
    out = NQuadsWriter()
    document = NamedNode(record.iri)
    activity = NamedNode(record.activity_iri)
    _describe_document(out, record, document)
    _describe_activity(out, record, activity, document)
    if record.rendering is not None:
        _describe_rendering(out, record, activity, document)
    for segment in record.segments:
        _describe_segment(out, record, segment, document, activity)
    links = _ElementLinks.of(record)
    for element in record.elements:
        _describe_element(out, record, links, element, activity)
        if element.is_table:
            _describe_cells(out, record, element, activity)
    for position, image in enumerate(record.image_texts()):
        _describe_image_text(out, record, links, image, len(record.segments) + position, activity)
    return out


@dataclass
class _ElementLinks:
    """Per element: the segment holding it, its span there, its parent and the text element before it."""

    holder: dict[int, tuple[Segment, Optional[ElementSpan]]]
    parent: dict[int, int]
    previous_text: dict[int, int]

    @classmethod
    def of(cls, record: DocumentRecord) -> "_ElementLinks":
        holder: dict[int, tuple[Segment, Optional[ElementSpan]]] = {}
        for segment in record.segments:
            for span in segment.spans:
                holder[span.element] = (segment, span)
            for image in segment.images:
                holder[image] = (segment, None)
        by_id = {e.element_id: e.index for e in record.elements if e.element_id}
        parent = {e.index: by_id[e.parent_id] for e in record.elements if e.parent_id in by_id}
        previous_text: dict[int, int] = {}
        last_text: Optional[int] = None
        for element in record.elements:
            if element.is_image:
                if last_text is not None:
                    previous_text[element.index] = last_text
            else:
                last_text = element.index
        return cls(holder, parent, previous_text)


def _describe_document(out: QuadWriter, record: DocumentRecord, document: NamedNode) -> None:
    out.add(document, RDF_TYPE, tg("Document"))
    out.add(document, tg("mimeType"), text_literal(record.mime_type))
    out.add(document, tg("format"), text_literal(record.format))
    out.add(document, tg("sha256"), text_literal(record.sha256))
    out.add(document, tg("byteSize"), int_literal(record.byte_size))
    out.add_optional(document, tg("fileName"), record.file_name, text_literal)
    out.add_optional(document, dcterms("title"), record.title, text_literal)
    out.add(document, tg("charLength"), int_literal(record.document_text_length))
    pages = [s for s in record.segments if s.kind == "page"]
    if record.page_based:
        out.add(document, tg("pageCount"), int_literal(len(pages)))
    out.add_optional(document, tg("pageNumbersFrom"), record.page_numbers_from, text_literal)
    out.add(document, tg("sectionCount"), int_literal(sum(1 for s in record.segments if s.kind == "section")))
    out.add(document, tg("elementCount"), int_literal(sum(1 for e in record.elements if not e.is_image)))
    out.add(document, tg("tableCount"), int_literal(sum(1 for e in record.elements if e.is_table)))
    out.add(document, tg("imageCount"), int_literal(sum(1 for e in record.elements if e.is_image)))


def _describe_activity(out: QuadWriter, record: DocumentRecord, activity: NamedNode, document: NamedNode) -> None:
    agent = describe_agent(out, record.versions)
    options = record.options
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("Decoding"))
    out.add(activity, prov("used"), document)
    out.add(activity, prov("wasAssociatedWith"), agent)
    out.add(activity, prov("startedAtTime"), time_literal(record.started))
    out.add(activity, prov("endedAtTime"), time_literal(record.ended))
    out.add(activity, tg("requestedStrategy"), text_literal(options.strategy))
    out.add(activity, tg("partitionStrategy"), text_literal(record.strategy))
    out.add(activity, tg("ocrLanguages"), text_literal(options.ocr_languages))
    out.add(activity, tg("sectionStrategy"), text_literal(options.section_strategy))
    out.add(activity, tg("sectionElementCount"), int_literal(options.section_element_count))
    out.add(activity, tg("sectionMaxSize"), int_literal(options.section_max_size))
    out.add(activity, tg("sectionWithinPages"), bool_literal(options.section_within_pages))
    out.add(activity, tg("maxImageBytes"), int_literal(options.max_image_bytes))
    out.add(activity, tg("maxImagePixels"), int_literal(options.max_image_pixels))
    out.add(activity, tg("renderedPositions"), bool_literal(options.rendered_positions))
    out.add(activity, tg("imageOcr"), text_literal(options.image_ocr))
    out.add(activity, tg("pdfTables"), bool_literal(options.pdf_tables))
    out.add(activity, tg("pdfReader"), text_literal(options.pdf_reader))
    out.add(activity, tg("minImageTextConfidence"), double_literal(options.min_image_text_confidence))
    out.add_optional(activity, tg("encoding"), options.encoding, text_literal)
    out.add(activity, tg("settingsKey"), text_literal(options.settings_key()))
    for warning in record.warnings:
        out.add(activity, tg("warning"), text_literal(warning))
    for number, problem in enumerate(record.problems):
        _describe_problem(out, problem, NamedNode(derived_iri("problem", record.activity_iri, number)), activity,
                          document)


def _describe_problem(out: QuadWriter, problem: Problem, node: NamedNode, activity: NamedNode,
                      document: NamedNode) -> None:
    """What a decode could not do: an entity its run generated, about its document."""
    out.add(node, RDF_TYPE, prov("Entity"))
    out.add(node, RDF_TYPE, tg("Problem"))
    out.add(node, prov("wasDerivedFrom"), document)
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(activity, tg("problem"), node)
    out.add(node, tg("problemCode"), text_literal(problem.code))
    out.add(node, tg("problemMessage"), text_literal(problem.message))
    out.add_optional(node, tg("pageNumber"), problem.page_number, int_literal)
    out.add_optional(node, tg("elementKind"), problem.element_kind, text_literal)


def _describe_rendering(out: QuadWriter, record: DocumentRecord, activity: NamedNode, document: NamedNode) -> None:
    """The rendering the decode placed elements on: a run of its own, which informed the decode."""
    node = NamedNode(record.rendering_iri)
    out.add(node, RDF_TYPE, prov("Activity"))
    out.add(node, RDF_TYPE, tg("Rendering"))
    out.add(node, prov("used"), document)
    out.add(node, tg("renderer"), text_literal(record.rendering.renderer))
    out.add(node, tg("renderedPageCount"), int_literal(len(record.rendering.page_sizes)))
    out.add(activity, prov("wasInformedBy"), node)


def _describe_segment(out: QuadWriter, record: DocumentRecord, segment: Segment, document: NamedNode,
                      activity: NamedNode) -> None:
    node = NamedNode(record.segment_iris[segment.index])
    parent = NamedNode(record.segment_iris[segment.parent]) if segment.parent is not None else document
    out.add(node, RDF_TYPE, tg("Page" if segment.kind == "page" else "Section"))
    out.add(node, prov("wasDerivedFrom"), parent)
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("segmentIndex"), int_literal(segment.index))
    out.add(node, tg("charOffset"), int_literal(segment.char_offset))
    out.add(node, tg("charLength"), int_literal(len(segment.text)))
    out.add(node, tg("sha256"), text_literal(record.segment_sha256[segment.index]))
    out.add(node, tg("textDocument"), bool_literal(segment.carries_text))
    if segment.kind == "section":
        out.add_optional(node, tg("jsonPointer"), segment.json_pointer, text_literal)
        out.add(node, tg("extentLength"), int_literal(segment.extent_length))
        out.add_optional(node, tg("sectionLevel"), segment.level, int_literal)
        out.add_optional(node, dcterms("title"), segment.title, text_literal)
        if segment.parent is not None and record.segments[segment.parent].kind == "section":
            out.add(node, tg("parentSection"), parent)
    out.add_optional(node, tg("pageNumber"), segment.page_number, int_literal)
    page = record.pages.get(segment.page_number) if segment.kind == "page" else None
    if page is not None:
        out.add_optional(node, tg("pageWidth"), page.width, double_literal)
        out.add_optional(node, tg("pageHeight"), page.height, double_literal)
        out.add_optional(node, tg("coordinateSystem"), page.coordinate_system, text_literal)
        out.add_optional(node, tg("sheetName"), page.name, text_literal)
        out.add_optional(node, tg("partitionStrategy"), page.strategy, text_literal)
        out.add_optional(node, tg("confidence"), page.confidence, double_literal)
        out.add_optional(node, tg("textLayerPlausibility"), page.plausibility, double_literal)
    members = [record.elements[i] for i in segment.elements]
    categories = sorted({e.category for e in members} | {record.elements[i].category for i in segment.images})
    out.add(node, tg("elementTypes"), text_literal(",".join(categories)))
    out.add(node, tg("elementCount"), int_literal(len(members)))
    out.add(node, tg("tableCount"), int_literal(sum(1 for e in members if e.is_table)))
    out.add(node, tg("imageCount"), int_literal(_image_count(record, segment)))


def _image_count(record: DocumentRecord, segment: Segment) -> int:
    """Images in this segment, including those of the sections a page holds."""
    count = len(segment.images)
    if not segment.carries_text:
        count += sum(len(s.images) for s in record.segments if s.parent == segment.index)
    return count


def _describe_element(out: QuadWriter, record: DocumentRecord, links: _ElementLinks, element: Element,
                      activity: NamedNode) -> None:
    node = NamedNode(record.element_iris[element.index])
    holder, span = links.holder[element.index]
    out.add(node, RDF_TYPE, tg("Image" if element.is_image else ("Table" if element.is_table else "Element")))
    if element.is_table:
        out.add(node, RDF_TYPE, tg("Element"))
    out.add(node, prov("wasDerivedFrom"), NamedNode(record.segment_iris[holder.index]))
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("category"), text_literal(element.category))
    out.add(node, tg("elementIndex"), int_literal(element.index))
    if span is not None:
        out.add(node, tg("charOffset"), int_literal(span.offset))
        out.add(node, tg("charLength"), int_literal(span.length))
    if element.is_image:
        _describe_image(out, record, element, node)
        previous = links.previous_text.get(element.index)
        if previous is not None:
            out.add(node, tg("followsElement"), NamedNode(record.element_iris[previous]))
    else:
        out.add(node, tg("text"), text_literal(element.text))
        # Text read from the file (a text layer, markup) is certain; OCR and layout models say how sure they are.
        out.add(node, tg("confidence"), double_literal(element.confidence if element.confidence is not None else 1.0))
    out.add_optional(node, tg("unstructuredElementId"), element.element_id, text_literal)
    if element.index in links.parent:
        out.add(node, tg("parentElement"), NamedNode(record.element_iris[links.parent[element.index]]))
    out.add_optional(node, tg("headingDepth"), element.depth, int_literal)
    out.add_optional(node, tg("jsonPointer"), element.json_pointer, text_literal)
    out.add_optional(node, tg("pageNumber"), element.page_number, int_literal)
    if record.format in ("pptx", "ppt"):
        out.add_optional(node, tg("slideNumber"), element.page_number, int_literal)
    out.add_optional(node, tg("sheetName"), element.page_name, text_literal)
    if not element.is_image:  # an image's anchor cell is among its own properties
        out.add_optional(node, tg("anchorCell"), element.anchor_cell, text_literal)
    for name, value in sorted((element.properties or {}).items()):  # a form field's name, a comment's author...
        out.add(node, tg(name), typed_literal(value))
    if element.bbox is not None:
        _describe_place(out, record, node, element, element.bbox)
        out.add_optional(node, tg("verification"), element.verification, text_literal)


def _describe_place(out: QuadWriter, record: DocumentRecord, node: NamedNode, element: Element, box) -> None:
    """A box on the element's page, or on the page of the document's rendering the element is on."""
    if element.rendered_page is not None and record.rendering is not None:
        width, height = record.rendering.page_sizes[element.rendered_page - 1]
        out.add(node, tg("renderedPageNumber"), int_literal(element.rendered_page))
        out.add(node, tg("positionFrom"), NamedNode(record.rendering_iri))
        describe_box(out, node, box, width, height, RENDERED_PDF_POINTS)
    else:
        page = record.pages.get(element.page_number) or Page(number=element.page_number or 0)
        describe_box(out, node, box, page.width, page.height, page.coordinate_system)


def _describe_image(out: QuadWriter, record: DocumentRecord, element: Element, node: NamedNode) -> None:
    """An image: its bytes in the library (or why not), type, pixel size, alt text, where it came from."""
    out.add_optional(node, tg("altText"), element.text or None, text_literal)
    out.add_optional(node, tg("sourceUrl"), element.image_url, text_literal)
    sha256 = record.image_sha256.get(element.index)
    if sha256 is not None:
        out.add(node, tg("sha256"), text_literal(sha256))
    if element.image_data is not None:
        out.add(node, tg("byteSize"), int_literal(len(element.image_data)))
    reason = record.image_skipped.get(element.index)
    if reason is None and sha256 is None and element.image_url is None:
        reason = "no bytes: the image could not be read from the document"
    out.add_optional(node, tg("skippedReason"), reason, text_literal)
    out.add_optional(node, tg("mimeType"), element.image_mime, text_literal)
    out.add_optional(node, tg("pixelWidth"), element.image_width, int_literal)
    out.add_optional(node, tg("pixelHeight"), element.image_height, int_literal)
    out.add_optional(node, tg("anchorCell"), element.anchor_cell, text_literal)
    out.add_optional(node, tg("ocrSkippedReason"), element.image_text_skipped, text_literal)


def _describe_image_text(out: QuadWriter, record: DocumentRecord, links: _ElementLinks, image: Element,
                         segment_index: int, activity: NamedNode) -> None:
    """A picture's OCR text: a text document derived from the picture, and each word with its
    confidence, its box in the picture's pixels and, where the picture has a place on a page, there."""
    found = image.image_text
    node = NamedNode(record.image_text_iri(image.index))
    image_node = NamedNode(record.element_iris[image.index])
    out.add(node, RDF_TYPE, tg("ImageText"))
    out.add(node, prov("wasDerivedFrom"), image_node)
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(image_node, tg("imageText"), node)
    out.add(node, tg("segmentIndex"), int_literal(segment_index))
    out.add(node, tg("charLength"), int_literal(len(found.text)))
    out.add(node, tg("sha256"), text_literal(record.image_text_sha256[image.index]))
    skipped = record.image_text_skipped(image)
    out.add(node, tg("textDocument"), bool_literal(skipped is None))
    out.add_optional(node, tg("notChunkedReason"), skipped, text_literal)
    out.add(node, tg("confidence"), double_literal(found.confidence))
    out.add(node, tg("ocrLanguages"), text_literal(found.languages))
    out.add(node, tg("ocrEngine"), text_literal(found.engine))
    out.add(node, tg("wordCount"), int_literal(len(found.words)))
    page_number = image.page_number if image.page_number is not None else links.holder[image.index][0].page_number
    out.add_optional(node, tg("pageNumber"), page_number, int_literal)
    placed = image.bbox is not None and all(found.pixel_size) and not image.image_turned and (
        image.rendered_page is not None or page_number in record.pages)
    for k, word in enumerate(found.words):
        word_node = NamedNode(record.ocr_word_iri(image.index, k))
        out.add(word_node, RDF_TYPE, tg("OcrWord"))
        out.add(word_node, prov("wasDerivedFrom"), node)
        out.add(word_node, prov("wasGeneratedBy"), activity)
        out.add(word_node, tg("category"), text_literal("OcrWord"))
        out.add(word_node, tg("elementIndex"), int_literal(k))
        out.add(word_node, tg("charOffset"), int_literal(word.start))
        out.add(word_node, tg("charLength"), int_literal(len(word.text)))
        out.add(word_node, tg("text"), text_literal(word.text))
        out.add(word_node, tg("confidence"), double_literal(word.confidence))
        left, top, right, bottom = word.box
        out.add(word_node, tg("pixelLeft"), double_literal(left))
        out.add(word_node, tg("pixelTop"), double_literal(top))
        out.add(word_node, tg("pixelRight"), double_literal(right))
        out.add(word_node, tg("pixelBottom"), double_literal(bottom))
        out.add_optional(word_node, tg("pageNumber"), page_number, int_literal)
        if placed:
            box = found.page_box(word, image.bbox)
            _describe_place(out, record, word_node, image, box)


def _describe_cells(out: QuadWriter, record: DocumentRecord, table: Element, activity: NamedNode) -> None:
    """The table as a rectangular matrix of cells, each derived from the table element.

    A cell's offsets point into its table's assembled text (the ``<table>`` markup).
    """
    node = NamedNode(record.element_iris[table.index])
    matrix = table.table
    if matrix is None:
        return
    out.add(node, tg("rowCount"), int_literal(matrix.rows))
    out.add(node, tg("columnCount"), int_literal(matrix.columns))
    settings = record.options.settings_key()
    for cell in matrix.cells:
        iri = NamedNode(derived_iri("cell", record.sha256, settings, table.index, cell.row, cell.column))
        out.add(iri, RDF_TYPE, tg("TableCell"))
        out.add(iri, prov("wasDerivedFrom"), node)
        out.add(iri, prov("wasGeneratedBy"), activity)
        out.add(iri, tg("rowIndex"), int_literal(cell.row))
        out.add(iri, tg("columnIndex"), int_literal(cell.column))
        out.add(iri, tg("rowSpan"), int_literal(cell.row_span))
        out.add(iri, tg("columnSpan"), int_literal(cell.column_span))
        out.add(iri, tg("isHeader"), bool_literal(cell.header))
        out.add(iri, tg("isPadding"), bool_literal(cell.padding))
        if cell.confidence is not None:
            certainty = cell.confidence
        else:
            certainty = 0.0 if cell.padding else (table.confidence if table.confidence is not None else 1.0)
        out.add(iri, tg("confidence"), double_literal(certainty))
        if cell.bbox is not None:
            out.add_optional(iri, tg("pageNumber"), table.page_number, int_literal)
            _describe_place(out, record, iri, table, cell.bbox)
        if not cell.padding:
            out.add(iri, tg("text"), text_literal(cell.text))
            out.add(iri, tg("charOffset"), int_literal(cell.start))
            out.add(iri, tg("charLength"), int_literal(cell.end - cell.start))
        out.add_optional(iri, tg("cellReference"), cell.reference, text_literal)


__all__ = ["DocumentRecord", "document_quads"]
