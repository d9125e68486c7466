"""A map's drawing: the node and edge data vis-network shows, and its text as the page embeds it.

Pure data from a network, its layout and the node's URL (a function given by the caller): no pyvis. pyvis's
``Node`` and ``Edge`` records only gathered the same keys into a dict, and importing pyvis cost a first map about
0.9 s (it pulls in IPython); ``tests/site/test_mapview.py`` checks the drawing equals pyvis's records on generated
networks. The page loads vis-network from the app (pyvis's own template loads it from CDNs). Titles are plain
strings, which vis-network shows as text, never as HTML.
"""

from collections.abc import Callable
from typing import Any

import networkx as nx
import orjson

from bibgraph.graph.networks import AREA
from bibgraph.graph.networks.palette import BROADER_COLOUR, OTHER_COLOUR, PALETTE
from bibgraph.graph.networks.spec import TOPIC_MAP, NetworkSpec, author_radius, topic_radius
from bibgraph.graph.rdf.iris import iris

Url = Callable[[str], str | None]  # a node's app path, None for a foreign IRI (its IRI is its link then)
VIEW_STYLE = 3  # names the drawings in derived-data keys: kept ones of another style are drawn again, never read
NodeStyle = Callable[[str, dict[str, Any]], dict[str, Any]]
EdgeStyle = Callable[[str, str, dict[str, Any]], dict[str, Any]]

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
# What a JSON text must not hold raw inside an HTML <script>: escaped as Jinja's ``tojson`` does.
HTML_UNSAFE = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027"))


def colour(index: int | None) -> str:
    """The colour of the ``index``-th community or area (0: the first); past the palette (or none), the grey."""
    return OTHER_COLOUR if index is None or not 0 <= index < len(PALETTE) else PALETTE[index]


def counted(count: int, noun: str) -> str:
    """``1 paper``, ``1,224 papers``: a map's tooltips count as the pages do (grouped, in the right number)."""
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def view_data(
    network: nx.Graph, positions: dict[str, tuple[float, float]], node_style: NodeStyle, edge_style: EdgeStyle
) -> dict[str, Any]:
    """Nodes, edges and options for vis-network: each node its style, position, id, label and shape (``dot``
    unless its style says), each edge its style and ends."""
    nodes = []
    for node, data in network.nodes(data=True):
        x, y = positions[node]
        style = node_style(node, data)
        shape, label = style.pop("shape", "dot"), style.pop("label", node)
        nodes.append({"x": x, "y": y, **style, "id": node, "label": label, "shape": shape})
    edges = [{**edge_style(a, b, data), "from": a, "to": b} for a, b, data in network.edges(data=True)]
    return {"nodes": nodes, "edges": edges, "options": {**OPTIONS}}


def author_view(
    network: nx.Graph,
    positions: dict[str, tuple[float, float]],
    url: Url,
    weighting: str = "weight",
    centre: str | None = None,
) -> dict[str, Any]:
    """A co-author map's drawing: discs by papers, coloured by community; link width by ``weighting`` (joint
    papers, or their fractional count); on an ego map (``centre``), links not touching the ego are faint."""

    def node_style(node: str, data: dict[str, Any]) -> dict[str, Any]:
        areas = ", ".join(data.get("areas", [])) or "no area"
        note = " · list cut (等): co-authorship is a lower bound" if data.get("truncated") else ""
        return {
            "label": data["name"],
            "title": f"{data['name']}\n{counted(data['papers'], 'paper')} · {areas}{note}",
            "size": author_radius(data["papers"]),
            "color": colour(data.get("community")),
            "url": url(node) or node,
            "community": data.get("community", 0),
            "papers": data["papers"],
            "areas": data.get("areas", []),
            "ego": bool(data.get("ego")),
        }

    def edge_style(a: str, b: str, data: dict[str, Any]) -> dict[str, Any]:
        value = data.get(weighting, data.get("weight", 1))
        joint = data.get("weight", 1)
        bound = " (at least: a list was cut)" if data.get("lower_bound") else ""
        drawn = {"width": 0.5 + min(float(value), 5.0), "title": f"{counted(joint, 'joint paper')}{bound}"}
        drawn["joint"] = joint
        if centre is not None and centre not in (a, b):
            drawn["color"] = {"inherit": "both", "opacity": 0.18}
        return drawn

    return view_data(network, positions, node_style, edge_style)


def topic_view(network: nx.Graph, positions: dict[str, tuple[float, float]], url: Url) -> dict[str, Any]:
    """A topic map's drawing: areas filled in their colour, subareas a ring of their area's colour, named with
    their area (two areas may have subareas of one name); discs relative to the biggest topic."""
    biggest = max((papers for _, papers in network.nodes(data="papers")), default=1)
    areas: dict[str, int] = {}

    def node_style(node: str, data: dict[str, Any]) -> dict[str, Any]:
        is_area = data["kind"] == AREA
        area_colour = colour(areas.setdefault(data["area"], len(areas)) % len(PALETTE))
        label = data["label"] if is_area else f"{data['parent']} · {data['label']}"
        return {
            "label": label,
            "title": f"{label}\n{'area' if is_area else 'subarea'} · {counted(data['papers'], 'paper')}",
            "size": topic_radius(data["papers"], biggest, is_area),
            "color": area_colour if is_area else {"background": "#fff", "border": area_colour},
            "borderWidth": 1 if is_area else 3,
            "url": url(node) or node,
            "papers": data["papers"],
        }

    def edge_style(a: str, b: str, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "broader":
            return {"width": 1.5, "dashes": False, "title": "area → subarea", "color": {"color": BROADER_COLOUR}}
        return {
            "width": 0.5 + min(data["strength"], 8.0),
            "dashes": True,
            "title": f"{counted(data['shared_authors'], 'shared author')}, {data['strength']}× what chance would give",
            "joint": data["shared_authors"],
        }

    return view_data(network, positions, node_style, edge_style)


def embedded(view: dict[str, Any]) -> str:
    """``view`` as JSON text safe inside an HTML ``<script>`` (the same escapes as Jinja's ``tojson``), keys
    sorted: orjson writes a 1,000-author map's text in a few milliseconds where ``json.dumps`` took 0.1 s, at
    every request."""
    text = orjson.dumps(view, option=orjson.OPT_SORT_KEYS).decode("utf-8")
    for unsafe, escaped in HTML_UNSAFE:
        text = text.replace(unsafe, escaped)
    return text


def site_paths(base: str) -> Url:
    """The app path of an IRI minted under ``base`` (``/paper/0123``), None for a foreign IRI."""
    minted = iris(base)

    def url(iri: str) -> str | None:
        path = minted.path(iri)
        return None if path is None else "/" + path

    return url


def view_options(spec: NetworkSpec, base: str, weighting: str = "weight") -> tuple[str, ...]:
    """What a drawing of the network of ``spec`` depends on beside it, as its derived-data key holds it: the kind
    of drawing, the links' weighting (a co-author map), the style and the base IRI its links are made under (a
    build keeps the default maps' drawings; a server under another base draws its own)."""
    if spec.kind == TOPIC_MAP:
        return ("topics", str(VIEW_STYLE), base)
    return ("authors", weighting, str(VIEW_STYLE), base)


def default_drawing(
    spec: NetworkSpec, network: nx.Graph, positions: dict[str, tuple[float, float]], base: str
) -> dict[str, Any]:
    """The drawing of a default map (a topic map, or a co-author map with no author at its centre, full weights)
    as a server under ``base`` draws it at first request: a build keeps it (:func:`view_options`)."""
    if spec.kind == TOPIC_MAP:
        return topic_view(network, positions, site_paths(base))
    return author_view(network, positions, site_paths(base))
