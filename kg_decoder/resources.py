"""Locate the data folders that ship beside the code: ontology/, queries/, web/.

In a wheel they are packed under ``kg_decoder/_resources/``; in a source checkout
(editable install) they sit at the repository root.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


@lru_cache(maxsize=None)
def resource_dir(name: str) -> Path:
    """Return the folder ``name`` (``ontology``, ``queries`` or ``web``).

    >>> resource_dir("queries").name
    'queries'
    """
    for candidate in (_PACKAGE_DIR / "_resources" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"kg-decoder resource folder {name!r} is missing from the installation")


@lru_cache(maxsize=None)
def query_text(name: str) -> str:
    """The SPARQL text of ``queries/<name>.rq``.

    >>> "SELECT" in query_text("document_summary")
    True
    """
    path = resource_dir("queries") / f"{name}.rq"
    return path.read_text(encoding="utf-8")
