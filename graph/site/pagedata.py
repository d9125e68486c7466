"""The data behind each HTML page (an author's: :mod:`.profile`), read from the store with named SPARQL queries:
plain dataclasses, so that the web layer only formats; values are the store's, so a page always agrees with what a
SPARQL client sees."""

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rdflib import Graph

from bibgraph.graph.rdf.ntriples import is_iri
from bibgraph.graph.site.closepapers import close_papers
from bibgraph.graph.site.conceptindex import ConceptFigures, paper_items, reading_key
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import GraphStore

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence


def check_iri(iri: str) -> str:
    """``iri``, checked before it is written between ``<`` and ``>`` in a query."""
    if not is_iri(iri):
        raise ValueError(f"not an IRI: {iri!r}")
    return iri


def dataset_summary(store: GraphStore) -> dict[str, int]:
    row = store.select(named_query("dataset_summary").text)[0]
    return {key: integer(value) for key, value in row.items()}


@dataclass
class PaperAuthor:
    position: int
    iri: str
    written: str
    name: str


@dataclass
class PaperPage:
    iri: str
    label: str
    abstract: str
    author_list: str
    listed: int
    truncated: bool
    subject: str | None
    subject_label: str | None
    area: str | None
    area_label: str | None
    authors: list[PaperAuthor] = field(default_factory=list)
    sources: list[tuple[str, int]] = field(default_factory=list)
    by_authors: list["Listed"] = field(default_factory=list)  # papers sharing authors (detail: how many)
    by_subject: list["Listed"] = field(default_factory=list)  # other papers of the same subarea


RELATED = 10  # papers listed as sharing authors, and as of the same subarea


def paper_page(
    store: GraphStore,
    iri: str,
    subject_papers: Callable[[str, int], list[str] | None] = lambda concept, n: None,
    incidence: "Incidence | None" = None,
    titles: Callable[[list[str]], dict[str, str]] | None = None,
) -> PaperPage | None:
    """A paper's page. ``subject_papers(concept, n)``: the first ``n`` papers of ``concept`` in page order, when
    known (:mod:`.conceptindex`); ``incidence``, ``titles``: :func:`.closepapers.close_papers`'s."""
    iri = check_iri(iri)
    rows = store.select(bind(named_query("paper").text, paper=iri))
    if not rows:
        return None
    page = paper_from_row(iri, rows[0])
    page.authors = [author_from_row(row) for row in store.select(bind(named_query("paper_authors").text, paper=iri))]
    page.sources = [
        (str(s["file"]), integer(s["line"])) for s in store.select(bind(named_query("paper_sources").text, paper=iri))
    ]
    page.by_authors = [
        Listed(str(r["other"]), str(r["label"]), integer(r["shared"]))
        for r in store.select(bind(named_query("related_by_authors").text, paper=iri))
    ]
    # "More in" the subject: papers by co-authors of the authors first, then the subject's in page order.
    close = [Listed(*found) for found in close_papers(store, iri, RELATED, incidence, titles)]
    shown = {item.iri for item in page.by_authors} | {item.iri for item in close}
    first = subject_papers(page.subject, 2 * RELATED + 1) if page.subject else None
    if first is None:
        rows = store.select(bind(named_query("related_by_subject").text, paper=iri))
        same = [Listed(str(r["other"]), str(r["label"])) for r in rows]
    else:
        same = [
            Listed(other, label)
            for other, label, _ in paper_items(store, [p for p in first if p != iri][: 2 * RELATED])
        ]
    page.by_subject = (close + [item for item in same if item.iri not in shown])[:RELATED]
    return page


def paper_from_row(iri: str, row: Mapping[str, object]) -> PaperPage:
    """A paper's facts from a row of the ``paper`` query (or ``citation_papers``, which adds ``?paper``)."""
    return PaperPage(
        iri=iri,
        label=str(row["label"]),
        abstract=str(row["abstract"]),
        author_list=str(row["authorList"]),
        listed=integer(row["listed"]),
        truncated=bool(row["truncated"]),
        subject=text_of(row["concept"]),
        subject_label=text_of(row["conceptLabel"]),
        area=text_of(row["area"]),
        area_label=text_of(row["areaLabel"]),
    )


def author_from_row(row: Mapping[str, object]) -> PaperAuthor:
    return PaperAuthor(integer(row["position"]), str(row["person"]), str(row["written"]), str(row["name"]))


def text_of(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass
class Listed:
    iri: str
    label: str
    detail: str | int | None = None


@dataclass
class ConceptPage:
    iri: str
    label: str
    broader: Listed | None
    narrower: list[Listed]  # detail: papers
    papers: list[Listed]
    top_authors: list[Listed]
    page: int
    paper_count: int = 0
    author_count: int = 0

    @property
    def pages(self) -> int:
        return max(1, -(-self.paper_count // PAGE_SIZE))


PAGE_SIZE = 50


def concept_page(
    store: GraphStore,
    figures: dict[str, ConceptFigures],
    iri: str,
    page: int,
    papers_at: Callable[[int, int], list[str]],
) -> ConceptPage | None:
    """Page ``page`` of a concept, from its figures (:mod:`.conceptindex`) and ``papers_at(offset, count)``, the
    IRIs of its papers in page order: only the shown papers are read from the store."""
    concept = figures.get(iri)
    if concept is None:
        return None
    broader = figures.get(concept.broader) if concept.broader else None
    offset = (page - 1) * PAGE_SIZE
    papers = [Listed(*item) for item in paper_items(store, papers_at(offset, min(PAGE_SIZE, concept.papers - offset)))]
    return ConceptPage(
        iri,
        concept.label,
        Listed(broader.iri, broader.label) if broader else None,
        [Listed(*subarea) for subarea in concept.subareas],
        papers,
        [Listed(*author) for author in concept.top_authors],
        page,
        concept.papers,
        concept.authors,
    )


@dataclass
class TreeArea:
    iri: str
    label: str
    papers: int
    authors: int
    subareas: list["TreeArea"] = field(default_factory=list)


def concept_tree(figures: dict[str, ConceptFigures]) -> list[TreeArea]:
    """Areas (most papers first, then by label) with their subareas; an area's counts include its subareas'."""

    def ranked(concepts: list[ConceptFigures]) -> list[ConceptFigures]:
        return sorted(concepts, key=lambda c: (-c.papers, *reading_key(c.label, c.iri)))

    def node(concept: ConceptFigures) -> TreeArea:
        return TreeArea(concept.iri, concept.label, concept.papers, concept.authors)

    areas = {c.iri: node(c) for c in ranked([c for c in figures.values() if c.broader is None])}
    for concept in ranked([c for c in figures.values() if c.broader is not None]):
        if concept.broader in areas:
            areas[concept.broader].subareas.append(node(concept))
    return list(areas.values())


@dataclass
class Charts:
    """Figures of the home page."""

    authors_per_paper: list[tuple[int, int]]  # (listed authors, papers)
    degree_histogram: list[tuple[int, int]]  # (co-authors, authors)


def charts(store: GraphStore, authors: int, degrees: Counter[int]) -> Charts:
    """The home page's charts; ``authors`` counts every person, ``degrees`` are the co-author degrees of those with
    papers (the network engine's count from the incidence)."""
    per_paper = [
        (integer(r["listed"]), integer(r["papers"])) for r in store.select(named_query("authors_per_paper").text)
    ]
    histogram = Counter(degrees)
    listed = sum(histogram.values())
    if authors > listed:
        histogram[0] += authors - listed
    return Charts(per_paper, sorted(histogram.items()))


def item_labels(store: GraphStore, iris: list[str]) -> dict[str, str]:
    """The name of each author and the label of each paper among ``iris`` (those that exist): a collaboration
    path's steps, in one query."""
    if not iris:
        return {}
    return {str(r["item"]): str(r["label"]) for r in store.select(bind(named_query("path_labels").text, item=iris))}


def abstracts(store: GraphStore, iris: list[str]) -> dict[str, str]:
    """The abstracts of a few papers (a page of search results), in one query."""
    if not iris:
        return {}
    query = bind(named_query("abstracts").text, paper=iris)
    return {str(r["paper"]): str(r["abstract"]) for r in store.select(query)}


def resource_description(store: GraphStore, iri: str) -> Graph:
    """The RDF a dereferenced IRI answers with (its triples, plus its authorship and source nodes)."""
    return store.construct(bind(named_query("resource_description").text, resource=iri))


def histogram_bins(counts: list[tuple[int, int]], most: int = 24) -> list[tuple[str, int]]:
    """(x, count) pairs as at most ``most`` equal-width bins from the smallest x to the largest, empty bins kept."""
    if not counts:
        return []
    low, high = min(x for x, _ in counts), max(x for x, _ in counts)
    width = max(1, -(-(high - low + 1) // most))
    bins = [0] * (-(-(high - low + 1) // width))
    for x, count in counts:
        bins[(x - low) // width] += count
    starts = [low + i * width for i in range(len(bins))]
    ends = [min(high, start + width - 1) for start in starts]  # the last bin may hold one value: "26", not "26-26"
    labels = [str(start) if start == end else f"{start}\u2013{end}" for start, end in zip(starts, ends, strict=True)]
    return list(zip(labels, bins, strict=True))
