"""The shipped SPARQL files (``queries/*.rq``), each with the contract its comment header declares.

A header is the comment lines before the query::

    # What the query gives, in prose.
    # Binds: ?document          variables the caller must bind
    # May bind: ?segment        variables the caller may bind
    # Returns: ?document ?page  the variables of each row (SELECT)
    # Audit: / Finds: / Kind:   for the audits (queries/audit-*.rq)

Binding an undeclared variable, or leaving out a required one, raises QueryError at once: a
misspelt name would otherwise leave the variable unbound and the query would run over the
whole store.

Query shape, so that a lookup costs the same in a small and a large store:

- bound values are written into the query as constants (not Oxigraph substitutions), so the
  planner knows them and starts from them; a bound variable stays in the projection as
  ``(<value> AS ?name)``;
- a type test is a FILTER on a variable (``?x a ?t . FILTER(?t = tg:Page)``), not a constant
  ``a tg:Page`` pattern, which Oxigraph would start from and scan every entity of the type;
- each OPTIONAL holds one pattern;
- BIND comes last in its group.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from pyoxigraph import NamedNode

from ..model.errors import QueryError
from .resources import resource_dir
from .terms import is_iri

_HEADER_KEY = re.compile(r"#\s*(Audit|Finds|Kind|Binds|May bind|Returns):\s*(.*)")
_VARIABLE = re.compile(r"\?(\w+)")
_WHERE = re.compile(r"\bWHERE\s*\{", re.IGNORECASE)


@dataclass(frozen=True)
class QueryFile:
    """One ``queries/<name>.rq``: its text and the contract of its header."""

    name: str
    text: str
    description: str
    binds: tuple[str, ...] = ()
    may_bind: tuple[str, ...] = ()
    returns: tuple[str, ...] = ()
    headers: dict = field(default_factory=dict, compare=False)

    @property
    def is_update(self) -> bool:
        return self.kind_of_query == "update"

    @property
    def kind_of_query(self) -> str:
        body = "\n".join(line for line in self.text.splitlines() if not line.lstrip().startswith(("#", "PREFIX")))
        word = re.match(r"\s*(\w+)", body)
        first = word.group(1).upper() if word else ""
        return {"SELECT": "select", "CONSTRUCT": "construct", "ASK": "ask", "DESCRIBE": "describe"}.get(first,
                                                                                                   "update")

    def check(self, values: dict) -> None:
        """QueryError for a variable the header does not declare, or a required one left out."""
        unknown = [name for name in values if name not in self.binds + self.may_bind]
        if unknown:
            declared = " ".join("?" + n for n in self.binds + self.may_bind) or "nothing"
            raise QueryError(f"{self.name} binds {declared}, not {' '.join('?' + n for n in unknown)}")
        missing = [name for name in self.binds if values.get(name) is None]
        if missing:
            raise QueryError(f"{self.name} needs {' '.join('?' + n for n in missing)} bound")

    def bound(self, values: dict) -> str:
        """The query with ``values`` (variable name -> IRI string or RDF term) written in as constants.

        >>> query_file("content_hash").bound({"entity": "urn:page:1"}).count("<urn:page:1>")
        2
        >>> query_file("content_hash").bound({"document": "urn:page:1"})
        Traceback (most recent call last):
        ...
        kg_decoder.model.errors.QueryError: content_hash binds ?entity, not ?document
        """
        self.check(values)
        terms = {name: _term(value) for name, value in values.items() if value is not None}
        return _with_values(self.text, terms, is_update=self.is_update)


def _term(value) -> object:
    if isinstance(value, str):
        if not is_iri(value):
            raise QueryError(f"not an IRI that can be bound: {value!r:.120}")
        return NamedNode(value)
    return value


@lru_cache(maxsize=None)
def query_file(name: str) -> QueryFile:
    """The shipped query ``name`` with its header read.

    >>> query_file("segment_info").binds
    ('segment',)
    """
    path = resource_dir("queries") / f"{name}.rq"
    if not re.fullmatch(r"[a-z][a-z0-9_-]*", name) or not path.is_file():
        raise QueryError(f"no shipped query {name!r} (see `kg-decoder queries`)")
    return parse_query_file(name, path.read_text(encoding="utf-8"))


def parse_query_file(name: str, text: str) -> QueryFile:
    headers: dict[str, str] = {}
    prose: list[str] = []
    current: Optional[str] = None
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        match = _HEADER_KEY.match(line)
        if match:
            current = match.group(1).lower()
            headers[current] = match.group(2).strip()
        elif current and line.startswith("#   "):
            headers[current] += " " + line.lstrip("#").strip()
        else:
            current = None
            prose.append(line.lstrip("#").strip())
    names = lambda key: tuple(_VARIABLE.findall(headers.get(key, "")))  # noqa: E731
    return QueryFile(name=name, text=text, description=" ".join(prose), binds=names("binds"),
                     may_bind=names("may bind"), returns=names("returns"), headers=headers)


def shipped_queries() -> list[QueryFile]:
    """Every shipped query, by name."""
    return [query_file(path.stem) for path in sorted(resource_dir("queries").glob("*.rq"))]


def _with_values(query: str, terms: dict, is_update: bool = False) -> str:
    """``query`` with the bound variables written in as constants (kept in a SELECT's projection).

    >>> _with_values("SELECT ?a ?b WHERE { ?a ?b ?c }", {"b": NamedNode("http://ex.org/p")})
    'SELECT ?a (<http://ex.org/p> AS ?b) WHERE { ?a <http://ex.org/p> ?c }'
    """
    if not terms:
        return query
    code = "\n".join(line for line in query.splitlines() if not line.lstrip().startswith("#"))
    if is_update:
        for key, term in terms.items():
            code = re.sub(rf"\?{key}\b", lambda _: str(term), code)
        return code
    where = _WHERE.search(code)
    if where is None:
        raise QueryError("a query with bound values needs a WHERE clause")
    last_brace = code.rindex("}") + 1
    head, body, tail = code[:where.start()], code[where.start():last_brace], code[last_brace:]
    for key, term in terms.items():
        if not re.search(rf"\?{key}\b", body):
            raise QueryError(f"?{key} does not occur in the query's WHERE clause")
        head = re.sub(rf"\?{key}\b", lambda _: f"({term} AS ?{key})", head)
        body = re.sub(rf"\?{key}\b", lambda _: str(term), body)
    return head + body + tail  # the tail (ORDER BY...) sees the projected variable
