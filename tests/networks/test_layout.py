"""The server layout: no two nodes overlap, whatever the network; ego rings; the topic map's links."""

import json
import math
import os
import subprocess
import sys
from collections.abc import Mapping

import networkx as nx
import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from bibgraph.graph.networks.layout import DEFAULT_RADIUS, concentric, layout
from tests import network_oracle as oracle
from tests.network_oracle import Authorship, bipartite_graph, topic_map


def overlaps(positions: Mapping[str, tuple[float, float]], radii: Mapping[str, float]) -> list[tuple[str, str]]:
    """Pairs of nodes whose discs overlap (the layout promises none)."""
    order = sorted(positions)
    if len(order) < 2:
        return []
    points = np.array([positions[node] for node in order])
    sizes = np.array([float(radii.get(node, DEFAULT_RADIUS)) for node in order])
    found = []
    for a, b in cKDTree(points).query_pairs(2 * float(sizes.max()), output_type="ndarray"):
        if float(np.linalg.norm(points[a] - points[b])) < sizes[a] + sizes[b] - 1e-6:
            found.append((order[a], order[b]))
    return found


@st.composite
def networks(draw) -> tuple[nx.Graph, dict[str, float]]:
    """Co-author-like networks: a few cliques (papers) over a pool of authors, plus isolated ones."""
    people = [f"a{i}" for i in range(draw(st.integers(1, 120)))]
    graph = nx.Graph()
    graph.add_nodes_from(people)
    for _ in range(draw(st.integers(0, 60))):
        members = draw(st.lists(st.sampled_from(people), min_size=1, max_size=8, unique=True))
        graph.add_edges_from((a, b, {"weight": draw(st.integers(1, 5))}) for a in members for b in members if a < b)
    radii = {p: draw(st.floats(3, 40)) for p in people}
    return graph, radii


@settings(max_examples=40, deadline=None)
@given(networks())
def test_no_two_nodes_overlap(case) -> None:
    graph, radii = case
    positions = layout(graph, radii)
    assert set(positions) == set(graph)
    assert all(math.isfinite(x) and math.isfinite(y) for x, y in positions.values())
    assert overlaps(positions, radii) == []


def test_the_layout_is_stable() -> None:
    graph = nx.connected_caveman_graph(12, 6)
    graph = nx.relabel_nodes(graph, {n: f"n{n}" for n in graph})
    assert layout(graph) == layout(graph)


@given(st.lists(st.integers(0, 40), min_size=1, max_size=3), st.floats(3, 30))
def test_ego_rings_are_concentric_and_apart(sizes, radius) -> None:
    rings = [["ego"]] + [[f"r{k}-{i}" for i in range(n)] for k, n in enumerate(sizes)]
    radii = {node: radius for ring in rings for node in ring}
    positions = concentric(rings, radii)
    assert positions["ego"] == (0.0, 0.0)
    distances = [[math.hypot(*positions[n]) for n in ring] for ring in rings[1:] if ring]
    assert all(max(d) - min(d) < 0.05 for d in distances)  # every ring is a circle around the ego
    assert [min(d) for d in distances] == sorted(min(d) for d in distances)
    assert overlaps(positions, radii) == []


def row(paper: str, author: str, concept: str | None = None, area: str | None = None) -> Authorship:
    return Authorship(paper, author, author.upper(), 2, False, concept, concept, area, area)


def test_ego_rings_keep_the_coauthors_with_most_joint_papers() -> None:
    rows = [row("p1", "ego"), row("p1", "a"), row("p2", "ego"), row("p2", "a"), row("p2", "b")]
    rows += [row("p3", "ego"), row("p3", "c"), row("p4", "b"), row("p4", "d")]
    graph = bipartite_graph(rows)
    rings, total = oracle.ego_rings(graph, "ego", 1, top=1)
    assert rings == [["ego"], ["a"]] and total == 3
    rings, _ = oracle.ego_rings(graph, "ego", 2, top=2)
    assert rings[1] == ["a", "b"] and rings[2] == ["d"]
    path = oracle.bipartite_path(graph, "a", "d")
    assert path[::2] == ["a", "b", "d"] and all(p.startswith("p") for p in path[1::2])


def test_the_topic_map_keeps_links_above_chance_and_each_topics_strongest() -> None:
    rows = []
    for k in range(6):  # six areas; areas 0 and 1 share most of their authors, the others few
        for i in range(10):
            rows.append(row(f"p{k}-{i}", f"x{k}-{i % 5}" if k > 1 else f"shared-{i % 5}", f"A{k}", f"A{k}"))
    rows += [row(f"q{k}", "everyone", f"A{k}", f"A{k}") for k in range(6)]
    network = topic_map(rows, strongest=2)
    related = {(a, b): d for a, b, d in network.edges(data=True) if d["kind"] == "related"}
    assert ("A0", "A1") in related or ("A1", "A0") in related
    assert all(d["strength"] > 1.0 for d in related.values())
    for (a, b), data in related.items():
        ranks = [
            sorted((d["strength"] for x, y, d in network.edges(n, data=True) if d["kind"] == "related"), reverse=True)
            for n in (a, b)
        ]
        assert any(data["strength"] in r[:2] for r in ranks)


def silhouette(points: np.ndarray, labels: list[int]) -> float:
    """The mean silhouette of the points against their labels (as sklearn.metrics.silhouette_score computes it)."""
    distances = np.linalg.norm(points[:, None, :] - points[None, :, :], axis=2)
    labels_array = np.array(labels)
    scores = []
    for i, label in enumerate(labels_array):
        same = labels_array == label
        if same.sum() < 2:
            scores.append(0.0)
            continue
        a = distances[i, same].sum() / (same.sum() - 1)
        b = min(distances[i, labels_array == other].mean() for other in set(labels) if other != label)
        scores.append((b - a) / max(a, b))
    return float(np.mean(scores))


def blocks(sizes: list[int], inside: float, outside: float, seed: int) -> nx.Graph:
    """A network of communities (a stochastic block model), each node's block as its ``community``."""
    chances = [[inside if i == j else outside for j in range(len(sizes))] for i in range(len(sizes))]
    graph = nx.stochastic_block_model(sizes, chances, seed=seed)
    graph = nx.relabel_nodes(graph, {n: f"n{n:03d}" for n in graph})
    for _, data in graph.nodes(data=True):
        data["community"] = data.pop("block")
    nx.set_edge_attributes(graph, 1, "weight")
    return graph


@settings(max_examples=8, deadline=None)
@given(st.lists(st.integers(8, 40), min_size=3, max_size=8), st.integers(0, 1000))
def test_communities_are_placed_apart(sizes, seed) -> None:
    graph = blocks(sizes, 0.3, 0.02, seed)
    giant = graph.subgraph(max(nx.connected_components(graph), key=len))
    positions = layout(graph)
    order = sorted(giant)
    labels = [graph.nodes[n]["community"] for n in order]
    assume(len(set(labels)) > 1)
    assert silhouette(np.array([positions[n] for n in order]), labels) >= 0.25


LAYOUT_IN_A_PROCESS = """
import json, random, sys
import networkx as nx
from bibgraph.graph.networks.layout import layout
edges, communities = json.load(sys.stdin)
random.Random(int(sys.argv[1])).shuffle(edges)  # the links in another order
graph = nx.Graph()
graph.add_weighted_edges_from(edges)
nx.set_node_attributes(graph, communities, "community")
print(json.dumps(sorted(layout(graph).items())))
"""


def test_the_same_data_gives_the_same_map_in_another_process() -> None:
    graph = blocks([30, 20, 25, 12], 0.3, 0.02, seed=3)
    edges = [[a, b, 1 + (i % 3)] for i, (a, b) in enumerate(sorted(graph.edges()))]
    data = json.dumps([edges, dict(graph.nodes(data="community"))])
    runs = [
        subprocess.run(
            [sys.executable, "-c", LAYOUT_IN_A_PROCESS, str(seed)],
            input=data,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2)
    ]
    assert runs[0] == runs[1] and len(json.loads(runs[0])) == graph.number_of_nodes()
