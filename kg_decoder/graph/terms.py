"""RDF terms from what a caller writes: a fact as (s, p, o) strings, SPARQL JSON terms or
pyoxigraph terms, and fact files (Turtle, N-Triples, JSON lines), checked into triples; and the
store's terms as Python values and as SPARQL update text."""

from __future__ import annotations

import json
import os
import re
from decimal import Decimal
from typing import Any, Iterable, Optional, Sequence, Union

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, parse

from ..model.errors import InvalidFact

Term = Union[NamedNode, Literal]
TripleLike = Union[Triple, Sequence[Any]]
SpanLike = Union[None, str, Sequence[int], dict]

_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\s<>\"{}|^`\\]*")


def is_iri(value: object) -> bool:
    """Whether ``value`` is an absolute IRI the store takes.

    >>> is_iri("urn:page:1"), is_iri("urn:page:1\\n"), is_iri("no iri"), is_iri(5)
    (True, False, False, False)
    """
    if not isinstance(value, str) or not _IRI.fullmatch(value):
        return False
    try:
        NamedNode(value)
    except ValueError:
        return False
    return True


_FILE_FORMATS = {".ttl": RdfFormat.TURTLE, ".nt": RdfFormat.N_TRIPLES, ".jsonl": "jsonl", ".ndjson": "jsonl"}


def read_facts(path: Union[str, os.PathLike], data: Optional[bytes] = None,
               format: Optional[str] = None) -> tuple[list[Triple], Optional[list[SpanLike]]]:
    """Triples (and spans, for JSON lines) from a Turtle, N-Triples or JSON lines file.

    A JSON line is ``{"s": .., "p": .., "o": .., "start": .., "end": ..}`` or with
    ``"quote"``; ``o`` may also be a SPARQL JSON term (``{"type": "literal", ...}``).
    """
    if not isinstance(path, (str, os.PathLike)) or (data is not None and not isinstance(data, bytes)):
        raise InvalidFact("give the path of a fact file (and its bytes, if they are at hand)")
    name = os.fspath(path)
    kind = format or _FILE_FORMATS.get(os.path.splitext(name)[1].lower())
    if kind is None:
        raise InvalidFact(f"cannot tell the format of {name}: use .ttl, .nt or .jsonl")
    if data is None:
        try:
            with open(name, "rb") as stream:
                data = stream.read()
        except (OSError, ValueError) as exc:
            raise InvalidFact(f"cannot read {name[:200]}: {getattr(exc, 'strerror', None) or exc}") from None
    if kind in ("jsonl", "json"):
        return _read_json_lines(data)
    rdf_format = kind
    if isinstance(kind, str):
        rdf_format = {"ttl": RdfFormat.TURTLE, "turtle": RdfFormat.TURTLE, "nt": RdfFormat.N_TRIPLES}.get(kind)
        if rdf_format is None:
            raise InvalidFact(f"unknown fact file format {kind[:20]!r}: use ttl, nt or jsonl")
    try:
        quads = list(parse(input=data, format=rdf_format))
    except (SyntaxError, ValueError) as exc:
        raise InvalidFact(f"{name} does not parse: {str(exc).splitlines()[0]}") from None
    triples = [to_triple(Triple(q.subject, q.predicate, q.object), n) for n, q in enumerate(quads, start=1)]
    return triples, None


def _read_json_lines(data: bytes) -> tuple[list[Triple], list[SpanLike]]:
    triples, spans = [], []
    try:
        lines = data.decode("utf-8").split("\n")  # not splitlines(): JSON strings may hold U+2028 as it is
    except UnicodeDecodeError:
        raise InvalidFact("the JSON lines file is not UTF-8") from None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise InvalidFact(f"line {number} is not JSON: {exc}") from None
        if not isinstance(item, dict) or not {"s", "p", "o"} <= item.keys():
            raise InvalidFact(f"line {number} needs the keys s, p and o")
        triples.append(to_triple((item["s"], item["p"], item["o"]), number))
        if "quote" in item:
            spans.append({"quote": item["quote"]})
        elif "start" in item or "end" in item:
            spans.append({"start": item.get("start"), "end": item.get("end")})
        else:
            spans.append(None)
    return triples, spans


def to_triple(item: TripleLike, number: int = 1) -> Triple:
    """A checked triple from a Triple or an (s, p, o) of terms or strings.

    >>> to_triple(("http://ex.org/a", "http://ex.org/knows", "<http://ex.org/b>")).object
    <NamedNode value=http://ex.org/b>
    >>> to_triple(("http://ex.org/a", "knows", "b"))
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidFact: triple 1: the predicate 'knows' is not an absolute IRI
    >>> to_triple(("http://ex.org/a", "http://ex.org/says", chr(0xD800)))
    Traceback (most recent call last):
    ...
    kg_decoder.model.errors.InvalidFact: triple 1: the object holds a lone surrogate, which is no Unicode character
    """
    if isinstance(item, Triple):
        subject, predicate, obj = item.subject, item.predicate, item.object
    else:
        try:
            subject, predicate, obj = item
        except (TypeError, ValueError):
            raise InvalidFact(f"triple {number}: expected (subject, predicate, object), got {item!r:.80}") from None
    subject = _iri(subject, "subject", number)
    predicate = _iri(predicate, "predicate", number)
    obj = _object(obj, number)
    return Triple(subject, predicate, obj)


def _iri(value: Any, role: str, number: int) -> NamedNode:
    if isinstance(value, NamedNode):
        return value
    if isinstance(value, BlankNode):
        raise InvalidFact(f"triple {number}: the {role} is a blank node; facts need IRIs to be traced")
    if isinstance(value, str):
        text = value[1:-1] if value.startswith("<") and value.endswith(">") else value
        if is_iri(text):
            return NamedNode(text)
    raise InvalidFact(f"triple {number}: the {role} {value!r:.80} is not an absolute IRI")


def _unicode(text: str, number: int) -> str:
    """``text``, which must be Unicode text (a lone surrogate, which JSON can carry, is no character)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidFact(f"triple {number}: the object holds a lone surrogate, which is no Unicode "
                          f"character") from None
    return text


def _object(value: Any, number: int) -> Term:
    if isinstance(value, (NamedNode, Literal)):
        return value
    if isinstance(value, BlankNode):
        raise InvalidFact(f"triple {number}: the object is a blank node; facts need IRIs or literals")
    if isinstance(value, str):
        if value.startswith("<") and value.endswith(">"):
            return _iri(value, "object", number)
        return Literal(_unicode(value, number))
    if isinstance(value, bool) or not isinstance(value, (dict, int, float)):
        raise InvalidFact(f"triple {number}: the object {value!r:.80} is not an IRI or a literal")
    if isinstance(value, (int, float)):
        return Literal(value)
    kind, text = value.get("type"), value.get("value")
    if not isinstance(text, str):
        raise InvalidFact(f"triple {number}: the object term has no string value")
    _unicode(text, number)
    if kind == "uri":
        return _iri(text, "object", number)
    if kind in ("literal", "typed-literal"):
        try:
            if value.get("xml:lang"):
                return Literal(text, language=value["xml:lang"])
            if value.get("datatype"):
                return Literal(text, datatype=_iri(value["datatype"], "datatype", number))
        except ValueError as exc:
            raise InvalidFact(f"triple {number}: {exc}") from None
        return Literal(text)
    raise InvalidFact(f"triple {number}: an object term must be of type uri or literal, not {kind!r}")


def insert_data(quads: Iterable[Quad]) -> str:
    """An ``INSERT DATA`` update that adds ``quads``."""
    lines = []
    for quad in quads:
        triple = Triple(quad.subject, quad.predicate, quad.object)
        lines.append(f"{triple} ." if isinstance(quad.graph_name, DefaultGraph)
                     else f"GRAPH {quad.graph_name} {{ {triple} }}")
    return "INSERT DATA {\n" + "\n".join(lines) + "\n}"


def plain_text(term) -> str:
    """A term as text: an IRI or a literal's lexical form; a blank node or triple term in N-Triples."""
    if isinstance(term, (NamedNode, Literal)):
        return term.value
    return str(term)


def python_value(term):
    """A term as a Python value: IRIs and strings as text, numbers as int, Decimal or float, booleans."""
    if isinstance(term, NamedNode):
        return term.value
    if isinstance(term, (BlankNode, Triple)):
        return str(term)
    value = term.value
    kind = term.datatype.value.rsplit("#", 1)[-1]
    if kind == "integer":
        return int(value)
    if kind == "decimal":  # exact: a share computed by the query keeps its digits
        try:
            return Decimal(value)
        except ArithmeticError:  # an ill-typed literal: its text
            return value
    if kind in ("double", "float"):
        return float(value)
    if kind == "boolean":
        return value == "true"
    return value
