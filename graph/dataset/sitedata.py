"""What a dataset keeps for the site, derived by the domain: the one place its keys and values are made.

A dataset build (``bibgraph build --dataset``, ``bibgraph add``) derives here, with no web stack loaded, the data
whose derivation is costly: the paper-author incidence, the default co-author map of the whole graph and of each
area and subarea (network, layout, summary), the topic network, the topic maps (none, every and each area's
subareas drawn), every concept's figures and paper order (in pieces), the home page's figures, the search index and the
whole co-author and topic networks' exports in every format (plain files, sent as they are).
The web (``web/maps/cache.py``, ``web/pages.py``) reads each under the same key, or derives it with the same
functions when a dataset does not keep it. The default maps' drawings (:mod:`bibgraph.graph.site.mapview`) are
kept too, under the dataset's base IRI (their links are made under it): the topic map with every subarea took
0.1 s to draw at its first request at 10,000 papers; other drawings are made from the kept network and layout at
first request.
"""

import gc
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name, keeper
from bibgraph.graph.dataset.directory import STORE
from bibgraph.graph.dataset.searchspool import spooled
from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, derive_kept
from bibgraph.graph.dataset.wholeexports import derive as derive_exports
from bibgraph.graph.networks import AREA, Filters
from bibgraph.graph.networks.exports import LAID_OUT_MAX_NODES
from bibgraph.graph.networks.filters import drawn
from bibgraph.graph.networks.spec import COAUTHORS, TOPIC_MAP, TOPICS, NetworkSpec
from bibgraph.graph.serving.childprocess import in_child
from bibgraph.graph.site.conceptindex import PAPER_ORDER, ConceptFigures, concept_index
from bibgraph.graph.site.homeupdate import home_counts
from bibgraph.graph.site.pagedata import charts, concept_tree, dataset_summary, histogram_bins
from bibgraph.graph.site.roles import Roles
from bibgraph.graph.site.search import FILE_NAME
from bibgraph.graph.stores.store import GraphStore, OxigraphGraphStore

if TYPE_CHECKING:  # numpy and scipy: loaded by a build, never by this module's importers
    from bibgraph.graph.networks.incidence import Incidence
    from bibgraph.graph.site.searchbuild import Document

RolesMaker = Callable[[GraphStore, Any], Roles | None]  # a store and its incidence -> the roles kept beside it

ORDER_CHUNK = 1000  # papers per kept piece of a concept's paper order (a page reads one piece, or two)
CONCEPT_FIGURES = f"concept figures, papers by {PAPER_ORDER}"  # the page value of every concept's figures
HOME = "home"  # the page value of the home page's figures


def order_piece_key(iri: str, piece: int) -> tuple[Any, ...]:
    """The derived-data key of piece ``piece`` of a concept's paper order."""
    return derived_key("page", None, f"concept papers by {PAPER_ORDER} {piece} {iri}")


def concept_figures(
    store: GraphStore,
    keep: Callable[[tuple[Any, ...], list[str]], None] | None = None,
    index: Iterable[tuple[ConceptFigures, list[str]]] | None = None,
) -> dict[str, ConceptFigures]:
    """Every area's and subarea's figures; ``keep`` (a dataset being built) is given each piece of every concept's
    paper order (``ORDER_CHUNK`` papers), so that no page sorts an area. ``index``: the figures and orders, when
    not asked of the store concept by concept (a build's, counted from its incidence: :mod:`~..site.conceptbuild`)."""
    figures = {}
    for concept, order in concept_index(store) if index is None else index:
        figures[concept.iri] = concept
        if keep is not None:
            for start in range(0, max(1, len(order)), ORDER_CHUNK):
                keep(order_piece_key(concept.iri, start // ORDER_CHUNK), order[start : start + ORDER_CHUNK])
    return figures


def home_figures(store: GraphStore, degrees: Counter[int], figures: dict[str, ConceptFigures]) -> dict[str, Any]:
    """The home page's numbers: the summary, the area tree, the authors-per-paper and co-author degree charts (and
    their raw counts, which an add updates: :mod:`~bibgraph.graph.site.homeupdate`)."""
    summary = dataset_summary(store)
    found = charts(store, summary["authors"], degrees)
    return {
        "summary": summary,
        "tree": concept_tree(figures),
        "authors_per_paper": histogram_bins(found.authors_per_paper),
        "degrees": histogram_bins(found.degree_histogram),
        "counts": home_counts(found.authors_per_paper, found.degree_histogram),  # what an add updates
    }


def default_maps(topics: Any, max_view_nodes: int) -> list[NetworkSpec]:
    """The maps a site shows by default: the co-author map of the whole graph and of each area and subarea (as
    drawn: the most prolific ``max_view_nodes`` authors), the topic map with no, every and each area's subareas."""
    coauthors = [Filters(), *(Filters(**{kind: node}) for node, kind in topics.nodes(data="kind"))]
    areas = [node for node, kind in topics.nodes(data="kind") if kind == AREA]
    return [
        *(NetworkSpec(COAUTHORS, drawn(filters, max_view_nodes)[0]) for filters in coauthors),
        *(NetworkSpec(TOPIC_MAP, expand=expand) for expand in (None, "all", *areas)),
    ]


def derive(
    version: Path,
    max_view_nodes: int,
    exports: tuple[NetworkSpec, ...] | None = None,
    maps: Callable[[NetworkSpec], bool] | None = None,
    base: str | None = None,
    roles: "RolesMaker | None" = None,
    incidence: "Incidence | None" = None,
) -> None:
    """Derive into ``version``'s ``derived/`` files what the site serves of it, keeping what is kept already (an
    add's extended incidence and updated concept figures); ``max_view_nodes``: the authors a map draws; ``exports``:
    the whole networks whose exports are kept (:data:`DEFAULT_EXPORTS` when None; the others are made by the first
    download that asks, :mod:`.wholeexports`); ``maps``: which default maps are derived here, unless kept (every one
    when None); the others are as the caller left them, kept or derived by the first request that shows one
    (``web/maps/cache.py``, with the same functions); ``base``: the dataset's base IRI, under which the default
    maps' drawings are kept (none when None); ``roles``: how the authorships' positions (:mod:`~..site.roles`) are
    made, given the store and its incidence (None from it: none kept; none asked: an add keeps them itself, from the
    previous version's, :mod:`~..site.rolesupdate`); ``incidence``: the one kept already (an add's, extended in
    memory: not read back, 203 MB at a million papers). The search index's texts are those the build's load spooled
    (:mod:`.searchspool`, removed here whatever happens), else the store's."""
    store = OxigraphGraphStore.disk(version / STORE, read_only=True)
    try:
        with spooled(version) as texts:
            files = DerivedFiles.unpublished(version)
            _derive(store, files, max_view_nodes, exports, maps, base, roles, incidence, texts)
    finally:
        del store  # read-only: nothing to flush
        gc.collect()  # RocksDB's files released before a server opens the store


def _derive(
    store: GraphStore,
    files: DerivedFiles,
    max_view_nodes: int,
    exports: tuple[NetworkSpec, ...] | None = None,
    maps: Callable[[NetworkSpec], bool] | None = None,
    base: str | None = None,
    roles: "RolesMaker | None" = None,
    incidence: "Incidence | None" = None,
    texts: "Iterable[Document] | None" = None,
) -> None:
    from bibgraph.graph.networks import (
        engine,  # numpy, scipy, igraph: loaded by a build, never by this module's importers
    )
    from bibgraph.graph.networks.incidence import incidence_of
    from bibgraph.graph.site.conceptbuild import concept_index_of
    from bibgraph.graph.site.searchbuild import build_search_index

    kept = keeper(files)
    if incidence is None:
        incidence = kept(derived_key("incidence"), lambda: incidence_of(store))
    whole = NetworkSpec(TOPICS)
    topics = kept(derived_key("network", whole), lambda: engine.network(incidence, whole))
    for spec in default_maps(topics, max_view_nodes):
        if maps is None or maps(spec):
            _derive_map(spec, incidence, kept, base)
    figures = kept(
        derived_key("page", None, CONCEPT_FIGURES),
        lambda: concept_figures(store, files.save, concept_index_of(store, incidence)),
    )
    kept(derived_key("page", None, HOME), lambda: home_figures(store, engine.coauthor_degrees(incidence), figures))
    if not (files.directory / FILE_NAME).exists():
        build_search_index(store, files.directory / FILE_NAME, incidence, texts)
    specs = DEFAULT_EXPORTS if exports is None else exports
    if files.writable and DEFAULT_EXPORTS[0] in specs and len(incidence.authors) > LAID_OUT_MAX_NODES:
        in_child(derive_kept, files.directory, specs, files.sync)  # the links and Leiden beside the incidence alone
    else:
        derive_exports(files.directory, incidence, specs, files.sync)
    if roles is not None and not (files.directory / file_name(derived_key("roles"))).exists():
        found = roles(store, incidence)  # the profiles' positions (None: the arrays cannot say what the store holds)
        if found is not None:
            files.save(derived_key("roles"), found)


def _derive_map(
    spec: NetworkSpec,
    incidence: Any,
    kept: Callable[[tuple[Any, ...], Callable[[], Any]], Any],
    base: str | None = None,
) -> None:
    """The network of ``spec``, its layout, (a co-author map) its summary and (given the ``base`` IRI) its drawing
    as a server under that base draws it, each kept."""
    from bibgraph.graph.networks import engine
    from bibgraph.graph.site.mapview import default_drawing, view_options  # networkx: a build's, not importers'

    network = kept(derived_key("network", spec), lambda: engine.network(incidence, spec))
    positions = kept(derived_key("layout", spec), lambda: engine.positions(spec, network))
    if spec.kind == COAUTHORS:
        kept(derived_key("summary", spec), lambda: engine.summary(incidence, spec, network))
    if base is not None:
        kept(
            derived_key("view", spec, *view_options(spec, base)),
            lambda: default_drawing(spec, network, positions, base),
        )
