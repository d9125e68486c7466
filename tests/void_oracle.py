"""The VoID statistics counted the plain way, in Python sets over every triple of the store: the reference the
build's engine counts (:func:`bibgraph.graph.dataset.void.engine_counts`) and an add's update
(:meth:`VoidCounts.observe`) are tested against."""

from collections import Counter

import pyoxigraph as ox

from bibgraph.graph.dataset.void import VoidCounts
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore

TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")


def void_counts(store: OxigraphGraphStore, iris: Iris) -> VoidCounts:
    """The statistics of what the store holds (call it on a store without its VoID description)."""
    triples = {(quad.subject, quad.predicate, quad.object) for quad in store.store}
    typed = {(s, o) for s, p, o in triples if p == TYPE}
    return VoidCounts(
        triples=len(triples),
        entities=len({s for s, _ in typed if isinstance(s, ox.NamedNode) and s.value.startswith(iris.base)}),
        subjects=len({s for s, _, _ in triples}),
        objects=len({o for _, _, o in triples}),
        classes=dict(Counter(o.value for _, o in typed if isinstance(o, ox.NamedNode))),
        properties=dict(Counter(p.value for _, p, _ in triples)),
    )
