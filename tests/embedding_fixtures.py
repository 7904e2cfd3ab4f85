"""Documents with files inside: OLE packages in Office files, nested archives, e-mail chains.

No tool on these machines writes OLE compound files (olefile only reads them), so
``compound_file`` writes a minimal one (CFB version 3, root-level streams of at
least 4096 bytes, so no mini stream) by the [MS-CFB] layout; olefile reading it
back is the check that it is well formed.
"""

from __future__ import annotations

import email.message
import io
import struct
import zipfile

SECTOR = 512
FREE, END_OF_CHAIN, FAT_SECTOR, NO_STREAM = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF


def compound_file(streams: dict[str, bytes]) -> bytes:
    """An OLE compound file holding ``streams`` at its root."""
    assert all(len(data) >= 4096 for data in streams.values()), "short streams would need a mini stream"
    entries = len(streams) + 1
    directory_sectors = -(-entries * 128 // SECTOR)
    data_sectors = sum(-(-len(data) // SECTOR) for data in streams.values())
    fat_sectors = 1
    while fat_sectors * SECTOR // 4 < fat_sectors + directory_sectors + data_sectors:
        fat_sectors += 1
    assert fat_sectors <= 109, "more FAT sectors than the header lists"
    layout = []  # (first sector, sector count) of each stream
    next_sector = fat_sectors + directory_sectors  # the FAT comes first
    for data in streams.values():
        count = -(-len(data) // SECTOR)
        layout.append((next_sector, count))
        next_sector += count
    fat = [FREE] * (fat_sectors * SECTOR // 4)
    fat[:fat_sectors] = [FAT_SECTOR] * fat_sectors
    for first, count in [(fat_sectors, directory_sectors)] + layout:
        for sector in range(first, first + count):
            fat[sector] = sector + 1 if sector < first + count - 1 else END_OF_CHAIN
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16) + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6)
    header += bytes(6) + struct.pack("<IIIIIIIII", 0, fat_sectors, fat_sectors, 0, 4096, END_OF_CHAIN, 0,
                                     END_OF_CHAIN, 0)
    header += struct.pack("<109I", *range(fat_sectors), *[FREE] * (109 - fat_sectors))
    names = list(streams)
    directory = _directory_entry("Root Entry", 5, NO_STREAM, 1 if names else NO_STREAM, END_OF_CHAIN, 0)
    for number, name in enumerate(names, start=1):
        sibling = number + 1 if number < len(names) else NO_STREAM
        directory += _directory_entry(name, 2, sibling, NO_STREAM, layout[number - 1][0], len(streams[name]))
    directory = directory.ljust(directory_sectors * SECTOR, b"\x00")
    body = b"".join(data.ljust(-(-len(data) // SECTOR) * SECTOR, b"\x00") for data in streams.values())
    return header + struct.pack(f"<{len(fat)}I", *fat) + directory + body


def _directory_entry(name: str, kind: int, right: int, child: int, start: int, size: int) -> bytes:
    encoded = (name + "\x00").encode("utf-16-le")
    return (encoded.ljust(64, b"\x00") + struct.pack("<HBB", len(encoded), kind, 1)
            + struct.pack("<III", NO_STREAM, right, child) + bytes(16) + struct.pack("<I", 0) + bytes(16)
            + struct.pack("<IQ", start, size))


def ole_package(file_name: str, data: bytes) -> bytes:
    """An OLE "Package" object (what Office writes for an embedded file of any kind)."""
    path = f"C:\\Users\\someone\\{file_name}".encode("latin-1")
    body = struct.pack("<H", 2) + file_name.encode("latin-1") + b"\x00" + path + b"\x00"
    temp = b"C:\\Temp\\" + file_name.encode("latin-1") + b"\x00"
    body += struct.pack("<HHI", 0, 3, len(temp)) + temp + struct.pack("<I", len(data)) + data
    native = struct.pack("<I", len(body)) + body
    return compound_file({"\x01Ole10Native": native.ljust(4096, b"\x00")})


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
