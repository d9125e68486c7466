"""Louvain communities of a co-author network, and the strongest-links cut made before they are found.

One function finds communities (:func:`assign_communities`); every network with communities goes through
:func:`with_communities`, so a map, its download and the command's export are cut and coloured alike. The
Louvain method is igraph's (C): on the whole co-author network of 10,000 papers (18,438 authors, 100,946 links)
it takes 0.18 s where networkx's took 6.2 s, for the same modularity (0.5345 and 0.5351); on a drawn map of 1,000
authors 0.035 s against 0.20 s (0.3435 and 0.3434). The graph is handed to igraph in sorted order and its random
generator seeded, so the communities depend on the network alone, not on the order it was built in.
"""

import igraph
import networkx as nx

from bibgraph.graph.networks.filters import Filters, link_rank
from bibgraph.graph.networks.layout import seeded_igraph


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
    """Louvain communities (largest first, then by their least node) stored as the ``community`` node attribute."""
    nodes = sorted(network)
    number = {node: i for i, node in enumerate(nodes)}
    edges = sorted((*sorted((number[a], number[b])), w) for a, b, w in network.edges(data="weight"))
    graph = igraph.Graph(n=len(nodes), edges=[(a, b) for a, b, _ in edges])
    graph.es["weight"] = [float(w if w is not None else 1) for _, _, w in edges]
    with seeded_igraph(seed):
        found = graph.community_multilevel(weights="weight", resolution=resolution)
    communities = sorted(({nodes[i] for i in members} for members in found), key=lambda c: (-len(c), min(c)))
    for index, members in enumerate(communities):
        for node in members:
            network.nodes[node]["community"] = index
    return communities
