"""Office packages without their references to anything outside them, for the programs that lay them
out (LibreOffice): a file's external references are input like any other, never followed.

An OOXML package names what lies outside it in its relationships (``TargetMode="External"``: a linked
picture, an OLE link, an attached template, a sub-document, a frame, a spreadsheet's external
workbook); an ODF package in ``xlink:href`` attributes (a linked picture, section, table or object,
the template in its metadata), where a relative path such as ``../secret.png`` is resolved against the
file's own folder. LibreOffice follows them while it lays out the pages: it sends a request to a URL,
or draws a file of the machine into the page. Here each such reference is made inert (an OOXML
relationship points at a part the package does not hold; an ODF attribute is dropped), so the
document lays out as it does offline, with an empty place for what it links to. Hyperlinks stay:
they are text of the document, and nothing follows them while laying it out.

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

from lxml import etree

_PARSER = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)
_RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
# Elements whose xlink:href is a hyperlink (text of the document), not something laid out.
_ODF_HYPERLINKS = {"{urn:oasis:names:tc:opendocument:xmlns:text:1.0}a",
                   "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}a",
                   "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}alphabetical-index-auto-mark-file"}
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
# Where an inert OOXML relationship points: a part name no package holds.
INERT_TARGET = "kg-decoder-external-reference-removed"


def without_external_references(data: bytes) -> bytes:
    """The Office package ``data`` with its external references made inert (see the module's text);
    the same bytes when it has none, or is not an OOXML or ODF package.

    >>> without_external_references(b"plain text") == b"plain text"
    True
    """
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return data
    if "[Content_Types].xml" in names:
        cleaner, parts = _ooxml_relationships, [n for n in names if n.endswith(".rels")]
    elif "mimetype" in names and _read(archive, "mimetype").startswith(b"application/vnd.oasis.opendocument"):
        cleaner, parts = _odf_links, [n for n in names if n.endswith(".xml")]
    else:
        return data
    cleaned = {}
    for name in parts:
        raw = _read(archive, name)
        better = cleaner(raw) if raw else None
        if better is not None:
            cleaned[name] = better
    if not cleaned:
        return data
    output = io.BytesIO()
    with zipfile.ZipFile(output, "w") as rewritten:
        for info in archive.infolist():  # the same members, order and compression (ODF's mimetype first)
            rewritten.writestr(info, cleaned.get(info.filename) or _read(archive, info.filename))
    return output.getvalue()


def _read(archive: zipfile.ZipFile, name: str) -> bytes:
    try:
        return archive.read(name)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError, EOFError):
        return b""


def _parsed(raw: bytes):
    try:
        return etree.fromstring(raw, _PARSER)
    except (etree.XMLSyntaxError, ValueError):
        return None


def _ooxml_relationships(raw: bytes):
    """A relationships part with every external target but a hyperlink's made inert (None: none)."""
    root = _parsed(raw)
    if root is None:
        return None
    changed = False
    for relationship in root.iter(_RELATIONSHIP):
        if (relationship.get("TargetMode") or "").lower() != "external":
            continue
        if (relationship.get("Type") or "").endswith("/hyperlink"):
            continue
        del relationship.attrib["TargetMode"]
        relationship.set("Target", INERT_TARGET)
        changed = True
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True) if changed else None


def _odf_links(raw: bytes):
    """An ODF XML part without the links that reach outside the package, hyperlinks kept (None: none)."""
    if _XLINK_HREF.split("}")[0][1:].encode() not in raw:
        return None
    root = _parsed(raw)
    if root is None:
        return None
    changed = False
    for element in root.iter():
        target = element.get(_XLINK_HREF) if isinstance(element.tag, str) else None
        if target is None or element.tag in _ODF_HYPERLINKS or _inside_package(target):
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
