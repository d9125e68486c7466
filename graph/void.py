"""The VoID description of the dataset, computed from the store itself (so it never drifts)."""

from collections.abc import Iterator

from rdflib import DCTERMS, RDF, VOID, XSD

from .formats import RDF_SYNTAXES
from .model import Iris
from .names import ascii_slug
from .store import GraphStore
from .vocab import PREFIXES

DUMP_STEM = "bibgraph"


def dump_iri(iris: Iris, suffix: str) -> str:
    return f"{iris.base}download/{DUMP_STEM}.{suffix}"


def void_ntriples(store: GraphStore, iris: Iris) -> Iterator[str]:
    """VoID statistics of what the store holds now; call before adding them (they describe the data)."""
    dataset = f"<{iris.dataset}>"
    totals = store.select(
        "SELECT (COUNT(*) AS ?triples) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?p) AS ?properties)"
        " (COUNT(DISTINCT ?o) AS ?objects) WHERE { ?s ?p ?o }"
    )[0]
    classes = store.select(
        "SELECT ?class (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?class } GROUP BY ?class ORDER BY ?class"
    )
    properties = store.select("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p")
    entities = store.select(
        f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s a ?c FILTER(STRSTARTS(STR(?s), {_quote(iris.base)})) }}"
    )[0]["n"]

    def integer(value: object) -> str:
        return f'"{int(value or 0)}"^^<{XSD.integer}>'  # type: ignore[call-overload]

    yield f"{dataset} <{RDF.type}> <{VOID.Dataset}> .\n"
    yield f'{dataset} <{DCTERMS.title}> "bibgraph" .\n'
    yield (
        f'{dataset} <{DCTERMS.description}> "Papers, authors (in order) and research areas read from paper'
        ' lists; void:triples counts the data, not this description." .\n'
    )
    yield f"{dataset} <{VOID.uriSpace}> {_quote(iris.base)} .\n"
    yield f"{dataset} <{VOID.sparqlEndpoint}> <{iris.base}sparql> .\n"
    yield f"{dataset} <{VOID.rootResource}> <{iris.scheme}> .\n"
    for syntax in RDF_SYNTAXES:
        yield f"{dataset} <{VOID.dataDump}> <{dump_iri(iris, syntax.suffix)}> .\n"
    for namespace in sorted(set(PREFIXES.values()) - {str(XSD), str(RDF)}):
        yield f"{dataset} <{VOID.vocabulary}> <{namespace}> .\n"
    yield f"{dataset} <{VOID.triples}> {integer(totals['triples'])} .\n"
    yield f"{dataset} <{VOID.entities}> {integer(entities)} .\n"
    yield f"{dataset} <{VOID.distinctSubjects}> {integer(totals['subjects'])} .\n"
    yield f"{dataset} <{VOID.distinctObjects}> {integer(totals['objects'])} .\n"
    yield f"{dataset} <{VOID.properties}> {integer(totals['properties'])} .\n"
    yield f"{dataset} <{VOID.classes}> {integer(len(classes))} .\n"
    for row in classes:
        partition = f"<{iris.dataset}#class-{_fragment(str(row['class']))}>"
        yield f"{dataset} <{VOID.classPartition}> {partition} .\n"
        yield f"{partition} <{VOID['class']}> <{row['class']}> .\n"
        yield f"{partition} <{VOID.entities}> {integer(row['n'])} .\n"
    for row in properties:
        partition = f"<{iris.dataset}#property-{_fragment(str(row['p']))}>"
        yield f"{dataset} <{VOID.propertyPartition}> {partition} .\n"
        yield f"{partition} <{VOID.property}> <{row['p']}> .\n"
        yield f"{partition} <{VOID.triples}> {integer(row['n'])} .\n"


def _fragment(iri: str) -> str:
    """A readable fragment for a partition: the term's prefixed name (``schema-ScholarlyArticle``)."""
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace):
            return f"{prefix}-{ascii_slug(iri.removeprefix(namespace)) or 'term'}"
    return ascii_slug(iri)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
