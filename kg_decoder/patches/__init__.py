"""Every change kg-decoder makes to another library's internals, one module per library.

- :mod:`.unstructured`: the spaCy model loaded from the bundled package, never downloaded; the
  tokenizer finding a page's texts in one spaCy batch; the PDF partitioner's pdfminer page
  generator wrapped while a PDF is partitioned; the private helpers kg-decoder reads as unstructured
  does (its spaCy pipeline, the texts a pdfminer page hands spaCy, a sheet's tables).
- :mod:`.pdfminer`: content streams tokenized by qpdf and characters laid out in one loop; Type 1
  fonts' glyphs a font maps to nothing; text lines with each glyph once and Hangul words whole.
- :mod:`.oxml`: python-docx's and python-pptx's XPath look-ups through compiled expressions.
- :mod:`.pypdfium2`: a page handing every step the same text page.
- :mod:`.waitress`: the server's own error answers (413, 400, 431, 501) written as the app's JSON; its
  server and channel subclassed: connections per client address, request deadlines.
- :mod:`.mcp`: the MCP SDK's server run over stdio files of kg-decoder's own.

Each patch names the upstream function it replaces, wraps or mirrors, the versions pinned in
``pyproject.toml`` and why; it is installed by an ``install_*`` function the code that needs it
calls, so importing kg_decoder imports none of these libraries. Each module's ``UPSTREAM`` records,
for every upstream object its patches depend on, the signature and the sha256 of the source they were
written against; ``tests/unit/test_patches.py`` fails, naming the patch, when an upgrade changes one.
After an upgrade, read the upstream change, then record the new values (``python -m kg_decoder.patches``
prints them).
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
from typing import Any, NamedTuple

LIBRARIES = ("unstructured", "pdfminer", "oxml", "pypdfium2", "waitress", "mcp")  # the patch modules, one a library
ORIGINALS: dict[str, Any] = {}  # "module:Qualified.name" -> the upstream object a patch replaced


class Upstream(NamedTuple):
    """An upstream object a patch replaces, wraps or mirrors, as the patch was written against it."""

    patch: str  # the install function (or helper) that depends on it
    target: str  # "package.module:Qualified.name"
    signature: str  # str(inspect.signature(...)); "" for a value
    source_sha256: str  # of inspect.getsource(...); of repr() for a value


def resolve(target: str) -> Any:
    """The object ``target`` names as upstream defines it: the original where a patch replaced it."""
    if target in ORIGINALS:
        return ORIGINALS[target]
    module_name, _, qualified = target.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in qualified.split("."):
        found = inspect.getattr_static(found, part) if inspect.isclass(found) else getattr(found, part)
    return found


def fingerprint(found: Any) -> tuple[str, str]:
    """(signature, sha256 of the source) of a function, class or property; ("", sha256 of repr) of a value."""
    if isinstance(found, property):
        found = found.fget
    if isinstance(found, (staticmethod, classmethod)):
        found = found.__func__
    if not inspect.isclass(found) and hasattr(found, "__wrapped__"):  # functools.lru_cache, wraps
        found = inspect.unwrap(found)
    if inspect.isfunction(found) or inspect.isclass(found) or inspect.ismethod(found):
        try:
            signature = str(inspect.signature(found))
        except (TypeError, ValueError):
            signature = ""
        return signature, hashlib.sha256(inspect.getsource(found).encode("utf-8")).hexdigest()
    return "", hashlib.sha256(repr(found).encode("utf-8")).hexdigest()


def remember(target: str, current: Any) -> None:
    """Keep ``current`` as ``target``'s upstream object, unless a patch of ours replaced it already."""
    ORIGINALS.setdefault(target, current)


def every_upstream() -> list[Upstream]:
    """The upstream objects of every patch module (imports the patch modules, not the libraries)."""
    return [upstream for name in LIBRARIES
            for upstream in importlib.import_module(f"{__name__}.{name}").UPSTREAM]
