"""The networks of :mod:`.networks` computed by a remote SPARQL engine (push-down).

The engine does the aggregation (papers per author, co-author pairs with their weights, joint
papers), so only the result crosses the network instead of every authorship row. The embedded store
keeps the row path of :mod:`.networks`: there the rows are already in this process, and one pass over
them is faster than several queries (``bench/remote.py`` measures both). Each ``*_from`` function
gives the same network as its row-path twin (``tests/test_remote.py`` checks it on both stores).
"""

from collections import Counter, defaultdict
from collections.abc import Iterable

import networkx as nx

from .networks import (
    AREA,
    SUBAREA,
    Filters,
    add_related,
    add_strongest,
    authorships,
    coauthor_network,
    ordered,
    topic_map,
    topic_network,
    with_communities,
)
from .ntriples import is_iri
from .queries import integer, named_query
from .stores.store import GraphStore

VALUES_LIMIT = 2000  # above this many authors, pairs are filtered here rather than in a VALUES clause


def pushes_down(store: GraphStore) -> bool:
    """Whether networks of ``store`` are aggregated by the engine (a remote SPARQL store)."""
    return store.kind == "sparql"


def _iris(iris: Iterable[str]) -> str:
    return " ".join(f"<{_checked(iri)}>" for iri in sorted(iris))


def _checked(iri: str) -> str:
    if not is_iri(iri):
        raise ValueError(f"not an IRI: {iri!r}")
    return iri


def _scope(filters: Filters) -> str:
    """The graph pattern that keeps only the papers under the area or subarea of ``filters``
    (as :func:`bipartite_graph` does: subject and area must have labels)."""
    if not (filters.area or filters.subarea):
        return ""
    chosen = []
    if filters.subarea:
        chosen.append(f"FILTER (?scopeConcept = <{_checked(filters.subarea)}>)")
    if filters.area:
        chosen.append(f"FILTER (?scopeArea = <{_checked(filters.area)}>)")
    return (
        "?paper dcterms:subject ?scopeConcept . ?scopeConcept skos:prefLabel ?scopeConceptLabel ."
        " OPTIONAL { ?scopeConcept skos:broader ?scopeParent }"
        " BIND (COALESCE(?scopeParent, ?scopeConcept) AS ?scopeArea)"
        " ?scopeArea skos:prefLabel ?scopeAreaLabel . " + " ".join(chosen)
    )


def _query(name: str, filters: Filters = Filters(), authors: str = "", pairs: str = "") -> str:
    """Named query ``name`` with its ``# scope``, ``# authors`` and ``# pairs`` lines filled in."""
    return (
        named_query(name)
        .text.replace("# scope", _scope(filters))
        .replace("# authors", authors and f"VALUES ?author {{ {authors} }}")
        .replace("# pairs", pairs)
    )


def coauthor_network_from(store: GraphStore, filters: Filters = Filters(), push_down: bool | None = None) -> nx.Graph:
    """:func:`coauthor_network` of ``store``'s authorships, aggregated by the engine if ``push_down``
    (by default: when the store is remote), else from every authorship row."""
    if not (pushes_down(store) if push_down is None else push_down):
        return coauthor_network(authorships(store), filters)
    counts, everyone_counted = _paper_counts(store, filters)
    candidates = counts if filters.authors is None else filters.authors.intersection(counts)
    authors = sorted((a for a in candidates if counts[a] >= filters.min_papers), key=lambda a: (-counts[a], a))
    eligible = len(authors) if everyone_counted is None else everyone_counted
    if filters.top is not None:
        authors = authors[: filters.top]
    if not authors:
        return nx.Graph(total_authors=eligible)
    kept = set(authors)
    network = nx.Graph(total_authors=eligible)
    everyone = filters.authors is None and everyone_counted is None and len(kept) == len(counts)
    _add_authors(store, network, authors, counts, filters, everyone=everyone)
    restrict = "" if everyone or len(kept) > VALUES_LIMIT else _iris(kept)
    # Only one end is bound (two VALUES blocks would make a product of kept x kept); the other end is checked below.
    pairs = restrict and f"VALUES ?a {{ {restrict} }}"
    # Rows per pair and author-list size: the engine counts, and the fractional weights (1 / pairs of
    # each paper) are summed here from integers, exact whatever the engine's number formatting.
    edges: dict[tuple[str, str], list] = {}
    for row in store.iter_select(_query("coauthor_pairs", filters, pairs=pairs)):
        a, b = str(row["a"]), str(row["b"])
        if a in kept and b in kept:
            size, papers = integer(row["n"]), integer(row["papers"])
            edge = edges.setdefault((a, b), [0, 0.0, False])
            edge[0] += papers
            edge[1] += papers * 2.0 / (size * (size - 1))
            edge[2] = edge[2] or bool(row["lowerBound"])
    for (a, b), (weight, fractional, lower_bound) in sorted(edges.items()):
        if weight >= filters.min_joint:
            network.add_edge(a, b, weight=weight, fractional=fractional, lower_bound=lower_bound)
    return with_communities(network, filters)


def _paper_counts(store: GraphStore, filters: Filters) -> tuple[dict[str, int], int | None]:
    """Papers per author for the authors ``filters`` may draw, and (for a top-N view) how many pass ``min_papers``.

    A top-N view of every author reads the cut-off from the engine's histogram of papers per author
    (a few dozen rows), then only the authors at or above it: at 100k papers that is about N rows
    rather than one per author (184,726). Ties at the cut-off all come, so the order is the row
    path's (most papers, then IRI). Otherwise (``None``): every counted author is returned.
    """
    ego = filters.authors if filters.authors is not None and len(filters.authors) <= VALUES_LIMIT else None
    having = ""
    eligible: int | None = None
    if filters.authors is None and filters.top is not None:
        histogram = {
            integer(r["papers"]): integer(r["authors"])
            for r in store.iter_select(_query("coauthor_paper_histogram", filters))
        }
        eligible = sum(n for papers, n in histogram.items() if papers >= filters.min_papers)
        cut, above = filters.min_papers, 0
        for papers in sorted(histogram, reverse=True):
            above += histogram[papers]
            if above >= filters.top:
                cut = max(papers, filters.min_papers)
                break
        having = f"HAVING (COUNT(DISTINCT ?paper) >= {cut})"
    query = _query("coauthor_paper_counts", filters, authors=_iris(ego) if ego is not None else "")  # only its own
    counts = {
        str(row["author"]): integer(row["papers"]) for row in store.iter_select(query.replace("# having", having))
    }
    return counts, eligible


def _add_authors(
    store: GraphStore,
    network: nx.Graph,
    authors: list[str],
    counts: dict[str, int],
    filters: Filters,
    everyone: bool = False,
) -> None:
    """The nodes of a co-author network, in ``authors`` order, with the attributes the row path gives them.

    ``everyone``: every author is kept before the top-N cap; a capped view then reads its authors'
    details in a few ``VALUES`` queries, an uncapped one in one query without them.
    """
    names: dict[str, str] = {}
    areas: dict[str, set[str]] = defaultdict(set)
    truncated: set[str] = set()
    if everyone and len(authors) == len(counts):
        chunks = [""]
    else:
        chunks = [_iris(authors[i : i + VALUES_LIMIT]) for i in range(0, len(authors), VALUES_LIMIT)]
    kept = set(authors)
    for chunk in chunks:
        for row in store.iter_select(_query("coauthor_details", filters, authors=chunk)):
            author = str(row["author"])
            if author not in kept:
                continue
            names[author] = str(row["name"])
            if row["areaLabel"] is not None:
                areas[author].add(str(row["areaLabel"]))
            if row["truncated"]:
                truncated.add(author)
    for author in authors:
        network.add_node(
            author,
            name=names[author],
            papers=counts[author],
            areas=sorted(areas[author]),
            truncated=author in truncated,
        )


def _joint_papers_from(store: GraphStore, authors: Iterable[str]) -> tuple[Counter[str], dict[str, str]]:
    """Joint papers of every co-author of ``authors`` with them (summed over ``authors``), and their names."""
    joint: Counter[str] = Counter()
    names: dict[str, str] = {}
    for row in store.iter_select(_query("coauthor_joint", authors=_iris(authors))):
        other = str(row["other"])
        joint[other] = integer(row["joint"])
        names[other] = str(row["otherName"])
    return joint, names


def ego_rings_from(store: GraphStore, center: str, radius: int, top: int) -> tuple[list[list[str]], int]:
    """:func:`analytics.ego_rings` with joint papers counted by the engine; ``KeyError``: no such author."""
    if not store.select(_query("coauthor_paper_counts", authors=_iris([center]))):
        raise KeyError(center)

    def ranked(counts: Counter[str], names: dict[str, str], limit: int) -> list[str]:
        return sorted(counts, key=lambda a: (-counts[a], names[a], a))[:limit]

    direct, names = _joint_papers_from(store, [center])
    first = ranked(direct, names, top)
    rings = [[center], first]
    if radius >= 2:
        seen = {center, *first}
        outer, names = _joint_papers_from(store, first) if first else (Counter(), {})
        outer = Counter({author: n for author, n in outer.items() if author not in seen})
        rings.append(ranked(outer, names, 2 * top))
    return rings, len(direct)


def collaboration_from(store: GraphStore, filters: Filters, authors: list[str]) -> dict[str, tuple[int, int]]:
    """:func:`analytics.collaboration` over the network ``filters`` select, counted by the engine."""
    found = dict.fromkeys(authors, (0, 0))
    for start in range(0, len(authors), VALUES_LIMIT):
        chunk = _iris(authors[start : start + VALUES_LIMIT])
        for row in store.iter_select(_query("coauthor_collaboration", filters, authors=chunk)):
            found[str(row["author"])] = (integer(row["coauthors"]), integer(row["joint"]))
    return found


def author_names_from(store: GraphStore) -> set[str]:
    """The names of every author with a paper."""
    return {str(row["name"]) for row in store.iter_select(named_query("author_names").text)}


def _topic_query(name: str, topic: str) -> str:
    """Named topic query ``name`` with ``topic`` (a SPARQL expression over ``?concept`` and ``?area``) as the topic."""
    return named_query(name).text.replace("BIND (?area AS ?topic)", f"BIND ({topic} AS ?topic)")


def _map_topic(expand: str | None) -> str:
    """The topic a paper is drawn under on the topic map, as a SPARQL expression."""
    if expand is None:
        return "?area"
    if expand == "all":
        return "?concept"
    return f"IF(?area = <{_checked(expand)}>, ?concept, ?area)"


def _topic_counts(store: GraphStore, topic: str) -> dict[str, tuple[int, int]]:
    rows = store.iter_select(_topic_query("topic_counts", topic))
    return {str(r["topic"]): (integer(r["papers"]), integer(r["authors"])) for r in rows}


def _topic_pairs(store: GraphStore, name: str, topic: str) -> dict[tuple[str, str], int]:
    pairs = {}
    for row in store.iter_select(_topic_query(name, topic)):
        a, b = sorted((str(row["a"]), str(row["b"])))
        pairs[a, b] = integer(row["shared"])
    return pairs


def _concepts(store: GraphStore) -> list[tuple[str, str, str, str]]:
    """(concept, label, area, area label) of every subject with papers, sorted."""
    rows = store.iter_select(named_query("topic_concepts").text)
    return sorted({(str(r["concept"]), str(r["conceptLabel"]), str(r["area"]), str(r["areaLabel"])) for r in rows})


def topic_network_from(store: GraphStore, push_down: bool | None = None) -> nx.Graph:
    """:func:`topic_network` of ``store``, counted by the engine if ``push_down`` (by default: when remote)."""
    if not (pushes_down(store) if push_down is None else push_down):
        return topic_network(authorships(store))
    network = nx.Graph()
    concepts = _concepts(store)
    for concept, label, area, area_label in concepts:
        network.add_node(area, label=area_label, kind=AREA)
        if concept != area:
            network.add_node(concept, label=label, kind=SUBAREA, area=area)
            network.add_edge(area, concept, kind="broader", weight=1)
    per_area, per_concept = _topic_counts(store, "?area"), _topic_counts(store, "?concept")
    for node, kind in network.nodes(data="kind"):
        network.nodes[node]["papers"] = (per_area if kind == AREA else per_concept).get(node, (0, 0))[0]
    authors = _topic_pairs(store, "topic_shared_authors", "?concept")
    papers = _topic_pairs(store, "topic_shared_papers", "?concept")
    for a, b in sorted(authors.keys() | papers.keys()):
        if network.has_edge(a, b):
            continue
        add_related(network, a, b, authors.get((a, b), 0), papers.get((a, b), 0))
    return ordered(network)


def topic_map_from(
    store: GraphStore, expand: str | None = None, strongest: int = 3, push_down: bool | None = None
) -> nx.Graph:
    """:func:`topic_map` of ``store``, counted by the engine if ``push_down`` (by default: when remote)."""
    if not (pushes_down(store) if push_down is None else push_down):
        return topic_map(authorships(store), expand, strongest)
    network = nx.Graph()
    for concept, label, area, area_label in _concepts(store):
        network.add_node(area, label=area_label, kind=AREA, area=area)
        if concept != area and expand in ("all", area):
            network.add_node(concept, label=label, kind=SUBAREA, area=area, parent=area_label)
            network.add_edge(area, concept, kind="broader", weight=5)
    per_area, per_concept = _topic_counts(store, "?area"), _topic_counts(store, "?concept")
    for node, kind in network.nodes(data="kind"):
        network.nodes[node]["papers"] = (per_area if kind == AREA else per_concept).get(node, (0, 0))[0]
    topic = _map_topic(expand)
    authors = {node: counts[1] for node, counts in _topic_counts(store, topic).items()}
    everyone = next(iter(_topic_counts(store, '"all"').values()), (0, 0))[1]
    candidates: dict[str, list[tuple[float, str, int]]] = defaultdict(list)
    for (a, b), shared in sorted(_topic_pairs(store, "topic_shared_authors", topic).items()):
        if network.has_edge(a, b):
            continue
        strength = shared * everyone / (authors[a] * authors[b])
        if strength > 1.0:
            candidates[a].append((strength, b, shared))
            candidates[b].append((strength, a, shared))
    return add_strongest(network, candidates, strongest)
