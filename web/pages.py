"""The home page (figures and charts) and search."""

from flask import Blueprint, render_template, request

from bibgraph.graph.pages import charts, dataset_summary

from .graphstore import get_store
from .links import local_url
from .netcache import networks

blueprint = Blueprint("pages", __name__)
RESULTS_PER_PAGE = 20


@blueprint.route("/")
def home() -> str:
    store = get_store()
    summary = dataset_summary(store)
    figures = charts(store, summary["authors"])
    areas = [
        (f"{area} · {label}" if area else label, papers, local_url(iri))
        for iri, label, area, papers in figures.per_concept
    ]
    return render_template("home.html", title="bibgraph", summary=summary, charts=figures, areas=areas)


@blueprint.route("/search")
def search() -> str:
    query = request.args.get("q", "").strip()[:200]
    try:
        page = max(1, int(request.args.get("page", "1")))
    except ValueError:
        page = 1
    hits = networks().search_index().search(query) if query else []
    first = (page - 1) * RESULTS_PER_PAGE
    shown = hits[first : first + RESULTS_PER_PAGE]
    return render_template(
        "search.html",
        title="Search",
        query=query,
        hits=shown,
        total=len(hits),
        page=page,
        first=first + 1,
        last=first + len(shown),
        local_url=local_url,
    )
