"""Pages as pictures for the trace view: PDF pages rendered with PDFium, image files as they are,
DOCX/PPTX/ODT... through LibreOffice to PDF first (cached beside the store). Offline."""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Optional

from .store import KgStore

RENDER_SCALE = 2.0  # pixels per PDF point: sharp enough to read, small enough to send
_CONVERTIBLE = {"docx", "pptx", "doc", "ppt", "odt", "xlsx", "xls", "rtf"}
_LOCK = threading.Lock()


def render_page_png(store: KgStore, document: dict, page_number: int) -> Optional[bytes]:
    """A PNG of one page of a document (``document``: its row of ``document_info``), or None."""
    data = store.library.get(document["sha256"])
    fmt = document["format"]
    if fmt in ("png", "jpeg", "tiff"):
        return _image_frame(data, page_number)
    if fmt in _CONVERTIBLE:
        data = _as_pdf(store, document["sha256"], data, fmt)
        if data is None:
            return None
    elif fmt != "pdf":
        return None
    return _pdf_page(data, page_number)


def _pdf_page(data: bytes, page_number: int) -> Optional[bytes]:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(data)
    except pdfium.PdfiumError:
        return None
    try:
        if not 1 <= page_number <= len(pdf):
            return None
        image = pdf[page_number - 1].render(scale=RENDER_SCALE).to_pil()
        buffer = io.BytesIO()
        image.save(buffer, "PNG")
        return buffer.getvalue()
    finally:
        pdf.close()


def _image_frame(data: bytes, page_number: int) -> Optional[bytes]:
    from PIL import Image

    with Image.open(io.BytesIO(data)) as image:
        if page_number > getattr(image, "n_frames", 1):
            return None
        image.seek(page_number - 1)
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, "PNG")
        return buffer.getvalue()


def _as_pdf(store: KgStore, sha256: str, data: bytes, fmt: str) -> Optional[bytes]:
    """The document converted to PDF by LibreOffice, cached in ``<store>/renders/``."""
    cache = store.path / "renders" / f"{sha256}.pdf"
    if cache.is_file():
        return cache.read_bytes()
    soffice = shutil.which("soffice")
    if soffice is None:
        return None
    with _LOCK, tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / f"document.{fmt}"
        source.write_bytes(data)
        subprocess.run([soffice, "--headless", f"-env:UserInstallation=file://{folder}/profile", "--convert-to",
                        "pdf", "--outdir", folder, str(source)], capture_output=True, timeout=180)
        produced = Path(folder) / "document.pdf"
        if not produced.is_file():
            return None
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(produced.read_bytes())
    return cache.read_bytes()
