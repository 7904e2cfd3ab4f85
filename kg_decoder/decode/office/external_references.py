"""Office packages without their references to anything outside them, for the programs that lay them
out (LibreOffice): a file's external references are input like any other, never followed.

An OOXML package names what lies outside it in its relationships (``TargetMode="External"``: a linked
picture, an OLE link, an attached template, a sub-document, a frame, a spreadsheet's external
workbook); an ODF package in ``xlink:href`` attributes (a linked picture, section, table or object,
the template in its metadata), where a relative path such as ``../secret.png`` is resolved against the
file's own folder. LibreOffice follows them while it lays out the pages: it sends a request to a URL,
or draws a file of the machine into the page. Here each such reference is made inert (an OOXML
relationship points at a part the package does not hold; an ODF attribute is dropped), so the
document lays out as it does offline, with an empty place for what it links to. Hyperlinks too: the
copy is only laid out, and a relationship's type does not bind what uses it (a picture may name a
"hyperlink" relationship). Relationships are cleaned in any ZIP package, links in any that has an
ODF manifest or mimetype, and a package with a part that will not read or parse is not laid out.

Only what LibreOffice reads is cleaned: the decode's own readers (python-docx, python-pptx, pandoc)
follow no reference, and record a linked picture's URL as such. LibreOffice also runs confined
(:mod:`kg_decoder.decode.sandbox`) for the references this cannot see (a field's instruction in an
RTF or a DOC, an Office file embedded in another).
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from typing import Optional

from lxml import etree

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
_RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Where an inert OOXML relationship points: a part name no package holds.
INERT_TARGET = "kg-decoder-external-reference-removed"


def without_external_references(data: bytes) -> Optional[bytes]:
    """The Office package ``data`` with its external references made inert (see the module's text):
    the same bytes when it has none or is no ZIP package, None when it cannot be cleaned (a part
    that will not read or parse: what LibreOffice would make of it is unknown, so it gets none).

    >>> without_external_references(b"plain text") == b"plain text"
    True
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except Exception:  # noqa: BLE001 - zipfile raises more than BadZipFile on odd bytes: no package
        return data
    # An ODF package by its manifest as well as its mimetype (LibreOffice opens one without the latter).
    odf = "META-INF/manifest.xml" in names or "mimetype" in names
    try:
        cleaned = {}
        for name in names:
            cleaner = _ooxml_relationships if name.endswith(".rels") else \
                _odf_links if odf and name.endswith(".xml") else None
            if cleaner is not None:
                better = cleaner(archive.read(name))
                if better is not None:
                    cleaned[name] = better
        if not cleaned:
            return data
        output = io.BytesIO()
        with zipfile.ZipFile(output, "w") as rewritten:
            for info in archive.infolist():  # the same members, order and compression (ODF's mimetype first)
                rewritten.writestr(info, cleaned[info.filename] if info.filename in cleaned
                                   else archive.read(info.filename))
        return output.getvalue()
    except Exception:  # noqa: BLE001 - a damaged, encrypted or unparsable member: not cleaned, not laid out
        return None


def _parsed(raw: bytes):
    """A part's XML tree (lxml reads its encoding declaration and character references); ValueError
    for one that does not parse."""
    if not raw.strip():
        return None
    try:
        return etree.fromstring(raw, _PARSER)
    except etree.XMLSyntaxError as exc:
        raise ValueError(f"a part does not parse: {exc}") from None


def _ooxml_relationships(raw: bytes):
    """A relationships part with every external target made inert (None: none). Hyperlinks too: a
    relationship's type does not bind what uses it, and laying the pages out needs no link's target."""
    root = _parsed(raw)
    if root is None:
        return None
    changed = False
    for relationship in root.iter(_RELATIONSHIP):
        if (relationship.get("TargetMode") or "").strip().lower() != "external":
            continue
        del relationship.attrib["TargetMode"]
        relationship.set("Target", INERT_TARGET)
        changed = True
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True) if changed else None


def _odf_links(raw: bytes):
    """An XML part without the links that reach outside its package (None: none)."""
    root = _parsed(raw)
    if root is None:
        return None
    changed = False
    for element in root.iter():
        target = element.get(_XLINK_HREF) if isinstance(element.tag, str) else None
        if target is None or _inside_package(target):
            continue
        del element.attrib[_XLINK_HREF]
        changed = True
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8") if changed else None


def _inside_package(target: str) -> bool:
    """Whether an ODF link names a part of its own package (``Pictures/a.png``, ``./Object 1``, ``#Sheet1``).

    >>> [_inside_package(t) for t in ("Pictures/a.png", "./Object 1", "#Sheet1", "../secret.png",
    ...                               "/etc/passwd", "file:///etc/passwd", "http://example.org/a.png")]
    [True, True, True, False, False, False, False]
    """
    target = target.strip()
    if target.startswith("#"):
        return True
    if not target or _SCHEME.match(target) or target.startswith(("/", "\\")) or "\\" in target:
        return False
    return not posixpath.normpath(target).startswith("..")


__all__ = ["INERT_TARGET", "without_external_references"]
