"""SHACL validation of the provenance graph against ``ontology/shapes.ttl`` (pySHACL).

The data is the store's ``<urn:graph:source>`` (or one document's part of it) with the
ontology alongside, so ``sh:class`` sees subclasses (a tg:Table is a tg:Element).
Triples whose object is an RDF 1.2 triple term (``tg:contains``) are left out: rdflib
cannot hold them, and the shapes do not constrain them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from pyoxigraph import RdfFormat, Triple

from .resources import resource_dir
from .store import KgStore
from .vocabulary import SOURCE_GRAPH

SH = "http://www.w3.org/ns/shacl#"


@dataclass
class Violation:
    focus: str
    path: Optional[str]
    message: str
    severity: str
    value: Optional[str] = None


@dataclass
class ValidationReport:
    conforms: bool
    violations: list[Violation]
    triples: int


@lru_cache(maxsize=1)
def _shapes_and_ontology():
    import rdflib

    folder = resource_dir("ontology")
    return (rdflib.Graph().parse(folder / "shapes.ttl", format="turtle"),
            rdflib.Graph().parse(folder / "tg.ttl", format="turtle"))


def validate(store: KgStore, document: Optional[str] = None, data: Optional[str] = None) -> ValidationReport:
    """Check the store (or one document, or N-Triples ``data``) against the shapes."""
    import rdflib
    from pyshacl import validate as shacl_validate

    if data is None:
        data = _document_ntriples(store, document) if document else _source_ntriples(store)
    graph = rdflib.Graph().parse(data=data, format="nt")
    shapes, ontology = _shapes_and_ontology()
    conforms, results, _ = shacl_validate(graph, shacl_graph=shapes, ont_graph=ontology, inference="none",
                                          allow_warnings=False)
    return ValidationReport(conforms=bool(conforms), violations=_violations(results), triples=len(graph))


def _source_ntriples(store: KgStore) -> str:
    text = store.graph.dump(format=RdfFormat.N_TRIPLES, from_graph=SOURCE_GRAPH).decode("utf-8")
    return "\n".join(line for line in text.splitlines() if "<<(" not in line) + "\n"


def _document_ntriples(store: KgStore, document: str) -> str:
    triples = store.construct("document_graph", document=document)
    return "".join(f"{triple} .\n" for triple in triples if not isinstance(triple.object, Triple))


def _violations(results) -> list:
    import rdflib

    sh = rdflib.Namespace(SH)
    found = []
    for result in results.subjects(rdflib.RDF.type, sh.ValidationResult):
        path = results.value(result, sh.resultPath)
        value = results.value(result, sh.value)
        found.append(Violation(
            focus=str(results.value(result, sh.focusNode)),
            path=str(path) if isinstance(path, rdflib.URIRef) else None,
            message=str(results.value(result, sh.resultMessage) or "violates a shape"),
            severity=str(results.value(result, sh.resultSeverity)).rsplit("#", 1)[-1],
            value=str(value) if value is not None else None,
        ))
    return sorted(found, key=lambda v: (v.focus, v.path or "", v.message))
