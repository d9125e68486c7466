"""The row path: co-author and topic networks from one row per (paper, author, subject), kept as a test oracle.

The engine (:mod:`bibgraph.graph.networks`) computes every network from the incidence; these functions compute the
same from the plain rows with networkx's projection, in the most direct way, so that differential tests can compare
the two. Pure functions: each returns a new ``networkx`` graph. The co-author network is the projection
of the paper-author bipartite graph, weighted two ways, as VOSviewer offers:

- ``weight``: full counting, the number of joint papers;
- ``fractional``: each paper's weight 1 shared equally among its author pairs (1 / C(n, 2)).

Papers whose author list was cut (``等``) mark their edges ``lower_bound``: the real collaboration
is larger than what the list shows.
"""

import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import combinations

import networkx as nx
from hypothesis import strategies as st

from bibgraph.graph.networks.communities import with_communities
from bibgraph.graph.networks.filters import AREA, SUBAREA, Filters, user_filters
from bibgraph.graph.networks.topic import add_related, add_strongest, ordered
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore
from tests.conftest import BASE

# Papers and their authors, with the data every network view filters on: one row per (paper, author, subject).
AUTHORSHIPS = (
    sparql_prologue()
    + """
SELECT ?paper ?author ?name ?listed ?truncated ?concept ?conceptLabel ?area ?areaLabel WHERE {
  ?paper bg:authorship ?authorship ; bg:listedAuthorCount ?listed ; bg:authorListTruncated ?truncated .
  ?authorship prov:agent ?author .
  ?author foaf:name ?name .
  OPTIONAL {
    ?paper dcterms:subject ?concept .
    ?concept skos:prefLabel ?conceptLabel .
    OPTIONAL { ?concept skos:broader ?parent }
    BIND (COALESCE(?parent, ?concept) AS ?area)
    ?area skos:prefLabel ?areaLabel .
  }
}
"""
)


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


def _shared(value: object) -> str | None:
    """One string object per distinct IRI or label: each recurs on many rows (kept for the app's lifetime)."""
    return None if value is None else _interned(value)


def _interned(value: object) -> str:
    return sys.intern(str(value))


def authorships(store: GraphStore) -> list[Authorship]:
    """One row per (paper, author, subject) from the store."""
    rows = store.iter_select(AUTHORSHIPS)
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


def collaboration(papers_and_authors: nx.Graph, authors: list[str]) -> dict[str, tuple[int, int]]:
    """Distinct co-authors and joint papers (summed over co-authors) of each author over the whole
    (filtered) network, not only the drawn part: the numbers an author's profile shows."""
    found = {}
    for author in authors:
        joint = joint_papers(papers_and_authors, author)
        found[author] = (len(joint), sum(joint.values()))
    return found


def joint_papers(papers_and_authors: nx.Graph, author: str) -> Counter[str]:
    """Joint papers of ``author`` with each co-author."""
    joint: Counter[str] = Counter()
    for paper in papers_and_authors[author]:
        joint.update(other for other in papers_and_authors[paper] if other != author)
    return joint


def ego_rings(papers_and_authors: nx.Graph, center: str, radius: int, top: int) -> tuple[list[list[str]], int]:
    """The ego, its ``top`` co-authors by joint papers and (radius 2) up to ``2 * top`` of theirs, by joint
    papers with the first ring; and how many co-authors the ego has in all."""
    if center not in papers_and_authors:
        raise KeyError(center)
    names = papers_and_authors.nodes

    def ranked(counts: Counter[str], limit: int) -> list[str]:
        return sorted(counts, key=lambda a: (-counts[a], str(names[a].get("name", a))))[:limit]

    direct = joint_papers(papers_and_authors, center)
    first = ranked(direct, top)
    rings = [[center], first]
    if radius >= 2:
        seen = {center, *first}
        outer: Counter[str] = Counter()
        for author in first:
            outer.update({a: n for a, n in joint_papers(papers_and_authors, author).items() if a not in seen})
        rings.append(ranked(outer, 2 * top))
    return rings, len(direct)


def bipartite_path(papers_and_authors: nx.Graph, source: str, target: str) -> list[str]:
    """The shortest chain author, paper, author, ... between two authors (empty when not connected)."""
    try:
        return list(nx.shortest_path(papers_and_authors, source, target))
    except (nx.NetworkXNoPath, nx.NodeNotFound):
        return []


# What the differential tests of downloads ask for: filter sets as a request (and the command) writes them.


def concept_slugs(rows: list[Authorship], base: str) -> tuple[list[str], list[str]]:
    """The areas and the subareas of ``rows``, as the paths below ``base`` a request names them by."""
    topics = topic_network(rows)
    areas = sorted(n.removeprefix(base) for n, kind in topics.nodes(data="kind") if kind != SUBAREA)
    subareas = sorted(n.removeprefix(base) for n, kind in topics.nodes(data="kind") if kind == SUBAREA)
    return areas, subareas


def filter_parameters(
    areas: list[str], subareas: list[str], top: int = 60, communities: int = 5
) -> st.SearchStrategy[dict[str, str]]:
    """Some of the filters a user sets and the weighting (each may be drawn, none must be), as text."""
    optional = {
        "area": st.sampled_from(areas),
        "subarea": st.sampled_from(subareas),
        "min_papers": st.integers(1, 3).map(str),
        "min_joint": st.integers(1, 3).map(str),
        "top": st.integers(1, top).map(str),
        "community": st.integers(0, communities).map(str),
        "resolution": st.sampled_from(["0.5", "1.0", "2.0"]),
        "weighting": st.sampled_from(["full", "fractional"]),
    }
    # every filter a user sets is drawn here: a filter added without the differential tests is a failure, not a gap
    assert set(optional) == {f.name for f in user_filters()} | {"weighting"}
    return st.fixed_dictionaries({}, optional=optional)


def filters_of(parameters: dict[str, str]) -> Filters:
    """What the parameters :func:`filter_parameters` draws mean, stated independently of the app's parsing."""

    def number(name: str) -> int | None:
        return int(parameters[name]) if name in parameters else None

    return Filters(
        area=BASE + parameters["area"] if "area" in parameters else None,
        subarea=BASE + parameters["subarea"] if "subarea" in parameters else None,
        min_papers=number("min_papers") or 1,
        min_joint=number("min_joint") or 1,
        top=number("top"),
        community=number("community"),
        resolution=float(parameters.get("resolution", "1.0")),
    )


def store_path(store: GraphStore, source: str, target: str) -> list[str]:
    """The collaboration path as the store finds it, one query per step (``path_coauthors.rq``: each co-author's
    least joint paper), by the search's rules: a bidirectional breadth-first search growing the smaller side, each
    new author reached from the least author of the frontier, the sides meeting at the author nearest the target,
    the least IRI among equals. Empty when the ends are not connected."""
    parents: list[dict[str, tuple[str, str] | None]] = [{source: None}, {target: None}]
    frontiers = [[source], [target]]
    if source == target:
        return [source]

    def chain(side: int, author: str) -> list[str]:
        found = [author]
        while (step := parents[side][author]) is not None:
            author = step[0]
            found += [step[1], author]
        return found

    while frontiers[0] and frontiers[1]:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        query = bind(named_query("path_coauthors").text, author=frontiers[side])
        rows = sorted((str(r["author"]), str(r["coauthor"]), str(r["via"])) for r in store.select(query))
        grown = []
        for author, coauthor, paper in rows:
            if coauthor not in parents[side]:
                parents[side][coauthor] = (author, paper)
                grown.append(coauthor)
        frontiers[side] = grown
        met = [author for author in grown if author in parents[1 - side]]
        if met:
            meeting = min(met, key=lambda author: (len(chain(1 - side, author)), author))
            return chain(0, meeting)[::-1] + chain(1, meeting)[1:]
    return []
