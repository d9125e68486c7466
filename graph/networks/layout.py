"""Server-side layout, so that browsers never run physics on large networks.

Co-author networks are a giant component plus many small cliques (one per paper). Each component is laid
out on its own and the components are packed in rows, largest first. Within a component that holds several
communities (the ``community`` node attribute, Leiden), the layout is in two levels, as VOSviewer's maps read:
the graph of communities is laid out first (a disc per community, as large as its members need, linked by the
joint papers between them), then each community inside its own disc; so communities sit apart, and linked
communities near each other. Force layouts are Fruchterman-Reingold with igraph's grid variant (C, near-linear:
0.1 s for 1,000 nodes, where networkx's takes minutes); a small clique is a circle. A post-pass pushes apart any
two discs closer than their radii (found with a k-d tree): no node hides another. Seeded, and independent of
the order nodes and links were added in: the same data gives the same map in any process.
"""

import math
import random
import threading
from collections.abc import Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager

import igraph
import networkx as nx
import numpy as np
from scipy.spatial import cKDTree

FORCE_ITERATIONS = 300
DEFAULT_RADIUS = 10.0  # pixels, for nodes without a given radius
GAP = 4.0  # pixels between two discs
COMPONENT_GAP = 36.0  # pixels between two components: apart enough to read as groups (each is its own community)
DENSITY = 0.28  # share of a component's disc covered by nodes before the overlap pass
OVERLAP_ROUNDS = 600
_IGRAPH_RANDOM = threading.Lock()


@contextmanager
def seeded_igraph(seed: int) -> Iterator[None]:
    """igraph's random generator seeded with ``seed`` for the block: the generator is global to the process, so
    one computation at a time holds it (a layout here, Leiden in :mod:`bibgraph.graph.networks.communities`),
    and it is given back unseeded after, so no computation depends on what ran before it."""
    with _IGRAPH_RANDOM:
        igraph.set_random_number_generator(random.Random(seed))
        try:
            yield
        finally:
            igraph.set_random_number_generator(random)


def layout(
    network: nx.Graph, radii: Mapping[str, float] | None = None, seed: int = 7
) -> dict[str, tuple[float, float]]:
    """Positions in pixels for every node; discs of the given radii (pixels) never overlap."""
    radii = radii or {}
    components = sorted(nx.connected_components(network), key=lambda c: (-len(c), min(c)))
    placed = []
    for members in components:
        order = sorted(members)
        sizes = np.array([float(radii.get(node, DEFAULT_RADIUS)) for node in order])
        points = _communities_apart(network.subgraph(members), order, sizes, seed)
        points = separate(points, sizes, seed)
        low = (points - sizes[:, None]).min(axis=0)
        high = (points + sizes[:, None]).max(axis=0)
        placed.append((order, points - low, high - low))
    return _pack(placed)


def _scaled(local: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Unit-scale points scaled so that their discs cover DENSITY of the disc they spread over."""
    needed = math.sqrt(float(np.sum((sizes + GAP) ** 2)) / DENSITY)
    spread = float(np.max(np.linalg.norm(local, axis=1))) if len(local) > 1 else 0.0
    return local * (needed / spread if spread > 0 else 0.0)


def _communities_apart(component: nx.Graph, order: list[str], sizes: np.ndarray, seed: int) -> np.ndarray:
    """Positions of one component's nodes (in ``order``): each community in a disc of its own, the discs
    laid out as the graph of communities (links weighted by the joint papers between them)."""
    labels = [component.nodes[node].get("community") for node in order]
    groups: dict[object, list[int]] = {}
    for k, label in enumerate(labels):
        groups.setdefault(("c", label) if label is not None else ("n", order[k]), []).append(k)
    if len(groups) < 2 or len(groups) == len(order):  # one community (or none): one level
        return _scaled(_component_layout(component, order, seed), sizes)
    keys = sorted(groups, key=lambda key: (-len(groups[key]), order[groups[key][0]]))
    group_of = {order[k]: g for g, key in enumerate(keys) for k in groups[key]}
    between: dict[tuple[int, int], float] = {}
    for a, b, weight in component.edges(data="weight", default=1):
        ga, gb = sorted((group_of[a], group_of[b]))
        if ga != gb:
            between[ga, gb] = between.get((ga, gb), 0.0) + float(weight)
    summary = nx.Graph()
    summary.add_nodes_from(range(len(keys)))
    summary.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(between.items()))
    discs = np.array([math.sqrt(float(np.sum((sizes[groups[key]] + GAP) ** 2)) / DENSITY) for key in keys])
    centres = separate(_scaled(_component_layout(summary, list(range(len(keys))), seed), discs), discs + 4 * GAP, seed)
    points = np.zeros((len(order), 2))
    for g, key in enumerate(keys):
        members = groups[key]
        names = [order[k] for k in members]
        inner = _scaled(_component_layout(component.subgraph(names), names, seed), sizes[members])
        points[members] = centres[g] + inner
    return points


def _pack(placed: list[tuple[list[str], np.ndarray, np.ndarray]]) -> dict[str, tuple[float, float]]:
    """Rows of component boxes, largest first, about as wide as the square root of their total area."""
    area = sum(float(box[0] * box[1]) for _, _, box in placed)
    row_width = max(math.sqrt(area) * 1.2, max((float(box[0]) for _, _, box in placed), default=0.0))
    positions: dict[str, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for order, points, box in placed:
        if x + box[0] > row_width and x > 0:
            x, y, row_height = 0.0, y + row_height + COMPONENT_GAP, 0.0
        for node, (px, py) in zip(order, points, strict=True):
            positions[node] = (round(float(x + px), 2), round(float(y + py), 2))
        x += float(box[0]) + COMPONENT_GAP
        row_height = max(row_height, float(box[1]))
    return positions


def separate(points: np.ndarray, radii: np.ndarray, seed: int = 7, rounds: int = OVERLAP_ROUNDS) -> np.ndarray:
    """Move discs apart until no two overlap (their centres are at least r1 + r2 + GAP apart).

    Each round finds the overlapping pairs with a k-d tree and moves both discs of a pair half the
    missing distance apart along the line between them; a few rounds settle thousands of nodes.
    """
    points = np.array(points, dtype=float)
    if len(points) < 2:
        return points
    rng = np.random.default_rng(seed)
    reach = 2 * float(radii.max()) + GAP
    for _ in range(rounds):
        pairs = cKDTree(points).query_pairs(reach, output_type="ndarray")
        if len(pairs) == 0:
            break
        i, j = pairs[:, 0], pairs[:, 1]
        delta = points[j] - points[i]
        distance = np.linalg.norm(delta, axis=1)
        missing = radii[i] + radii[j] + GAP - distance
        overlapping = missing > 1e-6
        if not (missing > GAP).any():  # discs may still be closer than GAP, but none overlaps
            break
        i, j, delta, distance, missing = (v[overlapping] for v in (i, j, delta, distance, missing))
        same = distance < 1e-9
        delta[same] = rng.normal(size=(int(same.sum()), 2))
        distance[same] = np.linalg.norm(delta[same], axis=1)
        push = delta / distance[:, None] * (missing / 2 * 1.05)[:, None]
        moves = np.zeros_like(points)
        np.add.at(moves, i, -push)
        np.add.at(moves, j, push)
        points += moves
    return _spread_out(points, radii, rng)


def _spread_out(points: np.ndarray, radii: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The guarantee behind :func:`separate`: if pushing left discs overlapping (it can oscillate in a
    crowd), scale the whole picture about its centre by the largest ratio a pair still misses; scaling
    lengthens every distance alike, so no pair that was apart comes together."""
    pairs = cKDTree(points).query_pairs(2 * float(radii.max()) + GAP, output_type="ndarray")
    if len(pairs) == 0:
        return points
    i, j = pairs[:, 0], pairs[:, 1]
    while (same := np.linalg.norm(points[j] - points[i], axis=1) < 1e-9).any():  # coincident: no direction
        points[j[same]] += rng.normal(size=(int(same.sum()), 2))
    distance = np.linalg.norm(points[j] - points[i], axis=1)
    ratio = float(((radii[i] + radii[j] + GAP) / distance).max())
    if ratio <= 1.0:
        return points
    centre = points.mean(axis=0)
    return centre + (points - centre) * ratio


def _component_layout(component: nx.Graph, order: Sequence[Hashable], seed: int) -> np.ndarray:
    """Unit-scale coordinates of one component, in ``order``."""
    size = len(order)
    if size == 1:
        return np.zeros((1, 2))
    if size <= 12 and nx.density(component) > 0.6:  # a paper's clique reads best as a circle
        raw = nx.circular_layout(order)
        points = np.array([raw[node] for node in order], dtype=float)
    else:
        index = {node: k for k, node in enumerate(order)}
        # Links in a fixed order (not the order they were added in): the same data, the same layout.
        links = sorted(
            (min(index[a], index[b]), max(index[a], index[b]), w)
            for a, b, w in component.edges(data="weight", default=1)
        )
        edges = [(a, b) for a, b, _ in links]
        weights = [max(float(w), 0.1) for _, _, w in links]
        start = np.random.default_rng(seed).uniform(-1, 1, size=(size, 2)) * math.sqrt(size)
        with seeded_igraph(seed):
            found = igraph.Graph(n=size, edges=edges).layout_fruchterman_reingold(
                weights=weights, niter=FORCE_ITERATIONS, seed=start.tolist(), grid=True
            )
        points = np.array(found.coords, dtype=float)
    return points - points.mean(axis=0)


def concentric(rings: list[list[str]], radii: Mapping[str, float] | None = None) -> dict[str, tuple[float, float]]:
    """Rings around a centre (ego networks): ring 0 is the centre, ring k at a radius that fits its nodes."""
    radii = radii or {}
    positions: dict[str, tuple[float, float]] = {}
    distance = 0.0
    widest = 0.0
    for index, ring in enumerate(rings):
        if not ring:
            continue
        biggest = max(float(radii.get(node, DEFAULT_RADIUS)) for node in ring)
        if index == 0:
            positions[ring[0]] = (0.0, 0.0)
            widest = biggest
            continue
        circumference = sum(2 * float(radii.get(node, DEFAULT_RADIUS)) + 3 * GAP for node in ring)
        # Rings well apart (so that they read as rings), and wide enough for their nodes.
        distance = max(distance + 2.5 * (widest + biggest) + 10 * GAP, circumference / (2 * math.pi))
        widest = biggest
        offset = 0.5 * index
        for k, node in enumerate(ring):
            angle = 2 * math.pi * k / len(ring) + offset - math.pi / 2
            positions[node] = (round(distance * math.cos(angle), 2), round(distance * math.sin(angle), 2))
    return positions
