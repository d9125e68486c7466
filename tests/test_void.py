"""The VoID statistics an add updates from what it adds equal those counted over the whole graph again."""

import pyoxigraph as ox
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.graph.void import recorded_counts, void_counts, void_lines, void_quads

BASE = "http://example.org/"
TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
# Few terms, so that added triples often share subjects, objects, classes and properties with earlier ones.
NODES = [ox.NamedNode(f"{BASE}n{i}") for i in range(6)] + [ox.NamedNode(f"http://other.org/m{i}") for i in range(3)]
CLASSES = [ox.NamedNode(f"http://example.org/vocab#C{i}") for i in range(3)]
PROPERTIES = [TYPE, *(ox.NamedNode(f"http://example.org/vocab#p{i}") for i in range(3))]
VALUES = [
    *NODES,
    *CLASSES,
    ox.Literal("a"),
    ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
]


@st.composite
def quads(draw: st.DrawFn) -> ox.Quad:
    predicate = draw(st.sampled_from(PROPERTIES))
    value = draw(st.sampled_from(CLASSES if predicate == TYPE else VALUES))
    return ox.Quad(draw(st.sampled_from(NODES)), predicate, value)


@settings(max_examples=200, deadline=None)
@given(st.lists(quads(), max_size=25), st.lists(st.lists(quads(), max_size=15), max_size=4))
def test_updated_statistics_equal_counted_ones(built: list[ox.Quad], batches: list[list[ox.Quad]]) -> None:
    iris = Iris(BASE)
    store = OxigraphGraphStore.memory()
    store.store.extend(built)
    counts = void_counts(store, iris)
    store.load_ntriples(void_lines(counts, iris))
    counts = recorded_counts(void_quads(store, iris), iris)  # as an add finds them: read back from the store
    for quad in void_quads(store, iris):
        store.store.remove(quad)
    for batch in batches:  # as add_lists writes: each triple once, only those the store does not hold
        fresh = [quad for quad in dict.fromkeys(batch) if quad not in store.store]
        counts.observe(store.store, fresh, BASE)
        store.store.extend(fresh)
    assert counts == void_counts(store, iris)
