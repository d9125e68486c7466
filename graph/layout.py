"""Server-side layout, so that browsers never run physics on large networks.

Co-author networks are a giant component plus many small cliques (one per paper). Each component
is laid out on its own (spring layout for large ones, a circle for small ones) and the components
are packed in rows, largest first: fast, stable (seeded) and readable.
"""

import math

import networkx as nx

SPRING_ONLY_MAX_NODES = 250
SPRING_ITERATIONS = 50
REFINE_ITERATIONS = 8
SCALE = 40.0  # pixels per unit of layout space, for vis-network coordinates


def layout(network: nx.Graph, seed: int = 7) -> dict[str, tuple[float, float]]:
    """Positions in pixels for every node."""
    components = sorted(nx.connected_components(network), key=lambda c: (-len(c), min(c)))
    positions: dict[str, tuple[float, float]] = {}
    x = y = row_height = 0.0
    row_width = max(10.0, 3 * math.sqrt(network.number_of_nodes()))
    for members in components:
        size = len(members)
        radius = max(0.6, math.sqrt(size))
        local = _component_layout(network.subgraph(members), seed, radius)
        if x + 2 * radius > row_width and x > 0:
            x, y, row_height = 0.0, y + row_height + 1.0, 0.0
        for node, (px, py) in local.items():
            positions[node] = ((x + radius + px) * SCALE, (y + radius + py) * SCALE)
        x += 2 * radius + 1.0
        row_height = max(row_height, 2 * radius)
    return positions


def _component_layout(component: nx.Graph, seed: int, radius: float) -> dict[str, tuple[float, float]]:
    size = component.number_of_nodes()
    if size == 1:
        return {next(iter(component)): (0.0, 0.0)}
    if size <= 12:
        raw = nx.circular_layout(sorted(component), scale=radius * 0.8)
    elif size <= SPRING_ONLY_MAX_NODES:
        raw = nx.spring_layout(component, seed=seed, iterations=SPRING_ITERATIONS, weight="weight", scale=radius)
    else:
        # A spectral start (sparse eigenvectors: fast) then a few spring steps to untangle it.
        start = nx.spectral_layout(component, weight="weight")
        raw = nx.spring_layout(component, pos=start, iterations=REFINE_ITERATIONS, weight="weight", scale=radius)
    return {node: (float(p[0]), float(p[1])) for node, p in raw.items()}
