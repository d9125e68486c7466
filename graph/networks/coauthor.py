"""The co-author network: authors linked by joint papers, computed from the incidence (:mod:`.incidence`).

Weighted two ways, as VOSviewer offers: ``weight``, full counting (the number of joint papers), and ``fractional``,
each paper's weight 1 shared equally among its author pairs (1 / C(n, 2)). Papers whose author list was cut
(``等``) mark their edges ``lower_bound``: the real collaboration is larger than what the list shows.
"""

from collections import Counter, defaultdict
from collections.abc import Iterable

import networkx as nx
import numpy as np
from scipy import sparse

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.communities import with_communities
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.incidence import Incidence, ranges


def _candidates(inc: Incidence, filters: Filters, counts: np.ndarray) -> tuple[np.ndarray, int]:
    """The authors that may be drawn (every one as prolific as the ``top``-th, ties included: a superset of the
    drawn ones, unordered) and how many pass every filter but the cap."""
    if filters.authors is None:
        candidates = np.flatnonzero(counts >= max(filters.min_papers, 1))
    else:
        ids = _known(inc, filters.authors)
        candidates = ids[counts[ids] >= max(filters.min_papers, 1)] if len(ids) else ids
    eligible = len(candidates)
    if filters.top is not None and 0 < filters.top < eligible:
        # only the authors at least as prolific as the N-th are sorted
        threshold = np.partition(counts[candidates], eligible - filters.top)[eligible - filters.top]
        candidates = candidates[counts[candidates] >= threshold]
    return candidates, eligible


def ranked_authors(inc: Incidence, filters: Filters, inside: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray]:
    """The authors a map draws (most papers first, then IRI), how many pass every filter but the cap,
    and the paper counts they are ranked by."""
    counts = _paper_counts(inc, filters, inside)
    candidates, eligible = _candidates(inc, filters, counts)
    order = np.lexsort((candidates, -counts[candidates]))
    chosen = candidates[order]
    return (chosen if filters.top is None else chosen[: filters.top]), eligible, counts


def extent(inc: Incidence, filters: Filters) -> tuple[int, int]:
    """How large the network of ``filters`` is at most, known before anything of it is made: its authors (all that
    pass the filters; ``community`` needs the network, so it is not counted) and a bound on its links (the author
    pairs of its papers, a pair once for each paper they share). Passes over the authorships, no sort and no pair:
    what decides whether a download is small enough for the web process (``web/maps/bodies.py``)."""
    inside = inc.scope(filters)
    candidates, eligible = _candidates(inc, filters, _paper_counts(inc, filters, inside))
    papers, _ = _authorships(inc, filters, candidates, inside)
    per_paper = np.bincount(papers, minlength=len(inc.papers)).astype(np.int64)
    authors = eligible if filters.top is None else min(filters.top, eligible)
    return authors, int((per_paper * (per_paper - 1) // 2).sum())


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
    papers, authors = _authorships(inc, filters, chosen, inside)
    network = nx.Graph(total_authors=eligible)
    _add_authors(inc, network, chosen, counts, papers, authors, filters)
    a, b, weight, fractional, cut = joint_links(papers, authors, np.diff(inc.paper_ptr), inc.truncated)
    strong = weight >= filters.min_joint
    a, b, weight, fractional, cut = a[strong], b[strong], weight[strong], fractional[strong], cut[strong]
    network.graph["total_links"] = len(a)
    if filters.links is not None and len(a) > filters.links:  # the strongest, then by (a, b): authors in IRI order
        first = np.sort(np.lexsort((b, a, -weight))[: filters.links])  # rows are in (a, b) order: kept so
        a, b, weight, fractional, cut = a[first], b[first], weight[first], fractional[first], cut[first]
    iri = {author: inc.authors[author] for author in chosen.tolist()}
    network.add_edges_from(
        (iri[x], iri[y], {"weight": w, "fractional": f, "lower_bound": c})
        for x, y, w, f, c in zip(
            a.tolist(), b.tolist(), weight.tolist(), fractional.tolist(), cut.tolist(), strict=True
        )
    )
    return with_communities(network, filters)


def _paper_counts(inc: Incidence, filters: Filters, inside: np.ndarray | None) -> np.ndarray:
    """Papers of every author under the scope ``inside``; when ``filters`` names the authors (an ego map), of those
    alone, read from their own rows (the others 0): a count over every authorship took 0.5 s of the first ego map at
    a million papers."""
    if filters.authors is None:
        return inc.paper_counts(inside)
    _, owners = _rows_of(inc, _known(inc, filters.authors), inside)
    return np.bincount(owners, minlength=len(inc.authors))


def _authorships(
    inc: Incidence, filters: Filters, chosen: np.ndarray, inside: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """The (paper, author) pairs of the ``chosen`` authors under the scope ``inside``, by paper, then author (as
    the incidence lists them). Of named authors (an ego map), gathered from their own rows and sorted: a mask over
    every pair is for a map of many authors."""
    if filters.authors is None:
        kept = np.zeros(len(inc.authors), dtype=bool)
        kept[chosen] = True
        mine = kept[inc.ap_author]
        if inside is not None:
            mine &= inside[inc.ap_paper]
        return inc.ap_paper[mine], inc.ap_author[mine]
    papers, authors = _rows_of(inc, chosen, inside)
    order = np.lexsort((authors, papers))
    return papers[order], authors[order]


def _known(inc: Incidence, authors: Iterable[str]) -> np.ndarray:
    """The ids of those of ``authors`` the incidence holds, ascending."""
    found = (inc.author_id(iri) for iri in authors)
    return np.array(sorted({i for i in found if i is not None}), dtype=np.int64)


def _rows_of(inc: Incidence, ids: np.ndarray, inside: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The (paper, author) pairs of the authors ``ids`` under the scope ``inside``, read from their own rows of the
    incidence, author by author (at a million papers a mask over every pair took 0.2 s for 1,000 authors)."""
    counts = inc.author_ptr[ids + 1] - inc.author_ptr[ids]
    papers, owners = inc.author_papers[ranges(inc.author_ptr[ids], counts)], np.repeat(ids, counts)
    if inside is not None:
        held = inside[papers]
        papers, owners = papers[held], owners[held]
    return papers, owners


PAIR_CHUNK = 1 << 20  # author pairs made at a time: a million papers have ~10M, ~1.3 GB of transient arrays at once


def joint_links(
    papers: np.ndarray, authors: np.ndarray, sizes: np.ndarray, truncated: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The links among ``authors`` (rows sorted by paper, then author: the authorships kept), in (a, b) order, a < b:
    joint papers, fractional weight (each paper's 1 / C(n, 2), n its whole list's ``sizes``, summed in paper order,
    as a loop would) and whether any joint paper's list was cut. Array passes over runs of papers of about
    ``PAIR_CHUNK`` pairs, so the pairs of every paper never exist at once: a first pass finds the links, a second
    adds each run's shares to them in paper order (the sums of a loop over papers, to the bit)."""
    starts = np.flatnonzero(np.r_[True, papers[1:] != papers[:-1]]) if len(papers) else np.zeros(0, dtype=np.int64)
    lengths = np.diff(np.r_[starts, len(papers)])
    pairs = np.cumsum(lengths * (lengths - 1) // 2)
    cuts = distinct(np.searchsorted(pairs, np.arange(PAIR_CHUNK, int(pairs[-1]) if len(pairs) else 0, PAIR_CHUNK)))
    runs = [(starts[i:j], lengths[i:j]) for i, j in zip(np.r_[0, cuts], np.r_[cuts, len(starts)], strict=True)]
    base = int(authors.max()) + 1 if len(authors) else 1
    found = [distinct(_keys(*_pair_rows(run_starts, run_lengths), authors, base)) for run_starts, run_lengths in runs]
    codes = distinct(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)
    del found
    weight = np.zeros(len(codes), dtype=np.int64)
    fractional = np.zeros(len(codes))
    cut = np.zeros(len(codes), dtype=bool)
    for run_starts, run_lengths in runs:
        first, second = _pair_rows(run_starts, run_lengths)
        link = np.searchsorted(codes, _keys(first, second, authors, base))
        paper = papers[first]
        size = sizes[paper].astype(np.int64)
        weight += np.bincount(link, minlength=len(codes))
        np.add.at(fractional, link, 2.0 / (size * (size - 1)))  # one share at a time, in the rows' (paper) order
        cut[link[truncated[paper]]] = True
    return codes // base, codes % base, weight, fractional, cut


def _pair_rows(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of rows of each paper (its rows ``starts[i]`` on, ``lengths[i]`` of them), in paper order, each
    paper's as ``itertools.combinations`` gives them."""
    firsts, seconds, owners = [], [], []
    for length in distinct(lengths[lengths > 1]).tolist():  # papers of one list length at a time: one pair pattern
        group = starts[lengths == length]
        i, j = np.triu_indices(length, 1)  # (0, 1), (0, 2), ...
        firsts.append((group[:, None] + i).ravel())
        seconds.append((group[:, None] + j).ravel())
        owners.append(np.repeat(group, len(i)))
    if not firsts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(np.concatenate(owners), kind="stable")
    return np.concatenate(firsts)[order], np.concatenate(seconds)[order]


def _keys(first: np.ndarray, second: np.ndarray, authors: np.ndarray, base: int) -> np.ndarray:
    """Each pair's link as one number: its authors ``a * base + b``."""
    return authors[first].astype(np.int64) * base + authors[second]


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


Owned = tuple[dict[str, int | None], np.ndarray, np.ndarray]


def _owned(inc: Incidence, filters: Filters, authors: Iterable[str]) -> Owned:
    """The ids of ``authors`` (None: unknown), and their (paper, author) pairs under ``filters``' scope."""
    ids = {iri: inc.author_id(iri) for iri in authors}
    known = np.array(sorted({i for i in ids.values() if i is not None}), dtype=np.int64)
    return (ids, *_rows_of(inc, known, inc.scope(filters)))


def joint_papers(inc: Incidence, filters: Filters, authors: Iterable[str]) -> dict[str, int]:
    """The joint papers of :func:`collaboration` alone: each paper counts its other authors, no pair is listed
    (a map's summary ranks its 1,000 drawn authors by it, then counts distinct co-authors of the ten it shows)."""
    ids, papers, owners = _owned(inc, filters, authors)
    others = np.diff(inc.paper_ptr)[papers] - 1  # a (paper, author) pair is listed once: the rest are co-authors
    joint = np.bincount(owners, weights=others, minlength=len(inc.authors))
    return {iri: 0 if i is None else int(joint[i]) for iri, i in ids.items()}


def collaboration(inc: Incidence, filters: Filters, authors: Iterable[str]) -> dict[str, tuple[int, int]]:
    """Distinct co-authors and joint papers (summed over co-authors) of each of ``authors`` over the whole network
    ``filters`` select, not only the drawn part (the numbers an author's profile shows), counted at once."""
    ids, papers, owners = _owned(inc, filters, authors)
    starts, lengths = inc.paper_ptr[papers], np.diff(inc.paper_ptr)[papers]
    others = inc.ap_author[ranges(starts, lengths)]  # every (owner, co-author) row of the owners' papers
    owners = np.repeat(owners, lengths)
    real = others != owners
    owners, others = owners[real], others[real]
    joint = np.bincount(owners, minlength=len(inc.authors))
    pairs = distinct(owners.astype(np.int64) * len(inc.authors) + others)
    others_of = np.bincount(pairs // len(inc.authors), minlength=len(inc.authors))
    return {iri: (0, 0) if i is None else (int(others_of[i]), int(joint[i])) for iri, i in ids.items()}


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
