"""An author's page data: the papers with their roles and areas, the co-authors most shown first.

Read from the store with named queries, or, when a dataset keeps its incidence, with the co-authors, subjects and
cut lists from its arrays (the store asked only what they lack). At a million papers the most prolific author has
2,793 papers and 13,342 co-authors: only the co-authors a page shows are named and sorted."""

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from bibgraph.graph.site.conceptindex import reading_key
from bibgraph.graph.site.pagedata import check_iri, text_of
from bibgraph.graph.site.roles import Roles, authorships
from bibgraph.graph.site.search import fold
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
    coauthors: list[Coauthor] = field(default_factory=list)  # the most joint papers first; those a page shows
    coauthor_count: int = 0  # all of them

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
COAUTHORS_SHOWN = 200  # co-authors a page lists (the ten first in a table, the rest under "show all")


def author_profile(
    store: GraphStore,
    iri: str,
    incidence: "Incidence | None" = None,
    titles: Callable[[list[str]], dict[str, str]] | None = None,
    shown: int | None = None,
    roles: Roles | None = None,
) -> AuthorProfile | None:
    """The author's page data; the co-authors from ``incidence`` when given (a dataset's, kept by its build: the
    same pairs the store's ``dcterms:creator`` triples make), else from the store (at 100k papers through an engine
    the most prolific author's co-author query took seconds); with it, labels from ``titles`` (a search index's).
    The profile lists the ``shown`` (default :data:`COAUTHORS_SHOWN`) co-authors of most joint papers (then by
    name), and counts them all. With the ``roles`` the dataset keeps beside that incidence, and ``titles``, no
    paper's facts are read from the store."""
    iri = check_iri(iri)
    shown = COAUTHORS_SHOWN if shown is None else shown
    rows = store.select(bind(named_query("author_profile").text, author=iri))
    if not rows:
        return None
    alts = str(rows[0]["alts"] or "")
    profile = AuthorProfile(iri, str(rows[0]["name"]), sorted(a for a in alts.split("\x1f") if a))
    found_papers = papers_from(store, incidence, iri, titles, roles) if incidence is not None else None
    if found_papers is None:
        found_papers = []
        for row in store.select(bind(named_query("author_papers").text, author=iri)):
            facts = (str(row["paper"]), str(row["label"]), integer(row["position"]), integer(row["listed"]))
            concepts = (text_of(row[key]) for key in ("conceptLabel", "areaLabel", "concept", "area"))
            found_papers.append(AuthorPaper(*facts, bool(row["truncated"]), *concepts))
    profile.papers = sorted(found_papers, key=_page_order)
    found = coauthors_from(incidence, iri, shown) if incidence is not None else None
    if found is None:
        rows = store.select(bind(named_query("author_coauthors").text, author=iri))
        every = [Coauthor(str(row["coauthor"]), str(row["name"]), integer(row["joint"])) for row in rows]
        found = sorted(every, key=_coauthor_order)[:shown], len(every)
    profile.coauthors, profile.coauthor_count = found
    return profile


def _coauthor_order(coauthor: Coauthor) -> tuple[int, str, str, str]:
    """Most joint papers first, then by name (:func:`reading_key`)."""
    return -coauthor.joint, *reading_key(coauthor.name, coauthor.iri)


def _page_order(paper: AuthorPaper) -> tuple[str, ...]:
    """Papers by label (:func:`reading_key`); a paper listed twice (two subjects, or the author twice) in one order
    whichever way its rows were read."""
    return *reading_key(paper.label, paper.iri), f"{paper.position:09d}", paper.subject_iri or "", paper.area_iri or ""


def papers_from(
    store: GraphStore,
    incidence: "Incidence",
    iri: str,
    titles: Callable[[list[str]], dict[str, str]] | None = None,
    roles: Roles | None = None,
) -> list[AuthorPaper] | None:
    """The author's papers as ``author_papers.rq`` gives them, their subjects, areas and cut lists from the kept
    ``incidence`` (None: the author or a paper of theirs is not in it), labels from ``titles`` when it holds each
    one, positions and list lengths from the kept ``roles`` (those of this incidence) with them, else as
    ``author_paper_roles.rq`` answers. A paper's number comes from the author's own row of the incidence (not a
    search of every paper's IRI)."""
    import numpy as np  # not loaded by a server's start (nor is the incidence's module)

    author = incidence.author_id(iri)
    if author is None:
        return None
    numbers = incidence.papers_of(np.array([author]))
    number_of = {incidence.papers[int(p)]: int(p) for p in numbers}
    facts_query = bind(named_query("author_paper_facts").text, author=iri)
    rows: Sequence[Mapping[str, object]]
    if roles is not None and titles is not None:
        kept = authorships(roles, incidence, author)
        iris = incidence.papers.take(np.array([paper for paper, _, _ in kept], dtype=np.int64))
        rows = [{"paper": p, "position": at, "listed": n} for p, (_, at, n) in zip(iris, kept, strict=True)]
    else:
        rows = store.select(bind(named_query("author_paper_roles").text, author=iri) if titles else facts_query)
    if titles is not None:
        labels = titles(sorted({str(row["paper"]) for row in rows}))
        held = all(str(row["paper"]) in labels for row in rows)  # not: a paper without abstract (not searchable)
        rows = [{**row, "label": labels[str(row["paper"])]} for row in rows] if held else store.select(facts_query)
    if any(str(row["paper"]) not in number_of for row in rows):
        return None
    papers = np.array([number_of[str(row["paper"])] for row in rows], dtype=incidence.pc_paper.dtype)
    firsts, lasts = (incidence.pc_paper.searchsorted(papers, side=side).tolist() for side in ("left", "right"))
    found = []
    for row, paper, first, last in zip(rows, papers.tolist(), firsts, lasts, strict=True):
        subjects: list[Concept | None] = [incidence.concepts[int(c)] for c in incidence.pc_concept[first:last]]
        facts = (str(row["paper"]), str(row["label"]), integer(row["position"]), integer(row["listed"]))
        for c in subjects or [None]:
            area = c.area if c and c.area != c.concept else None  # an area is its own area in the incidence
            subject, label, area_label = (c.concept, c.label, c.area_label if area else None) if c else (None,) * 3
            found.append(AuthorPaper(*facts, bool(incidence.truncated[paper]), label, area_label, subject, area))
    return found


def coauthors_from(incidence: "Incidence", iri: str, shown: int = COAUTHORS_SHOWN) -> tuple[list[Coauthor], int] | None:
    """The author's ``shown`` co-authors of most joint papers (as ``author_coauthors.rq`` gives them, in
    :func:`_coauthor_order`) and how many there are, from the incidence (or None). Only those with at least the
    ``shown``-th count are named: the most prolific author at a million papers has 13,342 co-authors."""
    import numpy as np

    from bibgraph.graph.networks.incidence import ranges

    author = incidence.author_id(iri)
    if author is None:
        return None
    papers = incidence.papers_of(np.array([author]))
    starts, lengths = incidence.paper_ptr[papers], incidence.paper_ptr[papers + 1] - incidence.paper_ptr[papers]
    others = incidence.ap_author[ranges(starts, lengths)]
    coauthors, joint = np.unique(others[others != author], return_counts=True)
    count = len(coauthors)
    if shown < count:  # the least count among the shown: every co-author with fewer is not named
        least = np.partition(joint, count - shown)[count - shown] if shown > 0 else joint.max(initial=0) + 1
        coauthors, joint = coauthors[joint >= least], joint[joint >= least]
    # in _coauthor_order without an IRI read: the incidence numbers authors in IRI order; each name folded once
    names = incidence.names.take(coauthors)
    named = list(zip(names, coauthors.tolist(), joint.tolist(), strict=True))
    folded = {name: fold(name) for name in {name for name, _, _ in named}}
    named.sort(key=lambda item: (-item[2], folded[item[0]], item[0], item[1]))
    return [Coauthor(incidence.authors[c], name, n) for name, c, n in named[: max(shown, 0)]], count


def areas_from(incidence: "Incidence", iri: str) -> list[str] | None:
    """The labels of the areas of the author's papers' subjects, sorted, from the incidence (None: not in it): what
    ``shared_name_areas.rq`` gives a shared name's holder (1.3 s on a cold Virtuoso at 100k for 919 papers)."""
    import numpy as np

    from bibgraph.graph.arrays.sets import distinct
    from bibgraph.graph.networks.incidence import ranges

    author = incidence.author_id(iri)
    if author is None:
        return None
    papers = distinct(incidence.papers_of(np.array([author])))
    firsts = incidence.pc_paper.searchsorted(papers, side="left")
    lasts = incidence.pc_paper.searchsorted(papers, side="right")
    concepts = (incidence.concepts[int(c)] for c in distinct(incidence.pc_concept[ranges(firsts, lasts - firsts)]))
    return sorted({c.label if c.area == c.concept else c.area_label for c in concepts})
