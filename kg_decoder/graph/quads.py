"""What every mapping of a run writes with: literals of the XSD types, a writer of quads in the source
graph, a run's agent and activity IRIs, a box on a page, and N-Quads."""

from __future__ import annotations

from datetime import datetime
from typing import Optional

from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse, serialize

from ..model import DecodeOptions
from .identifiers import derived_iri
from .vocabulary import RDF_TYPE, RDFS_LABEL, SOURCE_GRAPH, XSD_BOOLEAN, XSD_DATETIME, XSD_DOUBLE, XSD_INTEGER, prov, tg


def activity_iri(sha256: str, options: DecodeOptions, versions: dict[str, str]) -> str:
    """The decode run of these bytes with these settings by these software versions."""
    return derived_iri("activity", sha256, options.settings_key(), *sorted(versions.items()))


def agent_iri(versions: dict[str, str]) -> str:
    return derived_iri("agent", *sorted(versions.items()))


def int_literal(value: int) -> Literal:
    return Literal(str(int(value)), datatype=XSD_INTEGER)


def double_literal(value: float) -> Literal:
    return Literal(repr(float(value)), datatype=XSD_DOUBLE)


def bool_literal(value: bool) -> Literal:
    return Literal("true" if value else "false", datatype=XSD_BOOLEAN)


def time_literal(value: datetime) -> Literal:
    return Literal(value.isoformat(), datatype=XSD_DATETIME)


def text_literal(value: str) -> Literal:
    return Literal(value)


def typed_literal(value) -> Literal:
    """A Python value as the literal of its XSD type (bool, int, float, datetime; anything else a string)."""
    if isinstance(value, bool):
        return bool_literal(value)
    if isinstance(value, int):
        return int_literal(value)
    if isinstance(value, float):
        return double_literal(value)
    if isinstance(value, datetime):
        return time_literal(value)
    return text_literal(str(value))


class QuadWriter:
    """Collects quads in the source graph."""

    def __init__(self) -> None:
        self.quads: list[Quad] = []

    def add(self, subject: NamedNode, predicate: NamedNode, obj) -> None:
        self.quads.append(Quad(subject, predicate, obj, SOURCE_GRAPH))

    def add_optional(self, subject: NamedNode, predicate: NamedNode, value, convert) -> None:
        if value is not None:
            self.add(subject, predicate, convert(value))


class NQuadsWriter(QuadWriter):
    """Collects quads in the source graph as N-Quads lines, each joined from its terms' N-Triples forms
    (pyoxigraph's own ``str``, escapes and all; IRIs and literals, never triple terms): a pyoxigraph
    ``Quad`` costs four times its line (6 against 1.6 µs), a long document's mapping writes 150 000 of
    them, and lines are what the store loads."""

    def __init__(self) -> None:  # no list of Quads: ``quads`` reads the lines back
        self._lines: list[str] = []

    def add(self, subject: NamedNode, predicate: NamedNode, obj) -> None:
        # IRIs and literals only: a plain string would be written as it is (a line of its own making),
        # and a triple term's str() is not its N-Quads form.
        if type(subject) is not NamedNode or type(predicate) is not NamedNode or type(obj) not in _TERMS:
            raise TypeError(f"not an IRI or a literal: {subject!r} {predicate!r} {obj!r}"[:300])
        self._lines.append(f"{subject} {predicate} {obj} {_SOURCE_GRAPH} .\n")

    def __len__(self) -> int:
        return len(self._lines)

    @property
    def quads(self) -> list[Quad]:
        return list(parse(self.nquads(), format=RdfFormat.N_QUADS))

    def nquads(self) -> bytes:
        return "".join(self._lines).encode()


_SOURCE_GRAPH = str(SOURCE_GRAPH)
_TERMS = (NamedNode, Literal)


def describe_agent(out: QuadWriter, versions: dict[str, str]) -> NamedNode:
    """The software agent of a run: kg-decoder with the versions of what it runs on."""
    agent = NamedNode(agent_iri(versions))
    out.add(agent, RDF_TYPE, prov("SoftwareAgent"))
    out.add(agent, RDFS_LABEL, text_literal("kg-decoder " + versions.get("kg-decoder", "")))
    for name, version in sorted(versions.items()):
        out.add(agent, tg("softwareVersion"), text_literal(f"{name} {version}"))
    return agent


def describe_box(out: QuadWriter, node: NamedNode, bbox, width: Optional[float], height: Optional[float],
                  coordinate_system: Optional[str]) -> None:
    """A box on a page, with the page size and coordinate system it is measured in."""
    left, top, right, bottom = bbox
    out.add(node, tg("bboxLeft"), double_literal(left))
    out.add(node, tg("bboxTop"), double_literal(top))
    out.add(node, tg("bboxRight"), double_literal(right))
    out.add(node, tg("bboxBottom"), double_literal(bottom))
    out.add_optional(node, tg("pageWidth"), width, double_literal)
    out.add_optional(node, tg("pageHeight"), height, double_literal)
    out.add_optional(node, tg("coordinateSystem"), coordinate_system, text_literal)


def as_nquads(quads: list[Quad]) -> bytes:
    """Quads serialised as N-Quads (how the worker hands them to the store's owner)."""
    return serialize(quads, format=RdfFormat.N_QUADS) or b""


__all__ = ["NQuadsWriter", "QuadWriter", "activity_iri", "agent_iri", "as_nquads", "bool_literal", "describe_agent",
           "describe_box", "double_literal", "int_literal", "text_literal", "time_literal", "typed_literal"]
