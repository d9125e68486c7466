"""pyvis builds the node and edge data of every view; our own template renders it.

Only pyvis's ``Node`` and ``Edge`` records are used, not ``Network.add_node``/``add_edge``: those
scan every node and edge added so far (a duplicate check networkx makes needless), which took 4 s
for a 1,000-author map with 4,400 links. pyvis's own HTML template loads vis-network and Bootstrap
from CDNs (even in its ``local`` and ``in_line`` modes) and switches every tooltip to raw
``innerHTML`` as soon as one title contains ``href``; so only its data is used, and the page loads
vis-network from the app. Titles are plain strings, which vis-network shows as text, never as HTML.
"""

import json
from collections.abc import Callable
from typing import Any

import networkx as nx

from bibgraph.graph.networks.palette import OTHER_COLOUR, PALETTE  # the one definition of the maps' colours

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


def colour(index: int | None) -> str:
    """The colour of the ``index``-th community or area (0: the first); past the palette (or none), the grey."""
    return OTHER_COLOUR if index is None or not 0 <= index < len(PALETTE) else PALETTE[index]


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
