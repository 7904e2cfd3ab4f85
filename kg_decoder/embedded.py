"""Files inside a document: OOXML embeddings and OLE packages, e-mail attachments.

Pure: bytes in, :class:`EmbeddedFile` list out; nothing is decoded or stored here
(the decoder decodes each one as a child document). Reading is bounded: a member
is read only when its declared size fits what is left of the caller's byte budget,
so a parent full of huge embeddings costs no more than the budget.
"""

from __future__ import annotations

import email
import email.policy
import io
import posixpath
import re
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import Optional
from xml.etree import ElementTree

from .errors import CorruptDocument, DecodeError, DocumentTooLarge

# Where each OOXML format keeps its embedded files.
_EMBEDDING_FOLDERS = {"docx": "word/embeddings/", "xlsx": "xl/embeddings/", "pptx": "ppt/embeddings/"}
_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# OLE streams that hold a whole file: an OLE package (any file), an OOXML package, a PDF (Acrobat).
_PAYLOAD_STREAMS = ("\x01Ole10Native", "Package", "CONTENTS")
# OLE containers that are documents themselves (Word, Excel, PowerPoint 97-2003).
_DOCUMENT_STREAMS = ("WordDocument", "Workbook", "Book", "PowerPoint Document")
_RELS_NS = "{http://schemas.openxmlformats.org/package/2006/relationships}"


@dataclass
class EmbeddedFile:
    """One file found inside a document.

    ``path`` says where it sits in the parent (a package part, or "attachment N");
    ``page_number`` is the parent's page (slide, sheet) where it is placed, if known.
    """

    path: str
    name: Optional[str]
    data: Optional[bytes]
    page_number: Optional[int] = None
    # The text of the parent's paragraph holding it (DOCX), or of the one before when it holds only the object.
    anchor_text: Optional[str] = None
    # Why the bytes could not be taken (over the byte budget, a damaged part); data is None then.
    problem: Optional[DecodeError] = None


def embedded_files(data: bytes, format_name: str, budget: int) -> list[EmbeddedFile]:
    """The files embedded in ``data`` (a document of ``format_name``), reading at most ``budget`` bytes."""
    if format_name in _EMBEDDING_FOLDERS:
        return _ooxml_embeddings(data, format_name, budget)
    if format_name == "eml":
        return _budgeted(_email_attachments(data), budget)
    if format_name == "msg":
        return _budgeted(_outlook_attachments(data), budget)
    return []


def over_budget(item: EmbeddedFile, size: int, budget: int) -> DocumentTooLarge:
    return DocumentTooLarge(f"{item.name or item.path}: {size} bytes, over what is left of the embedded "
                            f"files' limit ({budget})")


def _budgeted(found: list[EmbeddedFile], budget: int) -> list[EmbeddedFile]:
    for item in found:
        if item.data is not None and len(item.data) > budget:
            item.problem, item.data = over_budget(item, len(item.data), budget), None
        elif item.data is not None:
            budget -= len(item.data)
    return found


# ---------------------------------------------------------------- OOXML


def _ooxml_embeddings(data: bytes, format_name: str, budget: int) -> list[EmbeddedFile]:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        return []
    folder = _EMBEDDING_FOLDERS[format_name]
    placed = _embedding_pages(archive, format_name)
    anchors = _paragraph_anchors(archive) if format_name == "docx" else {}
    found = []
    for info in archive.infolist():
        if not info.filename.startswith(folder) or info.is_dir():
            continue
        item = EmbeddedFile(path=info.filename, name=posixpath.basename(info.filename), data=None,
                            page_number=placed.get(info.filename), anchor_text=anchors.get(info.filename))
        found.append(item)
        if info.file_size > budget:
            item.problem = over_budget(item, info.file_size, budget)
            continue
        try:
            raw = archive.read(info)
        except (zipfile.BadZipFile, zlib.error, NotImplementedError, EOFError, OSError) as exc:
            item.problem = CorruptDocument(f"{info.filename}: the part cannot be read: {exc}")
            continue
        if raw.startswith(_OLE_MAGIC):
            unpacked = _unpack_ole(raw)
            if unpacked is None:  # an OLE object that is not a file (an equation, a chart's cache)
                found.pop()
                continue
            item.name, raw = unpacked[0] or item.name, unpacked[1]
        budget -= len(raw)
        item.data = raw
    return found


def _embedding_pages(archive: zipfile.ZipFile, format_name: str) -> dict[str, int]:
    """Embedding part -> the page (slide or sheet, 1-based) whose part refers to it."""
    if format_name == "pptx":
        sources = _ordered_parts(archive, "ppt/presentation.xml", "sldIdLst")
    elif format_name == "xlsx":
        sources = _ordered_parts(archive, "xl/workbook.xml", "sheets")
    else:
        return {}
    pages = {}
    for number, part in enumerate(sources, start=1):
        for target in _relationship_targets(archive, part).values():
            pages.setdefault(target, number)
    return pages


_WORD_NS = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_RELATIONSHIP_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"


def _paragraph_anchors(archive: zipfile.ZipFile) -> dict[str, str]:
    """Embedding part -> the text of the body paragraph that holds its object, or of the last
    paragraph with text before it when the object stands alone (as its icon usually does)."""
    targets = _relationship_targets(archive, "word/document.xml")
    try:
        root = ElementTree.fromstring(archive.read("word/document.xml"))
    except (KeyError, ElementTree.ParseError):
        return {}
    anchors: dict[str, str] = {}
    before = ""
    for paragraph in root.iter(_WORD_NS + "p"):
        text = "".join(node.text or "" for node in paragraph.iter(_WORD_NS + "t")).strip()
        for node in paragraph.iter():
            part = targets.get(node.get(_RELATIONSHIP_ID) or "")
            if part and part.startswith(_EMBEDDING_FOLDERS["docx"]) and (text or before):
                anchors.setdefault(part, text or before)
        before = text or before
    return anchors


def _ordered_parts(archive: zipfile.ZipFile, main_part: str, list_tag: str) -> list[str]:
    """The slide or sheet parts in presentation/workbook order (through the main part's relationships)."""
    try:
        root = ElementTree.fromstring(archive.read(main_part))
    except (KeyError, ElementTree.ParseError):
        return []
    targets = _relationship_targets(archive, main_part)
    order = []
    for holder in root.iter():
        if holder.tag.endswith("}" + list_tag):
            for entry in holder:
                rel_id = next((v for k, v in entry.attrib.items() if k.endswith("}id")), None)
                if rel_id in targets:
                    order.append(targets[rel_id])
    return order


def _relationship_targets(archive: zipfile.ZipFile, part: str) -> dict[str, str]:
    """A part's relationships: id -> target part name (resolved against the part's folder)."""
    folder, name = posixpath.split(part)
    try:
        root = ElementTree.fromstring(archive.read(posixpath.join(folder, "_rels", name + ".rels")))
    except (KeyError, ElementTree.ParseError):
        return {}
    targets = {}
    for rel in root.iter(_RELS_NS + "Relationship"):
        if rel.get("TargetMode") == "External" or not rel.get("Target"):
            continue
        target = rel.get("Target")
        resolved = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        targets[rel.get("Id")] = resolved
    return targets


def _unpack_ole(raw: bytes) -> Optional[tuple[Optional[str], bytes]]:
    """The file an OLE object carries (file name, bytes), or None when it carries no file."""
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(raw))
    except Exception:  # olefile raises OSError and its own errors on damaged containers
        return None
    try:
        streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=False)}
        for stream in _PAYLOAD_STREAMS:
            if stream in streams:
                payload = ole.openstream(stream).read()
                return parse_ole10_native(payload) if stream == "\x01Ole10Native" else (None, payload)
        if any(s in streams for s in _DOCUMENT_STREAMS):
            return None, raw  # a Word/Excel/PowerPoint 97-2003 file: the container is the document
        return None
    except Exception:  # a damaged stream: the container as it is, for the decode to judge
        return None, raw
    finally:
        ole.close()


def parse_ole10_native(payload: bytes) -> tuple[Optional[str], bytes]:
    """The (file name, bytes) of an Ole10Native stream (Windows Packager's "package" object).

    Layout: total size (u32), flags (u16), label, source path (NUL-terminated ANSI),
    two u32 (flags, temp path size), temp path (NUL-terminated), data size (u32), data.

    >>> body = b"\\x02\\x00a.txt\\x00C:\\\\a.txt\\x00" + struct.pack("<II", 0x30000, 9) + b"C:\\\\t\\\\a.txt\\x00"
    >>> body += struct.pack("<I", 2) + b"hi"
    >>> parse_ole10_native(struct.pack("<I", len(body)) + body)
    ('a.txt', b'hi')
    """
    try:
        index = 6
        label, index = _zero_terminated(payload, index)
        source_path, index = _zero_terminated(payload, index)
        index += 8
        _temp_path, index = _zero_terminated(payload, index)
        (size,) = struct.unpack_from("<I", payload, index)
        data = payload[index + 4:index + 4 + size]
    except (struct.error, ValueError):
        return None, payload
    if len(data) != size:
        return None, payload
    name = posixpath.basename(source_path.replace("\\", "/")) or label or None
    return name, data


def _zero_terminated(data: bytes, start: int) -> tuple[str, int]:
    end = data.index(b"\x00", start)
    return data[start:end].decode("latin-1"), end + 1


# ---------------------------------------------------------------- e-mail


def _email_attachments(data: bytes) -> list[EmbeddedFile]:
    """Attachments of an RFC 822 message; an attached message is one attachment (an .eml of its own)."""
    message = email.message_from_bytes(data, policy=email.policy.compat32)
    found = []
    for part in _leaf_parts(message) if message.is_multipart() else []:
        name = part.get_filename()
        if part.get_content_type() == "message/rfc822":
            inner = part.get_payload()
            payload = inner[0].as_bytes() if isinstance(inner, list) and inner else None
            name = name or "attached-message.eml"
        else:
            disposition = (part.get("Content-Disposition") or "").split(";")[0].strip().lower()
            if disposition != "attachment" and not name:
                continue  # the message's own body
            payload = part.get_payload(decode=True)
        if payload:
            found.append(EmbeddedFile(path=f"attachment {len(found) + 1}", name=_clean_name(name), data=payload))
    return found


def _leaf_parts(part):
    """The non-multipart parts, not descending into attached messages (their parts are theirs)."""
    if part.get_content_type() == "message/rfc822":
        yield part
    elif part.is_multipart():
        for inner in part.get_payload():
            yield from _leaf_parts(inner)
    else:
        yield part


def _outlook_attachments(data: bytes) -> list[EmbeddedFile]:
    from oxmsg import Message

    try:
        message = Message.load(io.BytesIO(data))
        attachments = list(message.attachments)
    except Exception:  # a damaged MSG: the parent's own decode reports it
        return []
    found = []
    for attachment in attachments:
        try:
            payload = attachment.file_bytes
        except Exception:
            payload = None
        if payload:
            found.append(EmbeddedFile(path=f"attachment {len(found) + 1}", name=_clean_name(attachment.file_name),
                                      data=payload))
    return found


def _clean_name(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    cleaned = re.sub(r"[\x00-\x1f]", "", posixpath.basename(str(name).replace("\\", "/"))).strip()
    return cleaned or None


__all__ = ["EmbeddedFile", "embedded_files", "over_budget", "parse_ole10_native"]
