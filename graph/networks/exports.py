"""Network exports: GraphML, GEXF (Gephi), node-link JSON and VOSviewer Online JSON.

The table naming them (media types, suffixes, labels) is :data:`NETWORK_SYNTAXES`, looked up as the RDF formats
are (:func:`bibgraph.graph.rdf.formats.lookup`). The writers never import networkx (11 MB of memory): they read the
graph they are given, element by element.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO
from xml.sax.saxutils import escape, quoteattr

from bibgraph.graph.rdf.formats import lookup

if TYPE_CHECKING:
    import networkx as nx

# A VOSviewer map holds its items' coordinates up to this many nodes (the layout of more costs minutes: 112.6 CPU-s
# for 185,000 authors); VOSviewer lays out a map that has none (its JSON map format makes "x" and "y" optional).
LAID_OUT_MAX_NODES = 5_000

NodeRows = Callable[[], Iterable[tuple[str, dict[str, object]]]]  # a network's nodes and attributes, networkx order
EdgeRows = Callable[[], Iterable[tuple[str, str, dict[str, object]]]]  # its links and attributes, networkx order


def _scalar(value: object) -> object:
    """A value GraphML and GEXF can hold: a list or set becomes one string (``a; b``)."""
    return "; ".join(map(str, value)) if isinstance(value, list | set | tuple) else value


def _items(data: dict[str, object]) -> Iterator[tuple[str, object]]:
    return ((str(k), _scalar(v)) for k, v in data.items() if v is not None)


def _text(value: object) -> str:
    """A value as networkx writes it: ``str``, floats' infinities and NaN as the formats spell them."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("INF" if value > 0 else "-INF")
    return str(value)


class Utf8:
    """A text document as UTF-8 bytes, encoded piece by piece as written into ``out`` (a file: the whole co-author
    network's GraphML is gigabytes at a million papers; by default held in memory): a ``StringIO``'s text (two or
    four bytes a character once one name is not Latin-1) and then its encoded copy held the document 3-5 times."""

    def __init__(self, out: BinaryIO | None = None) -> None:
        self.out = io.BytesIO() if out is None else out

    def write(self, text: str) -> None:
        self.out.write(text.encode("utf-8"))


def _bytes(write: Callable[[Utf8], None]) -> bytes:
    """What ``write`` writes, as bytes."""
    out = io.BytesIO()
    write(Utf8(out))
    return out.getvalue()


def _nx_rows(network: nx.Graph) -> tuple[NodeRows, EdgeRows]:
    return (lambda: network.nodes(data=True)), (lambda: network.edges(data=True))


def _attribute(value: object, shown: str) -> str:
    """``shown`` (the text of ``value``) as a quoted XML attribute: a number's or a truth value's text needs no
    escaping (the writers' hot path: two or three numbers per link)."""
    return f'"{shown}"' if type(value) in (int, float, bool) else quoteattr(shown)


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
    return _bytes(lambda out: write_graphml(*_nx_rows(network), out))


def write_graphml(nodes: NodeRows, edges: EdgeRows, out: Utf8) -> None:
    """:func:`graphml` of the rows ``nodes`` and ``edges`` give (each read twice: the keys, then the elements)."""
    keys: dict[tuple[str, str, str], str] = {}  # (name, type, scope) -> id, in order of first use, as networkx
    for scope, rows in (("node", (d for _, d in nodes())), ("edge", (d for *_, d in edges()))):
        for attributes in rows:
            for name, value in _items(attributes):
                keys.setdefault((name, _xml_type(value, _GRAPHML_TYPES), scope), f"d{len(keys)}")
    write = out.write
    write(graphml_head(keys))

    def data(scope: str, attributes: dict[str, object]) -> None:
        for name, value in _items(attributes):
            key = keys[(name, _xml_type(value, _GRAPHML_TYPES), scope)]
            write(f"      <data key={quoteattr(key)}>{escape(value) if type(value) is str else _text(value)}</data>\n")

    for node, attributes in nodes():
        write(f"    <node id={quoteattr(str(node))}>\n")
        data("node", attributes)
        write("    </node>\n")
    for a, b, attributes in edges():
        write(f"    <edge source={quoteattr(str(a))} target={quoteattr(str(b))}>\n")
        data("edge", attributes)
        write("    </edge>\n")
    write("  </graph>\n</graphml>\n")


def graphml_head(keys: dict[tuple[str, str, str], str]) -> str:
    """A GraphML document up to its first node: its ``keys`` ((name, type, scope) -> id) declared."""
    head = [
        "<?xml version='1.0' encoding='utf-8'?>\n",
        '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns'
        ' http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n',
    ]
    for (name, kind, scope), key in keys.items():
        head.append(
            f"  <key id={quoteattr(key)} for={quoteattr(scope)} attr.name={quoteattr(name)}"
            f" attr.type={quoteattr(kind)} />\n"
        )
    head.append('  <graph edgedefault="undirected">\n')
    return "".join(head)


def gexf(network: nx.Graph) -> bytes:
    """GEXF 1.2 as networkx writes it (read back by ``nx.read_gexf`` to the same graph: a node's ``label`` and an
    edge's ``weight`` are the format's own fields), written element by element for the reason :func:`graphml`
    gives; no modification date, so the same network gives the same bytes."""
    return _bytes(lambda out: write_gexf(*_nx_rows(network), out))


def write_gexf(nodes: NodeRows, edges: EdgeRows, out: Utf8) -> None:
    """:func:`gexf` of the rows ``nodes`` and ``edges`` give (each read twice)."""
    ids: dict[tuple[str, str], tuple[str, str]] = {}  # (class, title) -> (id, type), first type wins, as networkx
    special = {"node": {"label"}, "edge": {"weight"}}
    for scope, rows in (("node", (d for _, d in nodes())), ("edge", (d for *_, d in edges()))):
        for attributes in rows:
            for name, value in _items(attributes):
                if name not in special[scope] and (scope, name) not in ids:
                    ids[(scope, name)] = (str(len(ids)), _xml_type(value, _GEXF_TYPES))
    write = out.write
    write(gexf_head(ids))

    def values(scope: str, attributes: Iterator[tuple[str, object]]) -> None:
        rows = [(ids[(scope, name)][0], value) for name, value in attributes]
        if rows:
            write("        <attvalues>\n")
            for number, value in rows:
                shown = str(value).lower() if isinstance(value, bool) else _text(value)
                write(f"          <attvalue for={quoteattr(number)} value={_attribute(value, shown)} />\n")
            write("        </attvalues>\n")

    write("    <nodes>\n")
    for node, attributes in nodes():
        label = _scalar(attributes["label"]) if attributes.get("label") is not None else node
        write(f"      <node id={quoteattr(str(node))} label={quoteattr(str(label))}>\n")
        values("node", ((k, v) for k, v in _items(attributes) if k != "label"))
        write("      </node>\n")
    write("    </nodes>\n    <edges>\n")
    for edge, (a, b, attributes) in enumerate(edges()):
        weight = attributes.get("weight")
        shown = "" if weight is None else f" weight={_attribute(weight, str(weight))}"
        write(f'      <edge source={quoteattr(str(a))} target={quoteattr(str(b))} id="{edge}"{shown}>\n')
        values("edge", ((k, v) for k, v in _items(attributes) if k != "weight"))
        write("      </edge>\n")
    write("    </edges>\n  </graph>\n</gexf>\n")


def gexf_head(ids: dict[tuple[str, str], tuple[str, str]]) -> str:
    """A GEXF document up to its nodes: the attributes of ``ids`` ((class, title) -> (id, type)) declared."""
    head = [
        "<?xml version='1.0' encoding='utf-8'?>\n",
        '<gexf xmlns="http://www.gexf.net/1.2draft" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        ' xsi:schemaLocation="http://www.gexf.net/1.2draft http://www.gexf.net/1.2draft/gexf.xsd" version="1.2">\n',
        '  <graph defaultedgetype="undirected" mode="static" name="">\n',
    ]
    for scope in ("node", "edge"):
        declared = [(title, number, kind) for (of, title), (number, kind) in ids.items() if of == scope]
        if declared:
            head.append(f'    <attributes mode="static" class="{scope}">\n')
            for title, number, kind in declared:
                head.append(
                    f"      <attribute id={quoteattr(number)} title={quoteattr(title)} type={quoteattr(kind)} />\n"
                )
            head.append("    </attributes>\n")
    return "".join(head)


def _json(out: Utf8, fields: dict[str, object], lists: dict[str, Iterable[object]], within: str | None = None) -> None:
    """A JSON object of ``fields`` and then ``lists`` (the value of a key ``within`` an outer object, if given),
    written item by item (one item a line) with the C encoder: ``json.dumps(..., indent=...)`` takes Python's own
    encoder and builds the whole text from a whole tree."""
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


def node_link(network: nx.Graph) -> bytes:
    """networkx's node-link JSON (``nx.node_link_data(..., edges="links")``), attributes as in GraphML."""
    return _bytes(lambda out: write_node_link(*_nx_rows(network), out))


def write_node_link(nodes: NodeRows, edges: EdgeRows, out: Utf8) -> None:
    """:func:`node_link` of the rows ``nodes`` and ``edges`` give."""
    items = ({**dict(_items(data)), "id": node} for node, data in nodes())
    links = ({**{k: v for k, v in data.items() if v is not None}, "source": a, "target": b} for a, b, data in edges())
    _json(out, {"directed": False, "multigraph": False, "graph": {}}, {"nodes": items, "links": links})


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
            item = vosviewer_item(
                ids[node],
                node,
                data.get("name") or data.get("label") or node,
                clusters[node],
                data.get("papers", 0),
                network.degree(node),
                sum(strength(d) for d in network[node].values()),  # type: ignore[misc]
            )
            if positions and node in positions:
                item["x"], item["y"] = (round(float(c), 4) for c in positions[node])
            yield item

    edges = sorted(((ids[a], ids[b], strength(data)) for a, b, data in network.edges(data=True)), key=lambda e: e[:2])
    return _bytes(lambda out: write_vosviewer(items(), edges, out))


def vosviewer_item(
    number: int, node: str, label: object, cluster: int, papers: object, links: int, strength: object
) -> dict[str, object]:
    """One item of a VOSviewer map (without coordinates)."""
    return {
        "id": number,
        "label": label,
        "url": node,
        "cluster": cluster,
        "weights": {"Documents": papers, "Links": links, "Total link strength": strength},
    }


def write_vosviewer(items: Iterable[dict[str, object]], links: Iterable[tuple[int, int, object]], out: Utf8) -> None:
    """A VOSviewer map of ``items`` (:func:`vosviewer_item`, in id order) and ``links`` (ids and strength, in order)."""
    rows = ({"source_id": a, "target_id": b, "strength": value} for a, b, value in links)
    _json(out, {}, {"items": items, "links": rows}, within="network")


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


@dataclass(frozen=True)
class NetworkSyntax:
    """A file format for the co-author and topic networks (Gephi, VOSviewer, networkx)."""

    name: str
    media_type: str
    suffix: str
    label: str
    write: Callable[[nx.Graph], bytes]
    # VOSviewer maps carry coordinates and a chosen link strength; the other formats only the graph
    positioned: bool = False
    aliases: tuple[str, ...] = ()

    def export(
        self, network: nx.Graph, positions: Callable[[], dict[str, tuple[float, float]]], weight: str = "weight"
    ) -> bytes:
        """The file's bytes; ``positions`` (a layout, costly) is called only when the format holds them and the
        network has at most :data:`LAID_OUT_MAX_NODES` nodes."""
        if self.positioned:
            laid_out = network.number_of_nodes() <= LAID_OUT_MAX_NODES
            return vosviewer(network, positions() if laid_out else None, weight=weight)
        return self.write(network)


NETWORK_SYNTAXES: tuple[NetworkSyntax, ...] = (
    NetworkSyntax("graphml", "application/graphml+xml", "graphml", "GraphML", graphml),
    NetworkSyntax("gexf", "application/gexf+xml", "gexf", "GEXF (Gephi)", gexf),
    NetworkSyntax("json", "application/json", "json", "node-link JSON", node_link),
    NetworkSyntax("vosviewer", "application/json", "vosviewer.json", "VOSviewer JSON", vosviewer, True),
)


def network_syntax(name: str) -> NetworkSyntax:
    """Look a network export format up by name or suffix."""
    return lookup(name, NETWORK_SYNTAXES, "network format")
