"""Files inside a document, what every backend that finds them shares: the record of one, the
byte budget, and OLE objects unwrapped (Windows Packager's ``Ole10Native``, OOXML and PDF payloads).

Pure: bytes in, :class:`EmbeddedFile` list out; nothing is decoded or stored here (the pipeline
decodes each one as a child document). Reading is bounded: a member is read only when its
declared size fits what is left of the caller's byte budget, so a parent full of huge
embeddings costs no more than the budget.
"""

from __future__ import annotations

import io
import posixpath
import re
import struct
from dataclasses import dataclass
from typing import Optional

from ..model.errors import DecodeError, DocumentTooLarge

OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# OLE streams that hold a whole file: an OLE package (any file), an OOXML package, a PDF (Acrobat).
_PAYLOAD_STREAMS = ("\x01Ole10Native", "Package", "CONTENTS")
# OLE containers that are documents themselves (Word, Excel, PowerPoint 97-2003).
_DOCUMENT_STREAMS = ("WordDocument", "Workbook", "Book", "PowerPoint Document")


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


def over_budget(item: EmbeddedFile, size: int, budget: int) -> DocumentTooLarge:
    return DocumentTooLarge(f"{item.name or item.path}: {size} bytes, over what is left of the embedded "
                            f"files' limit ({budget})")


def budgeted(found: list[EmbeddedFile], budget: int) -> list[EmbeddedFile]:
    for item in found:
        if item.data is not None and len(item.data) > budget:
            item.problem, item.data = over_budget(item, len(item.data), budget), None
        elif item.data is not None:
            budget -= len(item.data)
    return found


def unpack_ole(raw: bytes) -> Optional[tuple[Optional[str], bytes]]:
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


def clean_name(name: Optional[str]) -> Optional[str]:
    if not name:
        return None
    cleaned = re.sub(r"[\x00-\x1f\x7f]", "", posixpath.basename(str(name).replace("\\", "/"))).strip()[:255]
    return cleaned.lstrip(". ") or None


__all__ = ["EmbeddedFile", "budgeted", "clean_name", "over_budget", "parse_ole10_native", "unpack_ole"]
