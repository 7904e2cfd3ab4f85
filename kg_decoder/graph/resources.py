"""Locate the data folders that ship beside the code: ontology/ and queries/.

In a wheel they are packed under ``kg_decoder/_resources/``; in a source checkout
(editable install) they sit at the repository root.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from ..model.errors import StoreError

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # kg_decoder/


@lru_cache(maxsize=None)
def resource_dir(name: str) -> Path:
    """Return the folder ``name`` (``ontology`` or ``queries``).

    >>> resource_dir("queries").name
    'queries'
    """
    for candidate in (_PACKAGE_DIR / "_resources" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise StoreError(f"kg-decoder resource folder {name!r} is missing from the installation")
