"""Louvain communities of a co-author network, and the strongest-links cut made before they are found.

One function finds communities (:func:`assign_communities`); every network with communities goes through
:func:`with_communities`, so a map, its download and the command's export are cut and coloured alike.
"""

import networkx as nx

from .filters import Filters, link_rank


def keep_strongest_links(network: nx.Graph, limit: int | None, total: int | None = None) -> nx.Graph:
    """``network`` with its ``limit`` strongest links (:func:`link_rank`; None: all); ``total_links``
    says how many there were (``total``: counted by a caller that dropped some already)."""
    network.graph["total_links"] = network.number_of_edges() if total is None else total
    if limit is not None and network.number_of_edges() > limit:
        ranked = sorted(network.edges(data="weight"), key=lambda edge: link_rank(edge[2], edge[0], edge[1]))
        network.remove_edges_from(ranked[limit:])
    return network


def with_communities(network: nx.Graph, filters: Filters) -> nx.Graph:
    """``network`` with the links ``filters`` keep (:func:`keep_strongest_links`) and Louvain communities,
    cut down to the one community ``filters`` asks for."""
    keep_strongest_links(network, filters.links, network.graph.get("total_links"))
    assign_communities(network, filters.resolution)
    if filters.community is not None:
        network = network.subgraph(n for n, c in network.nodes(data="community") if c == filters.community).copy()
    return network


def assign_communities(network: nx.Graph, resolution: float = 1.0, seed: int = 42) -> list[set[str]]:
    """Louvain communities (largest first) stored as the ``community`` node attribute."""
    communities = nx.community.louvain_communities(network, weight="weight", resolution=resolution, seed=seed)
    communities = sorted(communities, key=lambda c: (-len(c), min(c)))
    for index, members in enumerate(communities):
        for node in members:
            network.nodes[node]["community"] = index
    return communities
