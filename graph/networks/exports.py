"""Network exports: GraphML, GEXF (Gephi), node-link JSON and VOSviewer Online JSON.

The table naming them (media types, suffixes, labels) is :data:`bibgraph.graph.rdf.formats.NETWORK_SYNTAXES`.
networkx is imported by the writers that use it, not with this module: the formats table imports
this module, and the build, which reads that table, never needs networkx (11 MB of memory).
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING
from xml.sax.saxutils import escape, quoteattr

if TYPE_CHECKING:
    import networkx as nx


class _Utf8(io.TextIOWrapper):
    """Text written as UTF-8 bytes a buffer at a time: an ``io.StringIO`` holds 4 bytes a character (a single CJK
    name makes the whole text so), and its text then its encoding were two more copies of the document (at 100k
    papers through an engine a 316 MB GraphML raised the web process by 4 GB)."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", newline="")

    def bytes(self) -> bytes:
        self.flush()
        buffer = self.buffer
        assert isinstance(buffer, io.BytesIO)  # the one given above
        return buffer.getvalue()


def _scalar(value: object) -> object:
    """A value GraphML and GEXF can hold: a list or set becomes one string (``a; b``)."""
    return "; ".join(map(str, value)) if isinstance(value, list | set | tuple) else value


def _flat(network: nx.Graph) -> nx.Graph:
    """A copy whose attributes are all scalars (node-link JSON keeps the same fields as the XML formats)."""
    import networkx as nx

    flat = nx.Graph()
    for node, data in network.nodes(data=True):
        flat.add_node(node, **{k: _scalar(v) for k, v in data.items() if v is not None})
    for a, b, data in network.edges(data=True):
        flat.add_edge(a, b, **{k: v for k, v in data.items() if v is not None})
    return flat


def _items(data: dict[str, object]) -> Iterator[tuple[str, object]]:
    return ((str(k), _scalar(v)) for k, v in data.items() if v is not None)


def _text(value: object) -> str:
    """A value as networkx writes it: ``str``, floats' infinities and NaN as the formats spell them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("INF" if value > 0 else "-INF")
    return str(value)


_GRAPHML_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}
_GEXF_TYPES = {bool: "boolean", int: "long", float: "double", str: "string"}


def _xml_type(value: object, types: dict[type, str]) -> str:
    kind = types.get(type(value))
    if kind is None:
        raise TypeError(f"a network attribute of type {type(value).__name__} has no XML type")
    return kind


def graphml(network: nx.Graph) -> bytes:
    """GraphML as networkx writes it (read back by ``nx.read_graphml`` to the same graph), written element by
    element: networkx's writer holds the whole document as an ElementTree (3.3 GB for a 207 MB file of 250k
    authors), a build keeps the whole network's export and a server makes one per new filter set."""
    keys: dict[tuple[str, str, str], str] = {}  # (name, type, scope) -> id, in order of first use, as networkx
    for scope, rows in (
        ("node", (d for _, d in network.nodes(data=True))),
        ("edge", (d for *_, d in network.edges(data=True))),
    ):
        for attributes in rows:
            for name, value in _items(attributes):
                keys.setdefault((name, _xml_type(value, _GRAPHML_TYPES), scope), f"d{len(keys)}")
    out = _Utf8()
    write = out.write
    write("<?xml version='1.0' encoding='utf-8'?>\n")
    write(
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
        ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n'
    )
    for (name, kind, scope), key in keys.items():
        write(
            f"  <key id={quoteattr(key)} for={quoteattr(scope)} attr.name={quoteattr(name)}"
            f" attr.type={quoteattr(kind)} />\n"
        )
    write('  <graph edgedefault="undirected">\n')

    def data(scope: str, attributes: dict[str, object]) -> None:
        for name, value in _items(attributes):
            key = keys[(name, _xml_type(value, _GRAPHML_TYPES), scope)]
            write(f"      <data key={quoteattr(key)}>{escape(_text(value))}</data>\n")

    for node, attributes in network.nodes(data=True):
        write(f"    <node id={quoteattr(str(node))}>\n")
        data("node", attributes)
        write("    </node>\n")
    for a, b, attributes in network.edges(data=True):
        write(f"    <edge source={quoteattr(str(a))} target={quoteattr(str(b))}>\n")
        data("edge", attributes)
        write("    </edge>\n")
    write("  </graph>\n</graphml>\n")
    return out.bytes()


def gexf(network: nx.Graph) -> bytes:
    """GEXF 1.2 as networkx writes it (read back by ``nx.read_gexf`` to the same graph: a node's ``label`` and an
    edge's ``weight`` are the format's own fields), written element by element for the reason :func:`graphml`
    gives; no modification date, so the same network gives the same bytes."""
    ids: dict[tuple[str, str], tuple[str, str]] = {}  # (class, title) -> (id, type), first type wins, as networkx
    special = {"node": {"label"}, "edge": {"weight"}}
    for scope, rows in (
        ("node", (d for _, d in network.nodes(data=True))),
        ("edge", (d for *_, d in network.edges(data=True))),
    ):
        for attributes in rows:
            for name, value in _items(attributes):
                if name not in special[scope] and (scope, name) not in ids:
                    ids[(scope, name)] = (str(len(ids)), _xml_type(value, _GEXF_TYPES))
    out = _Utf8()
    write = out.write
    write("<?xml version='1.0' encoding='utf-8'?>\n")
    write(
        '<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://www.gexf.net/1.2draft http://www.gexf.net/1.2draft/gexf.xsd" version="1.2">\n'
    )
    write('  <graph defaultedgetype="undirected" mode="static" name="">\n')
    for scope in ("node", "edge"):
        declared = [(title, number, kind) for (of, title), (number, kind) in ids.items() if of == scope]
        if declared:
            write(f'    <attributes mode="static" class="{scope}">\n')
            for title, number, kind in declared:
                write(f"      <attribute id={quoteattr(number)} title={quoteattr(title)} type={quoteattr(kind)} />\n")
            write("    </attributes>\n")

    def values(scope: str, attributes: Iterator[tuple[str, object]]) -> None:
        rows = [(ids[(scope, name)][0], value) for name, value in attributes]
        if rows:
            write("        <attvalues>\n")
            for number, value in rows:
                shown = str(value).lower() if isinstance(value, bool) else _text(value)
                write(f"          <attvalue for={quoteattr(number)} value={quoteattr(shown)} />\n")
            write("        </attvalues>\n")

    write("    <nodes>\n")
    for node, attributes in network.nodes(data=True):
        label = _scalar(attributes["label"]) if attributes.get("label") is not None else node
        write(f"      <node id={quoteattr(str(node))} label={quoteattr(str(label))}>\n")
        values("node", ((k, v) for k, v in _items(attributes) if k != "label"))
        write("      </node>\n")
    write("    </nodes>\n    <edges>\n")
    for edge, (a, b, attributes) in enumerate(network.edges(data=True)):
        weight = attributes.get("weight")
        shown = "" if weight is None else f" weight={quoteattr(str(weight))}"
        write(f'      <edge source={quoteattr(str(a))} target={quoteattr(str(b))} id="{edge}"{shown}>\n')
        values("edge", ((k, v) for k, v in _items(attributes) if k != "weight"))
        write("      </edge>\n")
    write("    </edges>\n  </graph>\n</gexf>\n")
    return out.bytes()


def _json(fields: dict[str, object], lists: dict[str, Iterable[object]], within: str | None = None) -> bytes:
    """A JSON object of ``fields`` and then ``lists`` (the value of a key ``within`` an outer object, if given),
    written item by item (one item a line) with the C encoder: ``json.dumps(..., indent=...)`` takes Python's own
    encoder and builds the whole text from a whole tree."""
    out = _Utf8()
    write = out.write
    write("{" if within is None else f"{{{json.dumps(within)}: {{")
    write(", ".join(f"{json.dumps(name)}: {json.dumps(value)}" for name, value in fields.items()))
    for number, (name, items) in enumerate(lists.items()):
        write(f"{', ' if fields or number else ''}{json.dumps(name)}: [")
        for index, item in enumerate(items):
            write(",\n " if index else "\n ")
            write(json.dumps(item, ensure_ascii=False))
        write("\n]")
    write("}\n" if within is None else "}}\n")
    return out.bytes()


def node_link(network: nx.Graph) -> bytes:
    """networkx's node-link JSON (``nx.node_link_data(..., edges="links")``), attributes as in GraphML."""
    nodes = ({**dict(_items(data)), "id": node} for node, data in network.nodes(data=True))
    links = (
        {**{k: v for k, v in data.items() if v is not None}, "source": a, "target": b}
        for a, b, data in network.edges(data=True)
    )
    return _json({"directed": False, "multigraph": False, "graph": {}}, {"nodes": nodes, "links": links})


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

    def items() -> Iterator[dict[str, object]]:
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
            yield item

    edges = sorted(((ids[a], ids[b], strength(data)) for a, b, data in network.edges(data=True)), key=lambda e: e[:2])
    links = ({"source_id": a, "target_id": b, "strength": value} for a, b, value in edges)
    return _json({}, {"items": items(), "links": links}, within="network")


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
