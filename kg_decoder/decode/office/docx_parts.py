"""DOCX as a reader sees it, beyond what unstructured reads.

unstructured reads the body's paragraphs and tables through python-docx, which sees only direct
``w:p``/``w:tbl``/``w:tr``/``w:tc``/``w:r`` children: content controls (``w:sdt`` at block, row, cell
and run level), tracked insertions, custom XML and smart tags, simple fields and equations are wrappers
it walks past, losing their text. :func:`readable_docx` hands it a copy with those wrappers unwrapped
(their content in their place) and the text boxes taken out, so each word is read once, in order.

:func:`docx_extras` reads what has a kind of its own: text boxes and shapes' text (``w:txbxContent``),
footnotes and endnotes, comments (author, date, the text they are anchored to), SmartArt nodes and
charts (the texts they draw, then the table of their data), each placed after the element of the
paragraph it is anchored in.
"""

from __future__ import annotations

import io
import re
import zipfile
from datetime import datetime
from typing import Optional

from lxml import etree

from ...model import Element
from .ooxml_graphics import graphic_elements
from .ooxml_package import (MC, M, Package, local, merge_after_anchor, paragraph_texts, typed_relationships,
                            visible_text, w)

_MAIN_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
# Wrappers whose content is read in their place (a content control's content is its sdtContent).
_WRAPPERS = {"sdt", "ins", "customXml", "smartTag", "fldSimple", "dir", "bdo", "moveTo"}
_WRAPPER_PROPERTIES = {"sdtPr", "sdtEndPr", "customXmlPr", "smartTagPr", "fldData"}
_NEEDS_WORK = re.compile(rb"<(?:\w+:)?(?:sdt|ins|customXml|smartTag|fldSimple|dir|bdo|moveTo|oMath|txbxContent|ruby)"
                         rb"[\s>/]")
_NOTES = (("footnotes", "footnoteReference", "Footnote"), ("endnotes", "endnoteReference", "Endnote"))
_SEPARATOR_NOTES = {"separator", "continuationSeparator", "continuationNotice"}


def story_parts(package: Package) -> tuple[Optional[str], list[str], list[str]]:
    """The main document part, its headers and its footers (as the main part's relationships name them)."""
    main = next((target for _, kind, target in typed_relationships(package.archive, "") if kind == _MAIN_DOCUMENT),
                None)
    if main is None:
        main = "word/document.xml" if "word/document.xml" in package.names else None
    if main is None:
        return None, [], []
    related = typed_relationships(package.archive, main)
    headers = sorted(target for _, kind, target in related if kind.endswith("/header"))
    footers = sorted(target for _, kind, target in related if kind.endswith("/footer"))
    return main, headers, footers


# ---------------------------------------------------------------- the copy unstructured reads


def readable_docx(data: bytes) -> bytes:
    """The DOCX with content controls, insertions, custom XML, smart tags, simple fields and bidi
    wrappers unwrapped, equations as runs of their text, and text boxes taken out (read on their own),
    in the main part, headers and footers; the bytes themselves when there is nothing of the kind."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        package = Package(archive)
        main, headers, footers = story_parts(package)
    except (zipfile.BadZipFile, ValueError, OSError):
        return data  # unstructured's own error says what is wrong with the file
    changed: dict[str, bytes] = {}
    for part in [main, *headers, *footers]:
        if part is None or part not in package.names:
            continue
        try:
            raw = archive.read(part)
        except (zipfile.BadZipFile, ValueError, OSError, EOFError):
            continue
        if not _NEEDS_WORK.search(raw):
            continue
        root = package.xml(part)
        if root is not None and _unwrap_all(root):
            changed[part] = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
    if not changed:
        return data
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as copy:  # a copy in memory only: not worth compressing
        for info in archive.infolist():
            copy.writestr(info.filename, changed.get(info.filename) or archive.read(info))
    return out.getvalue()


def _unwrap_all(root) -> bool:
    changed = False
    for box in list(root.iter(w("txbxContent"))):
        if box.getparent() is not None:
            box.getparent().remove(box)
            changed = True
    for equation in list(root.iter(f"{{{M}}}oMath")):
        if equation.getparent() is None or any(local(a) == "oMath" for a in equation.iterancestors()):
            continue
        run = etree.Element(w("r"))
        text = etree.SubElement(run, w("t"))
        text.text = "".join(node.text or "" for node in equation.iter(f"{{{M}}}t"))
        text.set("{http://www.w3.org/XML/1998/namespace}space", "preserve")
        equation.getparent().replace(equation, run)
        changed = True
    for ruby in list(root.iter(w("ruby"))):  # ruby text (a reading guide) after its base, in brackets
        base = "".join(node.text or "" for node in ruby.iter(w("t")) if any(a.tag == w("rubyBase")
                                                                             for a in node.iterancestors()))
        guide = "".join(node.text or "" for node in ruby.iter(w("t")) if any(a.tag == w("rt")
                                                                              for a in node.iterancestors()))
        text = etree.Element(w("t"))
        text.text = base + (f"\uff08{guide}\uff09" if guide else "")
        ruby.getparent().replace(ruby, text)
        changed = True
    for paragraph in list(root.iter(f"{{{M}}}oMathPara")):
        changed |= _unwrap(paragraph, skip={"oMathParaPr"})
    for wrapper in [node for node in root.iter() if local(node) in _WRAPPERS and node.tag == w(local(node))]:
        parent = wrapper.getparent()
        if parent is None or local(parent).endswith("Pr"):  # a revision mark among properties, not a wrapper
            continue
        if local(wrapper) == "sdt":
            content = wrapper.find(w("sdtContent"))
            changed |= _unwrap(wrapper, only=content)
        else:
            changed |= _unwrap(wrapper, skip=_WRAPPER_PROPERTIES)
    return changed


def _unwrap(wrapper, skip: set[str] = frozenset(), only=None) -> bool:
    """Put a wrapper's children (or those of ``only``, one of them) in its place."""
    parent = wrapper.getparent()
    if parent is None:
        return False
    position = parent.index(wrapper)
    children = list(only) if only is not None else [child for child in wrapper if local(child) not in skip]
    for offset, child in enumerate(children):
        parent.insert(position + offset, child)
    parent.remove(wrapper)
    return True


# ---------------------------------------------------------------- what has a kind of its own


def docx_extras(data: bytes, elements: list[Element]) -> list[Element]:
    """``elements`` with the document's text boxes, notes, comments, SmartArt and charts placed after the
    element of the paragraph each is anchored in (headers' before the body's, footers' after)."""
    package = Package(zipfile.ZipFile(io.BytesIO(data)))
    main, headers, footers = story_parts(package)
    if main is None:
        return elements
    notes = {kind: _notes(package, main, kind) for kind, _, _ in _NOTES}
    comments = _comments(package, main)
    found: list[tuple[Optional[str], Element]] = []
    for part in [*headers, main, *footers]:
        found += _anchored(package, part, notes if part == main else {}, comments if part == main else {})
    return merge_after_anchor(elements, found) if found else elements


def _anchored(package: Package, part: str, notes: dict, comments: dict) -> list[tuple[Optional[str], Element]]:
    """What a story part anchors in its paragraphs, in document order, each with its paragraph's text."""
    root = package.xml(part)
    if root is None:
        return []
    relationships = package.relationships(part)
    anchored = _comment_anchors(root) if comments else {}
    found: list[tuple[Optional[str], Element]] = []
    last_text: Optional[str] = None
    noted: set[tuple[str, str]] = set()
    for paragraph in root.iter(w("p")):
        if _inside_box(paragraph):
            continue
        text = visible_text(paragraph).strip()
        anchor = text or last_text
        last_text = text or last_text
        for node in paragraph.iter():
            name = local(node)
            if name in ("txbxContent", "graphicData") and _skipped_choice(node, paragraph):
                continue
            if name == "txbxContent" and not _inside_box(node, stop=paragraph):
                for box in [node] + [inner for inner in node.iter(w("txbxContent")) if inner is not node]:
                    box_text = "\n".join(paragraph_texts(box))
                    if box_text:
                        found.append((anchor, Element(0, "TextBox", box_text)))
            elif name == "graphicData" and not _inside_box(node, stop=paragraph):
                found += [(anchor, element)
                          for element in graphic_elements(package, node, relationships, drawn_texts=True)]
            elif name in ("footnoteReference", "endnoteReference"):
                kind = "footnotes" if name == "footnoteReference" else "endnotes"
                key = (kind, node.get(w("id")) or "")
                if key not in noted and key[1] in notes.get(kind, {}):
                    noted.add(key)
                    found.append((anchor, notes[kind][key[1]]))
            elif name in ("commentRangeEnd", "commentReference"):
                identifier = node.get(w("id")) or ""
                if identifier in comments and ("comment", identifier) not in noted:
                    noted.add(("comment", identifier))
                    comment = comments[identifier]
                    if anchored.get(identifier):
                        comment.properties["anchorText"] = anchored[identifier]
                    found.append((anchor, comment))
    return found


def _inside_box(node, stop=None) -> bool:
    """Whether a node sits in a text box (below ``stop``, when given)."""
    for ancestor in node.iterancestors():
        if ancestor is stop:
            return False
        if local(ancestor) == "txbxContent":
            return True
    return False


def _skipped_choice(node, stop) -> bool:
    """Whether a node is in the fallback of a markup-compatibility choice (the same drawing again)."""
    for ancestor in node.iterancestors():
        if ancestor is stop:
            return False
        if ancestor.tag == f"{{{MC}}}Fallback":
            return True
    return False


def _notes(package: Package, main: str, kind: str) -> dict[str, Element]:
    """Footnotes or endnotes by id (the separators Word keeps among them aside)."""
    category = next(label for name, _, label in _NOTES if name == kind)
    part = next((t for _, k, t in typed_relationships(package.archive, main) if k.endswith("/" + kind)), None)
    root = package.xml(part) if part else None
    found = {}
    for note in (root if root is not None else ()):
        if local(note) not in ("footnote", "endnote") or note.get(w("type")) in _SEPARATOR_NOTES:
            continue
        text = "\n".join(paragraph_texts(note))
        if text:
            found[note.get(w("id")) or ""] = Element(0, category, text)
    return found


def _comments(package: Package, main: str) -> dict[str, Element]:
    """Comments by id, each with its author and date where given."""
    part = next((t for _, k, t in typed_relationships(package.archive, main) if k.endswith("/comments")), None)
    root = package.xml(part) if part else None
    found = {}
    for comment in (root if root is not None else ()):
        if local(comment) != "comment":
            continue
        text = "\n".join(paragraph_texts(comment))
        if not text:
            continue
        properties: dict = {}
        if comment.get(w("author")):
            properties["author"] = comment.get(w("author"))
        when = _date(comment.get(w("date")))
        if when is not None:
            properties["createdAt"] = when
        found[comment.get(w("id")) or ""] = Element(0, "Comment", text, properties=properties)
    return found


def _comment_anchors(root) -> dict[str, str]:
    """Comment id -> the text between its range's start and end, as it reads."""
    pieces: dict[str, list[str]] = {}
    open_ids: list[str] = []
    stack = [iter([root])]
    while stack:
        node = next(stack[-1], None)
        if node is None:
            stack.pop()
            continue
        name = local(node)
        if name == "commentRangeStart":
            open_ids.append(node.get(w("id")) or "")
            pieces.setdefault(open_ids[-1], [])
        elif name == "commentRangeEnd":
            identifier = node.get(w("id")) or ""
            if identifier in open_ids:
                open_ids.remove(identifier)
        elif name == "t" and open_ids:
            for identifier in open_ids:
                pieces[identifier].append(node.text or "")
        elif name == "p" and open_ids:
            for identifier in open_ids:
                if pieces[identifier]:
                    pieces[identifier].append("\n")
        elif name not in ("txbxContent", "Fallback", "del", "moveFrom", "instrText"):
            stack.append(iter(node))
    joined = {identifier: " ".join("".join(parts).split()) for identifier, parts in pieces.items()}
    return {identifier: text for identifier, text in joined.items() if text}


def _date(value: Optional[str]) -> Optional[datetime]:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


__all__ = ["docx_extras", "readable_docx", "story_parts"]
