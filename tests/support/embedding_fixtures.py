"""Documents with files inside: OLE packages in Office files, nested archives, e-mail chains.

No tool on these machines writes OLE compound files (olefile only reads them), so
``compound_file`` writes one (CFB version 3: storages, the mini stream for short
streams) by the [MS-CFB] layout, and ``outlook_message`` an .msg by [MS-OXMSG] on
top of it; olefile and python-oxmsg reading them back is the check that they are
well formed.
"""

from __future__ import annotations

import email.message
import io
import struct
import zipfile

SECTOR, MINI_SECTOR, MINI_CUTOFF = 512, 64, 4096
FREE, END_OF_CHAIN, FAT_SECTOR, NO_STREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
STORAGE, STREAM, ROOT = 1, 2, 5


def compound_file(tree: dict) -> bytes:
    """An OLE compound file: ``tree`` maps names to bytes (streams) or to dicts (storages)."""
    entries = [{"name": "Root Entry", "kind": ROOT, "data": b"", "child": NO_STREAM, "right": NO_STREAM}]

    def add(folder: dict) -> int:
        """Add a storage's members; return the id of the first (its child), the rest chained right."""
        ids = []
        for name, value in folder.items():
            entries.append({"name": name, "kind": STORAGE if isinstance(value, dict) else STREAM,
                            "data": b"" if isinstance(value, dict) else value, "child": NO_STREAM,
                            "right": NO_STREAM})
            ids.append(len(entries) - 1)
            if isinstance(value, dict):
                entries[ids[-1]]["child"] = add(value)
        for left, right in zip(ids, ids[1:]):
            entries[left]["right"] = right
        return ids[0] if ids else NO_STREAM

    entries[0]["child"] = add(tree)
    small = [e for e in entries if e["kind"] == STREAM and len(e["data"]) < MINI_CUTOFF]
    large = [e for e in entries if e["kind"] == STREAM and len(e["data"]) >= MINI_CUTOFF]
    minifat, mini_stream = [], b""
    for entry in small:  # short streams live in the mini stream, 64-byte sectors chained by the mini FAT
        count = max(1, -(-len(entry["data"]) // MINI_SECTOR))
        entry["start"] = len(minifat)
        minifat += [len(minifat) + i + 1 for i in range(count - 1)] + [END_OF_CHAIN]
        mini_stream += entry["data"].ljust(count * MINI_SECTOR, b"\x00")
    entries[0]["data"] = mini_stream
    minifat_bytes = struct.pack(f"<{len(minifat)}I", *minifat) if minifat else b""
    regions = [("directory", b"".join(bytes(128) for _ in entries)), ("minifat", minifat_bytes),
               ("mini", mini_stream)] + [(id(e), e["data"]) for e in large]
    sizes = [-(-len(data) // SECTOR) for _, data in regions]
    fat_sectors = 1
    while fat_sectors * SECTOR // 4 < fat_sectors + sum(sizes):
        fat_sectors += 1
    assert fat_sectors <= 109, "more FAT sectors than the header lists"
    fat = [FREE] * (fat_sectors * SECTOR // 4)
    fat[:fat_sectors] = [FAT_SECTOR] * fat_sectors
    starts, sector = {}, fat_sectors
    for (key, _), count in zip(regions, sizes):
        starts[key] = sector if count else END_OF_CHAIN
        for offset in range(count):
            fat[sector + offset] = sector + offset + 1 if offset < count - 1 else END_OF_CHAIN
        sector += count
    entries[0]["start"] = starts["mini"]
    for entry in large:
        entry["start"] = starts[id(entry)]
    directory = b"".join(_directory_entry(e["name"], e["kind"], e["right"], e["child"],
                                          e.get("start", END_OF_CHAIN if e["kind"] != STREAM else 0),
                                          len(e["data"])) for e in entries)
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
    header += bytes(6) + struct.pack("<IIIIIIIII", 0, fat_sectors, starts["directory"], 0, MINI_CUTOFF,
                                     starts["minifat"], sizes[1], END_OF_CHAIN, 0)
    header += struct.pack("<109I", *range(fat_sectors), *[FREE] * (109 - fat_sectors))
    body = b"".join((directory if key == "directory" else data).ljust(count * SECTOR, b"\x00")
                    for (key, data), count in zip(regions, sizes))
    return header + struct.pack(f"<{len(fat)}I", *fat) + body


def _directory_entry(name: str, kind: int, right: int, child: int, start: int, size: int) -> bytes:
    encoded = (name + "\x00").encode("utf-16-le")
    return (encoded.ljust(64, b"\x00") + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", NO_STREAM, right, child) + bytes(16) + struct.pack("<I", 0) + bytes(16)
            + struct.pack("<IQ", start, size))


def outlook_message(subject: str, body: str, attachments: list[tuple[str, bytes]]) -> bytes:
    """An Outlook .msg ([MS-OXMSG]): subject, plain-text body, attachments by value."""
    def text(value: str) -> bytes:
        return value.encode("utf-16-le") + b"\x00\x00"

    def properties(header: bytes, fixed: list[tuple[int, int, int]], variable: dict[tuple[int, int], bytes]):
        """The properties stream: header, then 16-byte entries (tag, flags, value or size)."""
        stream = header
        for pid, ptype, value in fixed:
            stream += struct.pack("<IIQ", (pid << 16) | ptype, 6, value)
        for (pid, ptype), data in variable.items():
            stream += struct.pack("<IIII", (pid << 16) | ptype, 6, len(data), 0)
        return stream

    def streams(variable: dict[tuple[int, int], bytes]) -> dict:
        return {f"__substg1.0_{pid:04X}{ptype:04X}": data for (pid, ptype), data in variable.items()}

    message = {(0x001A, 0x001F): text("IPM.Note"), (0x0037, 0x001F): text(subject),
               (0x1000, 0x001F): text(body), (0x0C1A, 0x001F): text("Sender"),
               (0x0E04, 0x001F): text("reader@example.org")}
    count = len(attachments)
    tree = {"__properties_version1.0": properties(struct.pack("<8xIIII8x", count, 0, 0, count), [], message),
            **streams(message)}
    for number, (name, data) in enumerate(attachments):
        variable = {(0x3701, 0x0102): data, (0x3707, 0x001F): text(name), (0x3704, 0x001F): text(name)}
        tree[f"__attach_version1.0_#{number:08X}"] = {
            "__properties_version1.0": properties(bytes(8), [(0x3705, 0x0003, 1)], variable), **streams(variable)}
    return compound_file(tree)


def ole_package(file_name: str, data: bytes) -> bytes:
    """An OLE "Package" object (what Office writes for an embedded file of any kind)."""
    path = f"C:\\Users\\someone\\{file_name}".encode("latin-1")
    body = struct.pack("<H", 2) + file_name.encode("latin-1") + b"\x00" + path + b"\x00"
    temp = b"C:\\Temp\\" + file_name.encode("latin-1") + b"\x00"
    body += struct.pack("<HHI", 0, 3, len(temp)) + temp + struct.pack("<I", len(data)) + data
    native = struct.pack("<I", len(body)) + body
    return compound_file({"\x01Ole10Native": native})


_CONTENT_TYPES = {
    "bin": "application/vnd.openxmlformats-officedocument.oleObject",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def with_parts(package: bytes, parts: dict[str, bytes], relationships: dict[str, list[tuple[str, str]]]) -> bytes:
    """An OOXML package with ``parts`` added and relationships (part -> [(id, target)]) appended."""
    source = zipfile.ZipFile(io.BytesIO(package))
    rels_parts = {}
    for part, rels in relationships.items():
        folder, name = part.rsplit("/", 1)
        rels_parts[f"{folder}/_rels/{name}.rels"] = "".join(
            f'<Relationship Id="{rid}" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
            f'relationships/oleObject" Target="{target}"/>' for rid, target in rels).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as package_out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename in rels_parts:
                data = data.replace(b"</Relationships>", rels_parts.pop(info.filename) + b"</Relationships>")
            if info.filename == "[Content_Types].xml":
                for extension, content_type in _CONTENT_TYPES.items():
                    if f'Extension="{extension}"'.encode() not in data:
                        data = data.replace(b"</Types>", f'<Default Extension="{extension}" '
                                            f'ContentType="{content_type}"/></Types>'.encode())
            package_out.writestr(info, data)
        for name, entries in rels_parts.items():  # parts that had no relationships yet
            package_out.writestr(name, b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships '
                                 b'xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
                                 + entries + b"</Relationships>")
        for name, data in parts.items():
            package_out.writestr(name, data)
    return out.getvalue()


def ole_paragraph_after(package: bytes, text: str, relationship_id: str) -> bytes:
    """A DOCX with a paragraph holding only an OLE object (as Word writes an icon) after the one with ``text``."""
    paragraph = (f'<w:p><w:r><w:object><o:OLEObject xmlns:o="urn:schemas-microsoft-com:office:office" '
                 f'Type="Embed" ProgID="Package" r:id="{relationship_id}"/></w:object></w:r></w:p>').encode()
    source = zipfile.ZipFile(io.BytesIO(package))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                at = data.index(b"</w:p>", data.index(text.encode())) + len(b"</w:p>")
                data = data[:at] + paragraph + data[at:]
            target.writestr(info, data)
    return out.getvalue()


def zip_of(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return out.getvalue()


def nested_zip_bomb() -> bytes:
    """Three ZIPs stored in each other around 64 MB of zeros: each level alone looks harmless."""
    core = zip_of({"zeros.bin": bytes(64 * 1024 * 1024)})
    middle = zip_of({"core.zip": core}, zipfile.ZIP_STORED)
    return zip_of({"middle.zip": middle}, zipfile.ZIP_STORED)


def email_with(subject: str, body: str, attachments: list[tuple[str, str, bytes]]) -> bytes:
    """An RFC 822 message with (file name, MIME type, bytes) attachments; message/rfc822 ones nest."""
    message = email.message.EmailMessage()
    message["Subject"] = subject
    message["From"] = "sender@example.org"
    message["To"] = "reader@example.org"
    message.set_content(body)
    for name, mime, data in attachments:
        if mime == "message/rfc822":
            inner = email.message_from_bytes(data)
            message.add_attachment(inner, filename=name)
        else:
            main, sub = mime.split("/")
            message.add_attachment(data, maintype=main, subtype=sub, filename=name)
    return message.as_bytes()
