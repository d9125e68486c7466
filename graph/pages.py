"""The data behind each HTML page, read from the store with named SPARQL queries.

Returns plain dataclasses so that the web layer only formats; values are the store's, so a
page always agrees with what a SPARQL client sees.
"""

from collections import Counter
from dataclasses import dataclass, field

from rdflib import Graph

from .ntriples import is_iri
from .queries import named_query
from .store import GraphStore


def _bind(query: str, **iris: str) -> str:
    """Bind variables to IRIs by a ``VALUES`` clause placed at the start of the WHERE block."""
    values = " ".join(f"VALUES ?{name} {{ <{iri}> }}" for name, iri in iris.items())
    head, brace, rest = query.partition("WHERE {")
    return f"{head}{brace} {values}{rest}"


@dataclass
class AuthorPaper:
    iri: str
    label: str
    position: int
    listed: int
    truncated: bool
    subject: str | None
    area: str | None


@dataclass
class Coauthor:
    iri: str
    name: str
    joint: int


@dataclass
class AuthorProfile:
    iri: str
    name: str
    variants: list[str]
    papers: list[AuthorPaper] = field(default_factory=list)
    coauthors: list[Coauthor] = field(default_factory=list)

    @property
    def areas(self) -> list[str]:
        return sorted({p.area or p.subject for p in self.papers if p.area or p.subject})  # type: ignore[misc]


def _check_iri(iri: str) -> str:
    """``iri``, checked before it is written between ``<`` and ``>`` in a query."""
    if not is_iri(iri):
        raise ValueError(f"not an IRI: {iri!r}")
    return iri


def author_profile(store: GraphStore, iri: str) -> AuthorProfile | None:
    iri = _check_iri(iri)
    rows = store.select(_bind(named_query("author_profile").text, author=iri))
    if not rows:
        return None
    alts = str(rows[0]["alts"] or "")
    profile = AuthorProfile(iri, str(rows[0]["name"]), [a for a in alts.split("\x1f") if a])
    for row in store.select(_bind(named_query("author_papers").text, author=iri)):
        profile.papers.append(
            AuthorPaper(
                iri=str(row["paper"]),
                label=str(row["label"]),
                position=int(row["position"]),  # type: ignore[arg-type]
                listed=int(row["listed"]),
                truncated=bool(row["truncated"]),  # type: ignore[arg-type]
                subject=row["conceptLabel"] and str(row["conceptLabel"]),  # type: ignore[arg-type]
                area=row["areaLabel"] and str(row["areaLabel"]),  # type: ignore[arg-type]
            )
        )
    for row in store.select(_bind(named_query("author_coauthors").text, author=iri)):
        profile.coauthors.append(Coauthor(str(row["coauthor"]), str(row["name"]), int(row["joint"])))  # type: ignore[arg-type]
    return profile


def dataset_summary(store: GraphStore) -> dict[str, int]:
    row = store.select(named_query("dataset_summary").text)[0]
    return {key: int(value or 0) for key, value in row.items()}  # type: ignore[arg-type]


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


def paper_page(store: GraphStore, iri: str) -> PaperPage | None:
    iri = _check_iri(iri)
    rows = store.select(_bind(named_query("paper").text, paper=iri))
    if not rows:
        return None
    row = rows[0]
    page = PaperPage(
        iri=iri,
        label=str(row["label"]),
        abstract=str(row["abstract"]),
        author_list=str(row["authorList"]),
        listed=int(row["listed"]),
        truncated=bool(row["truncated"]),  # type: ignore[arg-type]
        subject=_text(row["concept"]),
        subject_label=_text(row["conceptLabel"]),
        area=_text(row["area"]),
        area_label=_text(row["areaLabel"]),
    )
    for author in store.select(_bind(named_query("paper_authors").text, paper=iri)):
        page.authors.append(
            PaperAuthor(
                int(author["position"]),
                str(author["person"]),  # type: ignore[arg-type]
                str(author["written"]),
                str(author["name"]),
            )
        )
    page.sources = [
        (str(s["file"]), int(s["line"]))
        for s in store.select(  # type: ignore[arg-type]
            _bind(named_query("paper_sources").text, paper=iri)
        )
    ]
    return page


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
    narrower: list[Listed]
    papers: list[Listed]
    top_authors: list[Listed]
    page: int
    more: bool


PAGE_SIZE = 50


def concept_page(store: GraphStore, iri: str, page: int = 1) -> ConceptPage | None:
    iri = _check_iri(iri)
    rows = store.select(_bind(named_query("concept").text, concept=iri))
    if not rows:
        return None
    first = rows[0]
    broader = Listed(str(first["broader"]), str(first["broaderLabel"])) if first["broader"] else None
    narrower = [Listed(str(r["narrower"]), str(r["narrowerLabel"])) for r in rows if r["narrower"]]
    offset = (page - 1) * PAGE_SIZE
    paper_rows = store.select(
        _bind(named_query("concept_papers").text, concept=iri) + f" LIMIT {PAGE_SIZE + 1} OFFSET {offset}"
    )
    papers = [Listed(str(r["paper"]), str(r["label"]), str(r["authorList"])) for r in paper_rows[:PAGE_SIZE]]
    authors = [
        Listed(str(r["author"]), str(r["name"]), int(r["papers"]))  # type: ignore[arg-type]
        for r in store.select(_bind(named_query("concept_authors").text, concept=iri))
    ]
    return ConceptPage(iri, str(first["label"]), broader, narrower, papers, authors, page, len(paper_rows) > PAGE_SIZE)


@dataclass
class Charts:
    """Figures of the home page."""

    per_concept: list[tuple[str, str, str | None, int]]  # (concept IRI, label, area label, papers)
    authors_per_paper: list[tuple[int, int]]  # (listed authors, papers)
    degree_histogram: list[tuple[int, int]]  # (co-authors, authors)


def charts(store: GraphStore, authors: int) -> Charts:
    per_concept = [
        (str(r["concept"]), str(r["label"]), _text(r["areaLabel"]), int(r["papers"]))  # type: ignore[arg-type]
        for r in store.select(named_query("papers_per_concept").text)
    ]
    per_paper = [
        (int(r["listed"]), int(r["papers"]))  # type: ignore[arg-type]
        for r in store.select(named_query("authors_per_paper").text)
    ]
    degrees = [int(r["degree"]) for r in store.select(named_query("coauthor_degrees").text)]  # type: ignore[arg-type]
    histogram = Counter(degrees)
    if authors > len(degrees):
        histogram[0] += authors - len(degrees)
    return Charts(per_concept, per_paper, sorted(histogram.items()))


def search_documents(store: GraphStore) -> list[tuple[str, str, str, str]]:
    """(IRI, kind, text, title) of everything the search box looks in."""
    rows = store.select(named_query("search_documents").text)
    return [(str(r["item"]), str(r["kind"]), str(r["text"]), str(r["title"])) for r in rows]


def resource_description(store: GraphStore, iri: str) -> Graph:
    """The RDF a dereferenced IRI answers with (its triples, plus its authorship and source nodes)."""
    return store.construct(_bind(named_query("resource_description").text, resource=_check_iri(iri)))
