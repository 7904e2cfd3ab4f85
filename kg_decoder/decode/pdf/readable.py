"""A PDF no reader can open, refused before a worker is started for it.

A worker takes seconds of CPU to start (it imports every reader); a truncated PDF, which PDFium
refuses in a millisecond, cost that much to be told so. A PDF that ends as one should (``%%EOF``
or ``startxref`` in its last bytes: every intact PDF of the corpora) goes on without a look: a
search of its last 2 KB. One that does not is opened by PDFium in a small process of its own
(hostile bytes stay out of the caller's process, as in the worker): refused when PDFium cannot
load it. PDFium rebuilds the cross-reference table of many a truncated file, and those go on to
be decoded, as before (a missing end alone is no reason to refuse: PDFium opens about a third of the
corpora's PDFs cut 200 bytes short). A helper that fails or does not answer refuses nothing: the
worker then decides, as it did.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Optional

from ...model.errors import CorruptDocument

_TAIL = 2048  # bytes at the end where an intact PDF's ``startxref`` and ``%%EOF`` are
_TIMEOUT = 30.0  # seconds the helper has to open the document
_MEMORY = 4 * 2 ** 30  # bytes of address space the helper may use
_OPEN = f"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({_MEMORY}, {_MEMORY}))
resource.setrlimit(resource.RLIMIT_CPU, ({int(_TIMEOUT)}, {int(_TIMEOUT)}))
import pypdfium2
data = sys.stdin.buffer.read()
password = sys.argv[1] if len(sys.argv) > 1 else None
try:
    pypdfium2.PdfDocument(data, password=password).close()
except pypdfium2.PdfiumError as exc:
    print("refused" if "password" not in str(exc).lower() else "password", str(exc)[:200])
else:
    print("opened")
"""


def ends_as_a_pdf(data: bytes) -> bool:
    """Whether the file's last bytes hold what an intact PDF ends with.

    >>> ends_as_a_pdf(b"%PDF-1.4 ... startxref\\n1234\\n%%EOF\\n"), ends_as_a_pdf(b"%PDF-1.4 1 0 obj << /Ty")
    (True, False)
    """
    tail = data[-_TAIL:]
    return b"%%EOF" in tail or b"startxref" in tail


def refuse_unreadable_pdf(data: bytes, password: Optional[str] = None) -> None:
    """Raise CorruptDocument for a PDF that does not end as one and that PDFium cannot open."""
    if ends_as_a_pdf(data):
        return
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _OPEN, *([password] if password else [])], input=data,
                              capture_output=True, timeout=_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return
    answer = done.stdout.decode("utf-8", "replace").strip()
    if done.returncode == 0 and answer.startswith("refused"):
        reason = answer.removeprefix("refused").strip()
        raise CorruptDocument(f"the file could not be read as PDF: {reason}")


__all__ = ["ends_as_a_pdf", "refuse_unreadable_pdf"]
