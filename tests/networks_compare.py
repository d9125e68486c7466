"""One comparison of two co-author networks, shared by the differential tests (incidence, push-down)."""

import networkx as nx
import pytest


def same_network(new: nx.Graph, old: nx.Graph) -> None:
    """Same nodes in the same order with the same attributes, same edges and weights (communities aside:
    the communities depend on the order edges were added in)."""
    assert new.graph.get("total_authors") == old.graph.get("total_authors")
    assert list(new) == list(old)
    for node in old:
        mine, theirs = dict(new.nodes[node]), dict(old.nodes[node])
        mine.pop("community", None), theirs.pop("community", None)
        assert mine == theirs, node
    edges = {frozenset((a, b)): data for a, b, data in old.edges(data=True)}
    assert {frozenset((a, b)) for a, b in new.edges} == set(edges)
    for a, b, data in new.edges(data=True):
        expected = edges[frozenset((a, b))]
        assert (data["weight"], data["lower_bound"]) == (expected["weight"], expected["lower_bound"])
        assert data["fractional"] == pytest.approx(expected["fractional"])
