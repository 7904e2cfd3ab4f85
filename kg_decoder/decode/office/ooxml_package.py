"""What the readers of Office Open XML parts share: the package's parts and relationships, the text a
reader sees in a part's subtree, and placing elements found apart from unstructured's after the text
they follow.

Parsing is bounded and offline: entities are not resolved, no DTD or network is read (the package
passed the ZIP-bomb checks of ``formats.py`` before it got here).
"""

from __future__ import annotations

import posixpath
import zipfile
from typing import Iterable, Optional

from lxml import etree

from ...model import Element

W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
A = "http://schemas.openxmlformats.org/drawingml/2006/main"
R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
MC = "http://schemas.openxmlformats.org/markup-compatibility/2006"
M = "http://schemas.openxmlformats.org/officeDocument/2006/math"
CHART_URI = "http://schemas.openxmlformats.org/drawingml/2006/chart"
DIAGRAM_URI = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                          remove_pis=True)


def w(name: str) -> str:
    return f"{{{W}}}{name}"


def local(node) -> str:
    """An element's name without its namespace ('' for comments and other non-elements)."""
    tag = node.tag
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


class Package:
    """An OOXML package opened for reading its parts (None for a part it does not hold or cannot parse)."""

    def __init__(self, archive: zipfile.ZipFile) -> None:
        self.archive = archive
        self.names = set(archive.namelist())
        self._parsed: dict[str, Optional[etree._Element]] = {}

    def xml(self, part: str) -> Optional[etree._Element]:
        if part not in self._parsed:
            root = None
            if part in self.names:
                try:
                    root = etree.fromstring(self.archive.read(part), _PARSER)
                except (etree.XMLSyntaxError, zipfile.BadZipFile, ValueError, OSError):
                    root = None
            self._parsed[part] = root
        return self._parsed[part]

    def relationships(self, part: str) -> dict[str, str]:
        """A part's relationships: id -> target part name (resolved against the part's folder)."""
        return relationship_targets(self.archive, part)

    def ordered_parts(self, main_part: str, list_tag: str) -> list[str]:
        return ordered_parts(self.archive, main_part, list_tag)


def relationship_targets(archive: zipfile.ZipFile, part: str) -> dict[str, str]:
    """A part's relationships: id -> target part name (resolved against the part's folder)."""
    return {identifier: target for identifier, _, target in typed_relationships(archive, part)}


def typed_relationships(archive: zipfile.ZipFile, part: str) -> list[tuple[str, str, str]]:
    """A part's relationships to parts of the package (``""``: the package's own), in the order listed:
    (id, relationship type, target part name resolved against the part's folder)."""
    folder, name = posixpath.split(part)
    try:
        root = etree.fromstring(archive.read(posixpath.join(folder, "_rels", name + ".rels")), _PARSER)
    except (KeyError, etree.XMLSyntaxError, zipfile.BadZipFile, ValueError, OSError):
        return []
    found = []
    for rel in root.iter(_RELS):
        if rel.get("TargetMode") == "External" or not rel.get("Target"):
            continue
        target = rel.get("Target")
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        found.append((rel.get("Id"), rel.get("Type") or "", resolved))
    return found


def ordered_parts(archive: zipfile.ZipFile, main_part: str, list_tag: str) -> list[str]:
    """The slide or sheet parts in presentation/workbook order (through the main part's relationships)."""
    try:
        root = etree.fromstring(archive.read(main_part), _PARSER)
    except (KeyError, etree.XMLSyntaxError, zipfile.BadZipFile, ValueError, OSError):
        return []
    targets = relationship_targets(archive, main_part)
    order = []
    for holder in root.iter():
        if local(holder) == list_tag:
            for entry in holder:
                rel_id = next((v for k, v in entry.attrib.items() if k.endswith("}id")), None)
                if rel_id in targets:
                    order.append(targets[rel_id])
    return order


# What a reader sees of a WordprocessingML or DrawingML subtree. Skipped: another text box inside
# (read as its own), the fallback of markup-compatibility choices (the same content again), deleted
# and moved-away text, field instructions, properties.
_SKIPPED = {"txbxContent", "Fallback", "del", "moveFrom", "instrText", "delText", "rPr", "pPr", "sdtPr",
            "customXmlPr", "smartTagPr", "fldData"}
_BREAKS = {"br", "cr"}


def visible_text(node, skip_nested_boxes: bool = True) -> str:
    """The text of a subtree as it reads: its runs' text (``w:t``, ``a:t``, ``m:t``), tabs and breaks."""
    pieces: list[str] = []
    _collect(node, pieces, skip_nested_boxes, top=True)
    return "".join(pieces)


def _collect(node, pieces: list[str], skip_nested_boxes: bool, top: bool = False) -> None:
    name = local(node)
    if not top and (name in _SKIPPED and (name != "txbxContent" or skip_nested_boxes)):
        return
    if name == "t":
        pieces.append(node.text or "")
        return
    if name == "tab" and node.getparent() is not None and local(node.getparent()) == "r":
        pieces.append("\t")
    elif name in _BREAKS:
        pieces.append("\n")
    elif name == "noBreakHyphen":
        pieces.append("-")
    for child in node:
        _collect(child, pieces, skip_nested_boxes)


def paragraph_texts(node) -> list[str]:
    """The text of each paragraph with text in a subtree (WordprocessingML or DrawingML), in order;
    paragraphs of a text box inside it aside."""
    found = []
    for paragraph in node.iter(w("p"), f"{{{A}}}p"):
        if any(local(a) in ("txbxContent", "Fallback") for a in _ancestors(paragraph, node)):
            continue
        text = visible_text(paragraph).strip()
        if text:
            found.append(text)
    return found


def _ancestors(node, stop) -> Iterable:
    parent = node.getparent()
    while parent is not None and parent is not stop:
        yield parent
        parent = parent.getparent()


def merge_after_anchor(elements: list[Element], found: list[tuple[Optional[str], Element]]) -> list[Element]:
    """Insert each found element after the element that holds the text it follows (its anchor), in
    order: the first element at or after the last insertion whose text holds the anchor's end, or that
    a part of the anchor is (unstructured splits a paragraph where a page began). No anchor: at the
    start (or after the last insertion); an anchor not found: after the last insertion."""
    merged = list(elements)
    cursor = 0
    for anchor, element in found:
        position = None
        anchor = (anchor or "").strip()
        if anchor:
            tail = anchor[-60:]
            for k in range(cursor, len(merged)):
                text = merged[k].text.strip()
                if text and (tail in text or (len(text) >= 8 and text in anchor)):
                    position = k + 1
                    break
        if position is None:
            position = cursor
        merged.insert(position, element)
        cursor = position + 1
    return merged


def insert_after_page(elements: list[Element], number: int, found: list[Element]) -> None:
    """Insert ``found`` after the last element of page (sheet) ``number``, or before the first of a later
    page when that page has none."""
    last = max((k for k, e in enumerate(elements) if e.page_number == number), default=None)
    position = last + 1 if last is not None else next(
        (k for k, e in enumerate(elements) if (e.page_number or 0) > number), len(elements))
    elements[position:position] = found


__all__ = ["A", "CHART_URI", "DIAGRAM_URI", "M", "MC", "Package", "R", "W", "insert_after_page", "local",
           "merge_after_anchor", "ordered_parts", "paragraph_texts", "relationship_targets", "typed_relationships",
           "visible_text", "w"]
