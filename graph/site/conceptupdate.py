"""The concept index after ``bibgraph add``: the previous version's figures and paper orders updated with what was
added, instead of computed again over every paper of every area (minutes at a million papers).

An add never changes a paper already present except by adding triples: a record seen again gains a source, and
a ``dcterms:subject`` when it names another area; a known person keeps their name, and a person first named now
had none. So a concept's papers only grow, by the papers newly under it, and an author's papers there grow by
theirs among those; everything else is as it was. Hence, with costs that follow what is added (and the number of
concepts), not the size of the dataset:

- papers: the previous count plus the new ones; the order is the kept one with the new papers merged in at their
  places (:func:`~.conceptindex.reading_key`). Their places are found by a binary search over the kept order,
  all new papers of a concept at once: one look-up of the labels probed per step (log2 of the concept's size
  steps), so no label of the kept order is read beyond those probed. The labels are the previous version's search
  index's titles (a paper's label, kept there for every paper: an indexed SQLite row, ~10x less than asking the
  store, whose probes were 5 of an add's CPU-s at a million papers), the store asked only for those it lacks;
- authors: the previous count plus the new papers' creators who had no paper there before (those whose count there
  now is their number of new papers); the counts of these touched authors are taken from the store;
- top authors: the best of the previous top authors (counts updated) and the touched ones (and those named only
  now): any other author was ranked after every previous top author, and their counts only grew.

The kept order is read piece by piece from the first place that changes; the pieces before it stay as they are.
"""

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from bibgraph.graph.site.authorcounts import concept_counts
from bibgraph.graph.site.conceptindex import (
    ConceptFigures,
    author_names,
    best_authors,
    concept_list,
    index_order,
    narrower,
    reading_key,
)
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence

BATCH = 500  # IRIs per VALUES block


@dataclass(frozen=True)
class ConceptUpdate:
    """A concept's new figures and order: its first ``kept`` pieces are the previous ones, ``tail`` is the order
    from there on (empty when the order did not change: every previous piece is kept)."""

    figures: ConceptFigures
    kept: int
    tail: list[str]


class KeptOrder(Sequence[str]):
    """A concept's previous order, read a piece at a time when first needed (``piece(number)``: its IRIs)."""

    def __init__(self, length: int, chunk: int, piece: Callable[[int], list[str]]) -> None:
        self.length, self.chunk, self.piece = length, chunk, piece
        self.pieces: dict[int, list[str]] = {}

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        number, offset = divmod(index, self.chunk)
        if number not in self.pieces:
            self.pieces[number] = self.piece(number)
        return self.pieces[number][offset]

    def between(self, start: int, end: int) -> list[str]:
        """The order from ``start`` to ``end``, a piece's slice at a time (an item at a time was 1.9 million calls,
        ~3 CPU-s of an add at a million papers, where the orders are rewritten from their first new paper)."""
        found: list[str] = []
        while start < end:
            number, offset = divmod(start, self.chunk)
            if number not in self.pieces:
                self.pieces[number] = self.piece(number)
            part = self.pieces[number][offset : offset + end - start]
            if not part:
                raise IndexError(f"the kept order ends before {end} (piece {number} holds {offset} or fewer)")
            found += part
            start += len(part)
        return found


def updated_index(
    previous: Mapping[str, ConceptFigures],
    piece: Callable[[str, int], list[str]],
    chunk: int,
    additions: GraphStore,
    store: GraphStore,
    incidence: "Incidence",
    kept_labels: Callable[[list[str]], dict[str, str]] | None = None,
) -> Iterator[ConceptUpdate]:
    """Every concept of ``store`` (the new version) in :func:`~.conceptindex.concept_index`'s order, from the
    figures of the version added to (``previous``; its orders in pieces of ``chunk``: ``piece(concept, number)``)
    and ``additions``, the triples the add wrote (their ``dcterms:subject`` and ``foaf:name`` ones at least);
    ``incidence`` is the incidence of ``store`` (:mod:`~bibgraph.graph.networks.incidence`), which the touched
    authors' papers under each concept are counted from (:func:`concept_counts`); ``kept_labels``, the labels of
    papers of the previous version kept elsewhere (its search index's titles), by IRI, those it holds."""
    concepts = concept_list(store)
    added = {(str(r["paper"]), str(r["subject"])) for r in additions.select(named_query("added_subjects").text)}
    new_papers, labels = _new_in_concepts(store, added)
    creators = _creators(store, sorted({paper for papers in new_papers.values() for paper in papers}))
    named_now = {str(r["author"]) for r in additions.select(named_query("author_name_list").text)}
    touched = sorted({author for authors in creators.values() for author in authors} | named_now)
    counts = concept_counts(incidence, touched)
    names = author_names(store, touched)
    papers = {
        iri: (previous[iri].papers if iri in previous else 0) + sum(paper in labels for paper in new_papers[iri])
        for iri in concepts
    }
    done: list[tuple[ConceptFigures, int, KeptOrder | None, list[tuple[str, str, str]]]] = []
    for iri in index_order(concepts):
        label, broader = concepts[iri]
        before = previous.get(iri) or ConceptFigures(iri, label, broader, 0, 0, ())
        here = counts.get(iri, {})
        gained: dict[str, int] = defaultdict(int)  # new papers here of each author
        for paper in new_papers[iri]:
            for author in creators.get(paper, ()):
                gained[author] += 1
        authors = before.authors + sum(here[author] == n for author, n in gained.items())
        candidates = {author: (name, here.get(author, papers_)) for author, name, papers_ in before.top_authors}
        candidates.update((author, (names[author], n)) for author, n in here.items() if author in names)
        figures = ConceptFigures(
            iri, label, broader, papers[iri], authors, best_authors(candidates), narrower(concepts, papers, iri)
        )
        entries = sorted(reading_key(labels[paper], paper) for paper in new_papers[iri] if paper in labels)
        kept = KeptOrder(before.papers, chunk, partial(piece, iri)) if entries else None
        done.append((figures, max(1, -(-before.papers // chunk)), kept, entries))
    places = _places([(kept, entries) for _, _, kept, entries in done if kept is not None], store, kept_labels)
    while done:  # each order's pieces released once its tail is made
        figures, pieces, kept, entries = done.pop(0)
        if kept is None:
            yield ConceptUpdate(figures, pieces, [])
            continue
        found = places.pop(0)
        first = found[0] // chunk
        tail: list[str] = []
        at = first * chunk
        for place, (*_, paper) in zip(found, entries, strict=True):
            tail += kept.between(at, place)
            tail.append(paper)
            at = place
        tail += kept.between(at, len(kept))
        yield ConceptUpdate(figures, first, tail)


def _values(iris: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(iris), BATCH):
        yield list(iris[start : start + BATCH])


def _new_in_concepts(
    store: GraphStore, added: set[tuple[str, str]]
) -> tuple[defaultdict[str, set[str]], dict[str, str]]:
    """The papers newly under each concept (through a subject added to them and no subject they had) and the
    labels of those listed in an order (as :func:`~.conceptindex.paper_order`: those with a label and an author
    list; looked up apart: an ``OPTIONAL`` label joined every paper of the store)."""
    now: defaultdict[str, set[str]] = defaultdict(set)
    before: defaultdict[str, set[str]] = defaultdict(set)
    for block in _values(sorted({paper for paper, _ in added})):
        query = bind(named_query("concept_paper_subjects").text, paper=block)
        for row in store.iter_select(query):
            paper, subject, concept = str(row["paper"]), str(row["subject"]), str(row["concept"])
            now[paper].add(concept)
            if (paper, subject) not in added:
                before[paper].add(concept)
    new_papers: defaultdict[str, set[str]] = defaultdict(set)
    for paper, concepts in now.items():
        for concept in concepts - before[paper]:
            new_papers[concept].add(paper)
    labels: dict[str, str] = {}
    for block in _values(sorted({paper for papers in new_papers.values() for paper in papers})):
        rows = store.select(bind(named_query("paper_list_items").text, paper=block))
        labels.update((str(r["paper"]), str(r["label"])) for r in rows)
    return new_papers, labels


def _creators(store: GraphStore, papers: list[str]) -> dict[str, list[str]]:
    found: defaultdict[str, list[str]] = defaultdict(list)
    for block in _values(papers):
        for row in store.iter_select(bind(named_query("paper_creators").text, paper=block)):
            found[str(row["paper"])].append(str(row["author"]))
    return found


def _places(
    searches: list[tuple[KeptOrder, list[tuple[str, str, str]]]],
    store: GraphStore,
    kept_labels: Callable[[list[str]], dict[str, str]] | None = None,
) -> list[list[int]]:
    """Where each entry (a :func:`~.conceptindex.reading_key`; sorted) of each search goes in its kept order: binary
    searches side by side, those of every concept at once, the labels of each step's probes fetched together (from
    ``kept_labels`` first, then a query per ``BATCH`` of the others, not one per concept and step) and each paper's
    label once."""
    low = [[0] * len(entries) for _, entries in searches]
    high = [[len(kept)] * len(entries) for kept, entries in searches]
    probed: list[dict[int, tuple[str, str, str]]] = [{} for _ in searches]
    labels: dict[str, str] = {}
    while True:
        wanted = {
            (number, (low[number][i] + high[number][i]) // 2)
            for number, (_, entries) in enumerate(searches)
            for i in range(len(entries))
            if low[number][i] < high[number][i]
        }
        wanted = {(number, middle) for number, middle in wanted if middle not in probed[number]}
        iris = {(number, middle): searches[number][0][middle] for number, middle in wanted}
        wanted_labels = sorted(set(iris.values()) - labels.keys())
        if kept_labels is not None:
            labels.update(kept_labels(wanted_labels))
        for block in _values([iri for iri in wanted_labels if iri not in labels]):  # the label alone: 40% less
            rows = store.select(bind(named_query("paper_labels").text, paper=block))
            labels.update((str(r["paper"]), str(r["label"])) for r in rows)
        for (number, middle), iri in iris.items():
            probed[number][middle] = reading_key(labels[iri], iri)
        active = False
        for number, (_, entries) in enumerate(searches):
            for i, entry in enumerate(entries):
                if low[number][i] < high[number][i]:
                    active = True
                    middle = (low[number][i] + high[number][i]) // 2
                    if probed[number][middle] < entry:
                        low[number][i] = middle + 1
                    else:
                        high[number][i] = middle
        if not active:
            return low
