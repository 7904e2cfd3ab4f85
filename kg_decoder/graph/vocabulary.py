"""The IRIs of the vocabulary: PROV-O, the tg: namespace and friends.

Only the RDF mapping and the store use these; every tg: term here is declared,
with a label and a comment, in ``ontology/tg.ttl`` (a test checks it).
"""

from __future__ import annotations

from functools import lru_cache

from pyoxigraph import NamedNode

TG = "https://trustgraph.ai/ns/"
PROV = "http://www.w3.org/ns/prov#"
DCTERMS = "http://purl.org/dc/terms/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDFS_LABEL = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")

SOURCE_GRAPH = NamedNode("urn:graph:source")

XSD_INTEGER = NamedNode(XSD + "integer")
XSD_DOUBLE = NamedNode(XSD + "double")
XSD_DATETIME = NamedNode(XSD + "dateTime")
XSD_BOOLEAN = NamedNode(XSD + "boolean")


# The vocabulary's terms made once (a term is made for each quad written: a tenth of the time, cached).
@lru_cache(maxsize=4096)
def tg(name: str) -> NamedNode:
    return NamedNode(TG + name)


def term_context(*names: str) -> dict[str, str]:
    """A JSON-LD context that names these tg: terms, for JSON written outside the graph (a Web Annotation).

    >>> term_context("verification")["verification"]
    'tg:verification'
    """
    return {"tg": TG, **{name: f"tg:{name}" for name in names}}


@lru_cache(maxsize=4096)
def prov(name: str) -> NamedNode:
    return NamedNode(PROV + name)


@lru_cache(maxsize=4096)
def dcterms(name: str) -> NamedNode:
    return NamedNode(DCTERMS + name)
