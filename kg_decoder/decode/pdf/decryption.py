"""PDFs encrypted for their owner alone: a reader opens them without a password (the user password
is empty), but some writers leave the empty user password in a form PDFium refuses while poppler and
pypdf accept it. Such a PDF is read from a decrypted copy, made once per document; one that needs a
password stays refused as encrypted.
"""

from __future__ import annotations

import hashlib
import io
from typing import Optional

_last: dict[str, bytes] = {}  # the document being decoded: its sha256 -> its readable bytes


def readable_pdf(data: bytes, password: Optional[str] = None) -> bytes:
    """``data``, or the decrypted copy of a PDF that opens with an empty password everywhere but in PDFium."""
    if password or b"/Encrypt" not in data:
        return data
    import pypdfium2 as pdfium

    try:
        pdfium.PdfDocument(data).close()
        return data
    except pdfium.PdfiumError as exc:
        if "password" not in str(exc).lower():
            return data
    key = hashlib.sha256(data).hexdigest()
    if key not in _last:
        _last.clear()
        _last[key] = _decrypted(data) or data
    return _last[key]


def _decrypted(data: bytes) -> Optional[bytes]:
    import pypdf

    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
        if reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
            return None
        copy = io.BytesIO()
        pypdf.PdfWriter(clone_from=reader).write(copy)
        return copy.getvalue()
    except Exception:  # pypdf on a damaged or unusual encryption: the PDF stays refused as encrypted
        return None


__all__ = ["readable_pdf"]
