"""Interactive network views (pyvis data, vis-network served by the app) and network downloads."""

from typing import Any

import networkx as nx
from flask import Blueprint, Response, abort, current_app, render_template, request, url_for

from bibgraph.graph import analytics
from bibgraph.graph.exports import EXPORTS, vosviewer
from bibgraph.graph.networks import AREA, Filters

from .links import iri_of, local_url
from .netcache import networks
from .pyvis_views import community_colour, view_data

blueprint = Blueprint("graphs", __name__, url_prefix="/graph")


def _int(name: str, default: int | None, low: int = 1, high: int = 1_000_000) -> int | None:
    value = request.args.get(name, "")
    if not value.strip():
        return default
    try:
        return max(low, min(high, int(value)))
    except ValueError:
        abort(400, f"{name} must be a whole number")


def _float(name: str, default: float) -> float:
    try:
        return max(0.01, min(10.0, float(request.args.get(name) or default)))
    except ValueError:
        abort(400, f"{name} must be a number")


def filters_from_request() -> Filters:
    area = request.args.get("area") or None
    subarea = request.args.get("subarea") or None
    return Filters(
        area=iri_of(area) if area else None,
        subarea=iri_of(subarea) if subarea else None,
        min_papers=_int("min_papers", 1) or 1,
        min_joint=_int("min_joint", 1) or 1,
        top=_int("top", None),
        community=_int("community", None, low=0),
        resolution=_float("resolution", 1.0),
    )


def _capped(filters: Filters) -> tuple[Filters, int | None]:
    """The filters actually drawn: at most MAX_VIEW_NODES authors, the most prolific ones."""
    limit = int(current_app.config["MAX_VIEW_NODES"])
    if filters.top is None or filters.top > limit:
        return Filters(**{**filters.__dict__, "top": limit}), limit
    return filters, None


def _author_style(node: str, data: dict[str, Any]) -> dict[str, Any]:
    areas = ", ".join(data.get("areas", [])) or "no area"
    note = " · list cut (等): co-authorship is a lower bound" if data.get("truncated") else ""
    return {
        "label": data["name"],
        "title": f"{data['name']}\n{data['papers']} paper(s) · {areas}{note}",
        "size": 6 + 4 * min(data["papers"], 12),
        "color": community_colour(data.get("community")),
        "url": local_url(node) or node,
        "group": data.get("community", 0),
    }


def _edge_style(weighting: str) -> Any:
    def style(a: str, b: str, data: dict[str, Any]) -> dict[str, Any]:
        value = data.get(weighting, data.get("weight", 1))
        joint = data.get("weight", 1)
        bound = " (at least: a list was cut)" if data.get("lower_bound") else ""
        return {"width": 1 + 2 * min(float(value), 5.0), "title": f"{joint} joint paper(s){bound}", "value": value}

    return style


def _render(title: str, network: nx.Graph, key: Any, note: str | None = None, **context: Any) -> str:
    cache = networks()
    weighting = "fractional" if request.args.get("weighting") == "fractional" else "weight"
    data = cache.view(
        (key, weighting),
        lambda: view_data(network, cache.positions(key, network), _author_style, _edge_style(weighting)),
    )
    return render_template(
        "graph.html",
        title=title,
        data=data,
        note=note,
        nodes=network.number_of_nodes(),
        edges=network.number_of_edges(),
        args=request.args,
        local_url=local_url,
        embedded=request.args.get("embed") == "1",
        **context,
    )


def _area_choices() -> list[tuple[str, str, str]]:
    topics = networks().topics()
    choices = []
    for node, data in sorted(topics.nodes(data=True), key=lambda item: (item[1].get("area", item[0]), item[0])):
        path = (local_url(node) or node).lstrip("/")
        choices.append((data["kind"], path, data["label"]))
    return choices


@blueprint.route("/coauthors")
def coauthors() -> str:
    wanted = filters_from_request()
    drawn, limit = _capped(wanted)
    network = networks().coauthors(drawn)
    total = network.graph.get("total_authors", network.number_of_nodes())
    note = None
    if limit is not None and total > limit:
        note = (
            f"Showing the {limit:,} most prolific of {total:,} authors. Narrow the map with the filters "
            "(area, subarea, minimum papers) to see the others."
        )
    communities = sorted({c for _, c in network.nodes(data="community")})
    stats = networks().view(("summary", drawn), lambda: analytics.summary(network))
    return _render(
        "Co-author map",
        network,
        ("coauthors", drawn),
        note,
        choices=_area_choices(),
        communities=communities,
        stats=stats,
        kind="coauthors",
        downloads={name: url_for("graphs.download", kind="coauthors", fmt=name, **request.args) for name in EXPORTS},
    )


@blueprint.route("/ego/<path:author>")
def ego(author: str) -> str:
    radius = _int("radius", 1, 1, 2) or 1
    cache = networks()
    center = iri_of(author)
    try:
        members = analytics.ego_authors(cache.bipartite(), center, radius)
    except KeyError:
        abort(404)
    network = cache.coauthors(Filters(authors=members))
    name = network.nodes[center]["name"]
    return _render(
        f"Co-authors of {name} (radius {radius})",
        network,
        ("ego", center, radius),
        kind="ego",
        center=author,
        radius=radius,
        name=name,
    )


@blueprint.route("/path")
def path() -> str:
    cache = networks()
    source, target = request.args.get("from", ""), request.args.get("to", "")
    found = (
        source and target and analytics.bipartite_collaboration_path(cache.bipartite(), iri_of(source), iri_of(target))
    )
    nodes = found or []
    network = analytics.path_graph(cache.coauthors(Filters(authors=frozenset(nodes))), nodes) if nodes else nx.Graph()
    note = None if nodes or not (source and target) else "These authors are not connected by any chain of co-authors."
    return _render(
        "Collaboration path", network, ("path", tuple(nodes)), note, kind="path", source=source, target=target
    )


def _topic_style(node: str, data: dict[str, Any]) -> dict[str, Any]:
    is_area = data["kind"] == AREA
    return {
        "label": data["label"],
        "title": f"{data['label']}\n{'area' if is_area else 'subarea'} · {data['papers']} paper(s)",
        "size": 8 + 3 * min(data["papers"], 20),
        "shape": "box" if is_area else "dot",
        "color": community_colour(hash(data.get("area", node)) % 16 if not is_area else 0),
        "url": local_url(node) or node,
    }


@blueprint.route("/topics")
def topics() -> str:
    network = networks().topics()

    def edge(a: str, b: str, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "broader":
            return {"width": 2, "dashes": False, "title": "area → subarea"}
        return {
            "width": 1 + min(data["weight"], 8),
            "dashes": True,
            "title": f"{data['shared_authors']} shared author(s), {data['shared_papers']} shared paper(s)",
        }

    cache = networks()
    data = cache.view("topics", lambda: view_data(network, cache.positions("topics", network), _topic_style, edge))
    return render_template(
        "graph.html",
        title="Topic map",
        data=data,
        note=None,
        nodes=network.number_of_nodes(),
        edges=network.number_of_edges(),
        args=request.args,
        kind="topics",
    )


@blueprint.route("/<kind>.<fmt>")
def download(kind: str, fmt: str) -> Response:
    if fmt not in EXPORTS or kind not in ("coauthors", "topics"):
        abort(404)
    network = networks().coauthors(filters_from_request()) if kind == "coauthors" else networks().topics()
    media_type, suffix, export = EXPORTS[fmt]
    body = (
        vosviewer(network, networks().positions((kind, "export"), network)) if fmt == "vosviewer" else export(network)
    )
    response = Response(body, content_type=f"{media_type}; charset=utf-8")
    response.headers["Content-Disposition"] = f'attachment; filename="bibgraph-{kind}.{suffix}"'
    return response
