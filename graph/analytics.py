"""Network analytics with networkx: centralities, components, ego networks, collaboration paths."""

import networkx as nx

BETWEENNESS_EXACT_MAX_NODES = 500
BETWEENNESS_SAMPLES = 200


def degrees(network: nx.Graph) -> dict[str, tuple[int, float]]:
    """Degree and weighted degree (joint papers) of every node."""
    weighted = dict(network.degree(weight="weight"))
    return {node: (degree, weighted[node]) for node, degree in network.degree()}


def betweenness(network: nx.Graph, seed: int = 42) -> dict[str, float]:
    """Betweenness centrality; sampled (``k`` pivots) above a few thousand nodes to stay interactive."""
    n = network.number_of_nodes()
    k = None if n <= BETWEENNESS_EXACT_MAX_NODES else BETWEENNESS_SAMPLES
    return nx.betweenness_centrality(network, k=k, seed=seed if k else None, normalized=True)


def components(network: nx.Graph) -> list[set[str]]:
    """Connected components, largest first."""
    return sorted(nx.connected_components(network), key=lambda c: (-len(c), min(c)))


def path_graph(network: nx.Graph, path: list[str]) -> nx.Graph:
    """The path's authors and the edges between consecutive ones."""
    graph = network.subgraph(path).copy()
    graph.remove_edges_from([e for e in list(graph.edges) if abs(path.index(e[0]) - path.index(e[1])) != 1])
    return graph


def ego_authors(papers_and_authors: nx.Graph, center: str, radius: int = 1) -> frozenset[str]:
    """Authors within ``radius`` co-author steps, found on the paper-author graph (no projection needed)."""
    if center not in papers_and_authors:
        raise KeyError(center)
    reached = nx.single_source_shortest_path_length(papers_and_authors, center, cutoff=2 * radius)
    return frozenset(node for node, hops in reached.items() if hops % 2 == 0)


def bipartite_collaboration_path(papers_and_authors: nx.Graph, source: str, target: str) -> list[str]:
    """The shortest co-author chain, read off the paper-author graph (every other node is an author)."""
    try:
        return list(nx.shortest_path(papers_and_authors, source, target))[::2]
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return []


def summary(network: nx.Graph, top: int = 10) -> dict[str, object]:
    """What a co-author view shows beside the drawing: size, components, communities, central authors."""
    degree = degrees(network)
    between = betweenness(network)
    parts = components(network)

    def name(node: str) -> str:
        return str(network.nodes[node].get("name", node))

    by_strength = sorted(network, key=lambda n: (-degree[n][1], name(n)))[:top]
    by_betweenness = sorted(network, key=lambda n: (-between[n], name(n)))[:top]
    return {
        "components": len(parts),
        "largest_component": len(parts[0]) if parts else 0,
        "communities": len({c for _, c in network.nodes(data="community") if c is not None}),
        "strongest": [(n, name(n), degree[n][0], degree[n][1]) for n in by_strength],
        "most_between": [(n, name(n), round(between[n], 4)) for n in by_betweenness],
    }
