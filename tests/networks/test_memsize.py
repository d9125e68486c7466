"""The size estimate that bounds the network cache, against what Python really allocates for the same value."""

import gc
import pickle
import sys
import tracemalloc
import types
from typing import Any

import networkx as nx
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.memsize import SAMPLE, estimate_bytes


def allocated(value: Any) -> int:
    """The bytes Python allocates to hold a fresh copy of ``value`` (unpickled under tracemalloc: every object
    made anew, shared ones once, as the cache holds values made by a derivation or read from a dataset)."""
    data = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    pickle.loads(data)  # anything unpickling imports or caches, before measuring
    gc.collect()
    tracemalloc.start()
    try:
        copy = pickle.loads(data)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    del copy
    return held


@st.composite
def coauthor_networks(draw: st.DrawFn) -> nx.Graph:
    """Graphs shaped like a drawn co-author map: named authors with papers and areas, weighted links."""
    nodes = draw(st.integers(30, 400))
    edges = draw(st.integers(0, 4 * nodes))
    graph = nx.gnm_random_graph(nodes, edges, seed=draw(st.integers(0, 2**16)))
    lengths = draw(st.lists(st.integers(5, 40), min_size=nodes, max_size=nodes))
    network = nx.Graph(total_authors=nodes * 3)
    for node, length in zip(graph, lengths, strict=True):
        iri = f"http://127.0.0.1:5000/author/{'x' * length}-{node:08x}"
        network.add_node(
            iri, name=f"Name {'n' * length}", papers=node % 17 + 1, areas=["Area · Sub"], community=node % 9
        )
    names = list(network)
    # edges named by the nodes' own strings, or (as from query rows) by equal strings of their own
    named = (lambda text: text) if draw(st.booleans()) else (lambda text: "".join(list(text)))
    for a, b in graph.edges:
        network.add_edge(named(names[a]), named(names[b]), weight=(a + b) % 5 + 1, fractional=1 / (a % 7 + 1))
    return network


@settings(max_examples=25, deadline=None)
@given(coauthor_networks())
def test_a_network_is_estimated_within_a_factor_of_what_it_holds(network: nx.Graph) -> None:
    estimate, real = estimate_bytes(network), allocated(network)
    assert 0.7 * real <= estimate <= 1.4 * real, (estimate, real)


@settings(max_examples=25, deadline=None)
@given(
    st.dictionaries(
        st.text(min_size=1, max_size=30),
        st.tuples(st.floats(allow_nan=False), st.floats(allow_nan=False)),
        min_size=20,
        max_size=3 * SAMPLE,
    )
)
def test_a_layout_is_estimated_within_a_factor_of_what_it_holds(positions: dict[str, tuple[float, float]]) -> None:
    estimate, real = estimate_bytes(positions), allocated(positions)
    assert 0.6 * real <= estimate <= 1.6 * real, (estimate, real)


def test_an_array_is_its_data_once_however_many_views_share_it() -> None:
    data = np.arange(1_000_000, dtype=np.int64)
    alone = estimate_bytes(data)
    assert data.nbytes <= alone < data.nbytes + 1024
    with_views = estimate_bytes([data, data[1:], data[::2], data.reshape(1000, 1000)])
    assert with_views < data.nbytes + 4096
    unpickled = pickle.loads(pickle.dumps(data, pickle.HIGHEST_PROTOCOL))  # a view over the pickle's buffer
    assert data.nbytes <= estimate_bytes(unpickled) < data.nbytes + 1024


def test_an_object_is_counted_once_however_often_it_is_reached() -> None:
    shared = "x" * 100_000
    assert estimate_bytes([shared] * 10) < 2 * estimate_bytes(shared)


def test_a_large_container_is_sampled_and_scaled() -> None:
    """Far more items than are looked at: the estimate still grows with them (a sample scaled, not a prefix)."""
    small = {f"author {i}": (float(i), float(i)) for i in range(10 * SAMPLE)}
    large = {f"author {i}": (float(i), float(i)) for i in range(100 * SAMPLE)}
    real_small, real_large = allocated(small), allocated(large)
    assert 0.7 * real_small <= estimate_bytes(small) <= 1.6 * real_small
    assert 0.7 * real_large <= estimate_bytes(large) <= 1.6 * real_large


def test_a_value_is_estimated_while_another_thread_is_still_importing_numpy(monkeypatch) -> None:
    """Mid-import, ``sys.modules`` holds numpy without ``ndarray`` yet (serve's warm-up imports it while requests
    run: the home page once failed with AttributeError); no array can exist then, and the estimate goes on."""
    monkeypatch.setitem(sys.modules, "numpy", types.ModuleType("numpy"))
    assert estimate_bytes({"papers": [1, 2, 3], "name": "x"}) > 0
