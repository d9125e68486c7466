"""The home page (figures and charts), search and the concept scheme (``/areas``)."""

import math
import re
from typing import Any

from flask import Blueprint, Response, abort, current_app, render_template, request, url_for

from bibgraph.graph.dataset import sitedata
from bibgraph.graph.dataset.derived import derived_key, file_name
from bibgraph.graph.dataset.sitedata import CONCEPT_FIGURES, HOME, order_piece_key
from bibgraph.graph.site.cite import LIST_FORMATS, citation_pages
from bibgraph.graph.site.conceptindex import ConceptFigures, paper_order
from bibgraph.graph.site.pagedata import abstracts, dataset_summary
from bibgraph.graph.site.profile import author_profile
from bibgraph.graph.site.search import snippet
from bibgraph.web.graphstore import get_store
from bibgraph.web.links import app_iris, concept_iri, iri_of, public_url, site_url
from bibgraph.web.maps.cache import networks
from bibgraph.web.server import base_is_served
from bibgraph.web.text import thousands

blueprint = Blueprint("pages", __name__)
RESULTS_PER_PAGE = 20
# For every template, imported macros included: links under the proxy's prefix, counts for people,
# and the log-scale charts' arithmetic (ticks 1, 10, 100 …).
blueprint.add_app_template_global(site_url, "site_url")
blueprint.add_app_template_filter(thousands, "thousands")
blueprint.add_app_template_filter(lambda n: 10**n, "pow10")
blueprint.add_app_template_global(math.log10, "log10")
blueprint.add_app_template_global(base_is_served, "base_is_served")  # /dataset says when its addresses are elsewhere


def page_number(pages: int | None = None) -> int:
    """The ``page`` argument, at least 1 and, when the number of pages is known, at most that."""
    try:
        number = max(1, int(request.args.get("page", "1")))
    except ValueError:
        number = 1
    return min(number, pages) if pages else number


def concept_figures() -> dict[str, ConceptFigures]:
    """Every area's and subarea's figures (:func:`~bibgraph.graph.dataset.sitedata.concept_figures`), computed once (a
    dataset keeps them)."""
    cache = networks()
    store = get_store().with_deadline(float(current_app.config["NETWORK_TIMEOUT"]))
    keep = cache.derived.save if cache.derived is not None and cache.derived.writable else None
    return cache.page(CONCEPT_FIGURES, lambda: sitedata.concept_figures(store, keep))


def concept_papers(iri: str, offset: int, count: int) -> list[str]:
    """The IRIs of ``count`` papers of a concept from ``offset`` on, in page order: read from the pieces a dataset
    keeps (not cached: a piece is small, and many would push the views' networks out of the cache), or else
    from the whole order, computed once per concept."""
    cache = networks()
    found: list[str] = []
    while count > 0:
        piece, start = divmod(offset, sitedata.ORDER_CHUNK)
        kept, part = (False, None)
        if cache.derived is not None:
            kept, part = cache.derived.load(order_piece_key(iri, piece))
        if kept and part is not None:
            taken = part[start : start + count]
        else:
            whole = cache.page(f"concept papers {iri}", lambda: paper_order(get_store(), iri))
            taken = whole[offset : offset + count]
        if not taken:
            break
        found += taken
        offset, count = offset + len(taken), count - len(taken)
    return found


def _home_figures() -> dict[str, Any]:
    """The home page's numbers (the store never changes while served, so they are computed once)."""
    return sitedata.home_figures(get_store(), networks().coauthor_degrees(), concept_figures())


def home_figures() -> dict[str, Any]:
    """The home page's figures, computed once (a dataset keeps them)."""
    return networks().page(HOME, _home_figures)


def summary() -> dict[str, int]:
    """What the dataset holds (the sitemaps' counts): the home page's kept summary, read once, when a dataset keeps
    it; else asked of the store (the whole home page would derive every author's co-author degree first)."""
    derived = networks().derived
    if derived is not None and (derived.directory / file_name(derived_key("page", None, HOME))).is_file():
        return dict(home_figures()["summary"])
    return dataset_summary(get_store())


@blueprint.route("/")
def home() -> str:
    return render_template("home.html", title="bibgraph", hide_header_search=True, **home_figures())


@blueprint.route("/search")
def search() -> str:
    query = request.args.get("q", "").strip()[:200]
    index = networks().search_index() if query else None
    counts = index.counts(query) if index else (0,)
    total = sum(counts)
    pages = max(1, -(-total // RESULTS_PER_PAGE))
    page = page_number(pages)
    first = (page - 1) * RESULTS_PER_PAGE
    shown = index.search(query, first, RESULTS_PER_PAGE, counts).hits if index else []
    texts = abstracts(get_store(), [hit.iri for hit in shown if hit.kind == "paper"])
    snippets = {iri: snippet(text, query) for iri, text in texts.items()}
    return render_template(
        "search.html",
        title=f"Search: {query}" if query else "Search",
        query=query,
        hits=shown,
        snippets=snippets,
        total=total,
        page=page,
        pages=pages,
        first=first + 1,
        last=first + len(shown),
        hide_header_search=True,
        page_url=lambda n: url_for("pages.search", q=query, page=n),
    )


def _listed_papers() -> tuple[str, list[str]]:
    """(file stem, paper IRIs in page order) of the list a download names: ``author=``, ``area=`` or ``q=``."""
    if author := request.args.get("author"):
        profile = author_profile(get_store(), iri_of(author.strip("/"), 400))
        if profile is None:
            abort(404, "no such author")
        return author.strip("/").rsplit("/", 1)[-1], [paper.iri for paper in profile.papers]
    if area := request.args.get("area"):
        iri = concept_iri(area)
        figures = concept_figures().get(iri)
        if figures is None:
            abort(404, "no such area")
        return (app_iris().path(iri) or "area"), concept_papers(iri, 0, figures.papers)
    if query := request.args.get("q", "").strip()[:200]:
        index = networks().search_index()
        counts = index.counts(query)
        hits = index.search(query, counts[0] + counts[1], counts[2], counts).hits
        return "search", [hit.iri for hit in hits if hit.kind == "paper"]
    abort(400, "name the papers: author=, area= or q=")


@blueprint.route("/papers.<fmt>")
def paper_list(fmt: str) -> Response:
    """An author's, an area's or a search's papers as BibTeX, RIS or CSV, built as the paper pages' cite box."""
    if fmt not in LIST_FORMATS:
        abort(404)
    media_type, suffix, write = LIST_FORMATS[fmt]
    stem, iris = _listed_papers()
    body = write(citation_pages(get_store(), iris), public_url)
    response = Response(body, content_type=f"{media_type}; charset=utf-8")
    safe = re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-") or "list"  # a request names it: nothing but these
    response.headers["Content-Disposition"] = f'attachment; filename="{safe}-papers.{suffix}"'
    return response
