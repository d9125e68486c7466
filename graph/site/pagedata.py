"""The data behind each HTML page, read from the store with named SPARQL queries: plain dataclasses, so that the
web layer only formats; values are the store's, so a page always agrees with what a SPARQL client sees."""

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
    from bibgraph.graph.networks.incidence import Concept, Incidence


@dataclass
class AuthorPaper:
    iri: str
    label: str
    position: int
    listed: int
    truncated: bool
    subject: str | None  # label of the paper's subject (its subarea, or its area)
    area: str | None  # label of the subject's area, when the subject is a subarea
    subject_iri: str | None = None
    area_iri: str | None = None

    @property
    def role(self) -> str:
        """``sole``, ``first``, ``last`` or ``middle``; a cut list (等) has no known last author."""
        if self.listed == 1 and not self.truncated:
            return "sole"
        if self.position == 1:
            return "first"
        if self.position == self.listed and not self.truncated:
            return "last"
        return "middle"

    @property
    def top(self) -> tuple[str, str] | None:
        """(IRI, label) of the paper's top-level area."""
        if self.area_iri and self.area:
            return self.area_iri, self.area
        if self.subject_iri and self.subject:
            return self.subject_iri, self.subject
        return None


@dataclass
class Coauthor:
    iri: str
    name: str
    joint: int


@dataclass
class AreaCount:
    iri: str
    label: str
    papers: int


def _most_first(counts: Counter[tuple[str, str]]) -> list[AreaCount]:
    """Areas counted by (IRI, label): most papers first, then by :func:`~.conceptindex.reading_key`."""
    ranked = sorted(counts.items(), key=lambda item: (-item[1], *reading_key(item[0][1], item[0][0])))
    return [AreaCount(iri, label, n) for (iri, label), n in ranked]


@dataclass
class AuthorProfile:
    iri: str
    name: str
    variants: list[str]
    papers: list[AuthorPaper] = field(default_factory=list)
    coauthors: list[Coauthor] = field(default_factory=list)

    def count(self, role: str) -> int:
        return sum(1 for paper in self.papers if paper.role == role)

    @property
    def areas(self) -> list[AreaCount]:
        """Top-level areas with the author's papers in each, most first."""
        counts: Counter[tuple[str, str]] = Counter(p.top for p in self.papers if p.top)
        return _most_first(counts)

    @property
    def subareas(self) -> list[AreaCount]:
        counts: Counter[tuple[str, str]] = Counter(
            (p.subject_iri, f"{p.area} · {p.subject}") for p in self.papers if p.area and p.subject_iri
        )
        return _most_first(counts)

    @property
    def by_area(self) -> list[tuple[AreaCount | None, list[AuthorPaper]]]:
        """The papers grouped by top-level area (most papers first); papers without area last."""
        groups: list[tuple[AreaCount | None, list[AuthorPaper]]] = [
            (area, [p for p in self.papers if p.top and p.top[0] == area.iri]) for area in self.areas
        ]
        rest = [p for p in self.papers if not p.top]
        if rest:
            groups.append((None, rest))
        return groups

    @property
    def pages(self) -> int:
        """Pages of ``AUTHOR_PAGE_SIZE`` papers (at least one): a prolific author's list is paged, as an area's is."""
        return max(1, -(-len(self.papers) // AUTHOR_PAGE_SIZE))

    def page_span(self, page: int) -> tuple[int, int]:
        """The 1-based numbers of the first and last paper shown on page ``page``."""
        first = (page - 1) * AUTHOR_PAGE_SIZE + 1
        return first, min(len(self.papers), first - 1 + AUTHOR_PAGE_SIZE)

    def page_groups(self, page: int) -> list[tuple[AreaCount | None, list[AuthorPaper], int]]:
        """Page ``page`` (1-based) of :attr:`by_area`, grouped, each group with its whole size (a cut group goes on)."""
        start = (page - 1) * AUTHOR_PAGE_SIZE
        end = start + AUTHOR_PAGE_SIZE
        shown = []
        seen = 0
        for area, papers in self.by_area:
            part = papers[max(0, start - seen) : max(0, end - seen)]
            if part:
                shown.append((area, part, len(papers)))
            seen += len(papers)
        return shown


AUTHOR_PAGE_SIZE = 100  # papers per author page (at 100k papers, 919 papers and 4,400 co-authors took 0.3 s to render)


def _check_iri(iri: str) -> str:
    """``iri``, checked before it is written between ``<`` and ``>`` in a query."""
    if not is_iri(iri):
        raise ValueError(f"not an IRI: {iri!r}")
    return iri


def author_profile(
    store: GraphStore,
    iri: str,
    incidence: "Incidence | None" = None,
    titles: Callable[[list[str]], dict[str, str]] | None = None,
) -> AuthorProfile | None:
    """The author's page data; the co-authors from ``incidence`` when given (a dataset's, kept by its build: the
    same pairs the store's ``dcterms:creator`` triples make), else from the store (at 100k papers through an engine
    the most prolific author's co-author query took seconds); with it, labels from ``titles`` (a search index's)."""
    iri = _check_iri(iri)
    rows = store.select(bind(named_query("author_profile").text, author=iri))
    if not rows:
        return None
    alts = str(rows[0]["alts"] or "")
    profile = AuthorProfile(iri, str(rows[0]["name"]), sorted(a for a in alts.split("\x1f") if a))
    found_papers = papers_from(store, incidence, iri, titles) if incidence is not None else None
    if found_papers is None:
        found_papers = []
        for row in store.select(bind(named_query("author_papers").text, author=iri)):
            facts = (str(row["paper"]), str(row["label"]), integer(row["position"]), integer(row["listed"]))
            concepts = (_text(row[key]) for key in ("conceptLabel", "areaLabel", "concept", "area"))
            found_papers.append(AuthorPaper(*facts, bool(row["truncated"]), *concepts))
    profile.papers = sorted(found_papers, key=_page_order)
    found = coauthors_from(incidence, iri) if incidence is not None else None
    if found is None:
        rows = store.select(bind(named_query("author_coauthors").text, author=iri))
        found = [Coauthor(str(row["coauthor"]), str(row["name"]), integer(row["joint"])) for row in rows]
    profile.coauthors = found
    profile.coauthors.sort(key=lambda coauthor: (-coauthor.joint, *reading_key(coauthor.name, coauthor.iri)))
    return profile


def _page_order(paper: AuthorPaper) -> tuple[str, ...]:
    """Papers by label (:func:`reading_key`); a paper listed twice (two subjects, or the author twice) in one order
    whichever way its rows were read."""
    return *reading_key(paper.label, paper.iri), f"{paper.position:09d}", paper.subject_iri or "", paper.area_iri or ""


def papers_from(
    store: GraphStore, incidence: "Incidence", iri: str, titles: Callable[[list[str]], dict[str, str]] | None = None
) -> list[AuthorPaper] | None:
    """The author's papers as ``author_papers.rq`` gives them, their subjects, areas and cut lists from the kept
    ``incidence`` (None: the author or a paper is not in it), labels from ``titles`` when it holds each one."""
    if incidence.author_id(iri) is None:
        return None
    facts_query = bind(named_query("author_paper_facts").text, author=iri)
    rows = store.select(bind(named_query("author_paper_roles").text, author=iri) if titles else facts_query)
    if titles is not None:
        labels = titles(sorted({str(row["paper"]) for row in rows}))
        held = all(str(row["paper"]) in labels for row in rows)  # not: a paper without abstract (not searchable)
        rows = [{**row, "label": labels[str(row["paper"])]} for row in rows] if held else store.select(facts_query)
    found = []
    for row in rows:
        paper = incidence.papers.find(str(row["paper"]))
        if paper is None:
            return None
        key = incidence.pc_paper.dtype.type(paper)  # a list (int64) made numpy copy the int32 array at each call
        first, last = (incidence.pc_paper.searchsorted(key, side=side) for side in ("left", "right"))
        subjects: list[Concept | None] = [incidence.concepts[int(c)] for c in incidence.pc_concept[first:last]]
        facts = (str(row["paper"]), str(row["label"]), integer(row["position"]), integer(row["listed"]))
        for c in subjects or [None]:
            area = c.area if c and c.area != c.concept else None  # an area is its own area in the incidence
            subject, label, area_label = (c.concept, c.label, c.area_label if area else None) if c else (None,) * 3
            found.append(AuthorPaper(*facts, bool(incidence.truncated[paper]), label, area_label, subject, area))
    return found


def coauthors_from(incidence: "Incidence", iri: str) -> list[Coauthor] | None:
    """The author's co-authors and joint papers from the incidence, as ``author_coauthors.rq`` gives them (or None)."""
    import numpy as np  # not loaded by a server's start (nor is the incidence's module)

    from bibgraph.graph.networks.incidence import ranges

    author = incidence.author_id(iri)
    if author is None:
        return None
    papers = incidence.author_papers[incidence.author_ptr[author] : incidence.author_ptr[author + 1]]
    starts, lengths = incidence.paper_ptr[papers], incidence.paper_ptr[papers + 1] - incidence.paper_ptr[papers]
    others = incidence.ap_author[ranges(starts, lengths)]
    coauthors, joint = np.unique(others[others != author], return_counts=True)
    return [Coauthor(incidence.authors[c], incidence.names[c], int(n)) for c, n in zip(coauthors, joint, strict=True)]


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
    iri = _check_iri(iri)
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
        subject=_text(row["concept"]),
        subject_label=_text(row["conceptLabel"]),
        area=_text(row["area"]),
        area_label=_text(row["areaLabel"]),
    )


def author_from_row(row: Mapping[str, object]) -> PaperAuthor:
    return PaperAuthor(integer(row["position"]), str(row["person"]), str(row["written"]), str(row["name"]))


def _text(value: object) -> str | None:
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
    more: bool
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
        offset + PAGE_SIZE < concept.papers,
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
