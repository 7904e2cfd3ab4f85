"""Which format a document is, decided from its bytes (the backends' registry names the formats);
safety checks before parsing.

The bytes decide (python-magic, then a look inside ZIP and OLE containers). The
file extension only breaks ties where the bytes cannot: between the text-based
formats (Markdown, CSV, RST... all read as "text" to libmagic).
"""

from __future__ import annotations

import io
import json
import re
import struct
import zipfile
import zlib
from typing import Optional

from ..model.errors import CorruptDocument, EmptyDocument, EncryptedDocument, UnsafeDocument, UnsupportedFormat
from .backends import BY_EXTENSION, BY_MIME, FORMATS, Format, format_for_mime

# Limits for ZIP-based formats: a DOCX of a few MB never unpacks to gigabytes.
MAX_UNPACKED_BYTES = 1024 * 1024 * 1024
MAX_COMPRESSION_RATIO = 200
MAX_ZIP_MEMBERS = 20000
MAX_NESTED_ARCHIVES = 4


def _extension(filename: Optional[str]) -> str:
    if not filename or "." not in filename:
        return ""
    return filename.rsplit(".", 1)[1].lower()


def detect_format(data: bytes, filename: Optional[str] = None, mime_type: Optional[str] = None) -> Format:
    """Decide the format of ``data``.

    >>> detect_format(b"%PDF-1.4 ...", "report.docx").name
    'pdf'
    >>> detect_format(b"# Title\\n\\nSome text.\\n", "notes.md").name
    'markdown'
    """
    if not data:
        raise EmptyDocument("the file is empty (0 bytes)")
    if mime_type:
        return format_for_mime(mime_type)
    import magic  # imported here: libmagic is only needed when the caller gave no type

    sniffed = magic.from_buffer(data[:65536], mime=True)
    ext = _extension(filename)
    if sniffed in ("application/zip", "application/epub+zip") or sniffed.startswith(
        ("application/vnd.openxmlformats", "application/vnd.oasis")
    ) or data[:4] == b"PK\x03\x04":  # libmagic calls some packages "Microsoft OOXML", of no type
        return _zip_format(data, sniffed, ext)
    if sniffed in ("application/x-ole-storage", "application/CDFV2", "application/vnd.ms-excel",
                   "application/msword", "application/vnd.ms-powerpoint", "application/vnd.ms-outlook",
                   "application/vnd.ms-office", "application/encrypted"):
        return _ole_format(data, ext)
    if sniffed.startswith("text/") or sniffed in ("application/json", "application/x-ndjson", "message/rfc822",
                                                  "application/xml"):
        return _text_format(data, sniffed, ext)
    if sniffed == "application/x-empty":
        raise EmptyDocument("the file is empty")
    if sniffed in BY_MIME:
        return BY_MIME[sniffed]
    raise UnsupportedFormat(f"unsupported file type {sniffed}")


def _zip_format(data: bytes, sniffed: str, ext: str) -> Format:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = set(archive.namelist())
    except zipfile.BadZipFile as exc:
        raise CorruptDocument(f"the ZIP container is damaged: {exc}") from None
    check_zip_safety(archive)
    declared = _ooxml_main_type(archive, names)
    if declared is not None:
        return declared
    if "mimetype" in names:
        declared = archive.read("mimetype").decode("ascii", "replace").strip()
        if declared in BY_MIME:
            return BY_MIME[declared]
    if any(n.startswith("word/") for n in names):
        return FORMATS["docx"]
    if any(n.startswith("ppt/") for n in names):
        return FORMATS["pptx"]
    if any(n.startswith("xl/") for n in names):
        return FORMATS["xlsx"]
    if ext in ("docx", "pptx", "xlsx", "odt", "epub"):
        return FORMATS[ext]
    check_nested_archives(archive)
    raise UnsupportedFormat("unsupported file type: a ZIP archive that is not an Office, ODF or EPUB document")


# The content type of an OOXML package's main part -> the format it is read as: documents, templates,
# macro-enabled documents and slide shows alike (strict OOXML declares the same types).
_OOXML_MAIN_PARTS = {
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml": "docx",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml": "docx",
    "application/vnd.ms-word.document.macroenabled.main+xml": "docx",
    "application/vnd.ms-word.template.macroenabledtemplate.main+xml": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.template.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml": "pptx",
    "application/vnd.ms-powerpoint.presentation.macroenabled.main+xml": "pptx",
    "application/vnd.ms-powerpoint.template.macroenabled.main+xml": "pptx",
    "application/vnd.ms-powerpoint.slideshow.macroenabled.main+xml": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml": "xlsx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml": "xlsx",
    "application/vnd.ms-excel.sheet.macroenabled.main+xml": "xlsx",
    "application/vnd.ms-excel.template.macroenabled.main+xml": "xlsx",
}
_OOXML_UNREAD = {"application/vnd.ms-excel.sheet.binary.macroenabled.main": "an Excel binary workbook (XLSB)"}


def _ooxml_main_type(archive: zipfile.ZipFile, names: set[str]) -> Optional[Format]:
    """The format an OOXML package's ``[Content_Types].xml`` says its main part is, or None (no such
    part, or no main part of a format read here)."""
    if "[Content_Types].xml" not in names or archive.getinfo("[Content_Types].xml").file_size > 1024 * 1024:
        return None
    declared = archive.read("[Content_Types].xml").decode("utf-8", "replace")
    for match in re.finditer(r"""ContentType\s*=\s*["']([^"']+)["']""", declared):
        kind = match.group(1).strip().lower()
        if kind in _OOXML_MAIN_PARTS:
            return FORMATS[_OOXML_MAIN_PARTS[kind]]
        if kind in _OOXML_UNREAD:
            raise UnsupportedFormat(f"unsupported file type: {_OOXML_UNREAD[kind]}")
    return None


def check_zip_safety(archive: zipfile.ZipFile) -> None:
    """Refuse archives that would unpack to far more than they weigh (ZIP bombs), by their headers
    and then by the bytes their members actually inflate to (:func:`check_inflated_sizes`)."""
    infos = archive.infolist()
    if len(infos) > MAX_ZIP_MEMBERS:
        raise UnsafeDocument(f"the archive holds {len(infos)} files, more than the limit of {MAX_ZIP_MEMBERS}")
    unpacked = sum(i.file_size for i in infos)
    packed = sum(i.compress_size for i in infos) or 1
    if unpacked > MAX_UNPACKED_BYTES:
        raise UnsafeDocument(f"the archive would unpack to {unpacked} bytes, over the limit of {MAX_UNPACKED_BYTES}")
    for info in infos:
        if info.file_size > 10 * 1024 * 1024 and info.file_size / max(info.compress_size, 1) > MAX_COMPRESSION_RATIO:
            raise UnsafeDocument(
                f"the archive member {info.filename!r} expands {info.file_size // max(info.compress_size, 1)}-fold "
                "(a ZIP bomb?)"
            )
    if unpacked > 10 * 1024 * 1024 and unpacked / packed > MAX_COMPRESSION_RATIO:
        raise UnsafeDocument(f"the archive expands {unpacked // packed}-fold (a ZIP bomb?)")
    check_inflated_sizes(archive)


_LOCAL_HEADER = struct.Struct("<4s5H3I2H")  # signature ... name length, extra length: 30 bytes
_INFLATE_STEP = 1 << 16


def check_inflated_sizes(archive: zipfile.ZipFile) -> None:
    """Inflate every member as a stream, counting the bytes it gives, and refuse the archive when one
    gives more than its headers declare (a bomb whose headers lie: a parser that trusts them may
    inflate gigabytes at once, as Python's own ``ZipFile.read`` does), or all together more than
    :data:`MAX_UNPACKED_BYTES`. Memory stays at one step's worth whatever the archive holds. Members
    are stored or deflated in every format kg-decoder reads; another method is refused.

    >>> buffer = io.BytesIO()
    >>> with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
    ...     archive.writestr("a.xml", "<a/>" * 1000)
    >>> check_inflated_sizes(zipfile.ZipFile(buffer))
    """
    raw = archive.fp
    total = 0
    for info in archive.infolist():
        if info.compress_type == zipfile.ZIP_STORED:
            continue
        if info.compress_type != zipfile.ZIP_DEFLATED:
            raise UnsafeDocument(f"the archive member {info.filename[:100]!r} is compressed in a way kg-decoder "
                                 f"does not check (method {info.compress_type})")
        raw.seek(info.header_offset)
        header = raw.read(_LOCAL_HEADER.size)
        if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
            raise CorruptDocument(f"the ZIP container is damaged: no local header for {info.filename[:100]!r}")
        name_length, extra_length = _LOCAL_HEADER.unpack(header)[-2:]
        raw.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
        inflated = _inflated_size(raw, info.file_size + _INFLATE_STEP)
        if inflated > info.file_size:
            raise UnsafeDocument(f"the archive member {info.filename[:100]!r} inflates past the {info.file_size} "
                                 f"bytes its header declares (a ZIP bomb?)")
        total += inflated
        if total > MAX_UNPACKED_BYTES:
            raise UnsafeDocument(f"the archive would unpack to more than {MAX_UNPACKED_BYTES} bytes")


def _inflated_size(raw, limit: int) -> int:
    """How many bytes the deflate stream at ``raw``'s position inflates to: read until the stream ends
    (whatever size the headers give it), breaks off damaged, or the count passes ``limit``. A damaged
    member is not refused here: what it inflates to before the damage is counted, and the parser that
    reads it says it is damaged (an embedded part then fails alone, its parent decodes)."""
    decompressor = zlib.decompressobj(-15)
    inflated, pending = 0, b""
    while inflated <= limit and not decompressor.eof:
        data = pending or raw.read(_INFLATE_STEP)
        if not data:
            break
        try:
            inflated += len(decompressor.decompress(data, _INFLATE_STEP))
        except zlib.error:
            break
        pending = decompressor.unconsumed_tail
    return inflated


def check_nested_archives(archive: zipfile.ZipFile) -> None:
    """Refuse a ZIP whose ZIPs inside ZIPs would unpack past the limits (a nested ZIP bomb).

    Each level alone can look harmless (a ZIP stored in a ZIP barely compresses), so
    this opens the inner archives and counts what the whole tree would unpack to.
    """
    visited = [0]

    def unpacked_size(archive: zipfile.ZipFile, depth: int) -> int:
        check_zip_safety(archive)
        total = 0
        for info in archive.infolist():
            visited[0] += 1
            if visited[0] > MAX_ZIP_MEMBERS:
                raise UnsafeDocument(f"the nested archives hold more than {MAX_ZIP_MEMBERS} files (a ZIP bomb?)")
            with archive.open(info) as member:
                is_zip = member.read(4) == b"PK\x03\x04"
            if not is_zip:
                total += info.file_size
            elif depth >= MAX_NESTED_ARCHIVES:
                raise UnsafeDocument(f"archives nested more than {MAX_NESTED_ARCHIVES} deep (a ZIP bomb?)")
            else:
                try:
                    inner = zipfile.ZipFile(io.BytesIO(archive.read(info)))
                except zipfile.BadZipFile:
                    total += info.file_size
                    continue
                total += unpacked_size(inner, depth + 1)
            if total > MAX_UNPACKED_BYTES:
                raise UnsafeDocument(f"the nested archives would unpack to more than {MAX_UNPACKED_BYTES} bytes "
                                     "(a ZIP bomb?)")
        return total

    unpacked_size(archive, 0)


def _ole_format(data: bytes, ext: str) -> Format:
    import olefile

    try:
        ole = olefile.OleFileIO(io.BytesIO(data))
    except Exception as exc:  # olefile raises OSError and its own errors for damaged files
        raise CorruptDocument(f"the Office container is damaged: {exc}") from None
    streams = {"/".join(entry) for entry in ole.listdir(streams=True, storages=True)}
    if "EncryptionInfo" in streams and "EncryptedPackage" in streams:
        raise EncryptedDocument("the Office document is password-protected")
    if "WordDocument" in streams:
        return FORMATS["doc"]
    if "Workbook" in streams or "Book" in streams:
        return FORMATS["xls"]
    if "PowerPoint Document" in streams:
        return FORMATS["ppt"]
    if any(s.startswith("__substg1.0_") for s in streams) or "__properties_version1.0" in streams:
        return FORMATS["msg"]
    if ext in ("doc", "xls", "ppt", "msg"):
        return FORMATS[ext]
    raise UnsupportedFormat("unsupported file type: an OLE container that is not a Word, Excel, PowerPoint or Outlook file")


def _text_format(data: bytes, sniffed: str, ext: str) -> Format:
    by_ext = BY_EXTENSION.get(ext)
    if by_ext is not None and by_ext.name == "text" and _looks_like_json_lines(data):
        return FORMATS["jsonl"]  # JSON lines are known by their content, whatever the file is called
    if by_ext is not None and by_ext.text_based:
        return by_ext
    if sniffed == "text/rtf":
        return FORMATS["rtf"]
    if sniffed in ("text/xml", "application/xml"):
        head = data[:4096].lower()
        return FORMATS["html"] if b"<html" in head or b"<!doctype html" in head else FORMATS["xml"]
    if sniffed in BY_MIME and sniffed != "text/plain":
        return BY_MIME[sniffed]
    if _looks_like_email(data):
        return FORMATS["eml"]
    if _looks_like_json(data):
        return FORMATS["json"]
    if _looks_like_json_lines(data):
        return FORMATS["jsonl"]
    return FORMATS["text"]


def _looks_like_email(data: bytes) -> bool:
    head = data[:2048].decode("latin-1").lower()
    return any(head.startswith(h) for h in ("received:", "return-path:", "mime-version:", "from:", "message-id:")) and (
        "\nsubject:" in head or "\nfrom:" in head or "\nto:" in head
    )


def _looks_like_json_lines(data: bytes) -> bool:
    """Two or more lines that each parse as a JSON object or array (the whole does not).

    >>> _looks_like_json_lines(b'{"a": 1}\\n{"a": 2}\\n')
    True
    >>> _looks_like_json_lines(b'{"a": 1}\\nnot json\\n')
    False
    """
    lines = [line for line in data.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    for line in lines[:1000]:
        if line.lstrip()[:1] not in (b"{", b"["):
            return False
        try:
            json.loads(line)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return False
    return True


def _looks_like_json(data: bytes) -> bool:
    stripped = data.lstrip()
    if not stripped[:1] in (b"{", b"["):
        return False
    try:
        json.loads(data)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return False
    return True


def decrypt_office(data: bytes, password: str) -> bytes:
    """The plain bytes of a password-protected Office file (OOXML in an OLE envelope, or legacy)."""
    import msoffcrypto

    try:
        office = msoffcrypto.OfficeFile(io.BytesIO(data))
        office.load_key(password=password)
        plain = io.BytesIO()
        office.decrypt(plain)
    except Exception:
        raise EncryptedDocument("the Office document is password-protected and the password given is wrong") from None
    return plain.getvalue()
