"""The VoID description of the dataset: its statistics tallied as a build writes (:mod:`.voidtally`), counted by the
engine over a store (the tests' reference; a build into a store that held data already), or (after an add) updated
with index look-ups of what the add writes, so it never drifts from the store."""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import pyoxigraph as ox
from rdflib import DCTERMS, RDF, VOID, XSD

from bibgraph.graph.ingest.names import ascii_slug
from bibgraph.graph.rdf.formats import RDF_SYNTAXES
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.stores.store import OxigraphGraphStore

_TYPE = ox.NamedNode(str(RDF.type))


@dataclass
class VoidCounts:
    """The statistics a VoID description states, by IRI where per class or property."""

    triples: int = 0
    entities: int = 0
    subjects: int = 0
    objects: int = 0
    classes: dict[str, int] = field(default_factory=dict)  # class IRI -> entities
    properties: dict[str, int] = field(default_factory=dict)  # property IRI -> triples

    def observe(self, store: ox.Store, quads: Sequence[ox.Quad], base: str) -> None:
        """Count ``quads`` (none of them in ``store`` yet, each once) as about to be added to ``store``:
        an add updates the statistics with index look-ups of what it adds, not by counting everything again.
        """
        self.triples += len(quads)
        for quad in quads:
            self.properties[quad.predicate.value] = self.properties.get(quad.predicate.value, 0) + 1
        typed = {quad.subject for quad in quads if quad.predicate == _TYPE}
        for quad in quads:
            if quad.predicate == _TYPE and isinstance(quad.object, ox.NamedNode):
                self.classes[quad.object.value] = self.classes.get(quad.object.value, 0) + 1
        self.entities += sum(
            1
            for subject in typed
            if isinstance(subject, ox.NamedNode)
            and subject.value.startswith(base)
            and _absent(store, subject, _TYPE, None)
        )
        self.subjects += sum(1 for subject in {quad.subject for quad in quads} if _absent(store, subject, None, None))
        self.objects += sum(1 for value in {quad.object for quad in quads} if _absent(store, None, None, value))


def _absent(
    store: ox.Store,
    subject: ox.NamedNode | ox.BlankNode | ox.Triple | None,
    predicate: ox.NamedNode | None,
    value: ox.NamedNode | ox.BlankNode | ox.Literal | ox.Triple | None,
) -> bool:
    """Whether no triple of ``store`` matches the pattern (one index seek)."""
    return next(store.quads_for_pattern(subject, predicate, value), None) is None


def engine_counts(store: ox.Store, base: str) -> VoidCounts:
    """The statistics of what ``store`` holds (call it before the VoID description is loaded), counted by the
    engine after the load: a few scans in Rust over the encoded terms (12 CPU-s at 100k papers, 146 at 1M). Counting
    every line as it streamed past cost a Python step per line, a fifth of a build's CPU, and several times these
    scans; a build now tallies its papers by shape and its persons' lines in batches (:mod:`.voidtally`).

    Distinct subjects and distinct objects are counted by two queries, not one: each holds a hash set of the
    terms it has seen, and one query would hold both at once (the memory peak at a million papers)."""

    def rows(query: str) -> list[tuple[str, ...]]:
        """The values of the answer's IRIs and literals (these queries bind nothing else), by row."""
        found = store.query(query)
        if not isinstance(found, ox.QuerySolutions):
            raise TypeError("expected solutions")
        width = len(found.variables)
        answer = [tuple(_value(solution[number]) for number in range(width)) for solution in found]
        release_free_memory(collect=False)  # the query's hash set given back: the next one's does not stack on it
        return answer

    properties = {p: int(n) for p, n in rows("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p")}
    # a store holds each triple once: a class's typed subjects are its rdf:type triples, counted without a hash
    # set of them (at 1M, 15 CPU-s and a 765 MB peak with DISTINCT)
    classes = {c: int(n) for c, n in rows("SELECT ?c (COUNT(*) AS ?n) WHERE { ?s a ?c FILTER(isIRI(?c)) } GROUP BY ?c")}
    # the base written by pyoxigraph's serialiser: a literal whatever it holds
    entities = f"SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE {{ ?s a ?c FILTER(STRSTARTS(STR(?s), {ox.Literal(base)})) }}"
    return VoidCounts(
        triples=sum(properties.values()),
        entities=int(rows(entities)[0][0]),
        subjects=int(rows("SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }")[0][0]),
        objects=int(rows("SELECT (COUNT(DISTINCT ?o) AS ?n) WHERE { ?s ?p ?o }")[0][0]),
        classes=classes,
        properties=properties,
    )


def _value(term: object) -> str:
    if isinstance(term, ox.NamedNode | ox.Literal):
        return term.value
    raise TypeError(f"expected an IRI or a literal: {term!r}")


def recorded_counts(described: Sequence[ox.Quad], iris: Iris) -> VoidCounts:
    """The statistics a VoID description (:func:`void_quads`) states: what an add continues from."""
    dataset = ox.NamedNode(iris.dataset)
    by_subject: dict[ox.NamedNode | ox.BlankNode | ox.Triple, dict[str, ox.NamedNode | ox.Literal]] = {}
    for quad in described:
        if isinstance(quad.object, ox.NamedNode | ox.Literal):
            by_subject.setdefault(quad.subject, {})[quad.predicate.value] = quad.object
    stated = by_subject.get(dataset, {})

    def number(values: dict, name: str) -> int:
        return int(values[str(VOID[name])].value) if str(VOID[name]) in values else 0

    counts = VoidCounts(
        number(stated, "triples"), number(stated, "entities"), number(stated, "distinctSubjects"),
        number(stated, "distinctObjects"),
    )  # fmt: skip
    for values in by_subject.values():
        if str(VOID["class"]) in values:
            counts.classes[values[str(VOID["class"])].value] = number(values, "entities")
        if str(VOID.property) in values:
            counts.properties[values[str(VOID.property)].value] = number(values, "triples")
    return counts


def void_lines(counts: VoidCounts, iris: Iris) -> Iterator[str]:
    """The VoID description stating ``counts``, as N-Triples lines.

    Terms are pyoxigraph's, so every line is valid N-Triples whatever the base IRI or counts hold.
    """
    dataset = ox.NamedNode(iris.dataset)

    def integer(value: int) -> ox.Literal:
        return ox.Literal(value)  # an xsd:integer

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
        (dataset, term(VOID.triples), integer(counts.triples)),
        (dataset, term(VOID.entities), integer(counts.entities)),
        (dataset, term(VOID.distinctSubjects), integer(counts.subjects)),
        (dataset, term(VOID.distinctObjects), integer(counts.objects)),
        (dataset, term(VOID.properties), integer(len(counts.properties))),
        (dataset, term(VOID.classes), integer(len(counts.classes))),
    ]
    for iri, entities in sorted(counts.classes.items()):
        partition = term(f"{iris.dataset}#class-{_fragment(iri)}")
        triples.append((dataset, term(VOID.classPartition), partition))
        triples.append((partition, term(VOID["class"]), term(iri)))
        triples.append((partition, term(VOID.entities), integer(entities)))
    for iri, count in sorted(counts.properties.items()):
        partition = term(f"{iris.dataset}#property-{_fragment(iri)}")
        triples.append((dataset, term(VOID.propertyPartition), partition))
        triples.append((partition, term(VOID.property), term(iri)))
        triples.append((partition, term(VOID.triples), integer(count)))
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
