"""Interactive network views (pyvis data, vis-network served by the app) and network downloads."""

from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, request, url_for

from bibgraph.graph import analytics
from bibgraph.graph.exports import EXPORTS, vosviewer
from bibgraph.graph.networks import AREA, Filters

from .links import iri_of, local_url
from .netcache import COAUTHORS, PATH, TOPICS, NetworkSpec, networks
from .pyvis_views import community_colour, view_data

blueprint = Blueprint("graphs", __name__, url_prefix="/graph")
NO_AUTHORS = (
    "No authors match these filters. Widen them (another area or subarea, fewer minimum papers or joint "
    "papers, another community) to see a map."
)


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
        area=iri_of(area, 400) if area else None,
        subarea=iri_of(subarea, 400) if subarea else None,
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


def _weighting() -> str:
    """The edge attribute that weighs a drawing or a VOSviewer map: ``weight`` (full) or ``fractional``."""
    return "fractional" if request.args.get("weighting") == "fractional" else "weight"


def _render(title: str, spec: NetworkSpec, note: str | None = None, **context: Any) -> str:
    cache = networks()
    weighting = _weighting()
    network = cache.network(spec)
    data = cache.view(
        spec,
        ("authors", weighting),
        lambda drawn, positions: view_data(drawn, positions, _author_style, _edge_style(weighting)),
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
    spec = NetworkSpec(COAUTHORS, drawn)
    network = networks().network(spec)
    total = network.graph.get("total_authors", network.number_of_nodes())
    note = None
    if network.number_of_nodes() == 0:
        note = NO_AUTHORS
    elif limit is not None and total > limit:
        note = (
            f"Showing the {limit:,} most prolific of {total:,} authors. Narrow the map with the filters "
            "(area, subarea, minimum papers) to see the others."
        )
    communities = sorted({c for _, c in network.nodes(data="community")})
    stats = networks().summary(spec)
    return _render(
        "Co-author map",
        spec,
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
    spec = NetworkSpec(COAUTHORS, Filters(authors=members))
    name = cache.network(spec).nodes[center]["name"]
    return _render(
        f"Co-authors of {name} (radius {radius})",
        spec,
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
        source
        and target
        and analytics.bipartite_collaboration_path(cache.bipartite(), iri_of(source, 400), iri_of(target, 400))
    )
    nodes = found or []
    note = None if nodes or not (source and target) else "These authors are not connected by any chain of co-authors."
    spec = NetworkSpec(PATH, path=tuple(nodes))
    return _render("Collaboration path", spec, note, kind="path", source=source, target=target)


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
    spec = NetworkSpec(TOPICS)
    network = networks().network(spec)

    def edge(a: str, b: str, data: dict[str, Any]) -> dict[str, Any]:
        if data["kind"] == "broader":
            return {"width": 2, "dashes": False, "title": "area → subarea"}
        return {
            "width": 1 + min(data["weight"], 8),
            "dashes": True,
            "title": f"{data['shared_authors']} shared author(s), {data['shared_papers']} shared paper(s)",
        }

    data = networks().view(spec, ("topics",), lambda drawn, positions: view_data(drawn, positions, _topic_style, edge))
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
    spec = NetworkSpec(COAUTHORS, filters_from_request()) if kind == COAUTHORS else NetworkSpec(TOPICS)
    network = networks().network(spec)
    media_type, suffix, export = EXPORTS[fmt]
    if fmt == "vosviewer":
        weight = _weighting() if kind == COAUTHORS else "weight"
        body = vosviewer(network, networks().positions(spec), weight=weight)
    else:
        body = export(network)
    response = Response(body, content_type=f"{media_type}; charset=utf-8")
    response.headers["Content-Disposition"] = f'attachment; filename="bibgraph-{kind}.{suffix}"'
    return response
