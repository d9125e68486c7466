"""The VoID statistics as the engine counts them over the whole store: the reference the build's streamed
tally (:class:`bibgraph.graph.dataset.void.VoidTally`) and an add's update (:meth:`VoidCounts.observe`) are tested
against. The build counted this way until the 1M-paper figures showed its cost (minutes, 1.2 GB)."""

import pyoxigraph as ox

from bibgraph.graph.dataset.void import VoidCounts
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.sparql import queries
from bibgraph.graph.stores.store import GraphStore


def void_counts(store: GraphStore, iris: Iris) -> VoidCounts:
    """The statistics of what the store holds (call it on a store without its VoID description)."""
    totals = store.select(
        "SELECT (COUNT(*) AS ?triples) (COUNT(DISTINCT ?s) AS ?subjects) (COUNT(DISTINCT ?o) AS ?objects)"
        " WHERE { ?s ?p ?o }"
    )[0]
    classes = store.select("SELECT ?class (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?class } GROUP BY ?class")
    properties = store.select("SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p")
    entities = store.select(
        queries.bind(
            "SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s a ?c FILTER(STRSTARTS(STR(?s), ?base)) }",
            base=ox.Literal(iris.base),
        )
    )[0]["n"]
    return VoidCounts(
        triples=queries.integer(totals["triples"]),
        entities=queries.integer(entities),
        subjects=queries.integer(totals["subjects"]),
        objects=queries.integer(totals["objects"]),
        classes={str(row["class"]): queries.integer(row["n"]) for row in classes},
        properties={str(row["p"]): queries.integer(row["n"]) for row in properties},
    )
