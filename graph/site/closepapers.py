"""A paper page's "More in <subject>" head: the subject's other papers written by co-authors of the paper's
authors, most such co-authors first. ``related_by_coauthors.rq`` joins every joint paper of every author, so its
cost grows with the authors' whole collaboration (10 s, a 503, for a paper of a million papers' most prolific
author); from the incidence a dataset keeps it is a few numpy gathers over the authors' neighbourhood, without one
a few queries of one triple pattern with a cap on the co-authors counted, and labels are read only at the cut."""

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence

Titles = Callable[[list[str]], dict[str, str]]


def close_papers(
    store: GraphStore, iri: str, limit: int, incidence: "Incidence | None" = None, titles: Titles | None = None
) -> list[tuple[str, str, int]]:
    """(IRI, label, co-authors) of the first ``limit`` papers, as ``related_by_coauthors.rq`` ranks them: from
    ``incidence`` when it holds the paper, labels from ``titles`` (a search index's) when it holds them all, else
    from the store; without one (or when it does not hold the paper) from a few bounded queries of the store."""
    found = ranked_from(incidence, iri) if incidence is not None else None
    if found is None:
        found = ranked_from_store(store, iri)

    def labels(iris: list[str]) -> dict[str, str]:
        held = titles(iris) if titles is not None else {}
        if all(i in held for i in iris):
            return held
        return {
            str(r["paper"]): str(r["label"]) for r in store.select(bind(named_query("paper_labels").text, paper=iris))
        }

    return cut(found, limit, labels)


def ranked_from(incidence: "Incidence", iri: str) -> Iterator[tuple[int, list[str]]] | None:
    """The candidates by how many co-authors of the paper's authors wrote each, most first: (count, their IRIs),
    each count's IRIs read only when asked for; None when the incidence does not hold the paper. A candidate is
    another paper sharing a subject with the paper (by concept IRI, of the labelled concepts the incidence holds)
    and no author."""
    import numpy as np  # not loaded by a server's start (nor is the incidence's module)

    from bibgraph.graph.arrays.sets import distinct
    from bibgraph.graph.networks.incidence import ranges

    paper = incidence.papers.find(iri)
    if paper is None:
        return None

    def subjects_of(papers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row in ``papers``, concept) of each subject of ``papers``."""
        key = papers.astype(incidence.pc_paper.dtype)
        first, last = (incidence.pc_paper.searchsorted(key, side=side) for side in ("left", "right"))
        rows = ranges(first, last - first)
        return np.repeat(np.arange(len(papers)), last - first), incidence.pc_concept[rows]

    mine = incidence.ap_author[incidence.paper_ptr[paper] : incidence.paper_ptr[paper + 1]]
    joint = distinct(incidence.papers_of(mine))  # the paper's authors' papers, itself among them
    starts = incidence.paper_ptr[joint]
    near = distinct(incidence.ap_author[ranges(starts, incidence.paper_ptr[joint + 1] - starts)])
    near = near[~np.isin(near, mine)]  # an author of the paper wrote no candidate
    others, counts = np.unique(incidence.papers_of(near), return_counts=True)  # a row per (author, paper)
    keep = ~np.isin(others, joint)
    others, counts = others[keep], counts[keep]
    wanted = {incidence.concepts[int(c)].concept for c in subjects_of(np.array([paper]))[1]}
    matched = np.array([c.concept in wanted for c in incidence.concepts], dtype=bool)
    row, concept = subjects_of(others)
    keep = np.zeros(len(others), dtype=bool)
    keep[row[matched[concept]]] = True
    others, counts = others[keep], counts[keep]
    return ((int(n), [incidence.papers[int(p)] for p in others[counts == n]]) for n in distinct(counts)[::-1])


COAUTHORS_COUNTED = 1000  # co-authors whose papers the store is asked for, without an incidence
AT_ONCE = 1000  # IRIs bound in one query


def ranked_from_store(store: GraphStore, iri: str, most: int = COAUTHORS_COUNTED) -> Iterator[tuple[int, list[str]]]:
    """:func:`ranked_from` asked of the store a triple pattern at a time (a remote engine's, when no dataset is
    published): the joint papers of the paper's authors, their co-authors, the papers of the first ``most`` of
    them by IRI, these papers' subjects. The cap bounds the cost whatever the authors' productivity: a paper whose
    authors have more co-authors counts only those ``most`` (its list may then differ from the query's); below it
    the list is ``related_by_coauthors.rq``'s."""

    def pairs(name: str, variable: str, iris: Sequence[str]) -> list[tuple[str, str]]:
        found = []
        for start in range(0, len(iris), AT_ONCE):
            query = bind(named_query(name).text, **{variable: iris[start : start + AT_ONCE]})
            found += [(str(r["paper"]), str(r.get("author", r.get("concept")))) for r in store.select(query)]
        return found

    mine = {author for _, author in pairs("incidence_creators", "paper", [iri])}
    joint = {paper for paper, _ in pairs("incidence_creators", "author", sorted(mine))}
    near = sorted({author for _, author in pairs("incidence_creators", "paper", sorted(joint))} - mine)[:most]
    counts = Counter(paper for paper, _ in pairs("incidence_creators", "author", near) if paper not in joint)
    wanted = {concept for _, concept in pairs("incidence_subjects", "paper", [iri])}
    kept = {paper for paper, concept in pairs("incidence_subjects", "paper", sorted(counts)) if concept in wanted}
    ranked: dict[int, list[str]] = {}
    for paper in sorted(kept):
        ranked.setdefault(counts[paper], []).append(paper)
    return iter(sorted(ranked.items(), reverse=True))


def cut(ranked: Iterable[tuple[int, list[str]]], limit: int, labels: Titles) -> list[tuple[str, str, int]]:
    """The first ``limit`` of ``ranked`` ordered within a count by lower-case label, then IRI (the query's order),
    labels read a count at a time until ``limit`` are labelled (a paper without one is not listed)."""
    found: list[tuple[str, str, int]] = []
    for count, iris in ranked:
        if len(found) >= limit:
            break
        held = labels(iris)
        found += sorted(((i, held[i], count) for i in iris if i in held), key=lambda f: (f[1].lower(), f[0]))
    return found[:limit]
