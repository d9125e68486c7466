"""The roles an add keeps (:mod:`.roles`): the previous version's, renumbered into the extended incidence, with the
authorships the add wrote; no read of the store.

An add's version kept none before, and its pages asked the store again (2.7 s for the most prolific author's
profile at a million papers). An add only writes triples: its new papers (each typed, a list length, an authorship
node per listed author with its person and position); a record of a paper the store holds adds a source only. So
the new roles are the previous rows, each pair renumbered as the incidence's merge moved its author and paper (one
pass over the arrays), with the added rows inserted where they sort, and the papers without a named author it
wrote added to ``others``. Whatever the added triples cannot account for keeps none (the pages ask the store, as
for a version before roles): a pair or paper new to the incidence that they do not describe (a person named only
now, whose earlier papers enter the incidence with positions the store holds), a second list length, an authorship
given twice. Cost: the arrays' passes and a binary search per added IRI.
"""

import bisect
from collections.abc import Iterable
from typing import Any

import numpy as np
import pyoxigraph as ox

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.incidence import Incidence, Strings
from bibgraph.graph.networks.incidencemerge import inserted, reprefixed
from bibgraph.graph.rdf.vocab import BG, PROV, RDF, SCHEMA
from bibgraph.graph.site.roles import Roles, matches, of_rows

_AUTHORSHIP, _AGENT, _POSITION = str(BG.authorship), str(PROV.agent), str(BG.authorPosition)
_LISTED, _TYPE, _PAPER_CLASS = str(BG.listedAuthorCount), str(RDF.type), ox.NamedNode(str(SCHEMA.ScholarlyArticle))


class AddedAuthorships:
    """What the roles read of the triples an add wrote (each new to the store): authorship nodes' papers, persons
    and positions; papers' list lengths; papers typed. Observed batch by batch (a paper's triples may be split)."""

    def __init__(self) -> None:
        self.paper: dict[str, str] = {}
        self.agent: dict[str, str] = {}
        self.position: dict[str, int] = {}
        self.listed: dict[str, int] = {}
        self.papers: list[str] = []
        self.twice = False  # a node or paper given one of these twice: the arrays cannot say it as the query would

    def observe(self, quads: Iterable[ox.Quad]) -> None:
        for quad in quads:
            subject, predicate, value = quad.subject, quad.predicate.value, quad.object
            if not isinstance(subject, ox.NamedNode):
                continue
            if predicate == _AUTHORSHIP and isinstance(value, ox.NamedNode):
                self._put(self.paper, value.value, subject.value)
            elif predicate == _AGENT and isinstance(value, ox.NamedNode):
                self._put(self.agent, subject.value, value.value)
            elif predicate == _POSITION and isinstance(value, ox.Literal):
                self._put(self.position, subject.value, _number(value))
            elif predicate == _LISTED and isinstance(value, ox.Literal):
                self._put(self.listed, subject.value, _number(value))
            elif predicate == _TYPE and value == _PAPER_CLASS:
                self.papers.append(subject.value)

    def _put(self, table: dict[str, Any], key: str, value: Any) -> None:
        self.twice |= key in table
        table[key] = value

    def rows(self) -> list[tuple[str, str, int]]:
        """(author, paper, position) of each authorship node with all three, sorted (what ``roles_positions.rq``
        joins)."""
        found = []
        for node, paper in self.paper.items():
            author, position = self.agent.get(node), self.position.get(node)
            if author is not None and position is not None:
                found.append((author, paper, position))
        return sorted(found)


def _number(literal: ox.Literal) -> int:
    try:
        return int(literal.value)
    except ValueError:
        return -(2**40)  # not a number: past what the arrays hold, so none are kept


def updated_roles(previous: Roles, before: Incidence, incidence: Incidence, added: AddedAuthorships) -> Roles | None:
    """The roles of ``incidence`` (``before`` extended by an add) from ``previous`` (``before``'s) and the triples
    the add wrote, as :func:`~.roles.roles_of` would read them from the new store; None when ``previous`` is not
    ``before``'s or the added triples do not account for what is new (above)."""
    if added.twice or not matches(previous, before):
        return None
    found = added.rows()
    authors = _numbers(incidence.authors, {author for author, _, _ in found})
    papers = _numbers(incidence.papers, {paper for _, paper, _ in found} | added.listed.keys())
    rows = []
    for author, paper, position in found:
        a, p = authors[author], papers[paper]
        if a is not None:  # an author without a name is none of the incidence's, nor of the roles'
            if p is None:
                return None  # an authorship of a named author whose paper the incidence does not pair with them
            rows.append((a, p, position))
    author_moved = _moved(before.authors, incidence.authors, authors)
    paper_moved = _moved(before.papers, incidence.papers, papers)
    if author_moved is None or paper_moved is None:
        return None  # an author or paper new to the incidence that no added authorship names
    width = max(len(incidence.papers), 1)
    owners = np.repeat(np.arange(len(before.authors), dtype=np.int64), np.diff(before.author_ptr))
    kept_pairs = author_moved[owners] * width + paper_moved[before.author_papers]  # sorted: the moves keep order
    new_rows = np.array(sorted((a * width + p, position) for a, p, position in rows), dtype=np.int64).reshape(-1, 2)
    pairs = np.repeat(np.arange(len(incidence.authors), dtype=np.int64), np.diff(incidence.author_ptr)) * width
    pairs += incidence.author_papers
    fresh = distinct(new_rows[:, 0])
    again = _within(kept_pairs, fresh)
    if not _within(pairs, kept_pairs).all() or len(pairs) != len(kept_pairs) + int((~again).sum()):
        return None  # a pair new to the incidence the added authorships do not give (a person named only now)
    keys, positions = np.repeat(kept_pairs, previous.repeats.astype(np.int64)), previous.positions.astype(np.int64)
    if again.any():  # an added authorship of a pair held before: its positions sorted among the earlier ones
        keys, positions = np.concatenate((keys, new_rows[:, 0])), np.concatenate((positions, new_rows[:, 1]))
        order = np.lexsort((positions, keys))
        keys, positions = keys[order], positions[order]
    else:
        at = np.searchsorted(keys, new_rows[:, 0])
        keys, positions = np.insert(keys, at, new_rows[:, 0]), np.insert(positions, at, new_rows[:, 1])
    listed = np.full(len(incidence.papers), -1, dtype=np.int64)
    listed[paper_moved] = previous.listed
    entered = np.ones(len(incidence.papers), dtype=bool)
    entered[paper_moved] = False  # the papers new to the incidence
    for paper, length in added.listed.items():
        p = papers[paper]
        if p is not None:
            if not entered[p] or not 0 <= length < 2**31:
                return None  # a second length for a paper held before, or one the arrays cannot hold
            listed[p] = length
    if (listed[entered] == -1).any():
        return None  # a paper new to the incidence without an added length (one the store held before)
    others = _others(previous, incidence, added)
    return of_rows(incidence.author_ptr, incidence.author_papers, keys, positions, listed, others)


def _numbers(strings: Strings, iris: set[str]) -> dict[str, int | None]:
    """Each of ``iris``' number in the sorted ``strings`` (None: not there), a binary search each."""
    return {iri: strings.find(iri) for iri in iris}


def _moved(before: Strings, after: Strings, numbers: dict[str, int | None]) -> np.ndarray | None:
    """Each of ``before``'s numbers in ``after`` (``before`` with entries inserted), given ``numbers`` (in ``after``)
    of IRIs that include every inserted one; None when the inserted ones are not all among them."""
    inserted = sorted(n for iri, n in numbers.items() if n is not None and before.find(iri) is None)
    if len(after) != len(before) + len(inserted):
        return None
    places = np.array(inserted, dtype=np.int64) - np.arange(len(inserted), dtype=np.int64)  # in ``before``'s numbers
    count = np.arange(len(before), dtype=np.int64)
    return count + np.searchsorted(places, count, side="right")


def _within(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Bool per one of ``keys``: it is one of ``sorted_keys``."""
    if not len(sorted_keys):
        return np.zeros(len(keys), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return sorted_keys[at] == keys


def _others(previous: Roles, incidence: Incidence, added: AddedAuthorships) -> Strings:
    """The previous version's papers without a named author and those the add wrote, in IRI order."""
    held = (incidence.papers, previous.others)
    fresh = sorted({paper for paper in added.papers if all(strings.find(paper) is None for strings in held)})
    if not fresh:
        return previous.others
    others = reprefixed(previous.others, fresh)
    return inserted(others, np.array([bisect.bisect_left(others, paper) for paper in fresh], dtype=np.int64), fresh)
