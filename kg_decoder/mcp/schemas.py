"""What the MCP tools answer, as pydantic models: each is published as its tool's output schema
(:func:`published`), and each structured result is such a model, built (and so checked) by the tool
and dumped to JSON once (:mod:`kg_decoder.mcp.server`).

Field names are those of the Python API's results (``kg_decoder.model``), so an agent reading the
JSON and a program calling :func:`kg_decoder.trace` see the same words.
"""

from typing import Any, Optional

from pydantic import BaseModel, Field


class PageBox(BaseModel):
    """A rectangle on a page holding the quoted words (or the element around them)."""

    page_number: int = Field(description="page it is on, from 1 (for a rendering: the rendering's page)")
    left: float
    top: float
    right: float
    bottom: float
    page_width: Optional[float] = None
    page_height: Optional[float] = None
    coordinate_system: Optional[str] = Field(None, description="e.g. pdf-points-top-left; "
                                                               "rendered-pdf-points-top-left for an Office rendering")
    verification: str = Field(description="verified: a second reading of the page finds the words under the box; "
                                          "element: the box of the whole element; unverified: nothing could check it")


class SearchPlace(BaseModel):
    """One place a searched quote is found."""

    document: str = Field(description="the document's IRI")
    file_name: Optional[str] = None
    page_number: Optional[int] = Field(None, description="page, from 1; none for a section of a document "
                                                         "without pages")
    segment: str = Field(description="IRI of the page or section whose text holds the quote")
    segment_kind: str
    start: int = Field(description="offset of the quote in the segment's text")
    end: int
    quote: str = Field(description="the text as stored")
    as_written: bool = Field(description="the stored text has the quote exactly as given (not only once folded)")
    before: str = Field(description="text just before the quote")
    after: str = Field(description="text just after the quote")
    verification: str = Field(description="the weakest verification of its boxes (none: no box)")
    boxes: list[PageBox] = Field(default_factory=list)
    chunks: list[str] = Field(default_factory=list, description="IRIs of the chunks holding the quote")


class SearchAnswer(BaseModel):
    query: str
    found: bool
    message: str = Field(description="what was found, in a sentence")
    total: int = Field(description="places found (a lower bound unless total_exact)")
    total_exact: bool
    offset: int
    places: list[SearchPlace] = Field(default_factory=list)


class VerdictStep(BaseModel):
    """What one later version of the fact's source says of its quote."""

    source: str
    version: int
    document: str
    verdict: str = Field(description="current | moved | changed | removed")
    page_number: Optional[int] = None
    previous_page_number: Optional[int] = None
    text: Optional[str] = None
    previous_text: Optional[str] = None


class LatestPlace(BaseModel):
    """Where the latest version that still holds the fact's quote has it."""

    document: str
    page_number: Optional[int] = None
    segment: str
    quote: str
    verification: str
    boxes: list[PageBox] = Field(default_factory=list)


class TracedPlace(BaseModel):
    """One place a fact or quote comes from."""

    document: str = Field(description="the document's IRI")
    file_name: Optional[str] = None
    title: Optional[str] = None
    mime_type: str
    page_number: Optional[int] = None
    page: Optional[str] = Field(None, description="the page's IRI")
    section: Optional[str] = Field(None, description="the section's IRI")
    heading_path: list[str] = Field(default_factory=list)
    segment: str
    segment_kind: str
    start: int
    end: int
    quote: str
    chunks: list[str] = Field(default_factory=list)
    fact: Optional[str] = Field(None, description="the fact, as N-Triples, for a traced fact")
    subgraph: Optional[str] = None
    elements: list[str] = Field(default_factory=list, description="IRIs of the elements the quote is in")
    verification: str = Field(description="the weakest verification of its boxes (none: no box)")
    boxes: list[PageBox] = Field(default_factory=list)
    verdicts: list[VerdictStep] = Field(default_factory=list, description="for a fact whose source has later "
                                                                          "versions: what each says of it")
    latest: Optional[LatestPlace] = None


class TraceAnswer(BaseModel):
    found: bool
    message: str
    places: list[TracedPlace] = Field(default_factory=list)
    annotation: dict[str, Any] = Field(description="the same places as a W3C Web Annotation collection (JSON-LD)")


class PageImageAnswer(BaseModel):
    document: str
    page_number: int
    drawn_from: str = Field(description="page: the document's own page; rendering: the page of the rendering "
                                        "its text was placed on (Office documents)")
    width: int
    height: int
    mime_type: str
    boxes_drawn: int


class DocumentItem(BaseModel):
    document: str
    file_name: Optional[str] = None
    title: Optional[str] = None
    format: str
    mime_type: str
    pages: Optional[int] = None
    sections: int
    elements: int
    tables: int
    images: int
    resource: str = Field(description="the document's MCP resource URI")


class DocumentList(BaseModel):
    total: int
    offset: int
    documents: list[DocumentItem] = Field(default_factory=list)
    left_out: int = Field(description="documents after this page (ask again with offset)")


class SegmentItem(BaseModel):
    segment: str
    kind: str = Field(description="page, section or image (a picture's OCR text)")
    page_number: Optional[int] = None
    characters: int


class TableItem(BaseModel):
    element: str
    page_number: Optional[int] = None
    rows: int
    columns: int


class ImageItem(BaseModel):
    image: str
    page_number: Optional[int] = None
    width: Optional[int] = None
    height: Optional[int] = None
    has_text: bool = Field(description="OCR read words in it")


class DocumentOutline(BaseModel):
    document: str
    file_name: Optional[str] = None
    title: Optional[str] = None
    format: str
    mime_type: str
    pages: Optional[int] = None
    counts: dict[str, int] = Field(description="pages, sections, elements, tables, images, chunks, and elements by "
                                               "category")
    segments: list[SegmentItem] = Field(default_factory=list, description="pages and sections, in order")
    tables: list[TableItem] = Field(default_factory=list)
    images: list[ImageItem] = Field(default_factory=list)
    truncated: bool = Field(description="lists were cut to their first items")


class SparqlAnswer(BaseModel):
    kind: str = Field(description="select, ask or construct")
    columns: list[str] = Field(default_factory=list)
    rows: list[dict[str, Optional[str]]] = Field(default_factory=list, description="SELECT: one object a row")
    boolean: Optional[bool] = Field(None, description="ASK: the answer")
    triples: Optional[str] = Field(None, description="CONSTRUCT: the graph as N-Triples")
    row_count: int


class AuditTable(BaseModel):
    audit: str
    title: str
    finds: str
    kind: str = Field(description="finding (rows are problems) or report")
    columns: list[str] = Field(default_factory=list)
    rows: list[dict[str, Any]] = Field(default_factory=list)
    total_rows: int
    error: Optional[str] = Field(None, description="why it has no rows: past its time limit, or failed")
    seconds: Optional[float] = None


class AuditAnswer(BaseModel):
    audits: list[AuditTable] = Field(default_factory=list)
    with_findings: int


class DecodedFile(BaseModel):
    path: str
    document: Optional[str] = None
    status: str = Field(description="decoded, unchanged, partial... or failed")
    format: Optional[str] = None
    pages: int = 0
    elements: int = 0
    tables: int = 0
    images: int = 0
    chunks: int = 0
    error: Optional[str] = None


class DecodeAnswer(BaseModel):
    files: list[DecodedFile] = Field(default_factory=list)


class FactOutcome(BaseModel):
    fact: int = Field(description="the fact's place in the call, from 1")
    grounding: Optional[str] = Field(None, description="exact, normalised, fuzzy, inferred or unsupported (an "
                                                       "unsupported fact is stored, with no box); none: refused")
    chunk: Optional[str] = Field(None, description="the chunk it is tied to")
    subgraph: Optional[str] = Field(None, description="the subgraph that holds it")
    score: Optional[float] = Field(None, description="how alike a fuzzy match is (Dice coefficient of words)")
    reason: Optional[str] = Field(None, description="why it was refused, or why it is unsupported")


class FactsAnswer(BaseModel):
    facts: int = Field(description="facts stored")
    counts: dict[str, int] = Field(default_factory=dict, description="facts stored by grounding")
    outcomes: list[FactOutcome] = Field(default_factory=list)


def published(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (pydantic's JSON Schema of an answer) as a tool's output schema is published: each
    ``$ref`` to ``$defs`` replaced by the definition, and an optional value's ``anyOf`` of a type and
    null written ``"type": [type, "null"]``. It accepts the same documents; a client checks an answer
    against it faster (the SDK's client checks every structured result: a trace's answer in 0.36 ms
    instead of 0.55, where most of the time went to resolving references).

    >>> published({"$defs": {"B": {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"},
    ...            {"type": "null"}], "default": None}}}}, "type": "object",
    ...            "properties": {"b": {"items": {"$ref": "#/$defs/B"}, "type": "array"}}})
    {'type': 'object', 'properties': {'b': {'items': {'type': 'object', 'properties': {'n': {'default': None, 'type': ['integer', 'null']}}}, 'type': 'array'}}}
    """
    definitions = schema.get("$defs", {})

    def rewrite(node: Any, seen: tuple[str, ...]) -> Any:
        if isinstance(node, list):
            return [rewrite(item, seen) for item in node]
        if not isinstance(node, dict):
            return node
        reference = node.get("$ref")
        if isinstance(reference, str) and reference.startswith("#/$defs/") and set(node) - {"$ref"} <= _ANNOTATIONS:
            name = reference[len("#/$defs/"):]
            if name not in seen and name in definitions:  # a recursive model keeps its references
                inlined = rewrite(definitions[name], seen + (name,))
                return {**inlined, **{key: value for key, value in node.items() if key != "$ref"}}
        rewritten = {key: rewrite(value, seen) for key, value in node.items() if key != "$defs"}
        alternatives = rewritten.get("anyOf")
        if isinstance(alternatives, list) and len(alternatives) == 2 and {"type": "null"} in alternatives:
            other = alternatives[0] if alternatives[1] == {"type": "null"} else alternatives[1]
            if isinstance(other, dict) and isinstance(other.get("type"), str) and set(other) <= {"type", "items"}:
                del rewritten["anyOf"]
                rewritten.update(other, type=[other["type"], "null"])
        return rewritten

    result = rewrite(schema, ())
    if any(isinstance(node, dict) and "$ref" in node for node in _nodes(result)):
        result["$defs"] = definitions  # a recursive model: its references still resolve
    return result


_ANNOTATIONS = {"title", "description", "default", "examples"}


def _nodes(node: Any):
    yield node
    children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
    for child in children:
        yield from _nodes(child)
