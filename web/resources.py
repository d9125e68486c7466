"""Dereferenceable IRIs: every IRI minted under the base answers HTML to browsers and RDF to RDF
clients (content negotiation, or a ``.ttl``/``.nt``/``.jsonld``/``.rdf`` suffix), with ``Vary`` and
``Link`` headers naming the alternates; unknown IRIs get 404."""

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from flask import Blueprint, Response, abort, redirect, render_template, request, url_for
from rdflib import VOID, Graph, Literal, URIRef

from bibgraph.graph.identity.pagedata import holders, identity_of
from bibgraph.graph.rdf.formats import RDF_SYNTAXES, RdfSyntax
from bibgraph.graph.rdf.vocab import PREFIXES
from bibgraph.graph.site import cite
from bibgraph.graph.site.pagedata import (
    PAGE_SIZE,
    concept_page,
    concept_tree,
    paper_page,
    resource_description,
)
from bibgraph.graph.site.profile import areas_from, author_profile, coauthors_from
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.web.errors import error_response
from bibgraph.web.graphstore import get_store
from bibgraph.web.links import app_iris, iri_of, local_url, public_root, public_url, site_url
from bibgraph.web.maps.cache import networks
from bibgraph.web.negotiation import NotAcceptable, choose_graph
from bibgraph.web.pages import concept_figures, concept_papers, page_number
from bibgraph.web.text import abstract_html

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence

blueprint = Blueprint("resources", __name__)
_BY_SUFFIX = {syntax.suffix: syntax for syntax in RDF_SYNTAXES}


def _alternates(path: str) -> str:
    """The ``Link`` header: the RDF alternates at their absolute public URLs."""
    root = public_root()
    return ", ".join(f'<{root}{path}.{s.suffix}>; rel="alternate"; type="{s.media_type}"' for s in RDF_SYNTAXES)


# VoID terms whose objects are where this site serves something (the endpoint, the dumps), not IRIs of the data.
_SERVICE_LINKS = (VOID.sparqlEndpoint, VOID.dataDump)


def public_services(graph: Graph) -> Graph:
    """The VoID description with its endpoint and dump URLs at the public root (as the proxy says);
    the dataset's own IRI and the IRIs of the data stay the base IRI's."""
    for link in _SERVICE_LINKS:
        for subject, target in list(graph.subject_objects(link)):
            public = public_url(str(target))
            if public != str(target):
                graph.remove((subject, link, target))
                graph.add((subject, link, URIRef(public)))
    return graph


def describe_query(iri: str) -> str:
    """The SPARQL that gives this resource's RDF (linked from every page)."""
    return bind(named_query("resource_description").text, resource=iri)


def serve(path: str, suffix: str | None, page: Callable[[str], str | None]) -> Response | str:
    """Answer for the resource at ``path``: HTML from ``page`` (``None`` = unknown), or its RDF."""
    iri = iri_of(path)
    syntax: RdfSyntax | None
    if suffix is not None:
        if suffix not in _BY_SUFFIX:
            abort(404)
        syntax = _BY_SUFFIX[suffix]
    else:
        try:
            syntax = choose_graph(request, default_html=True)
        except NotAcceptable as error:
            return error_response(str(error), 406, page=False)
    if syntax is None:
        html = page(iri)
        if html is None:
            abort(404)
        response = Response(html, content_type="text/html; charset=utf-8")
    else:
        graph = public_services(resource_description(get_store(), iri))
        if len(graph) == 0:
            abort(404)
        # JSON-LD compacted with the graph's prefixes (the context published at /context.jsonld)
        compact: dict[str, Any] = {"context": dict(PREFIXES), "auto_compact": True} if syntax.name == "jsonld" else {}
        body = graph.serialize(format=syntax.rdflib_format, encoding="utf-8", **compact)
        response = Response(body, content_type=f"{syntax.media_type}; charset=utf-8")
    response.headers["Link"] = _alternates(path)
    return response


def _context(iri: str) -> dict:
    return {
        "alternates": [(s.label, f"{site_url(iri) or ''}.{s.suffix}") for s in RDF_SYNTAXES],
        "canonical": public_url(iri),
        "sparql_link": url_for("sparql.endpoint") + "#" + urlencode({"query": describe_query(iri)}),
        "iri": iri,
        "local_url": local_url,
    }


def _paper(iri: str) -> str | None:
    cache = networks()  # the papers by co-authors from the kept incidence: no join over the authors' collaboration
    index = cache.checked_search_index()
    titles = index.titles if index is not None else None
    paper = paper_page(get_store(), iri, _subject_papers, cache.kept_incidence(), titles)
    if paper is None:
        return None
    return render_template(
        "paper.html",
        title=paper.label,
        paper=paper,
        abstract=abstract_html(paper.abstract),
        bibtex=cite.bibtex(paper, public_url(iri)),
        plain_reference=cite.plain_reference(paper, public_url(iri)),
        json_ld=cite.json_ld(paper, public_url(iri)),
        meta_tags=cite.meta_tags(paper, public_url(iri)),
        **_context(iri),
    )


def _subject_papers(concept: str, count: int) -> list[str] | None:
    """The first papers of a concept with no subareas (so its papers are exactly those with it as subject)."""
    figures = concept_figures().get(concept)
    if figures is None or figures.subareas:
        return None
    return concept_papers(concept, 0, min(count, figures.papers))


def _author(iri: str) -> str | None:
    cache = networks()  # a dataset's kept incidence and search index answer what an engine would read from cold pages
    index = cache.checked_search_index()
    titles = index.titles if index is not None else None
    incidence = cache.kept_incidence()
    profile = author_profile(get_store(), iri, incidence, titles, roles=cache.kept_roles())
    identity = identity_of(get_store(), iri)
    top = partial(_top_coauthors, incidence) if incidence is not None else None
    areas = partial(areas_from, incidence) if incidence is not None else None
    if profile is None:
        shared = holders(get_store(), iri, top, areas)  # a name several persons share: its disambiguation page
        if not shared:
            return None
        return render_template("disambiguation.html", title=shared[0].name, holders=shared, **_context(iri))
    minted = app_iris().parse(iri)
    key = minted.keys[0] if minted is not None and minted.keys else iri
    page = page_number(profile.pages)  # a page past the end shows the last, as an area's does
    first_shown, last_shown = profile.page_span(page)
    coauthors_query = bind(named_query("author_coauthors").text, author=iri)
    return render_template(
        "author.html",
        title=profile.name,
        profile=profile,
        key=key,
        page=page,
        groups=profile.page_groups(page),
        first_shown=first_shown,
        last_shown=last_shown,
        page_url=lambda n: f"?page={n}",
        identity=identity,
        sharing=holders(get_store(), identity.shared, top, areas) if identity.shared else [],
        coauthors_query=url_for("sparql.endpoint") + "#" + urlencode({"query": coauthors_query}),
        **{**_context(iri), "canonical": public_url(iri) + (f"?page={page}" if page > 1 else "")},
    )


def _top_coauthors(incidence: "Incidence", person: str, count: int) -> list[str] | None:
    """The names of a person's ``count`` first co-authors in the kept incidence (None: not in it)."""
    found = coauthors_from(incidence, person, count)
    return [coauthor.name for coauthor in found[0]] if found is not None else None


def _concept(iri: str) -> str | None:
    figures = concept_figures()
    if iri not in figures:
        return None
    pages = max(1, -(-figures[iri].papers // PAGE_SIZE))  # a page past the end shows the last, as search does
    concept = concept_page(get_store(), figures, iri, page_number(pages), partial(concept_papers, iri))
    if concept is None:
        return None
    topics = networks().topics()
    neighbours = []
    if iri in topics:
        neighbours = sorted(
            (
                (n, topics.nodes[n]["label"], _parent_label(topics, n), data["weight"])
                for n, data in topics[iri].items()
                if data["kind"] == "related"
            ),
            key=lambda item: -item[3],
        )
    return render_template(
        "concept.html",
        title=concept.label,
        concept=concept,
        neighbours=neighbours[:15],
        page_url=lambda n: f"?page={n}",
        **{**_context(iri), "canonical": public_url(iri) + (f"?page={concept.page}" if concept.page > 1 else "")},
    )


def _parent_label(topics: Any, node: str) -> str | None:
    """The label of a topic-map node's area, for a subarea (``broader`` edges run area → subarea)."""
    for other, data in topics[node].items():
        if data.get("kind") == "broader" and str(node).startswith(str(other)):
            return str(topics.nodes[other]["label"])
    return None


def _scheme(iri: str) -> str | None:
    """``/areas``: the concept scheme as a tree of areas and subareas with their counts."""
    tree = concept_tree(concept_figures())
    return render_template(
        "areas.html",
        title="Areas",
        tree=tree,
        subarea_count=sum(len(area.subareas) for area in tree),
        **_context(iri),
    )


def _dataset(iri: str) -> str | None:
    """``/dataset``: the VoID description read as a page: figures, classes and properties with counts, dumps."""
    graph = public_services(resource_description(get_store(), iri))
    if len(graph) == 0:
        return None
    subject = URIRef(iri)
    triples = sorted((str(p), str(o)) for p, o in graph.predicate_objects(subject=subject))
    figures = [(_short(p), o) for p, o in triples if isinstance(graph.value(subject, URIRef(p)), Literal)]

    def partitions(link: URIRef, kind: URIRef, count: URIRef) -> list[tuple[str, int]]:
        rows = [
            (_short(str(graph.value(part, kind))), integer(graph.value(part, count)))
            for part in graph.objects(subject, link)
        ]
        return sorted(rows, key=lambda row: (-row[1], row[0]))

    return render_template(
        "dataset.html",
        title="Dataset description (VoID)",
        figures=figures,
        classes=partitions(VOID.classPartition, VOID["class"], VOID.entities),
        properties=partitions(VOID.propertyPartition, VOID.property, VOID.triples),
        dumps=sorted(str(o) for o in graph.objects(subject, VOID.dataDump)),
        endpoint=graph.value(subject, VOID.sparqlEndpoint),
        **_context(iri),
    )


def _short(value: str) -> str:
    """An IRI in the graph's prefixes (``void:triples``), other values as they are."""
    for prefix, namespace in PREFIXES.items():
        if value.startswith(namespace) and len(value) > len(namespace):
            return f"{prefix}:{value[len(namespace) :]}"
    return value


@blueprint.route("/paper/<paper_id>", defaults={"suffix": None})
@blueprint.route("/paper/<paper_id>.<suffix>")
def paper(paper_id: str, suffix: str | None) -> Response | str:
    return serve(f"paper/{paper_id}", suffix, _paper)


@blueprint.route("/author/<key>", defaults={"suffix": None})
@blueprint.route("/author/<key>.<suffix>")
def author(key: str, suffix: str | None) -> Response | str:
    survivor = identity_of(get_store(), iri_of(f"author/{key}")).survivor
    if survivor is not None and (target := site_url(survivor)) is not None:  # a form joined into another person
        return redirect(target + (f".{suffix}" if suffix else ""), 301)  # type: ignore[return-value]
    return serve(f"author/{key}", suffix, _author)


@blueprint.route("/area/<area>", defaults={"suffix": None})
@blueprint.route("/area/<area>.<suffix>")
def area(area: str, suffix: str | None) -> Response | str:
    return serve(f"area/{area}", suffix, _concept)


@blueprint.route("/area/<area>/<subarea>", defaults={"suffix": None})
@blueprint.route("/area/<area>/<subarea>.<suffix>")
def subarea(area: str, subarea: str, suffix: str | None) -> Response | str:
    return serve(f"area/{area}/{subarea}", suffix, _concept)


@blueprint.route("/areas", defaults={"suffix": None})
@blueprint.route("/areas.<suffix>")
def scheme(suffix: str | None) -> Response | str:
    return serve("areas", suffix, _scheme)


@blueprint.route("/dataset", defaults={"suffix": None})
@blueprint.route("/dataset.<suffix>")
def dataset(suffix: str | None) -> Response | str:
    return serve("dataset", suffix, _dataset)
