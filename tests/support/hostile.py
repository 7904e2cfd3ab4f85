"""What the hostile-server tests need: small files that would cost gigabytes (a PNG whose header
claims 30 000 x 30 000 pixels, a ZIP whose headers lie about what a member inflates to, a PDF
with a 14 400 x 14 400 pt page), a look at a process tree's memory and CPU in /proc, and a cheap
request sent as another client (another loopback address)."""

from __future__ import annotations

import http.client
import io
import os
import struct
import time
import zipfile
import zlib
from pathlib import Path
from urllib.parse import urlsplit


def png_bomb(width: int = 30_000, height: int = 30_000) -> bytes:
    """A PNG of a few hundred bytes whose header claims ``width`` x ``height`` RGB pixels: a decoder
    that allocates the picture first takes gigabytes before it finds the data missing."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = zlib.compress(b"\0" * (1 + 3 * 64) * 64)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", rows) + chunk(b"IEND", b""))


def small_png() -> bytes:
    """A plain 64 x 48 picture."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (64, 48), "white").save(buffer, "PNG")
    return buffer.getvalue()


def lying_zip_bomb(inflated: int = 600 * 2 ** 20, declared: int = 1000) -> bytes:
    """A DOCX whose ``word/document.xml`` inflates to ``inflated`` bytes while both its headers say
    ``declared``: a parser that trusts them inflates it all at once (Python's ``ZipFile.read`` does)."""
    body = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = b"A" * 2 ** 20
    stream = b"".join([body.compress(b"<w:document><w:body><w:p><w:r><w:t>")]
                      + [body.compress(block) for _ in range(inflated // len(block))] + [body.flush()])
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("[Content_Types].xml", '<Types xmlns="http://schemas.openxmlformats.org/package/2006/'
                                                'content-types"><Default Extension="xml" ContentType="application/xml"/>'
                                                '</Types>')
        archive.writestr("_rels/.rels", "<Relationships/>")
        archive.writestr("word/document.xml", stream)
    data = bytearray(buffer.getvalue())
    position = 0
    while (position := data.find(b"PK", position)) >= 0:  # each header of the member: deflated, `declared` long
        signature = bytes(data[position:position + 4])
        if signature == b"PK\x03\x04" and data[position + 30:position + 47] == b"word/document.xml":
            struct.pack_into("<H", data, position + 8, zipfile.ZIP_DEFLATED)
            struct.pack_into("<I", data, position + 22, declared)
        elif signature == b"PK\x01\x02" and data[position + 46:position + 63] == b"word/document.xml":
            struct.pack_into("<H", data, position + 10, zipfile.ZIP_DEFLATED)
            struct.pack_into("<I", data, position + 24, declared)
        position += 2
    return bytes(data)


def huge_page_pdf(path: Path, points: float = 14_400.0) -> Path:
    """A PDF of one page ``points`` x ``points`` (PDF's largest) with a line of text."""
    from reportlab.pdfgen import canvas

    pdf = canvas.Canvas(str(path), pagesize=(points, points))
    pdf.setFont("Helvetica", 24)
    pdf.drawString(72, points - 72, "KGSENT a very large page")
    pdf.showPage()
    pdf.save()
    return path


# ---------------------------------------------------------------- a process tree in /proc


def children(pid: int) -> list[int]:
    """Every descendant of ``pid``."""
    by_parent: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    parent = int(stat.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            by_parent.setdefault(parent, []).append(int(entry))
    found, pending = [], [pid]
    while pending:
        for child in by_parent.get(pending.pop(), []):
            found.append(child)
            pending.append(child)
    return found


def rss(pid: int) -> int:
    """Resident bytes of one process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        return 0


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) of one process so far (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_rss(pid: int) -> int:
    return rss(pid) + sum(rss(child) for child in children(pid))


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid``'s descendants (the workers)."""
    return sum(cpu_seconds(child) for child in children(pid))


# ---------------------------------------------------------------- another client


def another_client_get(base: str, path: str, timeout: float = 10.0) -> tuple[int, float]:
    """GET ``path`` from 127.0.0.2, another client address than the tests' own: (status, seconds)."""
    address = urlsplit(base)
    started = time.monotonic()
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=timeout,
                                            source_address=("127.0.0.2", 0))
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        response.read()
        return response.status, time.monotonic() - started
    finally:
        connection.close()
