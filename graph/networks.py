"""Co-author and topic networks derived from the store through SPARQL (so they agree with SPARQL users).

Pure functions: each returns a new ``networkx`` graph. The co-author network is the projection
of the paper-author bipartite graph, weighted two ways, as VOSviewer offers:

- ``weight``: full counting, the number of joint papers;
- ``fractional``: each paper's weight 1 shared equally among its author pairs (1 / C(n, 2)).

Papers whose author list was cut (``等``) mark their edges ``lower_bound``: the real collaboration
is larger than what the list shows.
"""

import sys
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import networkx as nx

from .queries import integer, named_query
from .stores.store import GraphStore

AREA, SUBAREA = "area", "subarea"
# Links a co-author map draws at most (``Filters.links``): the most joint papers first, then by the two IRIs.
# The drawn authors are capped (the most prolific), but their links are not bounded by that: the authors
# of one 1,000-name paper are all linked, 499,500 links, and such a map took 86-100 s, 1.8 GB of the web
# process and an 83 MB page to draw, for each filter anyone asked.
MAX_MAP_LINKS = 20_000


@dataclass(frozen=True, slots=True)
class Authorship:
    paper: str
    author: str
    name: str
    listed: int
    truncated: bool
    concept: str | None
    concept_label: str | None
    area: str | None
    area_label: str | None


@dataclass(frozen=True)
class Filters:
    """What the co-author views filter on (all optional)."""

    area: str | None = None  # area IRI: papers under it, whatever the subarea
    subarea: str | None = None  # concept IRI
    min_papers: int = 1
    min_joint: int = 1
    top: int | None = None  # keep the N authors with most papers
    community: int | None = None  # keep one community (index into the Louvain partition)
    resolution: float = 1.0
    authors: frozenset[str] | None = None  # keep only these authors (ego networks, paths)
    links: int | None = None  # keep the N strongest links (maps: MAX_MAP_LINKS; exports: all)


def _shared(value: object) -> str | None:
    """One string object per distinct IRI or label: each recurs on many rows (kept for the app's lifetime)."""
    return None if value is None else _interned(value)


def _interned(value: object) -> str:
    return sys.intern(str(value))


def authorships(store: GraphStore) -> list[Authorship]:
    """One row per (paper, author, subject) from the store."""
    rows = store.iter_select(named_query("network_authorships").text)
    return [
        Authorship(
            paper=_interned(row["paper"]),
            author=_interned(row["author"]),
            name=_interned(row["name"]),
            listed=integer(row["listed"]),
            truncated=bool(row["truncated"]),
            concept=_shared(row["concept"]),
            concept_label=_shared(row["conceptLabel"]),
            area=_shared(row["area"]),
            area_label=_shared(row["areaLabel"]),
        )
        for row in rows
    ]


def bipartite_graph(rows: list[Authorship], filters: Filters = Filters()) -> nx.Graph:
    """Papers and authors (``bipartite`` 0 and 1), restricted to the filtered area or subarea."""
    graph = nx.Graph()
    for row in rows:
        if filters.subarea and row.concept != filters.subarea:
            continue
        if filters.area and row.area != filters.area:
            continue
        if not graph.has_node(row.paper):
            graph.add_node(row.paper, bipartite=0, truncated=row.truncated, listed=row.listed, areas=set())
        if row.area_label:
            graph.nodes[row.paper]["areas"].add(row.area_label)
        if not graph.has_node(row.author):
            graph.add_node(row.author, bipartite=1, name=row.name)
        graph.add_edge(row.paper, row.author)
    return graph


def coauthor_network(
    rows: list[Authorship], filters: Filters = Filters(), papers_and_authors: nx.Graph | None = None
) -> nx.Graph:
    """Authors linked by joint papers, with full and fractional weights; filtered as ``filters`` say.

    Author filters (minimum papers, top N) apply before the projection, so a capped view of a
    large network costs only what it shows. ``graph.graph["total_authors"]`` counts the authors that
    pass every filter but the top-N cap (what a note about the cap compares with).
    ``papers_and_authors``, when given, is ``bipartite_graph(rows, filters)`` already built (and kept).
    """
    if papers_and_authors is None:
        papers_and_authors = bipartite_graph(rows, filters)
    counts = {n: papers_and_authors.degree(n) for n, data in papers_and_authors.nodes(data=True) if data["bipartite"]}
    candidates = counts if filters.authors is None else filters.authors.intersection(counts)
    authors = sorted((a for a in candidates if counts[a] >= filters.min_papers), key=lambda a: (-counts[a], a))
    eligible = len(authors)
    if filters.top is not None:
        authors = authors[: filters.top]
    kept = set(authors)
    if not kept:  # nobody matches: an empty network, which the views show as such
        return nx.Graph(total_authors=eligible)
    their_papers = {paper for author in authors for paper in papers_and_authors[author]}
    # networkx projects onto every neighbour's neighbour: project the kept part only.
    network = nx.bipartite.weighted_projected_graph(papers_and_authors.subgraph(kept | their_papers), authors)
    network.graph["total_authors"] = eligible
    for author in authors:
        own = papers_and_authors[author]
        network.nodes[author].clear()
        network.nodes[author].update(
            name=papers_and_authors.nodes[author]["name"],
            papers=counts[author],
            areas=sorted(set().union(*(papers_and_authors.nodes[p]["areas"] for p in own))),
            truncated=any(papers_and_authors.nodes[p]["truncated"] for p in own),
        )
    for paper in their_papers:
        everyone = papers_and_authors[paper]
        pairs = len(everyone) * (len(everyone) - 1) // 2
        members = sorted(kept.intersection(everyone))
        for a, b in combinations(members, 2):
            edge = network.edges[a, b]
            edge["fractional"] = edge.get("fractional", 0.0) + 1.0 / pairs
            edge["lower_bound"] = edge.get("lower_bound", False) or papers_and_authors.nodes[paper]["truncated"]
    if filters.min_joint > 1:
        network.remove_edges_from([(a, b) for a, b, w in network.edges(data="weight") if w < filters.min_joint])
    return with_communities(network, filters)


def link_rank(weight: int, a: str, b: str) -> tuple[int, str, str]:
    """The order links are kept in when a map holds too many: most joint papers, then the IRIs."""
    return (-weight, a, b) if a < b else (-weight, b, a)


def keep_strongest_links(network: nx.Graph, limit: int | None, total: int | None = None) -> nx.Graph:
    """``network`` with its ``limit`` strongest links (:func:`link_rank`; None: all); ``total_links``
    says how many there were (``total``: counted by a caller that dropped some already)."""
    network.graph["total_links"] = network.number_of_edges() if total is None else total
    if limit is not None and network.number_of_edges() > limit:
        ranked = sorted(network.edges(data="weight"), key=lambda edge: link_rank(edge[2], edge[0], edge[1]))
        network.remove_edges_from(ranked[limit:])
    return network


def with_communities(network: nx.Graph, filters: Filters) -> nx.Graph:
    """``network`` with the links ``filters`` keep (:func:`keep_strongest_links`) and Louvain communities,
    cut down to the one community ``filters`` asks for."""
    keep_strongest_links(network, filters.links, network.graph.get("total_links"))
    assign_communities(network, filters.resolution)
    if filters.community is not None:
        network = network.subgraph(n for n, c in network.nodes(data="community") if c == filters.community).copy()
    return network


def assign_communities(network: nx.Graph, resolution: float = 1.0, seed: int = 42) -> list[set[str]]:
    """Louvain communities (largest first) stored as the ``community`` node attribute."""
    communities = nx.community.louvain_communities(network, weight="weight", resolution=resolution, seed=seed)
    communities = sorted(communities, key=lambda c: (-len(c), min(c)))
    for index, members in enumerate(communities):
        for node in members:
            network.nodes[node]["community"] = index
    return communities


def topic_network(rows: list[Authorship]) -> nx.Graph:
    """Areas and subareas with paper counts; ``broader`` edges area→subarea; ``related`` edges between
    subjects that share authors or papers (weight = shared authors + shared papers)."""
    network = nx.Graph()
    subject_papers: dict[str, set[str]] = defaultdict(set)
    area_papers: dict[str, set[str]] = defaultdict(set)
    subject_authors: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if not row.concept or not row.area:
            continue
        network.add_node(row.area, label=row.area_label, kind=AREA)
        if row.concept != row.area:
            network.add_node(row.concept, label=row.concept_label, kind=SUBAREA, area=row.area)
            network.add_edge(row.area, row.concept, kind="broader", weight=1)
        subject_papers[row.concept].add(row.paper)
        area_papers[row.area].add(row.paper)
        subject_authors[row.concept].add(row.author)
    for node, kind in network.nodes(data="kind"):
        network.nodes[node]["papers"] = len(area_papers[node] if kind == AREA else subject_papers[node])
    for a, b in combinations(sorted(subject_papers), 2):
        if network.has_edge(a, b):
            continue
        add_related(
            network, a, b, len(subject_authors[a] & subject_authors[b]), len(subject_papers[a] & subject_papers[b])
        )
    return ordered(network)


def add_related(network: nx.Graph, a: str, b: str, shared_authors: int, shared_papers: int) -> None:
    """A "related" edge between two topics that share authors or papers (none when they share nothing)."""
    if shared_authors or shared_papers:
        weight = shared_authors + shared_papers
        network.add_edge(
            a, b, kind="related", shared_authors=shared_authors, shared_papers=shared_papers, weight=weight
        )


def topic_map(rows: list[Authorship], expand: str | None = None, strongest: int = 3) -> nx.Graph:
    """The topic map as drawn: areas, with the subareas of ``expand`` (an area IRI, or ``"all"``).

    Each paper counts for the topic it is drawn under (its subarea when its area is expanded, else
    its area). ``related`` edges join topics sharing more authors than chance would (association
    strength above 1); only each topic's ``strongest`` ones are kept, so that the map shows structure
    instead of a complete graph.
    """
    network = nx.Graph()
    papers: dict[str, set[str]] = defaultdict(set)
    authors: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        if not row.concept or not row.area:
            continue
        network.add_node(row.area, label=row.area_label, kind=AREA, area=row.area)
        topic = row.area
        if row.concept != row.area and expand in ("all", row.area):
            topic = row.concept
            network.add_node(topic, label=row.concept_label, kind=SUBAREA, area=row.area, parent=row.area_label)
            network.add_edge(row.area, topic, kind="broader", weight=5)  # pulls a subarea to its area
        papers[topic].add(row.paper)
        papers[row.area].add(row.paper)
        authors[topic].add(row.author)
    for node in network:
        network.nodes[node]["papers"] = len(papers[node])
    drawn = [node for node in sorted(network) if authors[node]]
    everyone = len(set().union(*authors.values())) if authors else 0
    candidates: dict[str, list[tuple[float, str, int]]] = defaultdict(list)
    for a, b in combinations(drawn, 2):
        if network.has_edge(a, b):
            continue
        shared = len(authors[a] & authors[b])
        # Association strength (as VOSviewer normalises): shared authors over what chance would give.
        strength = shared * everyone / (len(authors[a]) * len(authors[b]))
        if shared and strength > 1.0:
            candidates[a].append((strength, b, shared))
            candidates[b].append((strength, a, shared))
    return add_strongest(network, candidates, strongest)


def add_strongest(network: nx.Graph, candidates: dict[str, list[tuple[float, str, int]]], strongest: int) -> nx.Graph:
    """Keep each topic's ``strongest`` related edges (association strength, shared authors) and order the map."""
    for a, found in candidates.items():
        for strength, b, shared in sorted(found, key=lambda item: (-item[0], item[1]))[:strongest]:
            strength = round(strength, 2)
            network.add_edge(a, b, kind="related", weight=strength, shared_authors=shared, strength=strength)
    return ordered(network)


def ordered(network: nx.Graph) -> nx.Graph:
    """``network`` with nodes and edges in sorted order: the same topics drawn the same way (colours go
    by node order) whatever order the store returned its rows in."""
    ordered = nx.Graph(**network.graph)
    ordered.add_nodes_from(sorted(network.nodes(data=True), key=lambda node: node[0]))
    edges = ((min(a, b), max(a, b), data) for a, b, data in network.edges(data=True))
    ordered.add_edges_from(sorted(edges, key=lambda edge: edge[:2]))
    return ordered
