"""The coverage audits: every ``queries/audit-*.rq``, run by name, with what its header says.

Each audit file starts with a comment header::

    # Audit: <title>
    # Finds: <what it finds, possibly over several lines>
    # Kind: finding | report

A *finding* audit lists problems (no rows: nothing found); a *report* audit always has
rows (counts, shares) and never counts as a finding.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Union

from ..graph.queries import shipped_queries
from ..graph.opening import open_store
from ..graph.store import KgStore, StorePath
from ..model import Audit, Rows
from ..model.errors import QueryError


def audit_definitions() -> list[Audit]:
    """The shipped audits, in name order, with their headers (no rows).

    >>> [a.name for a in audit_definitions()][:2]
    ['audit-boxes-by-format', 'audit-chunk-anchors-not-verified']
    """
    audits = []
    for query in shipped_queries():
        if not query.name.startswith("audit-"):
            continue
        headers = query.headers
        if headers.get("kind") not in ("finding", "report") or not headers.get("audit"):
            raise QueryError(f"{query.name}.rq needs '# Audit:', '# Finds:' and '# Kind: finding|report' header lines")
        audits.append(Audit(name=query.name, title=headers["audit"], finds=headers.get("finds", ""),
                            kind=headers["kind"]))
    return audits


# Audits of the library beside the graph: not SPARQL, the files are not in the graph.
LIBRARY_AUDITS = [
    Audit(name="library-missing-blobs", title="cited bytes missing from the library", kind="finding",
          finds="library hashes the graph cites (an original, a text, a picture) whose bytes the library "
                "does not hold: removed by hand, or a store copied without its library."),
    Audit(name="library-orphan-blobs", title="library bytes no entity cites", kind="finding",
          finds="library blobs no entity of the graph cites: left by a decode killed between writing its "
                "bytes and committing its quads. `kg-decoder gc` removes them."),
]


def run_audits(store: Union[KgStore, StorePath]) -> list[Audit]:
    """Run every audit over the store (the SPARQL audits and the library's). Reads only."""
    if not isinstance(store, KgStore):
        with open_store(store, read_only=True) as opened:
            return run_audits(opened)
    audits = audit_definitions()
    for audit in audits:
        audit.table = store.table(audit.name)
    missing, orphans = store.missing_blobs(), store.orphan_blobs()
    for audit, hashes in zip(LIBRARY_AUDITS, (missing, orphans)):
        audits.append(replace(audit, table=Rows(columns=["sha256"], rows=[(key,) for key in hashes])))
    audits.append(store.index_audit())
    return audits
