"""A map's drawing equals what pyvis's records made of it, and its embedded text is Jinja's ``tojson`` parsed again.

The oracle is the drawing as the views made it before (kept here): pyvis's ``Node`` and
``Edge`` records around the same styles. Generated networks: names with HTML and quotes, cut lists, foreign IRIs,
ego maps, fractional weights, communities past the palette.
"""

import json
from typing import Any

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2.utils import htmlsafe_json_dumps
from pyvis.edge import Edge
from pyvis.node import Node

from bibgraph.graph.networks import AREA
from bibgraph.graph.networks.spec import author_radius, topic_radius
from bibgraph.graph.site.mapview import HTML_UNSAFE, OPTIONS, author_view, colour, counted, embedded, topic_view

BASE = "https://example.org/"
TEXT = st.text(alphabet=st.sampled_from("ab <>&'\"\\é等\u2028/"), max_size=8)


def url(iri: str) -> str | None:
    return "/" + iri[len(BASE) :] if iri.startswith(BASE) else None


def pyvis_view(network: nx.Graph, positions: dict[str, Any], node_style: Any, edge_style: Any) -> dict[str, Any]:
    nodes = []
    for node, data in network.nodes(data=True):
        x, y = positions[node]
        style = node_style(node, data)
        shape, label = style.pop("shape", "dot"), style.pop("label", node)
        nodes.append(Node(node, shape, label=label, x=x, y=y, **style).options)
    edges = [Edge(a, b, **edge_style(a, b, data)).options for a, b, data in network.edges(data=True)]
    return {"nodes": nodes, "edges": edges, "options": json.loads(json.dumps(OPTIONS))}


def old_author_view(network: nx.Graph, positions: dict[str, Any], weighting: str, centre: str | None) -> Any:
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
        drawn = {
            "width": 0.5 + min(float(value), 5.0),
            "title": f"{counted(joint, 'joint paper')}{bound}",
            "joint": joint,
        }
        if centre is not None and centre not in (a, b):
            drawn["color"] = {"inherit": "both", "opacity": 0.18}
        return drawn

    return pyvis_view(network, positions, node_style, edge_style)


def old_topic_view(network: nx.Graph, positions: dict[str, Any]) -> Any:
    biggest = max((papers for _, papers in network.nodes(data="papers")), default=1)
    areas: dict[str, int] = {}

    def node_style(node: str, data: dict[str, Any]) -> dict[str, Any]:
        is_area = data["kind"] == AREA
        area_colour = colour(areas.setdefault(data["area"], len(areas)) % 15)
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
            return {"width": 1.5, "dashes": False, "title": "area → subarea", "color": {"color": "#9a9a9a"}}
        return {
            "width": 0.5 + min(data["strength"], 8.0),
            "dashes": True,
            "title": f"{counted(data['shared_authors'], 'shared author')}, {data['strength']}× what chance would give",
            "joint": data["shared_authors"],
        }

    return pyvis_view(network, positions, node_style, edge_style)


@st.composite
def author_maps(draw: st.DrawFn) -> tuple[nx.Graph, dict[str, Any], str, str | None]:
    count = draw(st.integers(0, 8))
    names = [f"{BASE}author/{i}" if draw(st.booleans()) else f"http://other.org/{i}" for i in range(count)]
    network = nx.Graph()
    for node in names:
        data: dict[str, Any] = {"name": draw(TEXT), "papers": draw(st.integers(1, 200))}
        if draw(st.booleans()):
            data["community"] = draw(st.integers(0, 20))
        if draw(st.booleans()):
            data["areas"] = draw(st.lists(TEXT, max_size=3))
        data |= {"truncated": draw(st.booleans()), "ego": draw(st.booleans())}
        network.add_node(node, **data)
    for a, b in draw(st.lists(st.tuples(st.sampled_from(names), st.sampled_from(names)), max_size=12)) if names else []:
        if a != b:
            weights = {"weight": draw(st.integers(1, 9)), "fractional": draw(st.floats(0.01, 9))}
            network.add_edge(a, b, lower_bound=draw(st.booleans()), **weights)
    positions = {node: (draw(st.floats(-1e4, 1e4)), draw(st.floats(-1e4, 1e4))) for node in names}
    centre = draw(st.sampled_from([None, *names]))
    return network, positions, draw(st.sampled_from(["weight", "fractional"])), centre


@st.composite
def topic_maps(draw: st.DrawFn) -> tuple[nx.Graph, dict[str, Any]]:
    network = nx.Graph()
    areas = [f"{BASE}area/{i}" for i in range(draw(st.integers(1, 17)))]
    for area in areas:
        network.add_node(area, kind=AREA, area=area, label=draw(TEXT), papers=draw(st.integers(0, 500)))
    for index in range(draw(st.integers(0, 6))):
        area = draw(st.sampled_from(areas))
        node = f"{area}/sub{index}"
        network.add_node(
            node, kind="subarea", area=area, parent=draw(TEXT), label=draw(TEXT), papers=draw(st.integers(0, 99))
        )
        network.add_edge(area, node, kind="broader")
    nodes = list(network)
    for a, b in draw(st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes)), max_size=6)):
        if a != b and not network.has_edge(a, b):
            network.add_edge(
                a, b, kind="related", strength=draw(st.floats(0, 20)), shared_authors=draw(st.integers(1, 99))
            )
    return network, {node: (draw(st.floats(-1e3, 1e3)), 0.5) for node in nodes}


@settings(max_examples=60, deadline=None)
@given(author_maps())
def test_a_co_author_maps_drawing_is_pyvis_records_of_the_same_styles(case: Any) -> None:
    network, positions, weighting, centre = case
    drawn = author_view(network, positions, url, weighting, centre)
    assert drawn == old_author_view(network, positions, weighting, centre)
    assert json.loads(embedded(drawn)) == json.loads(htmlsafe_json_dumps(drawn, sort_keys=True, ensure_ascii=False))


@settings(max_examples=40, deadline=None)
@given(topic_maps())
def test_a_topic_maps_drawing_is_pyvis_records_of_the_same_styles(case: Any) -> None:
    network, positions = case
    drawn = topic_view(network, positions, url)
    assert drawn == old_topic_view(network, positions)
    assert json.loads(embedded(drawn)) == json.loads(htmlsafe_json_dumps(drawn, sort_keys=True, ensure_ascii=False))


@settings(max_examples=60, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | TEXT,
        lambda inner: st.lists(inner) | st.dictionaries(TEXT, inner),
    )
)
def test_the_embedded_text_holds_nothing_that_ends_a_script_and_reads_back_as_jinjas(value: Any) -> None:
    text = embedded({"nodes": value})
    assert not any(unsafe in text for unsafe, _ in HTML_UNSAFE)
    assert json.loads(text) == json.loads(htmlsafe_json_dumps({"nodes": value}, sort_keys=True)) == {"nodes": value}
