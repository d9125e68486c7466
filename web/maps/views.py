"""Interactive network views (drawn by :mod:`bibgraph.graph.site.mapview`, vis-network served by the app) and
network downloads."""

import unicodedata
from typing import Any

import networkx as nx
from flask import Blueprint, Response, abort, current_app, jsonify, render_template, request, send_file, url_for
from markupsafe import Markup
from werkzeug.exceptions import HTTPException

from bibgraph.graph.dataset.wholeexports import export_file
from bibgraph.graph.ingest.names import normalise, person_key
from bibgraph.graph.networks import AREA, Filters, analytics
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES, network_syntax
from bibgraph.graph.networks.filters import bounded
from bibgraph.graph.networks.palette import OTHER_COLOUR, PALETTE
from bibgraph.graph.networks.spec import (
    COAUTHORS,
    EGO,
    TOPIC_MAP,
    TOPICS,
    NetworkSpec,
)
from bibgraph.graph.rdf.ntriples import is_iri
from bibgraph.graph.site.mapview import author_view, colour, embedded, topic_view, view_options
from bibgraph.graph.site.pagedata import item_labels
from bibgraph.web.downloads import checked_kept, network_body
from bibgraph.web.graphstore import get_store
from bibgraph.web.links import app_iris, base_iri, concept_iri, iri_of, local_url, local_urls, site_url
from bibgraph.web.maps.args import (
    WEIGHTING_ARG,
    capped,
    concept_path,
    filter_args,
    filters_from_request,
    shown_args,
    weight_of_links,
    whole_number,
)
from bibgraph.web.maps.bodies import write_body
from bibgraph.web.maps.cache import network_engine, networks

EGO_TOP = 25  # co-authors an ego map draws by default (the ones with most joint papers)

blueprint = Blueprint("graphs", __name__, url_prefix="/graph")
blueprint.add_app_template_filter(lambda view: Markup(embedded(view)), "view_json")  # a map's data in its page
COSTLY = ("graphs.coauthors", "graphs.ego", "graphs.path", "graphs.topics", "graphs.download")


@blueprint.before_request
def head_computes_nothing() -> Response | None:
    """HEAD of a map, path or download: its arguments checked, its headers, and nothing computed (a HEAD made the
    whole network and its body, as costly as a GET, for nothing sent). Whether the map holds what the arguments
    name (an author, an area) is only known by computing it: a GET says."""
    if request.method != "HEAD" or request.endpoint not in COSTLY:
        return None
    if request.endpoint == "graphs.download":
        kind, fmt = (request.view_args or {}).get("kind"), (request.view_args or {}).get("fmt")
        if kind not in (COAUTHORS, "topics") or fmt not in {s.name for s in NETWORK_SYNTAXES}:
            abort(404)
        filters_from_request()
        syntax = network_syntax(str(fmt))
        response = Response(content_type=f"{syntax.media_type}; charset=utf-8")
        response.headers["Content-Disposition"] = f'attachment; filename="bibgraph-{kind}.{syntax.suffix}"'
    else:
        if request.endpoint == "graphs.coauthors":
            filters_from_request()
        response = Response(content_type="text/html; charset=utf-8")
    del response.headers["Content-Length"]  # the body's length is not known without computing it
    response.automatically_set_content_length = False
    return response


def _render(title: str, spec: NetworkSpec, note: str | None = None, **context: Any) -> str:
    cache = networks()
    weighting = weight_of_links()
    network = cache.network(spec)
    centre = spec.ego[0] if spec.ego else None
    data = cache.view(
        spec,
        view_options(spec, base_iri(), weighting),
        lambda drawn, positions: author_view(drawn, positions, local_urls(), weighting, centre),
    )
    return render_template(
        "graph.html",
        title=title,
        data=data,
        note=note,
        nodes=network.number_of_nodes(),
        edges=network.number_of_edges(),
        args=shown_args(),
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


def _legend(network: nx.Graph) -> list[tuple[int, str, str, int]]:
    """(index, name, colour, members) of every community, largest first; the small ones share a grey."""
    names = analytics.community_names(network)
    sizes: dict[int, int] = {}
    for _, community in network.nodes(data="community"):
        sizes[community] = sizes.get(community, 0) + 1
    return [(c, names[c], colour(c), sizes[c]) for c in sorted(sizes)]


@blueprint.route("/coauthors")
def coauthors() -> str:
    wanted = filters_from_request()
    drawn, limit = capped(wanted)
    spec = NetworkSpec(COAUTHORS, drawn)
    network = networks().network(spec)
    total = network.graph.get("total_authors", network.number_of_nodes())
    note = None  # an empty map: the page says that no author matches
    if limit is not None and total > limit and wanted.community is None:
        note = (
            f"Showing the {limit:,} most prolific of {total:,} authors. Narrow the map with the filters "
            "(area, subarea, minimum papers) to see the others."
        )
    elif limit is not None and total > limit:
        note = (
            f"Communities are found among the {limit:,} most prolific of {total:,} authors; "
            f"this one has {network.number_of_nodes():,} of them."
        )
    links = network.graph.get("total_links", 0)
    if drawn.links is not None and links > (limit_links := drawn.links):
        kept = (
            f"The map keeps the {limit_links:,} strongest of the {links:,} links among these authors"
            " (most joint papers first)."
        )
        note = f"{note} {kept}" if note else kept
    stats = networks().summary(spec)
    return _render(
        "Co-author map",
        spec,
        note,
        choices=_area_choices(),
        communities=_legend(network),
        coloured=len(PALETTE),
        other_colour=OTHER_COLOUR,
        stats=stats,
        total=total,
        kind="coauthors",
        filters_set=sum(1 for name, value in filter_args().items() if name != WEIGHTING_ARG or value == "fractional"),
        downloads={
            s.name: url_for("graphs.download", kind="coauthors", fmt=s.name, **filter_args()) for s in NETWORK_SYNTAXES
        },
    )


@blueprint.route("/ego/<path:author>")
def ego(author: str) -> str:
    radius_steps = whole_number("radius", 1, 1, 2) or 1
    top = whole_number("top", EGO_TOP, 1, 500) or EGO_TOP
    centre = iri_of(author)
    spec = NetworkSpec(EGO, ego=(centre, radius_steps, top))
    try:
        network = networks().network(spec)
    except KeyError:
        abort(404)
    name = network.nodes[centre]["name"]
    coauthors = network.graph["coauthors"]
    shown = len(network.graph["rings"][1])
    # embedded in the profile, the map has no K to raise: the profile links the full map instead
    more = "" if request.args.get("embed") == "1" else "; raise K to see more"
    note = (
        f"Showing the {shown:,} of {name}'s {coauthors:,} co-authors with most joint papers"
        f"{f' and up to {2 * top:,} of theirs' if radius_steps == 2 else ''}{more}."
        if shown < coauthors
        else None
    )
    return _render(
        f"Co-authors of {name}" + (" and theirs" if radius_steps == 2 else ""),
        spec,
        note,
        kind="ego",
        radius=radius_steps,
        top=top,
        name=name,
        profile=site_url(centre),
        coauthor_total=coauthors,
    )


def _as_written(given: str, iri: str, names: dict[str, str]) -> str:
    """What the path form shows for an end given as ``given``: the author's name where it was given as an IRI
    or key (a profile's "Path to" sends its key), if that name leads back to the same author; else as given."""
    name = names.get(iri)
    if not name or name == given:
        return given
    try:
        back = _author_iri(name)
    except HTTPException:  # a name no form could send (control characters, "author/…" that is no key)
        return given
    return name if back == iri else given


def _author_iri(given: str) -> str:
    """An author's IRI from a name (as written, any case) or from an IRI or app path."""
    given = given.strip()
    if any(unicodedata.category(char) in ("Cc", "Cs") for char in given):
        abort(400, "an author's name or IRI holds no control characters")
    if given.startswith(("http://", "https://")):
        if not is_iri(given):  # it would end up between < and > in a query
            abort(400, f"not an IRI: {given[:200]!r}")
        return given
    if given.startswith(("author/", "/author/")):
        return iri_of(given, 400)
    return app_iris().person(person_key(given))


@blueprint.route("/path")
def path() -> str:
    source, target = request.args.get("from", "").strip(), request.args.get("to", "").strip()
    chain: list[dict[str, Any]] = []
    problem = None
    if source and target:
        ends = {given: _author_iri(given) for given in (source, target)}
        budget = float(current_app.config["QUERY_TIMEOUT"])  # the whole search, as long as one query may run
        # in the incidence every map is made from, once per pair of ends (its frontiers are held while it runs: a
        # turn like a map's); identical requests at once share one search, a repeated one is answered from the cache
        cache = networks()
        found = cache.collaboration_path(
            ends[source],
            ends[target],
            lambda: network_engine().collaboration_path(cache.incidence(), ends[source], ends[target], budget),
        )
        if found.missing:
            missing = [given for given, iri in ends.items() if iri in found.missing]
            problem = "No such author: " + " and ".join(f"“{given}”" for given in missing) + "."
        elif found.exhausted:
            problem = "These authors are not connected by any chain of co-authors."
        elif found.out_of_time:
            problem = (
                f"No chain of at most {found.steps} co-authors links these authors; the search stopped there,"
                f" after {budget:g} seconds."
            )
        elif not found.chain:
            problem = f"No chain of at most {found.steps} co-authors links these authors (the search stops there)."
        names = item_labels(get_store(), list(dict.fromkeys([*found.chain, *ends.values()])))
        for step, node in enumerate(found.chain):
            chain.append({"kind": "paper" if step % 2 else "author", "iri": node, "label": names.get(node, node)})
        source, target = (_as_written(given, ends[given], names) for given in (source, target))
    return render_template(
        "path.html",
        title="Collaboration path",
        source=source,
        target=target,
        chain=chain,
        distance=len(chain) // 2 if chain else None,
        problem=problem,
        local_url=local_url,
    )


@blueprint.route("/authors.json")
def author_names() -> Response:
    """Up to 20 author names starting with (then containing) ``q``: the autocomplete of the path form."""
    wanted = normalise(request.args.get("q", ""))
    if len(wanted) < 2:
        return jsonify([])
    return jsonify(networks().search_index().author_names(wanted, 20))


@blueprint.route("/topics")
def topics() -> str:
    cache = networks()
    expand = request.args.get("subareas", "")
    if expand and expand != "all":
        expand = concept_path(expand)
    spec = NetworkSpec(TOPIC_MAP, expand="all" if expand == "all" else (concept_iri(expand) if expand else None))
    network = cache.network(spec)
    data = cache.view(
        spec, view_options(spec, base_iri()), lambda drawn, positions: topic_view(drawn, positions, local_urls())
    )
    areas = sorted(
        ((local_url(n) or n).lstrip("/"), label)
        for n, label in network.nodes(data="label")
        if network.nodes[n]["kind"] == AREA
    )
    return render_template(
        "graph.html",
        title="Topic map",
        data=data,
        note=None,
        nodes=network.number_of_nodes(),
        edges=network.number_of_edges(),
        args=request.args,
        kind="topics",
        areas=areas,
        expand=expand,
    )


def _bounded(filters: Filters) -> Filters:
    """A download's filters with the numbers past the dataset's bounds put at one value (:func:`bounded`); the
    filters as given when they are the default (the body a dataset keeps, read without the incidence)."""
    if filters == Filters():
        return filters
    incidence = networks().incidence()  # what the body is computed from anyway
    ptr = incidence.author_ptr  # (no numpy import here: a server's start loads none)
    most = int((ptr[1:] - ptr[:-1]).max()) if len(ptr) > 1 else 0
    scoped = bool(filters.area or filters.subarea)
    return bounded(
        filters, len(incidence.authors), most, scope_empty=scoped and not incidence.concepts_in(filters).any()
    )


@blueprint.route("/<kind>.<fmt>")
def download(kind: str, fmt: str) -> Response:
    if fmt not in {s.name for s in NETWORK_SYNTAXES} or kind not in ("coauthors", "topics"):
        abort(404)
    syntax = network_syntax(fmt)
    spec = NetworkSpec(COAUTHORS, _bounded(filters_from_request())) if kind == COAUTHORS else NetworkSpec(TOPICS)
    weight = weight_of_links() if kind == COAUTHORS else "weight"

    kept = networks().derived  # a dataset keeps the exports with no filter (made at build time)
    if kept is not None and (path := export_file(kept.directory, spec, syntax.name, weight)).is_file():
        checked_kept(path)  # as built: checked before it is first sent, not at each start
    else:
        key = repr((str(current_app.config["BIBGRAPH_STORE"]), kind, syntax.name, spec, weight))
        path = networks().file(  # identical downloads at once: one makes the body, the others wait for it
            ("body", key),  # a file of its own (network_body), never a derived value: no derived_key, no data format
            lambda: network_body(key, syntax.suffix, lambda to: write_body(networks(), spec, syntax.name, weight, to)),
            networks().incidence,  # what the body's size is read from (and all a child computing it needs)
        )
    response = send_file(path, mimetype=f"{syntax.media_type}; charset=utf-8", conditional=True, etag=True, max_age=0)
    response.headers["Content-Disposition"] = f'attachment; filename="bibgraph-{kind}.{syntax.suffix}"'
    return response
