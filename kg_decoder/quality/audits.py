"""The coverage audits: every ``queries/audit-*.rq``, run by name, with what its header says.

Each audit file starts with a comment header::

    # Audit: <title>
    # Finds: <what it finds, possibly over several lines>
    # Kind: finding | report

A *finding* audit lists problems (no rows: nothing found); a *report* audit always has
rows (counts, shares) and never counts as a finding.
"""

from __future__ import annotations

from typing import Union

from ..graph.queries import shipped_queries
from ..graph.store import KgStore, StorePath, open_store
from ..model import Audit
from ..model.errors import QueryError


def audit_definitions() -> list[Audit]:
    """The shipped audits, in name order, with their headers (no rows).

    >>> [a.name for a in audit_definitions()][:2]
    ['audit-chunk-coverage', 'audit-chunk-gaps']
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


def run_audits(store: Union[KgStore, StorePath]) -> list[Audit]:
    """Run every audit over the store. Reads only."""
    if not isinstance(store, KgStore):
        store = open_store(store, read_only=True)
    audits = audit_definitions()
    for audit in audits:
        audit.table = store.table(audit.name)
    return audits
