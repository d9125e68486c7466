"""pyvis builds the node and edge data of every view; our own template renders it.

Only pyvis's ``Node`` and ``Edge`` records are used, not ``Network.add_node``/``add_edge``: those
scan every node and edge added so far (a duplicate check networkx makes needless), which took 4 s
for a 1,000-author map with 4,400 links. pyvis's own HTML template loads vis-network and Bootstrap
from CDNs (even in its ``local`` and ``in_line`` modes) and switches every tooltip to raw
``innerHTML`` as soon as one title contains ``href``; so only its data is used, and the page loads
vis-network from the app. Titles are plain strings, which vis-network shows as text, never as HTML.
"""

import json
import math
from collections.abc import Callable
from typing import Any

import networkx as nx

from bibgraph.graph.networks import AREA
from bibgraph.graph.palette import OTHER_COLOUR, PALETTE  # the one definition of the maps' colours

__all__ = ["OTHER_COLOUR", "PALETTE"]  # graphviews reads them from here

# The page draws labels itself (graphview.js culls them so that none overlaps); the wheel zooms
# only once the map has focus, so that it scrolls the page otherwise.
OPTIONS = {
    "physics": {"enabled": False},
    "interaction": {
        "hover": True,
        "tooltipDelay": 200,
        "hideEdgesOnDrag": True,
        "hideEdgesOnZoom": True,
        "navigationButtons": False,
        "zoomView": False,
        "keyboard": False,
    },
    "edges": {"smooth": False, "color": {"inherit": "both", "opacity": 0.45}},
    "nodes": {"shape": "dot", "borderWidth": 1, "font": {"size": 12}},
}


def author_radius(papers: int) -> float:
    """An author's disc in pixels: its area grows with the papers (radius with their square root), capped.
    The layout keeps these discs apart, so the drawing and the layout use this one function."""
    return round(5 + 3 * math.sqrt(min(papers, 80)), 1)


def topic_radius(papers: int, biggest: int, is_area: bool) -> float:
    """A topic's disc in pixels, relative to the biggest topic; areas larger than subareas."""
    share = math.sqrt(papers / max(biggest, 1))
    return round(8 + 32 * share, 1) if is_area else round(6 + 18 * share, 1)


def topic_radii(network: nx.Graph) -> dict[str, float]:
    biggest = max((papers for _, papers in network.nodes(data="papers")), default=1)
    return {
        node: topic_radius(data["papers"], biggest, data["kind"] == AREA) for node, data in network.nodes(data=True)
    }


def community_colour(index: int | None) -> str:
    return PALETTE[(index or 0) % len(PALETTE)]


def view_data(
    network: nx.Graph,
    positions: dict[str, tuple[float, float]],
    node_style: Callable[[str, dict[str, Any]], dict[str, Any]],
    edge_style: Callable[[str, str, dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Nodes, edges and options for vis-network, assembled with pyvis's records."""
    from pyvis.edge import Edge  # here, not at the top: pyvis pulls in IPython, which `serve` need not load to start
    from pyvis.node import Node

    nodes = []
    for node, data in network.nodes(data=True):
        x, y = positions[node]
        style = node_style(node, data)
        shape, label = style.pop("shape", "dot"), style.pop("label", node)
        nodes.append(Node(node, shape, label=label, x=x, y=y, **style).options)
    edges = [Edge(a, b, **edge_style(a, b, data)).options for a, b, data in network.edges(data=True)]
    return {"nodes": nodes, "edges": edges, "options": json.loads(json.dumps(OPTIONS))}
