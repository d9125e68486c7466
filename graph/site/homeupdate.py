"""The home page's figures after ``bibgraph add``: the previous version's counts updated with what was added, not
counted again over the whole store (a scan of every typed resource and every co-author pair: 10 of an add's CPU-s
at a million papers).

An add only adds triples (the VoID description aside, which the figures do not count), so:

- the summary (distinct papers, persons, authorships, concepts by their ``rdf:type``): the previous counts plus the
  type triples the add wrote, each a resource not typed so before;
- papers by listed authors: the previous counts plus the ``bg:listedAuthorCount`` triples written;
- authors by co-authors: only the authors of a paper that gained an author have other co-authors now; their
  previous degrees (in the previous incidence) are taken out of the previous counts and their new ones put in, and
  the persons with no paper in the incidence are counted again (degree 0), as :func:`~.pagedata.charts` does.

The raw counts are kept beside the figures (``counts``): the charts are binned, and bins cannot be updated.
numpy is imported where used: the site's page data imports this module (:func:`home_counts`), a server need not.
"""

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from bibgraph.graph.rdf.vocab import BG, DCTERMS, FOAF, RDF, SCHEMA, SKOS
from bibgraph.graph.site.conceptindex import ConceptFigures
from bibgraph.graph.site.pagedata import concept_tree, histogram_bins

if TYPE_CHECKING:
    import numpy as np

    from bibgraph.graph.networks.incidence import Incidence

# the summary's counts (pagedata.dataset_summary, ``dataset_summary.rq``) by the class each counts
SUMMARY_CLASSES = {
    str(SCHEMA.ScholarlyArticle): "papers",
    str(FOAF.Person): "authors",
    str(BG.Authorship): "authorships",
    str(SKOS.Concept): "concepts",
}
_TYPE, _LISTED = str(RDF.type), str(BG.listedAuthorCount)
_CREATOR, _NAME = str(DCTERMS.creator), str(FOAF.name)


class Written:
    """What the home figures count among the triples an add wrote (each new to the store): resources typed by a
    class the summary counts, papers by the number of authors they list."""

    def __init__(self) -> None:
        self.typed: Counter[str] = Counter()
        self.listed: Counter[int] = Counter()

    def observe(self, quads: Iterable[ox.Quad]) -> None:
        for quad in quads:
            predicate, value = quad.predicate.value, quad.object
            if predicate == _TYPE and isinstance(value, ox.NamedNode) and value.value in SUMMARY_CLASSES:
                self.typed[SUMMARY_CLASSES[value.value]] += 1
            elif predicate == _LISTED and isinstance(value, ox.Literal):
                self.listed[int(value.value)] += 1


def home_counts(authors_per_paper: list[tuple[int, int]], degrees: list[tuple[int, int]]) -> dict[str, Any]:
    """The raw counts kept beside the home figures (what :func:`updated_home` updates)."""
    return {"authors_per_paper": authors_per_paper, "degrees": degrees}


def updated_home(
    previous: Mapping[str, Any],
    written: Written,
    before: "Incidence",
    incidence: "Incidence",
    additions: Iterable[ox.Quad],
    figures: dict[str, ConceptFigures],
) -> dict[str, Any] | None:
    """The home figures of the new version (as :func:`~bibgraph.graph.dataset.sitedata.home_figures` of it) from
    the previous version's (``previous``), ``written``, the incidences before and after the add, the triples it
    wrote that the incidence reads (``additions``) and the new concept ``figures``. None when
    ``previous`` keeps no raw counts (a version from before they were kept): derived in full then."""
    import numpy as np

    from bibgraph.graph.arrays.sets import distinct

    if "counts" not in previous:
        return None
    summary = {key: value + written.typed[key] for key, value in previous["summary"].items()}
    per_paper = Counter(dict(previous["counts"]["authors_per_paper"])) + written.listed
    degrees = Counter(dict(previous["counts"]["degrees"]))
    degrees[0] -= max(0, previous["summary"]["authors"] - len(before.authors))  # persons with no paper, as charts
    authors = distinct(incidence.ap_author[_rows(incidence.paper_ptr, touched_papers(incidence, additions))])
    known = sorted(
        found for number in authors.tolist() if (found := before.author_id(incidence.authors[number])) is not None
    )
    degrees.subtract(coauthor_counts(before, np.array(known, dtype=np.int64)).tolist())
    degrees.update(coauthor_counts(incidence, authors).tolist())
    degrees[0] += max(0, summary["authors"] - len(incidence.authors))
    raw_degrees = sorted((x, n) for x, n in degrees.items() if n)
    raw_per_paper = sorted((x, n) for x, n in per_paper.items() if n)
    return {
        "summary": summary,
        "tree": concept_tree(figures),
        "authors_per_paper": histogram_bins(raw_per_paper),
        "degrees": histogram_bins(raw_degrees),
        "counts": home_counts(raw_per_paper, raw_degrees),
    }


def touched_papers(incidence: "Incidence", additions: Iterable[ox.Quad]) -> "np.ndarray":
    """The papers (numbers in ``incidence``) that gained an author through ``additions``: given a creator, or
    having one named only now (a person without a name is not in an incidence)."""
    import numpy as np

    papers, named = set(), set()
    for quad in additions:
        if not isinstance(quad.subject, ox.NamedNode):
            continue
        if quad.predicate.value == _CREATOR:
            papers.add(incidence.papers.find(quad.subject.value))
        elif quad.predicate.value == _NAME:
            named.add(incidence.author_id(quad.subject.value))
    authors = np.array(sorted(number for number in named if number is not None), dtype=np.int64)
    papers.update(incidence.author_papers[_rows(incidence.author_ptr, authors)].tolist())
    return np.array(sorted(number for number in papers if number is not None), dtype=np.int64)


def _rows(pointers: "np.ndarray", numbers: "np.ndarray") -> "np.ndarray":
    """The rows ``pointers[n] .. pointers[n + 1] - 1`` of every number ``n`` of ``numbers``, laid end to end."""
    from bibgraph.graph.networks.incidence import ranges

    return ranges(pointers[numbers], pointers[numbers + 1] - pointers[numbers])


def coauthor_counts(incidence: "Incidence", authors: "np.ndarray") -> "np.ndarray":
    """The number of distinct co-authors of each of ``authors`` (as :func:`~.coauthor.coauthor_degrees` counts
    them), from their papers' authors: work bounded by those papers, not the whole incidence."""
    import numpy as np

    from bibgraph.graph.arrays.sets import distinct

    rows = _rows(incidence.author_ptr, authors)
    owners = np.repeat(authors, incidence.author_ptr[authors + 1] - incidence.author_ptr[authors])
    papers = incidence.author_papers[rows]
    lengths = incidence.paper_ptr[papers + 1] - incidence.paper_ptr[papers]
    coauthors = incidence.ap_author[_rows(incidence.paper_ptr, papers)]
    pairs = distinct(np.repeat(owners, lengths) * len(incidence.authors) + coauthors)
    owner_of = np.searchsorted(authors, pairs // len(incidence.authors)) if len(pairs) else pairs
    return np.bincount(owner_of, minlength=len(authors)) - 1
