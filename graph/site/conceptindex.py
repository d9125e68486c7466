"""Figures and paper order of every area and subarea page, computed once, a bounded query per concept.

An area of a million-paper dataset holds 100k+ papers: counting them, ranking its authors and sorting
its papers by label on every request reads the whole area each time (seconds). So each concept's
figures (papers, authors, top authors, subareas) and its papers in page order (by label, then IRI) are
computed once, one concept at a time, and a dataset keeps them in its derived data; a page then reads
the IRIs of its 50 papers from the order and their labels with one ``VALUES`` query.

Papers, and people or areas of equal counts, are listed as people read a list (:func:`reading_key`): by label
or name with case and accents aside, so "AHMED Ali …", "Ahmed Ali …" and "Ähmed …" come together, not "AHMED"
among the capitals and "Ähmed" after Z.
"""

from collections.abc import Iterator
from dataclasses import dataclass, field

from bibgraph.graph.site.search import fold
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore

PAPER_ORDER = "folded label"  # names the orders in derived-data keys: a dataset keeping others derives them anew
TOP_AUTHORS = 20
NAME_BATCH = 500  # authors per name query


@dataclass(frozen=True)
class ConceptFigures:
    """An area or subarea as its page and the concept tree show it (``subareas``: (IRI, label, papers), most
    papers first; ``top_authors``: (IRI, name, papers), most papers first, then by name)."""

    iri: str
    label: str
    broader: str | None
    papers: int
    authors: int
    top_authors: tuple[tuple[str, str, int], ...]
    subareas: tuple[tuple[str, str, int], ...] = field(default=())


def concept_index(store: GraphStore) -> Iterator[tuple[ConceptFigures, list[str]]]:
    """Every concept's figures with its papers in page order, subareas before their areas, one concept at a
    time (so no more than one area's papers are held at once)."""
    concepts = concept_list(store)
    papers: dict[str, int] = {}
    for iri in index_order(concepts):
        label, broader = concepts[iri]
        order = paper_order(store, iri)
        papers[iri] = len(order)
        counts = {str(r["author"]): integer(r["papers"]) for r in _select(store, "concept_author_counts", iri)}
        top = _top_authors(store, counts)
        yield ConceptFigures(iri, label, broader, len(order), len(counts), top, narrower(concepts, papers, iri)), order


def reading_key(text: str, iri: str) -> tuple[str, str, str]:
    """Where an item comes in a list people read (papers by label; people and areas of equal counts by name or
    label): its text folded (case and accents aside), then as written, then its IRI (one order, whatever the
    texts)."""
    return fold(text), text, iri


def paper_order(store: GraphStore, iri: str) -> list[str]:
    """The papers of a concept (an area's through its subareas) as its pages list them (:func:`reading_key`)."""
    rows = sorted(reading_key(str(r["label"]), str(r["paper"])) for r in _select(store, "concept_paper_order", iri))
    return [paper for _, _, paper in rows]


def _select(store: GraphStore, name: str, concept: str) -> Iterator[dict]:
    return store.iter_select(bind(named_query(name).text, concept=concept))


def _top_authors(store: GraphStore, counts: dict[str, int]) -> tuple[tuple[str, str, int], ...]:
    """The ``TOP_AUTHORS`` named authors with most papers (ties by name, then IRI). Authors are named one count at
    a time from the highest until that many have a name, so only those that can be among them are looked up (a
    nameless author, from data loaded from elsewhere, is passed over: the next count is named)."""
    ranked = sorted(counts, key=lambda author: -counts[author])
    names: dict[str, str] = {}
    start = 0
    while start < len(ranked) and len(names) < TOP_AUTHORS:
        end = start
        while end < len(ranked) and counts[ranked[end]] == counts[ranked[start]]:
            end += 1
        names.update(author_names(store, ranked[start:end]))
        start = end
    return best_authors({author: (name, counts[author]) for author, name in names.items()})


def author_names(store: GraphStore, authors: list[str]) -> dict[str, str]:
    """The names of ``authors`` (those that have one)."""
    names: dict[str, str] = {}
    for start in range(0, len(authors), NAME_BATCH):
        query = bind(named_query("author_name_list").text, author=sorted(authors[start : start + NAME_BATCH]))
        names.update((str(r["author"]), str(r["name"])) for r in store.select(query))
    return names


def best_authors(candidates: dict[str, tuple[str, int]]) -> tuple[tuple[str, str, int], ...]:
    """The ``TOP_AUTHORS`` of ``candidates`` (IRI: (name, papers)) with most papers, then by :func:`reading_key`."""
    ranked = sorted((-papers, *reading_key(name, author)) for author, (name, papers) in candidates.items())
    return tuple((author, name, -negated) for negated, _, name, author in ranked[:TOP_AUTHORS])


def narrower(
    concepts: dict[str, tuple[str, str | None]], papers: dict[str, int], iri: str
) -> tuple[tuple[str, str, int], ...]:
    """The subareas of ``iri`` as :attr:`ConceptFigures.subareas` lists them (``concepts``: IRI: (label, broader))."""
    return tuple(
        sorted(
            ((other, concepts[other][0], papers[other]) for other in concepts if concepts[other][1] == iri),
            key=lambda item: (-item[2], *reading_key(item[1], item[0])),
        )
    )


def concept_list(store: GraphStore) -> dict[str, tuple[str, str | None]]:
    """Every concept: IRI: (label, broader concept or None)."""
    return {
        str(r["concept"]): (str(r["label"]), None if r["broader"] is None else str(r["broader"]))
        for r in store.select(named_query("concept_list").text)
    }


def index_order(concepts: dict[str, tuple[str, str | None]]) -> list[str]:
    """The concepts in the order :func:`concept_index` gives them: subareas before their areas."""
    return sorted(concepts, key=lambda iri: (concepts[iri][1] is None, iri))


def paper_items(store: GraphStore, iris: list[str]) -> list[tuple[str, str, str]]:
    """(IRI, label, author list) of a few papers, in the order given."""
    if not iris:
        return []
    rows = store.select(bind(named_query("paper_list_items").text, paper=iris))
    found = {str(r["paper"]): (str(r["label"]), str(r["authorList"])) for r in rows}
    return [(iri, *found[iri]) for iri in iris if iri in found]
