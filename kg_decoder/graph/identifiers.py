"""Deterministic IRIs: uuid5 of the content hash, the item's position and the settings.

Never from a file name or a clock, so decoding the same bytes with the same
settings gives the same IRIs and a re-decode replaces instead of duplicating.
"""

from __future__ import annotations

import uuid

# A fixed namespace for every kg-decoder uuid5 (uuid5 of the DNS namespace and the project name).
NAMESPACE = uuid.uuid5(uuid.NAMESPACE_DNS, "kg-decoder.trustgraph.ai")


def derived_iri(kind: str, *parts: object) -> str:
    """``urn:{kind}:{uuid5}`` of the parts, in order.

    >>> derived_iri("page", "ab12", 3) == derived_iri("page", "ab12", 3)
    True
    >>> derived_iri("page", "ab12", 3).startswith("urn:page:")
    True
    """
    name = "|".join([kind, *(str(part) for part in parts)])
    return f"urn:{kind}:{uuid.uuid5(NAMESPACE, name)}"


def document_iri(content_sha256: str) -> str:
    """A document is its bytes: the same bytes are the same document, whatever their name."""
    return derived_iri("document", content_sha256)
