"""Network exports: GraphML, GEXF (Gephi), node-link JSON and VOSviewer Online JSON.

The table naming them (media types, suffixes, labels) is :data:`bibgraph.graph.rdf.formats.NETWORK_SYNTAXES`.
networkx is imported by the writers that use it, not with this module: the formats table imports
this module, and the build, which reads that table, never needs networkx (11 MB of memory).
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx


def _flat(network: nx.Graph) -> nx.Graph:
    """A copy whose attributes are all scalars (GraphML and GEXF cannot hold lists or sets)."""
    import networkx as nx

    flat = nx.Graph()
    for node, data in network.nodes(data=True):
        flat.add_node(
            node,
            **{
                k: "; ".join(map(str, v)) if isinstance(v, list | set | tuple) else v
                for k, v in data.items()
                if v is not None
            },
        )
    for a, b, data in network.edges(data=True):
        flat.add_edge(a, b, **{k: v for k, v in data.items() if v is not None})
    return flat


def graphml(network: nx.Graph) -> bytes:
    import networkx as nx

    out = io.BytesIO()
    nx.write_graphml(_flat(network), out, encoding="utf-8")
    return out.getvalue()


def gexf(network: nx.Graph) -> bytes:
    import networkx as nx

    out = io.BytesIO()
    nx.write_gexf(_flat(network), out, encoding="utf-8")
    return out.getvalue()


def node_link(network: nx.Graph) -> bytes:
    import networkx as nx

    data = nx.node_link_data(_flat(network), edges="links")
    return json.dumps(data, ensure_ascii=False, indent=1).encode("utf-8")


def vosviewer(
    network: nx.Graph, positions: dict[str, tuple[float, float]] | None = None, weight: str = "weight"
) -> bytes:
    """The VOSviewer Online JSON map: items with clusters, weights and (optional) coordinates, links.

    Link strengths are the edge attribute ``weight`` names (``fractional``: fractional counting).
    """
    ids = {node: index for index, node in enumerate(sorted(network), start=1)}
    clusters = _clusters(network)

    def strength(data: dict[str, object]) -> object:
        return data.get(weight, data.get("weight", 1))

    items = []
    for node in sorted(network):
        data = network.nodes[node]
        item: dict[str, object] = {
            "id": ids[node],
            "label": data.get("name") or data.get("label") or node,
            "url": node,
            "cluster": clusters[node],
            "weights": {
                "Documents": data.get("papers", 0),
                "Links": network.degree(node),
                "Total link strength": sum(strength(d) for d in network[node].values()),
            },
        }
        if positions and node in positions:
            item["x"], item["y"] = (round(float(c), 4) for c in positions[node])
        items.append(item)
    links = [
        {"source_id": ids[a], "target_id": ids[b], "strength": strength(data)}
        for a, b, data in sorted(network.edges(data=True), key=lambda e: (ids[e[0]], ids[e[1]]))
    ]
    document = {"network": {"items": items, "links": links}}
    return json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")


def _clusters(network: nx.Graph) -> dict[str, int]:
    """VOSviewer's clusters (from 1): a co-author network's communities; a topic network's areas, a subarea in its
    area's cluster, the areas numbered by papers (most first), then IRI."""
    nodes = network.nodes
    if not any(data.get("kind") == "area" for _, data in nodes(data=True)):
        return {node: int(nodes[node].get("community", 0)) + 1 for node in network}
    area_of = {
        node: node if data.get("kind") == "area" else str(data.get("area") or node) for node, data in nodes(data=True)
    }
    order = sorted(set(area_of.values()), key=lambda a: (-int(nodes[a].get("papers", 0)) if a in nodes else 0, a))
    number = {area: index for index, area in enumerate(order, start=1)}
    return {node: number[area_of[node]] for node in network}
