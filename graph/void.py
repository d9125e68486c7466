"""The VoID description of the dataset, computed from the store itself (so it never drifts)."""

from collections.abc import Iterator

import pyoxigraph as ox
from rdflib import DCTERMS, RDF, VOID, XSD

from . import queries
from .formats import RDF_SYNTAXES
from .iris import Iris
from .names import ascii_slug
from .stores.store import GraphStore, OxigraphGraphStore
from .vocab import PREFIXES


def void_ntriples(store: GraphStore, iris: Iris) -> Iterator[str]:
    """VoID statistics of what the store holds now; call before adding them (they describe the data).

    Terms are pyoxigraph's, so every line is valid N-Triples whatever the base IRI or counts hold.
    """
    dataset = ox.NamedNode(iris.dataset)
    totals = store.select(
        "SELECT (COUNT(*) AS ?triples) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?p) AS ?properties)"
        " (COUNT(DISTINCT ?o) AS ?objects) WHERE { ?s ?p ?o }"
    )[0]
    classes = store.select(
        "SELECT ?class (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?class } GROUP BY ?class ORDER BY ?class"
    )
    properties = store.select("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p")
    entities = store.select(
        queries.bind(
            "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?c FILTER(STRSTARTS(STR(?s), ?base)) }",
            base=ox.Literal(iris.base),
        )
    )[0]["n"]

    def integer(value: object) -> ox.Literal:
        return ox.Literal(queries.integer(value))  # an xsd:integer

    def term(iri: object) -> ox.NamedNode:
        return ox.NamedNode(str(iri))

    triples: list[tuple[ox.NamedNode, ox.NamedNode, ox.NamedNode | ox.Literal]] = [
        (dataset, term(RDF.type), term(VOID.Dataset)),
        (dataset, term(DCTERMS.title), ox.Literal("bibgraph")),
        (
            dataset,
            term(DCTERMS.description),
            ox.Literal(
                "Papers, authors (in order) and research areas read from paper lists;"
                " void:triples counts the data, not this description."
            ),
        ),
        (dataset, term(VOID.uriSpace), ox.Literal(iris.base)),
        (dataset, term(VOID.sparqlEndpoint), term(iris.endpoint)),
        (dataset, term(VOID.rootResource), term(iris.scheme)),
    ]
    triples += [(dataset, term(VOID.dataDump), term(iris.dump(s.suffix))) for s in RDF_SYNTAXES]
    namespaces = sorted(set(PREFIXES.values()) - {str(XSD), str(RDF)})
    triples += [(dataset, term(VOID.vocabulary), term(namespace)) for namespace in namespaces]
    triples += [
        (dataset, term(VOID.triples), integer(totals["triples"])),
        (dataset, term(VOID.entities), integer(entities)),
        (dataset, term(VOID.distinctSubjects), integer(totals["subjects"])),
        (dataset, term(VOID.distinctObjects), integer(totals["objects"])),
        (dataset, term(VOID.properties), integer(totals["properties"])),
        (dataset, term(VOID.classes), integer(len(classes))),
    ]
    for row in classes:
        partition = term(f"{iris.dataset}#class-{_fragment(str(row['class']))}")
        triples.append((dataset, term(VOID.classPartition), partition))
        triples.append((partition, term(VOID["class"]), term(row["class"])))
        triples.append((partition, term(VOID.entities), integer(row["n"])))
    for row in properties:
        partition = term(f"{iris.dataset}#property-{_fragment(str(row['p']))}")
        triples.append((dataset, term(VOID.propertyPartition), partition))
        triples.append((partition, term(VOID.property), term(row["p"])))
        triples.append((partition, term(VOID.triples), integer(row["n"])))
    for subject, predicate, value in triples:
        yield f"{ox.Triple(subject, predicate, value)} .\n"


def _fragment(iri: str) -> str:
    """A readable fragment for a partition: the term's prefixed name (``schema-ScholarlyArticle``)."""
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace):
            return f"{prefix}-{ascii_slug(iri.removeprefix(namespace)) or 'term'}"
    return ascii_slug(iri)


def void_quads(store: OxigraphGraphStore, iris: Iris) -> list[ox.Quad]:
    """The VoID description the store holds now: the dataset's quads and its partitions' (to replace or set aside)."""
    quads = store.store
    dataset = ox.NamedNode(iris.dataset)
    described = list(quads.quads_for_pattern(dataset, None, None))
    partitions = {
        quad.object
        for quad in described
        if isinstance(quad.object, ox.NamedNode) and quad.object.value.startswith(iris.dataset + "#")
    }
    for partition in sorted(partitions, key=lambda node: node.value):
        described += quads.quads_for_pattern(partition, None, None)
    return described
