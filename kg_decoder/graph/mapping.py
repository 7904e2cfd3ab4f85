"""The RDF mapping: model records as quads in ``<urn:graph:source>`` (and facts in the default graph).

The only module that knows the vocabulary's shape (which predicate on which entity). Pure: it
builds quads from the model's records and touches no store; the stages above hand it records
(a decoded document, a chunking run, facts, a failed decode, where a document came from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Optional

from pyoxigraph import DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, serialize

from ..model import (HEADING_SEPARATOR, RENDERED_PDF_POINTS, TOKENIZER, Anchor, Chunk, ChunkOptions, DecodeOptions,
                     Element, ElementSpan, Page, Problem, Rendering, Segment)
from .identifiers import derived_iri
from .vocabulary import (
    RDF_TYPE,
    RDFS_LABEL,
    SOURCE_GRAPH,
    XSD_BOOLEAN,
    XSD_DATETIME,
    XSD_DOUBLE,
    XSD_INTEGER,
    dcterms,
    prov,
    tg,
)


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


def activity_iri(sha256: str, options: DecodeOptions, versions: dict[str, str]) -> str:
    """The decode run of these bytes with these settings by these software versions."""
    return derived_iri("activity", sha256, options.settings_key(), *sorted(versions.items()))


def agent_iri(versions: dict[str, str]) -> str:
    return derived_iri("agent", *sorted(versions.items()))


def _int(value: int) -> Literal:
    return Literal(str(int(value)), datatype=XSD_INTEGER)


def _double(value: float) -> Literal:
    return Literal(repr(float(value)), datatype=XSD_DOUBLE)


def _bool(value: bool) -> Literal:
    return Literal("true" if value else "false", datatype=XSD_BOOLEAN)


def _time(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD_DATETIME)


def _text(value: str) -> Literal:
    return Literal(value)


def _typed(value) -> Literal:
    """A Python value as the literal of its XSD type (bool, int, float, datetime; anything else a string)."""
    if isinstance(value, bool):
        return _bool(value)
    if isinstance(value, int):
        return _int(value)
    if isinstance(value, float):
        return _double(value)
    if isinstance(value, datetime):
        return _time(value)
    return _text(str(value))


class _Writer:
    """Collects quads in the source graph."""

    def __init__(self) -> None:
        self.quads: list[Quad] = []

    def add(self, subject: NamedNode, predicate: NamedNode, obj) -> None:
        self.quads.append(Quad(subject, predicate, obj, SOURCE_GRAPH))

    def add_optional(self, subject: NamedNode, predicate: NamedNode, value, convert) -> None:
        if value is not None:
            self.add(subject, predicate, convert(value))


def document_quads(record: DocumentRecord) -> list[Quad]:
    """All quads of one decode: document, activity, agent, pages, sections, elements, images."""
    out = _Writer()
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
    return out.quads


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


def _describe_document(out: _Writer, record: DocumentRecord, document: NamedNode) -> None:
    out.add(document, RDF_TYPE, tg("Document"))
    out.add(document, tg("mimeType"), _text(record.mime_type))
    out.add(document, tg("format"), _text(record.format))
    out.add(document, tg("sha256"), _text(record.sha256))
    out.add(document, tg("byteSize"), _int(record.byte_size))
    out.add_optional(document, tg("fileName"), record.file_name, _text)
    out.add_optional(document, dcterms("title"), record.title, _text)
    out.add(document, tg("charLength"), _int(record.document_text_length))
    pages = [s for s in record.segments if s.kind == "page"]
    if record.page_based:
        out.add(document, tg("pageCount"), _int(len(pages)))
    out.add_optional(document, tg("pageNumbersFrom"), record.page_numbers_from, _text)
    out.add(document, tg("sectionCount"), _int(sum(1 for s in record.segments if s.kind == "section")))
    out.add(document, tg("elementCount"), _int(sum(1 for e in record.elements if not e.is_image)))
    out.add(document, tg("tableCount"), _int(sum(1 for e in record.elements if e.is_table)))
    out.add(document, tg("imageCount"), _int(sum(1 for e in record.elements if e.is_image)))


def _describe_agent(out: _Writer, versions: dict[str, str]) -> NamedNode:
    """The software agent of a run: kg-decoder with the versions of what it runs on."""
    agent = NamedNode(agent_iri(versions))
    out.add(agent, RDF_TYPE, prov("SoftwareAgent"))
    out.add(agent, RDFS_LABEL, _text("kg-decoder " + versions.get("kg-decoder", "")))
    for name, version in sorted(versions.items()):
        out.add(agent, tg("softwareVersion"), _text(f"{name} {version}"))
    return agent


def _describe_activity(out: _Writer, record: DocumentRecord, activity: NamedNode, document: NamedNode) -> None:
    agent = _describe_agent(out, record.versions)
    options = record.options
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("Decoding"))
    out.add(activity, prov("used"), document)
    out.add(activity, prov("wasAssociatedWith"), agent)
    out.add(activity, prov("startedAtTime"), _time(record.started))
    out.add(activity, prov("endedAtTime"), _time(record.ended))
    out.add(activity, tg("requestedStrategy"), _text(options.strategy))
    out.add(activity, tg("partitionStrategy"), _text(record.strategy))
    out.add(activity, tg("ocrLanguages"), _text(options.ocr_languages))
    out.add(activity, tg("sectionStrategy"), _text(options.section_strategy))
    out.add(activity, tg("sectionElementCount"), _int(options.section_element_count))
    out.add(activity, tg("sectionMaxSize"), _int(options.section_max_size))
    out.add(activity, tg("sectionWithinPages"), _bool(options.section_within_pages))
    out.add(activity, tg("maxImageBytes"), _int(options.max_image_bytes))
    out.add(activity, tg("maxImagePixels"), _int(options.max_image_pixels))
    out.add(activity, tg("renderedPositions"), _bool(options.rendered_positions))
    out.add(activity, tg("imageOcr"), _text(options.image_ocr))
    out.add(activity, tg("pdfTables"), _bool(options.pdf_tables))
    out.add(activity, tg("minImageTextConfidence"), _double(options.min_image_text_confidence))
    out.add_optional(activity, tg("encoding"), options.encoding, _text)
    out.add(activity, tg("settingsKey"), _text(options.settings_key()))
    for warning in record.warnings:
        out.add(activity, tg("warning"), _text(warning))
    for number, problem in enumerate(record.problems):
        _describe_problem(out, problem, NamedNode(derived_iri("problem", record.activity_iri, number)), activity,
                          document)


def _describe_problem(out: _Writer, problem: Problem, node: NamedNode, activity: NamedNode,
                      document: NamedNode) -> None:
    """What a decode could not do: an entity its run generated, about its document."""
    out.add(node, RDF_TYPE, prov("Entity"))
    out.add(node, RDF_TYPE, tg("Problem"))
    out.add(node, prov("wasDerivedFrom"), document)
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(activity, tg("problem"), node)
    out.add(node, tg("problemCode"), _text(problem.code))
    out.add(node, tg("problemMessage"), _text(problem.message))
    out.add_optional(node, tg("pageNumber"), problem.page_number, _int)
    out.add_optional(node, tg("elementKind"), problem.element_kind, _text)


def _describe_rendering(out: _Writer, record: DocumentRecord, activity: NamedNode, document: NamedNode) -> None:
    """The rendering the decode placed elements on: a run of its own, which informed the decode."""
    node = NamedNode(record.rendering_iri)
    out.add(node, RDF_TYPE, prov("Activity"))
    out.add(node, RDF_TYPE, tg("Rendering"))
    out.add(node, prov("used"), document)
    out.add(node, tg("renderer"), _text(record.rendering.renderer))
    out.add(node, tg("renderedPageCount"), _int(len(record.rendering.page_sizes)))
    out.add(activity, prov("wasInformedBy"), node)


def _describe_segment(out: _Writer, record: DocumentRecord, segment: Segment, document: NamedNode,
                      activity: NamedNode) -> None:
    node = NamedNode(record.segment_iris[segment.index])
    parent = NamedNode(record.segment_iris[segment.parent]) if segment.parent is not None else document
    out.add(node, RDF_TYPE, tg("Page" if segment.kind == "page" else "Section"))
    out.add(node, prov("wasDerivedFrom"), parent)
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("segmentIndex"), _int(segment.index))
    out.add(node, tg("charOffset"), _int(segment.char_offset))
    out.add(node, tg("charLength"), _int(len(segment.text)))
    out.add(node, tg("sha256"), _text(record.segment_sha256[segment.index]))
    out.add(node, tg("textDocument"), _bool(segment.carries_text))
    if segment.kind == "section":
        out.add_optional(node, tg("jsonPointer"), segment.json_pointer, _text)
        out.add(node, tg("extentLength"), _int(segment.extent_length))
        out.add_optional(node, tg("sectionLevel"), segment.level, _int)
        out.add_optional(node, dcterms("title"), segment.title, _text)
        if segment.parent is not None and record.segments[segment.parent].kind == "section":
            out.add(node, tg("parentSection"), parent)
    out.add_optional(node, tg("pageNumber"), segment.page_number, _int)
    page = record.pages.get(segment.page_number) if segment.kind == "page" else None
    if page is not None:
        out.add_optional(node, tg("pageWidth"), page.width, _double)
        out.add_optional(node, tg("pageHeight"), page.height, _double)
        out.add_optional(node, tg("coordinateSystem"), page.coordinate_system, _text)
        out.add_optional(node, tg("sheetName"), page.name, _text)
        out.add_optional(node, tg("partitionStrategy"), page.strategy, _text)
        out.add_optional(node, tg("confidence"), page.confidence, _double)
    members = [record.elements[i] for i in segment.elements]
    categories = sorted({e.category for e in members} | {record.elements[i].category for i in segment.images})
    out.add(node, tg("elementTypes"), _text(",".join(categories)))
    out.add(node, tg("elementCount"), _int(len(members)))
    out.add(node, tg("tableCount"), _int(sum(1 for e in members if e.is_table)))
    out.add(node, tg("imageCount"), _int(_image_count(record, segment)))


def _image_count(record: DocumentRecord, segment: Segment) -> int:
    """Images in this segment, including those of the sections a page holds."""
    count = len(segment.images)
    if not segment.carries_text:
        count += sum(len(s.images) for s in record.segments if s.parent == segment.index)
    return count


def _describe_element(out: _Writer, record: DocumentRecord, links: _ElementLinks, element: Element,
                      activity: NamedNode) -> None:
    node = NamedNode(record.element_iris[element.index])
    holder, span = links.holder[element.index]
    out.add(node, RDF_TYPE, tg("Image" if element.is_image else ("Table" if element.is_table else "Element")))
    if element.is_table:
        out.add(node, RDF_TYPE, tg("Element"))
    out.add(node, prov("wasDerivedFrom"), NamedNode(record.segment_iris[holder.index]))
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("category"), _text(element.category))
    out.add(node, tg("elementIndex"), _int(element.index))
    if span is not None:
        out.add(node, tg("charOffset"), _int(span.offset))
        out.add(node, tg("charLength"), _int(span.length))
    if element.is_image:
        _describe_image(out, record, element, node)
        previous = links.previous_text.get(element.index)
        if previous is not None:
            out.add(node, tg("followsElement"), NamedNode(record.element_iris[previous]))
    else:
        out.add(node, tg("text"), _text(element.text))
        # Text read from the file (a text layer, markup) is certain; OCR and layout models say how sure they are.
        out.add(node, tg("confidence"), _double(element.confidence if element.confidence is not None else 1.0))
    out.add_optional(node, tg("unstructuredElementId"), element.element_id, _text)
    if element.index in links.parent:
        out.add(node, tg("parentElement"), NamedNode(record.element_iris[links.parent[element.index]]))
    out.add_optional(node, tg("headingDepth"), element.depth, _int)
    out.add_optional(node, tg("jsonPointer"), element.json_pointer, _text)
    out.add_optional(node, tg("pageNumber"), element.page_number, _int)
    if record.format in ("pptx", "ppt"):
        out.add_optional(node, tg("slideNumber"), element.page_number, _int)
    out.add_optional(node, tg("sheetName"), element.page_name, _text)
    if not element.is_image:  # an image's anchor cell is among its own properties
        out.add_optional(node, tg("anchorCell"), element.anchor_cell, _text)
    for name, value in sorted((element.properties or {}).items()):  # a form field's name, a comment's author...
        out.add(node, tg(name), _typed(value))
    if element.bbox is not None:
        _describe_place(out, record, node, element, element.bbox)
        out.add_optional(node, tg("verification"), element.verification, _text)


def _describe_place(out: _Writer, record: DocumentRecord, node: NamedNode, element: Element, box) -> None:
    """A box on the element's page, or on the page of the document's rendering the element is on."""
    if element.rendered_page is not None and record.rendering is not None:
        width, height = record.rendering.page_sizes[element.rendered_page - 1]
        out.add(node, tg("renderedPageNumber"), _int(element.rendered_page))
        out.add(node, tg("positionFrom"), NamedNode(record.rendering_iri))
        _describe_box(out, node, box, width, height, RENDERED_PDF_POINTS)
    else:
        page = record.pages.get(element.page_number) or Page(number=element.page_number or 0)
        _describe_box(out, node, box, page.width, page.height, page.coordinate_system)


def _describe_image(out: _Writer, record: DocumentRecord, element: Element, node: NamedNode) -> None:
    """An image: its bytes in the library (or why not), type, pixel size, alt text, where it came from."""
    out.add_optional(node, tg("altText"), element.text or None, _text)
    out.add_optional(node, tg("sourceUrl"), element.image_url, _text)
    sha256 = record.image_sha256.get(element.index)
    if sha256 is not None:
        out.add(node, tg("sha256"), _text(sha256))
    if element.image_data is not None:
        out.add(node, tg("byteSize"), _int(len(element.image_data)))
    reason = record.image_skipped.get(element.index)
    if reason is None and sha256 is None and element.image_url is None:
        reason = "no bytes: the image could not be read from the document"
    out.add_optional(node, tg("skippedReason"), reason, _text)
    out.add_optional(node, tg("mimeType"), element.image_mime, _text)
    out.add_optional(node, tg("pixelWidth"), element.image_width, _int)
    out.add_optional(node, tg("pixelHeight"), element.image_height, _int)
    out.add_optional(node, tg("anchorCell"), element.anchor_cell, _text)
    out.add_optional(node, tg("ocrSkippedReason"), element.image_text_skipped, _text)


def _describe_image_text(out: _Writer, record: DocumentRecord, links: _ElementLinks, image: Element,
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
    out.add(node, tg("segmentIndex"), _int(segment_index))
    out.add(node, tg("charLength"), _int(len(found.text)))
    out.add(node, tg("sha256"), _text(record.image_text_sha256[image.index]))
    skipped = record.image_text_skipped(image)
    out.add(node, tg("textDocument"), _bool(skipped is None))
    out.add_optional(node, tg("notChunkedReason"), skipped, _text)
    out.add(node, tg("confidence"), _double(found.confidence))
    out.add(node, tg("ocrLanguages"), _text(found.languages))
    out.add(node, tg("ocrEngine"), _text(found.engine))
    out.add(node, tg("wordCount"), _int(len(found.words)))
    page_number = image.page_number if image.page_number is not None else links.holder[image.index][0].page_number
    out.add_optional(node, tg("pageNumber"), page_number, _int)
    placed = image.bbox is not None and all(found.pixel_size) and not image.image_turned and (
        image.rendered_page is not None or page_number in record.pages)
    for k, word in enumerate(found.words):
        word_node = NamedNode(record.ocr_word_iri(image.index, k))
        out.add(word_node, RDF_TYPE, tg("OcrWord"))
        out.add(word_node, prov("wasDerivedFrom"), node)
        out.add(word_node, prov("wasGeneratedBy"), activity)
        out.add(word_node, tg("category"), _text("OcrWord"))
        out.add(word_node, tg("elementIndex"), _int(k))
        out.add(word_node, tg("charOffset"), _int(word.start))
        out.add(word_node, tg("charLength"), _int(len(word.text)))
        out.add(word_node, tg("text"), _text(word.text))
        out.add(word_node, tg("confidence"), _double(word.confidence))
        left, top, right, bottom = word.box
        out.add(word_node, tg("pixelLeft"), _double(left))
        out.add(word_node, tg("pixelTop"), _double(top))
        out.add(word_node, tg("pixelRight"), _double(right))
        out.add(word_node, tg("pixelBottom"), _double(bottom))
        out.add_optional(word_node, tg("pageNumber"), page_number, _int)
        if placed:
            box = found.page_box(word, image.bbox)
            _describe_place(out, record, word_node, image, box)


def _describe_cells(out: _Writer, record: DocumentRecord, table: Element, activity: NamedNode) -> None:
    """The table as a rectangular matrix of cells, each derived from the table element.

    A cell's offsets point into its table's assembled text (the ``<table>`` markup).
    """
    node = NamedNode(record.element_iris[table.index])
    matrix = table.table
    if matrix is None:
        return
    out.add(node, tg("rowCount"), _int(matrix.rows))
    out.add(node, tg("columnCount"), _int(matrix.columns))
    settings = record.options.settings_key()
    for cell in matrix.cells:
        iri = NamedNode(derived_iri("cell", record.sha256, settings, table.index, cell.row, cell.column))
        out.add(iri, RDF_TYPE, tg("TableCell"))
        out.add(iri, prov("wasDerivedFrom"), node)
        out.add(iri, prov("wasGeneratedBy"), activity)
        out.add(iri, tg("rowIndex"), _int(cell.row))
        out.add(iri, tg("columnIndex"), _int(cell.column))
        out.add(iri, tg("rowSpan"), _int(cell.row_span))
        out.add(iri, tg("columnSpan"), _int(cell.column_span))
        out.add(iri, tg("isHeader"), _bool(cell.header))
        out.add(iri, tg("isPadding"), _bool(cell.padding))
        if cell.confidence is not None:
            certainty = cell.confidence
        else:
            certainty = 0.0 if cell.padding else (table.confidence if table.confidence is not None else 1.0)
        out.add(iri, tg("confidence"), _double(certainty))
        if cell.bbox is not None:
            out.add_optional(iri, tg("pageNumber"), table.page_number, _int)
            _describe_place(out, record, iri, table, cell.bbox)
        if not cell.padding:
            out.add(iri, tg("text"), _text(cell.text))
            out.add(iri, tg("charOffset"), _int(cell.start))
            out.add(iri, tg("charLength"), _int(cell.end - cell.start))
        out.add_optional(iri, tg("cellReference"), cell.reference, _text)


# ---------------------------------------------------------------- chunks


@dataclass
class ChunkRecord:
    """One chunking run over a document: per text-carrying segment, its chunks and their anchors."""

    document: str
    decode_activity: str
    options: ChunkOptions
    segments: list[tuple[str, list[Chunk], list[list[Anchor]]]]
    chunk_sha256: list[list[str]]
    started: datetime
    ended: datetime
    versions: dict[str, str]

    @property
    def activity_iri(self) -> str:
        return chunking_activity_iri(self.decode_activity, self.options, self.versions)

    def chunk_iri(self, segment_iri: str, position: int) -> str:
        return derived_iri("chunk", segment_iri, self.options.settings_key(), position)


def chunking_activity_iri(decode_activity: str, options: ChunkOptions, versions: dict[str, str]) -> str:
    """The chunking run over one decode with these settings by these software versions."""
    return derived_iri("activity", "chunking", decode_activity, options.settings_key(), *sorted(versions.items()))


def chunk_quads(record: ChunkRecord) -> list[Quad]:
    """The chunking activity, every chunk with its offsets and token count, and its citation anchors."""
    out = _Writer()
    activity = NamedNode(record.activity_iri)
    options = record.options
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("Chunking"))
    out.add(activity, prov("used"), NamedNode(record.document))
    out.add(activity, prov("wasInformedBy"), NamedNode(record.decode_activity))
    out.add(activity, prov("wasAssociatedWith"), _describe_agent(out, record.versions))
    out.add(activity, prov("startedAtTime"), _time(record.started))
    out.add(activity, prov("endedAtTime"), _time(record.ended))
    out.add(activity, tg("tokenizer"), _text(TOKENIZER))
    out.add(activity, tg("chunkSize"), _int(options.chunk_size))
    out.add(activity, tg("chunkOverlap"), _int(options.overlap))
    out.add(activity, tg("minChunkTokens"), _int(options.min_chunk_tokens))
    out.add(activity, tg("boundaryWindow"), _int(options.window))
    out.add(activity, tg("headingPrefix"), _bool(options.heading_prefix))
    index = 0
    for (segment_iri, chunks, anchors), hashes in zip(record.segments, record.chunk_sha256):
        segment = NamedNode(segment_iri)
        for position, (chunk, chunk_anchors, sha256) in enumerate(zip(chunks, anchors, hashes)):
            iri = record.chunk_iri(segment_iri, position)
            node = NamedNode(iri)
            out.add(node, RDF_TYPE, tg("Chunk"))
            out.add(node, prov("wasDerivedFrom"), segment)
            out.add(node, prov("wasGeneratedBy"), activity)
            out.add(node, tg("chunkIndex"), _int(index))
            out.add(node, tg("charOffset"), _int(chunk.start))
            out.add(node, tg("charLength"), _int(chunk.end - chunk.start))
            out.add(node, tg("prefixLength"), _int(len(chunk.prefix)))
            out.add(node, tg("tokenCount"), _int(chunk.tokens))
            out.add(node, tg("sha256"), _text(sha256))
            if chunk.heading_path:
                out.add(node, tg("headingPath"), _text(HEADING_SEPARATOR.join(chunk.heading_path)))
            for anchor in chunk_anchors:
                _describe_anchor(out, iri, anchor, activity)
            index += 1
    return out.quads


def _describe_anchor(out: _Writer, chunk_iri: str, anchor: Anchor, activity: NamedNode) -> None:
    node = NamedNode(derived_iri("anchor", chunk_iri, anchor.page_number))
    out.add(node, RDF_TYPE, tg("CitationAnchor"))
    out.add(node, prov("wasDerivedFrom"), NamedNode(chunk_iri))
    out.add(node, prov("wasGeneratedBy"), activity)
    out.add(node, tg("pageNumber"), _int(anchor.page_number))
    if anchor.page_iri is not None:
        out.add(node, tg("page"), NamedNode(anchor.page_iri))
    if anchor.bbox is not None:
        _describe_box(out, node, anchor.bbox, anchor.page_width, anchor.page_height, anchor.coordinate_system)
    out.add(node, tg("verification"), _text(str(anchor.verification)))


def _describe_box(out: _Writer, node: NamedNode, bbox, width: Optional[float], height: Optional[float],
                  coordinate_system: Optional[str]) -> None:
    """A box on a page, with the page size and coordinate system it is measured in."""
    left, top, right, bottom = bbox
    out.add(node, tg("bboxLeft"), _double(left))
    out.add(node, tg("bboxTop"), _double(top))
    out.add(node, tg("bboxRight"), _double(right))
    out.add(node, tg("bboxBottom"), _double(bottom))
    out.add_optional(node, tg("pageWidth"), width, _double)
    out.add_optional(node, tg("pageHeight"), height, _double)
    out.add_optional(node, tg("coordinateSystem"), coordinate_system, _text)


# ---------------------------------------------------------------- facts


@dataclass
class SpanGroup:
    """Triples that share one span of a chunk's text (``span`` None: the extractor gave none)."""

    span: Optional[tuple[int, int]]
    quote: Optional[str]
    triples: list[Triple]


@dataclass
class FactRecord:
    """One call of an extractor's facts for one chunk."""

    chunk: str
    groups: list[SpanGroup]
    extractor: Optional[str]
    started: datetime
    ended: datetime
    versions: dict[str, str]

    def subgraph_iri(self, group: SpanGroup) -> str:
        triples = sorted(str(t) for t in group.triples)
        return derived_iri("subgraph", self.chunk, group.span, *triples)

    @property
    def activity_iri(self) -> str:
        return derived_iri("activity", "extraction", *sorted(self.subgraph_iri(g) for g in self.groups))


def fact_quads(record: FactRecord) -> list[Quad]:
    """The facts in the default graph; their subgraphs and the extraction activity in the source graph."""
    out = _Writer()
    activity = NamedNode(record.activity_iri)
    out.add(activity, RDF_TYPE, prov("Activity"))
    out.add(activity, RDF_TYPE, tg("FactExtraction"))
    out.add(activity, prov("used"), NamedNode(record.chunk))
    out.add(activity, prov("startedAtTime"), _time(record.started))
    out.add(activity, prov("endedAtTime"), _time(record.ended))
    out.add(activity, prov("wasAssociatedWith"), _describe_agent(out, record.versions))
    out.add_optional(activity, tg("extractor"), record.extractor, _text)
    for group in record.groups:
        node = NamedNode(record.subgraph_iri(group))
        out.add(node, RDF_TYPE, tg("Subgraph"))
        out.add(node, prov("wasDerivedFrom"), NamedNode(record.chunk))
        out.add(node, prov("wasGeneratedBy"), activity)
        if group.span is not None:
            out.add(node, tg("charOffset"), _int(group.span[0]))
            out.add(node, tg("charLength"), _int(group.span[1] - group.span[0]))
            out.add_optional(node, tg("text"), group.quote, _text)
        for triple in group.triples:
            out.add(node, tg("contains"), triple)
            out.quads.append(Quad(triple.subject, triple.predicate, triple.object, DefaultGraph()))
    return out.quads


# ---------------------------------------------------------------- failed decodes


@dataclass
class FailureRecord:
    """A decode that ended in a typed error: recorded (when asked) so an audit can list it."""

    sha256: str
    byte_size: int
    file_name: Optional[str]
    options: DecodeOptions
    code: str
    message: str
    started: datetime
    ended: datetime
    versions: dict[str, str]
    # The decoding of the document this one was embedded in, if it was.
    informed_by: Optional[str] = None

    @property
    def iri(self) -> str:
        return derived_iri("failure", self.sha256)


def failure_quads(record: FailureRecord, document: str) -> list[Quad]:
    """A tg:FailedDecoding run: what was tried on which bytes, and the error. No document entity."""
    out = _Writer()
    node = NamedNode(record.iri)
    out.add(node, RDF_TYPE, prov("Activity"))
    out.add(node, RDF_TYPE, tg("FailedDecoding"))
    out.add(node, tg("attemptedDocument"), NamedNode(document))
    out.add(node, tg("sha256"), _text(record.sha256))
    out.add(node, tg("byteSize"), _int(record.byte_size))
    out.add_optional(node, tg("fileName"), record.file_name, _text)
    out.add(node, tg("requestedStrategy"), _text(record.options.strategy))
    out.add(node, tg("errorCode"), _text(record.code))
    out.add(node, tg("errorMessage"), _text(record.message))
    out.add(node, prov("startedAtTime"), _time(record.started))
    out.add(node, prov("endedAtTime"), _time(record.ended))
    out.add(node, prov("wasAssociatedWith"), _describe_agent(out, record.versions))
    out.add_optional(node, prov("wasInformedBy"), record.informed_by, NamedNode)
    return out.quads


@dataclass(frozen=True)
class EmbeddingLink:
    """Where an embedded file sits: its parent document, the parent's page and element if known, its path there."""

    parent: str
    page: Optional[str]
    path: str
    element: Optional[str] = None


def embedding_quads(document: str, link: EmbeddingLink) -> list[Quad]:
    """A child document in its parent: tg:embeddedIn (a kind of prov:wasDerivedFrom), page and path.

    Not prov:wasDerivedFrom itself: everything derived from a document is found through that
    property, and a parent's pages and chunks do not include its attachments'.
    """
    out = _Writer()
    node = NamedNode(document)
    out.add(node, tg("embeddedIn"), NamedNode(link.parent))
    out.add_optional(node, tg("embeddedOn"), link.page, NamedNode)
    out.add_optional(node, tg("embeddedAt"), link.element, NamedNode)
    out.add(node, tg("embeddedPath"), _text(link.path))
    return out.quads


@dataclass(frozen=True)
class WebFetch:
    """How a document came from the web: its URL, when, the HTTP answer, and the page that linked to it."""

    url: str
    fetched: datetime
    status: int
    etag: Optional[str] = None
    last_modified: Optional[str] = None
    linked_from: Optional[str] = None  # the document IRI of the linking page


def fetch_quads(document: str, fetch: WebFetch) -> list[Quad]:
    """dcterms:source and the fetch (time, status, validators); tg:linkedFrom (a kind of prov:wasDerivedFrom)."""
    out = _Writer()
    node = NamedNode(document)
    out.add(node, dcterms("source"), NamedNode(fetch.url))
    out.add(node, tg("fetchedAt"), _time(fetch.fetched))
    out.add(node, tg("httpStatus"), _int(fetch.status))
    out.add_optional(node, tg("etag"), fetch.etag, _text)
    out.add_optional(node, tg("lastModified"), fetch.last_modified, _text)
    out.add_optional(node, tg("linkedFrom"), fetch.linked_from, NamedNode)
    return out.quads


def origin_quads(document: str, origin) -> list[Quad]:
    """Where a document came from: an :class:`EmbeddingLink` or a :class:`WebFetch`."""
    return embedding_quads(document, origin) if isinstance(origin, EmbeddingLink) else fetch_quads(document, origin)


def as_nquads(quads: list[Quad]) -> bytes:
    """Quads serialised as N-Quads (how the worker hands them to the store's owner)."""
    return serialize(quads, format=RdfFormat.N_QUADS) or b""
