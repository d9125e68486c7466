"""Communities of a co-author network (igraph's Leiden, maximising modularity), and the strongest-links cut made
before they are found.

One function finds communities (:func:`assign_communities`); every network with communities goes through
:func:`with_communities`, so a map, its download and the command's export are cut and coloured alike. The method is
igraph's Leiden (C) with modularity as its objective, two iterations: igraph's Louvain (multilevel) holds about
1 GB more than the graph on the whole co-author network of a million papers (1.8M authors, 10.5M
links; ``bench.building.derive --synthetic 1000000 --only vosviewer``: peak 2,128 MB and 182.6 CPU-s with Louvain,
1,898 MB and
140.1 CPU-s with Leiden). Leiden's partitions have the higher modularity: 0.5388 against 0.5338 on the whole network
of 100,000 papers (2.8 CPU-s against 4.7), 0.5408 against 0.5337 at 10,000; networkx's Louvain takes 6.2 s
against igraph's 0.18 s at 10,000 papers, for the same modularity. The graph is handed to igraph in sorted order
and its random generator seeded, so the communities depend on the network alone, not on the order it was built in.

A large edge list reaches igraph through its C edge-list reader (:func:`leiden`): python-igraph turns an array of
edges into a list of Python tuples before it builds the graph (+1.2 GB and 12 CPU-s for 9M links, the whole
co-author network of a million papers), the reader holds nothing but igraph's own vectors (+0.3 GB).
"""

import tempfile

import igraph
import networkx as nx
import numpy as np

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
    """``network`` with the links ``filters`` keep (:func:`keep_strongest_links`) and communities (Leiden),
    cut down to the one community ``filters`` asks for."""
    keep_strongest_links(network, filters.links, network.graph.get("total_links"))
    assign_communities(network, filters.resolution)
    if filters.community is not None:
        network = network.subgraph(n for n, c in network.nodes(data="community") if c == filters.community).copy()
    return network


def assign_communities(network: nx.Graph, resolution: float = 1.0, seed: int = 42) -> list[set[str]]:
    """Communities (largest first, then by their least node) stored as the ``community`` node attribute."""
    nodes = sorted(network)
    number = {node: i for i, node in enumerate(nodes)}
    edges = sorted((*sorted((number[a], number[b])), w) for a, b, w in network.edges(data="weight"))
    membership = leiden(
        len(nodes),
        np.array([a for a, _, _ in edges], dtype=np.int64),
        np.array([b for _, b, _ in edges], dtype=np.int64),
        np.array([float(w if w is not None else 1) for _, _, w in edges], dtype=np.float64),
        resolution,
        seed,
    )
    by_community = np.argsort(membership, kind="stable")
    found = np.split(by_community, np.cumsum(np.bincount(membership))[:-1]) if len(nodes) else []
    communities = sorted(({nodes[i] for i in members.tolist()} for members in found), key=lambda c: (-len(c), min(c)))
    for index, members in enumerate(communities):
        for node in members:
            network.nodes[node]["community"] = index
    return communities


FILE_MIN_EDGES = 1 << 16  # from this many edges on, the graph reaches igraph through a file (below, a list is small)
_READ_CHUNK = 1 << 18  # edges written as text at a time


def leiden(
    count: int,
    first: np.ndarray,
    second: np.ndarray,
    weights: np.ndarray,
    resolution: float = 1.0,
    seed: int = 42,
    number: np.ndarray | None = None,
) -> np.ndarray:
    """Each of ``count`` nodes' community (Leiden, modularity; igraph's numbering) in the graph of the edges
    ``first[i]`` -- ``second[i]`` (in that order; each end renumbered by ``number`` when given, a chunk at a time)
    weighted by ``weights``, seeded: the same graph however it reaches igraph."""
    renumber = (lambda ends: ends) if number is None else (lambda ends: number[ends])
    if len(first) < FILE_MIN_EDGES:
        graph = igraph.Graph(n=count, edges=np.column_stack([renumber(first), renumber(second)]).tolist())
    else:
        with tempfile.TemporaryFile() as text:
            largest = max(first.max(initial=0), second.max(initial=0)) if number is None else number.max(initial=0)
            width = len(str(int(largest)))
            for start in range(0, len(first), _READ_CHUNK):
                part = slice(start, start + _READ_CHUNK)
                text.write(_edge_lines(renumber(first[part]), renumber(second[part]), width))
            text.seek(0)
            graph = igraph.Graph.Read_Edgelist(text, directed=False)
        graph.add_vertices(count - graph.vcount())  # nodes past the last linked one have no line
    with seeded_igraph(seed):
        found = graph.community_leiden("modularity", weights=weights, resolution=resolution)
    return np.asarray(found.membership, dtype=np.int64)


def _edge_lines(first: np.ndarray, second: np.ndarray, width: int) -> bytes:
    """Edges as igraph's edge-list text (``a b`` a line), numbers zero-padded to ``width`` digits, made by numpy
    (no Python object per number)."""
    powers = 10 ** np.arange(width - 1, -1, -1, dtype=np.int64)
    line = np.empty((len(first), 2 * width + 2), dtype=np.uint8)
    line[:, :width] = first.astype(np.int64)[:, None] // powers % 10 + ord("0")
    line[:, width] = ord(" ")
    line[:, width + 1 : 2 * width + 1] = second.astype(np.int64)[:, None] // powers % 10 + ord("0")
    line[:, -1] = ord("\n")
    return line.tobytes()
