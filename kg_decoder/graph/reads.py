"""Typed reads: every shipped SELECT as a method that returns dataclasses.

The stages above ``graph/`` never see a query row or a vocabulary IRI: they call these
methods. Each dataclass has one field per variable the query's header ``# Returns:`` (the
camelCase names in snake_case); a test runs every query and checks the two agree.
"""

from __future__ import annotations

import re
from dataclasses import fields
from typing import Optional, TypeVar

from pyoxigraph import Literal

from ..model import ImageInfo, Problem, Rows
from .rows import (AnchorRow, ChunkRow, DecodeRun, DetachedSubgraph, DocumentFailure, DocumentInfo, DocumentState,
                   DocumentSummary, ElementRow, EntityCount, FactRow, FactSource, ImageContent, PageInfo, RenderingRun,
                   SectionTitle, SegmentRow, TableCellRow, TextElement, WebFetchState, typed_rows)
from .terms import is_iri

Row = TypeVar("Row")


def snake(name: str) -> str:
    """``pageNumber`` -> ``page_number``.

    >>> snake("coordinateSystem")
    'coordinate_system'
    """
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


_IMAGE_FIELDS = {"image": "iri", "pixel_width": "width", "pixel_height": "height"}


class GraphReads:
    """The typed reads of a store; mixed into :class:`~kg_decoder.graph.store.KgStore`.

    The store gives ``_rows(name, **bindings) -> list[dict]`` (snake_case keys, Python values).
    """

    def _rows(self, name: str, **bindings) -> list[dict]:  # pragma: no cover - the store's
        raise NotImplementedError

    def _read(self, name: str, kind: type[Row], **bindings) -> list[Row]:
        return typed_rows(self._rows(name, **bindings), kind)

    def _one(self, name: str, kind: type[Row], **bindings) -> Optional[Row]:
        found = self._read(name, kind, **bindings)
        return found[0] if found else None

    # ------------------------------------------------------------ documents

    def document_summaries(self, document: Optional[str] = None) -> list[DocumentSummary]:
        """Every document (or one), with its format and counts, by file name."""
        return self._read("document_summary", DocumentSummary, document=document)

    def document_info(self, document: str) -> Optional[DocumentInfo]:
        return self._one("document_info", DocumentInfo, document=document)

    def document_states(self, document: str) -> list[DocumentState]:
        """What the store holds of a document: one row per decode activity (none: not stored)."""
        return self._read("document_state", DocumentState, document=document)

    def holds_documents(self) -> bool:
        """Whether the store holds any document."""
        return bool(self._rows("any_document"))

    def has_document(self, document: str) -> bool:
        return is_iri(document) and bool(self.document_states(document))

    def documents_named(self, file_name: str) -> list[str]:
        """The documents decoded from a file of this name (the last part of its path)."""
        return [row["document"] for row in self._rows("documents_named", fileName=Literal(file_name))]

    def document_failure(self, document: str) -> Optional[DocumentFailure]:
        return self._one("document_failure", DocumentFailure, document=document)

    def decode_problems(self, document: str) -> list[Problem]:
        """What the stored decode of a document could not do (empty: it was decoded whole)."""
        return [Problem(row["code"], row["message"], row.get("page_number"), row.get("element_kind"))
                for row in self._rows("decode_problems", document=document)]

    def decode_run(self, document: str) -> Optional[DecodeRun]:
        rows = self._rows("decode_activity", document=document)
        if not rows:
            return None
        names = {f.name for f in fields(DecodeRun)} - {"versions"}
        run = DecodeRun(**{k: v for k, v in rows[0].items() if k in names})
        run.versions = sorted({row["version"] for row in rows if "version" in row})
        return run

    def rendering_run(self, document: str) -> Optional[RenderingRun]:
        """The rendering the document's elements were placed on, if any."""
        return self._one("document_rendering", RenderingRun, document=document)

    def document_pages(self, document: str) -> list[PageInfo]:
        return self._read("document_pages", PageInfo, document=document)

    def document_segments(self, document: str) -> list[SegmentRow]:
        return self._read("document_segments", SegmentRow, document=document)

    def text_segments(self, document: Optional[str] = None) -> list[SegmentRow]:
        """The pages and sections whose text goes downstream, of one document or of all."""
        return self._read("text_documents", SegmentRow, document=document)

    def document_elements(self, document: str) -> list[ElementRow]:
        return self._read("document_elements", ElementRow, document=document)

    def document_text_elements(self, document: str) -> list[TextElement]:
        return self._read("document_text_elements", TextElement, document=document)

    def document_images(self, document: str) -> list[ImageInfo]:
        images = []
        for row in self._rows("document_images", document=document):
            values = {_IMAGE_FIELDS.get(k, k): v for k, v in row.items() if k != "document"}
            box = [values.pop(side, None) for side in ("left", "top", "right", "bottom")]
            images.append(ImageInfo(**values, bbox=tuple(box) if None not in box else None))
        return images

    def image_content(self, image: str) -> Optional[ImageContent]:
        return self._one("image_content", ImageContent, image=image)

    def web_fetch_state(self, url: str) -> Optional[WebFetchState]:
        return self._one("web_fetch_state", WebFetchState, url=url)

    # ------------------------------------------------------------ segments and elements

    def segment_info(self, segment: str) -> Optional[SegmentRow]:
        return self._one("segment_info", SegmentRow, segment=segment)

    def segment_elements(self, segment: str) -> list[TextElement]:
        return self._read("segment_elements", TextElement, segment=segment)

    def segment_text_elements(self, segment: str) -> list[TextElement]:
        return self._read("segment_text_elements", TextElement, segment=segment)

    def section_titles(self, section: str) -> list[SectionTitle]:
        """The titles of a section and the sections it is nested in, outermost first."""
        return self._read("section_path", SectionTitle, section=section)

    def table_cells(self, table: str) -> list[TableCellRow]:
        return self._read("table_cells", TableCellRow, table=table)

    def entity_kinds(self, entity: str) -> set[str]:
        """The tg: classes of an entity by local name (``{"Chunk"}``); empty: the store does not hold it."""
        return {row["kind"] for row in self._rows("entity_types", entity=entity)}

    def content_hash(self, entity: str) -> Optional[str]:
        row = self._rows("content_hash", entity=entity)
        return row[0]["sha256"] if row else None

    # ------------------------------------------------------------ chunks and facts

    def chunk_info(self, chunk: str) -> Optional[ChunkRow]:
        return self._one("chunk_info", ChunkRow, chunk=chunk)

    def chunking_runs(self, document: str) -> list[str]:
        """The chunking activities the store holds for a document."""
        return [row["activity"] for row in self._rows("chunk_state", document=document)]

    def document_chunks(self, document: str) -> list[ChunkRow]:
        return self._read("document_chunks", ChunkRow, document=document)

    def document_chunk_anchors(self, document: str) -> list[AnchorRow]:
        return self._read("document_chunk_anchors", AnchorRow, document=document)

    def segment_chunks(self, segment: str) -> list[ChunkRow]:
        return self._read("segment_chunks", ChunkRow, segment=segment)

    def extracted_chunks(self, extractor: str, version: str) -> set[str]:
        """The chunks some extraction run of this extractor and version read (``kg-decoder extract``)."""
        return {row["chunk"] for row in self._rows("extracted_chunks", extractor=Literal(extractor),
                                                   extractorVersion=Literal(version))}

    def document_facts(self, document: str) -> list[FactRow]:
        """The facts cited to a document's chunks, in the chunks' order."""
        return self._read("document_facts", FactRow, document=document)

    def detached_subgraphs(self, document: str) -> list[DetachedSubgraph]:
        """A document's fact subgraphs detached from the chunks a later decode or chunking replaced."""
        return self._read("detached_subgraphs", DetachedSubgraph, document=document)

    def document_facts_first(self, document: str) -> list[FactRow]:
        """The first 1000 facts cited to a document's chunks, in the chunks' order (within a subgraph
        the store's): a page of them, read without sorting every fact."""
        return self._read("document_facts_first", FactRow, document=document)

    def document_chunk_count(self, document: str) -> int:
        """How many chunks a document's chunking made."""
        return self._rows("document_chunk_count", document=document)[0]["chunks"]

    def document_fact_count(self, document: str) -> int:
        """How many facts are cited to a document's chunks."""
        return self._rows("document_fact_count", document=document)[0]["facts"]

    def fact_sources(self, s, p, o) -> list[FactSource]:
        """The subgraphs holding a fact (RDF terms), each with its chunk and span."""
        return self._read("fact_sources", FactSource, s=s, p=p, o=o)

    # ------------------------------------------------------------ the store as a whole

    def entity_counts(self) -> dict[str, int]:
        """Entities per tg: class (by local name)."""
        return {row.kind: row.count for row in self._read("store_statistics", EntityCount)}

    def fact_count(self) -> int:
        return self._rows("fact_count")[0]["facts"]

    def quad_count(self) -> int:
        """The quads of the default graph and of every named graph."""
        return self._rows("quad_count")[0]["quads"]

    def table(self, name: str) -> Rows:
        """A shipped SELECT (an audit) as rows under its declared columns."""
        from .queries import query_file

        columns = [snake(name) for name in query_file(name).returns]
        rows = self._rows(name)
        return Rows(columns=list(query_file(name).returns),
                    rows=[tuple(row.get(column) for column in columns) for row in rows])
