"""The co-author network: authors linked by joint papers, computed from the incidence (:mod:`.incidence`).

Weighted two ways, as VOSviewer offers: ``weight``, full counting (the number of joint papers), and ``fractional``,
each paper's weight 1 shared equally among its author pairs (1 / C(n, 2)). Papers whose author list was cut
(``等``) mark their edges ``lower_bound``: the real collaboration is larger than what the list shows.
"""

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import combinations

import networkx as nx
import numpy as np
from scipy import sparse

from bibgraph.graph.networks.communities import with_communities
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.incidence import Incidence


def ranked_authors(inc: Incidence, filters: Filters, inside: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray]:
    """The authors a map draws (most papers first, then IRI), how many pass every filter but the cap,
    and the paper counts they are ranked by."""
    counts = inc.paper_counts(inside)
    if filters.authors is None:
        candidates = np.flatnonzero(counts >= max(filters.min_papers, 1))
    else:
        found = (inc.author_id(iri) for iri in filters.authors)
        ids = np.array(sorted(i for i in found if i is not None), dtype=np.int64)
        candidates = ids[counts[ids] >= max(filters.min_papers, 1)] if len(ids) else ids
    eligible = len(candidates)
    if filters.top is not None and 0 < filters.top < eligible:
        # only the authors at least as prolific as the N-th are sorted
        threshold = np.partition(counts[candidates], eligible - filters.top)[eligible - filters.top]
        candidates = candidates[counts[candidates] >= threshold]
    order = np.lexsort((candidates, -counts[candidates]))
    chosen = candidates[order]
    return (chosen if filters.top is None else chosen[: filters.top]), eligible, counts


def coauthor_network(inc: Incidence, filters: Filters) -> nx.Graph:
    """Authors linked by joint papers, with full and fractional weights; filtered as ``filters`` say, costing what is
    drawn.

    Author filters (minimum papers, top N) apply before the links are counted, so a capped view of a large network
    costs only what it shows. ``graph["total_authors"]`` counts the authors that pass every filter but the top-N cap
    (what a note about the cap compares with), ``graph["total_links"]`` the links before the ``links`` cap.
    """
    inside = inc.scope(filters)
    chosen, eligible, counts = ranked_authors(inc, filters, inside)
    if not len(chosen):
        return nx.Graph(total_authors=eligible)
    kept = np.zeros(len(inc.authors), dtype=bool)
    kept[chosen] = True
    mine = kept[inc.ap_author]
    if inside is not None:
        mine &= inside[inc.ap_paper]
    papers, authors = inc.ap_paper[mine], inc.ap_author[mine]  # by paper, then author
    network = nx.Graph(total_authors=eligible)
    _add_authors(inc, network, chosen, counts, papers, authors, filters)
    edges: dict[tuple[int, int], list] = {}
    sizes = np.diff(inc.paper_ptr)
    starts = np.flatnonzero(np.r_[True, papers[1:] != papers[:-1]])
    ends = np.r_[starts[1:], len(papers)]
    for start, end in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(), strict=True):
        paper = int(papers[start])
        size = int(sizes[paper])
        share, cut = 2.0 / (size * (size - 1)), bool(inc.truncated[paper])
        for a, b in combinations(authors[start:end].tolist(), 2):
            edge = edges.setdefault((a, b), [0, 0.0, False])
            edge[0] += 1
            edge[1] += share
            edge[2] = edge[2] or cut
    links = [(pair, edge) for pair, edge in edges.items() if edge[0] >= filters.min_joint]
    network.graph["total_links"] = len(links)
    if filters.links is not None and len(links) > filters.links:  # authors are numbered in IRI order: so are (a, b)
        links = heapq.nsmallest(filters.links, links, key=lambda link: (-link[1][0], link[0]))
    for (a, b), (weight, fractional, lower_bound) in sorted(links):
        network.add_edge(inc.authors[a], inc.authors[b], weight=weight, fractional=fractional, lower_bound=lower_bound)
    return with_communities(network, filters)


def _add_authors(
    inc: Incidence,
    network: nx.Graph,
    chosen: np.ndarray,
    counts: np.ndarray,
    papers: np.ndarray,
    authors: np.ndarray,
    filters: Filters,
) -> None:
    """The drawn authors as nodes, in rank order: name, papers, areas of their papers (those under the
    scope) and whether any of their lists was cut."""
    matched = inc.concepts_in(filters)
    areas: dict[int, set[str]] = defaultdict(set)
    starts = np.searchsorted(inc.pc_paper, papers, side="left")
    ends = np.searchsorted(inc.pc_paper, papers, side="right")
    for author, start, end in zip(authors.tolist(), starts.tolist(), ends.tolist(), strict=True):
        for concept in inc.pc_concept[start:end].tolist():
            if matched[concept]:
                areas[author].add(inc.concepts[concept].area_label)
    cut = set(authors[inc.truncated[papers]].tolist())
    for author in chosen.tolist():
        network.add_node(
            inc.authors[author],
            name=inc.names[author],
            papers=int(counts[author]),
            areas=sorted(areas[author]),
            truncated=author in cut,
        )


def collaboration(inc: Incidence, filters: Filters, authors: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Distinct co-authors and joint papers (summed over co-authors) of each of ``authors`` over the whole network
    ``filters`` select, not only the drawn part (the numbers an author's profile shows), counted at once."""
    wanted = list(authors)
    ids = {iri: inc.author_id(iri) for iri in wanted}
    kept = np.zeros(len(inc.authors), dtype=bool)
    kept[[i for i in ids.values() if i is not None]] = True
    mine = kept[inc.ap_author]
    inside = inc.scope(filters)
    if inside is not None:
        mine &= inside[inc.ap_paper]
    papers, owners = inc.ap_paper[mine], inc.ap_author[mine]
    starts, lengths = inc.paper_ptr[papers], np.diff(inc.paper_ptr)[papers]
    # every (owner, co-author) row of the owners' papers: positions starts..starts+length-1, end to end
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    others = inc.ap_author[np.repeat(starts, lengths) + offsets]
    owners = np.repeat(owners, lengths)
    real = others != owners
    owners, others = owners[real], others[real]
    joint = np.bincount(owners, minlength=len(inc.authors))
    pairs = np.unique(owners.astype(np.int64) * len(inc.authors) + others)
    distinct = np.bincount(pairs // len(inc.authors), minlength=len(inc.authors))
    return {iri: (0, 0) if i is None else (int(distinct[i]), int(joint[i])) for iri, i in ids.items()}


def coauthor_degrees(inc: Incidence, block: int = 1 << 16) -> Counter[int]:
    """How many authors have each number of distinct co-authors (0: no joint paper), for the home page's
    chart: the co-author matrix is multiplied out ``block`` authors at a time, never held whole (the SPARQL
    form of this, ``coauthor_degrees.rq``, joins every pair of creators and did not end at a million papers)."""
    matrix = sparse.csc_matrix(
        (np.ones(len(inc.ap_paper), dtype=np.int32), (inc.ap_paper, inc.ap_author)),
        shape=(len(inc.papers), len(inc.authors)),
    )
    found: Counter[int] = Counter()
    for start in range(0, len(inc.authors), block):
        shared = (matrix[:, start : start + block].T @ matrix).tocsr()
        found.update((np.diff(shared.indptr) - 1).tolist())  # less the author themself
    return found
