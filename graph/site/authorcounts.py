"""The papers of a few authors per concept, or per area, counted from the incidence's arrays (an add's touched authors).

The store's queries (``author_concept_counts.rq``, ``search_authors.rq``) walked every paper of each author: at 100,000
papers, 2.3 and 1.3 CPU-s of an add of 1,000 papers (1,839 authors); here it is a few array operations over the
incidence, which holds each paper's creators (``dcterms:creator``) and subjects with their areas, as those queries read.
"""

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from bibgraph.graph.networks.incidence import ranges

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence


def concept_counts(incidence: "Incidence", authors: list[str]) -> dict[str, dict[str, int]]:
    """Papers of each of ``authors`` under each concept (an area through its subareas, a paper under two subareas of
    an area once): concept: author: papers, as ``author_concept_counts.rq`` counts them in the store."""
    found, ids = _found(incidence, authors)
    owner, papers, subjects = _author_subjects(incidence, ids)
    counts: defaultdict[str, dict[str, int]] = defaultdict(dict)
    held = subjects >= 0
    owner, papers, subjects = owner[held], papers[held], subjects[held]
    targets = sorted({c.concept for c in incidence.concepts} | {c.area for c in incidence.concepts})
    place = {iri: index for index, iri in enumerate(targets)}
    own = np.array([place[c.concept] for c in incidence.concepts], dtype=np.int64)[subjects]
    area = np.array([place[c.area] for c in incidence.concepts], dtype=np.int64)[subjects]
    pairs = _distinct_counts(np.concatenate([owner, owner]), np.concatenate([own, area]), np.tile(papers, 2))
    for author, concept, size in pairs:
        counts[targets[concept]][found[author]] = size
    return counts


def area_counts(incidence: "Incidence", authors: list[str]) -> list[tuple[str, str | None, int]]:
    """(author, area label or None, papers) of each of ``authors``: their papers per area (a paper with no area
    under None), as ``search_authors.rq`` counts them in the store."""
    found, ids = _found(incidence, authors)
    return [(found[author], label, size) for author, label, size in _area_rows(incidence, ids)]


def every_area_count(incidence: "Incidence", block: int = 1 << 16) -> Iterator[tuple[str, str | None, int]]:
    """:func:`area_counts` of every author of ``incidence``, ``block`` authors at a time (the rows of a million papers'
    authors are never all held): what the search index shows beside each author, without the store's query
    (``search_authors.rq``: 17 of the index's 43 CPU-s at 100,000 papers)."""
    for start in range(0, len(incidence.authors), block):
        ids = np.arange(start, min(start + block, len(incidence.authors)), dtype=np.int64)
        for author, label, size in _area_rows(incidence, ids):
            yield incidence.authors[start + author], label, size


def _found(incidence: "Incidence", authors: list[str]) -> tuple[list[str], np.ndarray]:
    """Those of ``authors`` the incidence holds, and their numbers."""
    found = [(iri, number) for iri in authors if (number := incidence.author_id(iri)) is not None]
    return [iri for iri, _ in found], np.array([number for _, number in found], dtype=np.int64)


def _area_rows(incidence: "Incidence", ids: np.ndarray) -> list[tuple[int, str | None, int]]:
    """(place in ``ids``, area label or None, papers) of the authors numbered ``ids``."""
    owner, papers, subjects = _author_subjects(incidence, ids)
    labels = sorted({c.area_label for c in incidence.concepts})
    place = {label: index for index, label in enumerate(labels)}
    area = np.array([place[c.area_label] for c in incidence.concepts] + [-1], dtype=np.int64)[subjects]
    return [
        (author, None if label < 0 else labels[label], size)
        for author, label, size in _distinct_counts(owner, area, papers)
    ]


def _author_subjects(incidence: "Incidence", ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (author, paper, subject) rows of the authors numbered ``ids``: the author's place in ``ids``, the paper's
    number, the concept's number (-1: a paper with no subject, one row)."""
    owner = np.repeat(np.arange(len(ids)), incidence.author_ptr[ids + 1] - incidence.author_ptr[ids])
    papers = incidence.papers_of(ids)  # (author, paper) pairs of the given authors
    first = np.searchsorted(incidence.pc_paper, papers, side="left")
    last = np.searchsorted(incidence.pc_paper, papers, side="right")
    none = last == first  # papers with no subject: one row each
    concepts = incidence.pc_concept[ranges(first, last - first)]
    return (
        np.concatenate([np.repeat(owner, last - first), owner[none]]),
        np.concatenate([np.repeat(papers, last - first), papers[none]]),
        np.concatenate([concepts, np.full(int(none.sum()), -1)]).astype(np.int64),
    )


def _distinct_counts(owner: np.ndarray, group: np.ndarray, papers: np.ndarray) -> list[tuple[int, int, int]]:
    """(owner, group, distinct papers) of every (owner, group) pair the rows hold."""
    if not len(owner):
        return []
    rows = np.unique(np.stack([owner, group, papers]), axis=1)
    keys, sizes = np.unique(rows[:2], axis=1, return_counts=True)
    return [(int(a), int(g), int(n)) for (a, g), n in zip(keys.T.tolist(), sizes.tolist(), strict=True)]
