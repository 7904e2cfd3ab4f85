"""SHACL validation of the provenance graph against ``ontology/shapes.ttl`` (pySHACL).

The data is the store's ``<urn:graph:source>`` (or one document's part of it) with the
ontology alongside, so ``sh:class`` sees subclasses (a tg:Table is a tg:Element).
Triples whose object is an RDF 1.2 triple term (``tg:contains``) are left out: rdflib
cannot hold them, and the shapes do not constrain them.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Optional, Union

from ..graph.resources import resource_dir
from ..graph.opening import open_store
from ..graph.store import KgStore, StorePath
from ..model import ValidationReport, Violation
from ..model.errors import InvalidFact, UnknownEntity

SH = "http://www.w3.org/ns/shacl#"


@lru_cache(maxsize=1)
def _shapes_and_ontology():
    import rdflib

    folder = resource_dir("ontology")
    return (rdflib.Graph().parse(folder / "shapes.ttl", format="turtle"),
            rdflib.Graph().parse(folder / "tg.ttl", format="turtle"))


def validate(store: Union[KgStore, StorePath], document: Optional[str] = None,
             data: Optional[str] = None) -> ValidationReport:
    """Check the store's provenance graph (or one document's part of it, or N-Triples ``data``)
    against ``ontology/shapes.ttl``. Reads only."""
    from pyshacl import validate as shacl_validate

    if not isinstance(store, KgStore):
        with open_store(store, read_only=True) as opened:
            return validate(opened, document, data)
    if data is None:
        if document is not None and not store.has_document(document):
            raise UnknownEntity(f"no document {str(document):.200} in the store")
        data = store.provenance_ntriples(document)
    try:
        graph = _graph_class()().parse(data=data, format="nt")
    except Exception as exc:  # rdflib's parsers raise their own errors
        raise InvalidFact(f"the data to validate does not parse as N-Triples: {str(exc)[:200]}") from None
    triples = len(graph)
    shapes, ontology = _shapes_and_ontology()
    # In place: the ontology is mixed into this graph (of our class), not into a copy of rdflib's.
    conforms, results, _ = shacl_validate(graph, shacl_graph=shapes, ont_graph=ontology, inference="none",
                                          allow_warnings=False, inplace=True)
    return ValidationReport(conforms=bool(conforms), violations=_violations(results), triples=triples)


@lru_cache(maxsize=1)
def _graph_class():
    """An rdflib graph that parses each SPARQL text once: pySHACL asks a SPARQL constraint's same text
    again for each focus node, and rdflib's parsing it was 70% of a validation's time."""
    import rdflib
    from rdflib.plugins.sparql import prepareQuery

    @lru_cache(maxsize=64)
    def prepared(text: str, namespaces: tuple):
        return prepareQuery(text, initNs=dict(namespaces))

    class PreparedQueries(rdflib.Graph):
        def query(self, query_object, processor="sparql", result="sparql", initNs=None, initBindings=None,  # noqa: N803
                  use_store_provided=True, **kwargs):
            if isinstance(query_object, str) and not initNs:
                # Read with the prefixes rdflib would read it with: the graph's own.
                query_object = prepared(query_object, tuple(sorted(self.namespaces())))
            return super().query(query_object, processor, result, initNs, initBindings, use_store_provided, **kwargs)

    return PreparedQueries


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
