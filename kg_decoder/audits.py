"""The coverage audits: every ``queries/audit-*.rq``, run by name, with what its header says.

Each audit file starts with a comment header::

    # Audit: <title>
    # Finds: <what it finds, possibly over several lines>
    # Kind: finding | report

A *finding* audit lists problems (no rows: nothing found); a *report* audit always has
rows (counts, shares) and never counts as a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .resources import resource_dir
from .store import KgStore


@dataclass
class Audit:
    name: str
    title: str
    finds: str
    kind: str  # "finding" or "report"
    rows: list[dict] = field(default_factory=list)

    @property
    def has_findings(self) -> bool:
        return self.kind == "finding" and bool(self.rows)

    def to_json(self) -> dict:
        return {"audit": self.name, "title": self.title, "finds": self.finds, "kind": self.kind,
                "findings": len(self.rows) if self.kind == "finding" else 0, "rows": self.rows}


def audit_definitions() -> list[Audit]:
    """The shipped audits, in name order, with their headers (no rows).

    >>> [a.name for a in audit_definitions()][:2]
    ['audit-chunk-coverage', 'audit-chunk-gaps']
    """
    audits = []
    for path in sorted(resource_dir("queries").glob("audit-*.rq")):
        audits.append(_parse_header(path.stem, path.read_text(encoding="utf-8")))
    return audits


def run_audits(store: KgStore) -> list[Audit]:
    """Run every audit over the store."""
    audits = audit_definitions()
    for audit in audits:
        audit.rows = store.select(audit.name)
    return audits


def _parse_header(name: str, text: str) -> Audit:
    fields: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        match = re.match(r"#\s*(Audit|Finds|Kind):\s*(.*)", line)
        if match:
            current = match.group(1).lower()
            fields[current] = match.group(2).strip()
        elif current:
            fields[current] += " " + line.lstrip("#").strip()
    if fields.get("kind") not in ("finding", "report") or not fields.get("audit"):
        raise ValueError(f"{name}.rq needs '# Audit:', '# Finds:' and '# Kind: finding|report' header lines")
    return Audit(name=name, title=fields["audit"], finds=fields.get("finds", ""), kind=fields["kind"])
