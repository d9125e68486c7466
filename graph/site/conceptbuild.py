"""Every concept's figures and paper order for a build, from the store's incidence and one pass over its papers' labels.

:func:`~.conceptindex.concept_index` asks the store, concept by concept, for the papers under it with their labels
and for its authors' counts: every paper is read and folded once per concept it is under (its subarea and its area),
each concept's papers sorted apart, and the counts grouped by the engine (22.9 CPU-s of a 100,000-paper build). A
build holds the incidence (each paper's creators and subjects with their areas, as those queries read them), so
here the labels are read once, every paper folded and ranked once (:func:`~.conceptindex.reading_key`), and each
concept's order, papers and author counts are array operations over the incidence: the same figures and orders
(``tests/site/test_conceptbuild.py``), for a store whose every creator is named (a build's: the incidence leaves out
an author without a name, and a paper whose authors all lack one).
"""

from collections.abc import Iterator

import numpy as np

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.incidence import Incidence, ranges
from bibgraph.graph.site.conceptindex import (
    TOP_AUTHORS,
    ConceptFigures,
    best_authors,
    concept_list,
    index_order,
    narrower,
    reading_key,
)
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

BATCH = 500  # papers per VALUES block


def concept_index_of(store: GraphStore, incidence: Incidence) -> Iterator[tuple[ConceptFigures, list[str]]]:
    """What :func:`~.conceptindex.concept_index` gives for ``store``, in its order, from ``incidence`` (the store's)."""
    concepts = concept_list(store)
    targets = sorted(concepts)
    place = {iri: number for number, iri in enumerate(targets)}
    rank, uncredited = _paper_ranks(store, incidence)
    under, papers = _papers_under(store, incidence, place, uncredited)  # (concept, paper) pairs, each once
    listed = rank[papers] >= 0  # in a page order: with a label and an author list
    order = np.lexsort((rank[papers][listed], under[listed]))
    ordered_under, ordered = under[listed][order], papers[listed][order]
    order_ptr = np.searchsorted(ordered_under, np.arange(len(targets) + 1))
    credited = papers < len(incidence.papers)
    author_under, author, count = _author_counts(incidence, under[credited], papers[credited])
    author_ptr = np.searchsorted(author_under, np.arange(len(targets) + 1))
    paper_counts = {iri: int(order_ptr[place[iri] + 1] - order_ptr[place[iri]]) for iri in concepts}
    for iri in index_order(concepts):
        label, broader = concepts[iri]
        number = place[iri]
        paper_iris = _iris(incidence, uncredited, ordered[order_ptr[number] : order_ptr[number + 1]])
        start, end = author_ptr[number], author_ptr[number + 1]
        top = _top_authors(incidence, author[start:end], count[start:end])
        figures = ConceptFigures(
            iri, label, broader, len(paper_iris), int(end - start), top, narrower(concepts, paper_counts, iri)
        )
        yield figures, paper_iris


def _paper_ranks(store: GraphStore, incidence: Incidence) -> tuple[np.ndarray, list[str]]:
    """Each paper's place among those with a label and an author list by :func:`~.conceptindex.reading_key` (-1:
    none, not in a page order), and the papers with no named creator (an author list that was not split), which
    the incidence lacks, numbered after its papers in the order returned."""
    numbers = {iri: number for number, iri in enumerate(incidence.papers)}
    uncredited: list[str] = []
    keys = []
    for row in store.iter_select(named_query("paper_order_labels").text):
        paper = str(row["paper"])
        number = numbers.get(paper)
        if number is None:
            number = len(numbers)
            numbers[paper] = number
            uncredited.append(paper)
        keys.append((*reading_key(str(row["label"]), paper), number))
    del numbers
    keys.sort()
    rank = np.full(len(incidence.papers) + len(uncredited), -1, dtype=np.int64)
    rank[np.array([key[-1] for key in keys], dtype=np.int64)] = np.arange(len(keys))
    return rank, uncredited


def _papers_under(
    store: GraphStore, incidence: Incidence, place: dict[str, int], uncredited: list[str]
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct (concept, paper) pairs of papers under a concept: its own or a subarea's (concepts numbered by
    ``place``; papers as :func:`_paper_ranks` numbers them), sorted by concept then paper. The subjects of the
    papers the incidence lacks are asked of the store, a block of them at a time."""
    own = np.array([place.get(c.concept, -1) for c in incidence.concepts], dtype=np.int64)
    area = np.array([place.get(c.area, -1) for c in incidence.concepts], dtype=np.int64)
    concept = [own[incidence.pc_concept], area[incidence.pc_concept]]
    paper = [np.tile(incidence.pc_paper.astype(np.int64), 2)]
    first = len(incidence.papers)
    numbers = {iri: first + offset for offset, iri in enumerate(uncredited)}
    for start in range(0, len(uncredited), BATCH):
        query = bind(named_query("concept_paper_subjects").text, paper=uncredited[start : start + BATCH])
        rows = [(numbers[str(r["paper"])], place.get(str(r["concept"]), -1)) for r in store.iter_select(query)]
        paper.append(np.array([number for number, _ in rows], dtype=np.int64))
        concept.append(np.array([target for _, target in rows], dtype=np.int64))
    concepts, papers = np.concatenate(concept), np.concatenate(paper)
    held = concepts >= 0
    width = first + len(uncredited) + 1
    keys = distinct(concepts[held] * width + papers[held])
    return keys // width, keys % width


def _iris(incidence: Incidence, uncredited: list[str], numbers: np.ndarray) -> list[str]:
    """The IRIs of papers numbered as :func:`_paper_ranks` numbers them."""
    first = len(incidence.papers)
    if not len(numbers) or numbers.max() < first:
        return incidence.papers.take(numbers)
    credited = numbers < first
    found = iter(incidence.papers.take(numbers[credited]))
    return [
        next(found) if inside else uncredited[n - first]
        for n, inside in zip(numbers.tolist(), credited.tolist(), strict=True)
    ]


def _author_counts(
    incidence: Incidence, under: np.ndarray, papers: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(concept, author, papers there) of every author of a paper under a concept, sorted by concept then author."""
    starts = incidence.paper_ptr[papers]
    lengths = incidence.paper_ptr[papers + 1] - starts
    authors = incidence.ap_author[ranges(starts, lengths)]
    width = max(len(incidence.authors), 1)
    keys, counts = np.unique(np.repeat(under, lengths) * width + authors, return_counts=True)
    return keys // width, keys % width, counts


def _top_authors(incidence: Incidence, authors: np.ndarray, counts: np.ndarray) -> tuple[tuple[str, str, int], ...]:
    """The concept's :data:`TOP_AUTHORS` as :func:`~.conceptindex.best_authors` ranks them: every author whose
    count reaches the ``TOP_AUTHORS``-th highest is a candidate (ties at the cut included)."""
    if not len(authors):
        return ()
    cut = np.sort(counts)[::-1][min(TOP_AUTHORS, len(counts)) - 1]
    chosen = counts >= cut
    names = incidence.names.take(authors[chosen])
    iris = incidence.authors.take(authors[chosen])
    return best_authors({iri: (name, n) for iri, name, n in zip(iris, names, counts[chosen].tolist(), strict=True)})
