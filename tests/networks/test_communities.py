"""Leiden (modularity) through igraph's edge-list reader finds the communities the list-built graph finds: the same
graph (edge order, isolated nodes past the last linked one, weights) whichever way it reaches igraph."""

import igraph
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import communities
from bibgraph.graph.networks.layout import seeded_igraph


def reference(count: int, edges: list[tuple[int, int]], weights: list[float], resolution: float) -> list[int]:
    """The communities as the graph was built before: a list of edge tuples and a weight attribute."""
    graph = igraph.Graph(n=count, edges=edges)
    graph.es["weight"] = weights
    with seeded_igraph(42):
        return graph.community_leiden("modularity", weights="weight", resolution=resolution).membership


graphs = st.integers(1, 60).flatmap(
    lambda count: st.tuples(
        st.just(count + 3),  # three nodes past any link: no line of the file names them
        st.lists(
            st.tuples(st.integers(0, count - 1), st.integers(0, count - 1), st.integers(1, 9)).filter(
                lambda e: e[0] < e[1]
            ),
            unique_by=lambda e: (e[0], e[1]),
            max_size=150,
        ).map(sorted),
    )
)


@settings(max_examples=80, deadline=None)
@given(graphs, st.sampled_from([0.5, 1.0, 2.0]), st.booleans())
def test_the_file_and_the_list_give_the_same_communities(graph, resolution, through_file) -> None:
    count, rows = graph
    edges = [(a, b) for a, b, _ in rows]
    weights = [float(w) for _, _, w in rows]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(communities, "FILE_MIN_EDGES", 0 if through_file else 1 << 30)
        patch.setattr(communities, "_READ_CHUNK", 7)  # lines written a few at a time, as at scale
        ends = np.array(edges, dtype=np.int64).reshape(-1, 2)
        found = communities.leiden(count, ends[:, 0], ends[:, 1], np.array(weights), resolution)
        number = np.arange(count + 5) - 5  # ends given in another numbering (shifted), renumbered a chunk at a time
        moved = communities.leiden(count, ends[:, 0] + 5, ends[:, 1] + 5, np.array(weights), resolution, number=number)
    assert found.tolist() == moved.tolist() == reference(count, edges, weights, resolution)
