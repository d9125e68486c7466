"""The incidence a dataset build keeps (:mod:`.incidence`), made from what its own pass knows once the persons are
decided, not read back from its store.

Reading it back (:func:`~.incidence.incidence_of`: five queries over every creator, name, subject and truncated
list) was the derive's first store read: 10.0 CPU-s of a build at 100,000 papers. The build holds it
already: each distinct paper's id in reading order, each authorship's person (its paper's ``dcterms:creator``s), each
person's name (its one ``foaf:name``), the papers whose author list was cut (their first record's, the one whose
``bg:authorListTruncated`` is written), each paper's concepts and each concept's label and area. As in
:mod:`~bibgraph.graph.site.rolesbuild`, papers and persons are numbered in the order of their ids and keys, which
is their IRIs' (IRIs of one kind share their prefix); papers without an author and persons without an authorship
are left out, as the store read leaves them out. The arrays are the store read's, array for array.
"""

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks.incidence import Concept, Incidence, Strings, assembled, concept_order, distinct_pairs


@dataclass
class Subjects:
    """Every (paper, concept) a build stated, compact: the papers' ids as numbers, an index of ``concepts`` each."""

    papers: np.ndarray  # uint64: int(paper id, 16)
    concept: np.ndarray  # int64: an index of ``concepts``
    concepts: list[Concept]


def subjects_of(stated: dict[int, tuple[str, ...]], concepts: dict[str, Concept]) -> Subjects:
    """The pairs of ``stated`` (each paper's number: its concepts' IRIs), each concept described by ``concepts``."""
    index = {iri: number for number, iri in enumerate(concepts)}
    papers, concept = array("Q"), array("q")
    for number, iris in stated.items():
        for iri in iris:
            papers.append(number)
            concept.append(index[iri])
    return Subjects(
        np.frombuffer(papers, dtype=np.uint64).copy(),
        np.frombuffer(concept, dtype=np.int64).copy(),
        list(concepts.values()),
    )


def numbered(
    order: Sequence[str], lengths: np.ndarray, person: np.ndarray, keys: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A build's papers and persons numbered as the incidence numbers them (the roles number them alike): the
    papers with authors by id, the persons with authorships by key. ``lengths``: each paper's authorships, in
    reading order. Gives ``by_id`` (reading index of each numbered paper), ``paper_number`` (each paper's number,
    -1 without authors), ``by_key`` and ``author_number`` (the same for the persons, indices of ``keys``)."""
    by_id = np.array(sorted(np.flatnonzero(lengths > 0).tolist(), key=order.__getitem__), dtype=np.int64)
    paper_number = np.full(len(lengths), -1, dtype=np.int64)
    paper_number[by_id] = np.arange(len(by_id), dtype=np.int64)
    held = np.bincount(person, minlength=len(keys)) > 0
    by_key = np.array(sorted(np.flatnonzero(held).tolist(), key=keys.__getitem__), dtype=np.int64)
    author_number = np.full(len(keys), -1, dtype=np.int64)
    author_number[by_key] = np.arange(len(by_key), dtype=np.int64)
    return by_id, paper_number, by_key, author_number


def incidence_of_persons(
    order: Sequence[str],
    starts: np.ndarray,
    person: np.ndarray,
    keys: Sequence[str],
    names: Sequence[str],
    truncated: Iterable[int],
    subjects: Subjects,
    heads: tuple[str, str],
) -> Incidence:
    """The incidence of a build's papers: ``order``, each distinct paper's id in reading order; ``starts``, where each
    one's authorships begin; ``person``, each authorship's person (an index of ``keys`` and ``names``, the persons'
    IRI keys and names); ``truncated``, the numbers (``int(id, 16)``) of the papers whose list was cut; ``subjects``,
    their concepts; ``heads``, a paper's and a person's IRI without its id or key. The IRIs are never made: their
    text is held as the ids' and keys' (:meth:`~.incidence.Strings.joined`), the build's strings already."""
    paper_head, person_head = heads
    lengths: np.ndarray = np.diff(np.asarray(starts, dtype=np.int64))
    by_id, paper_number, by_key, author_number = numbered(order, lengths, person, keys)
    record = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    authorships = distinct_pairs(paper_number[record], author_number[person], max(len(by_key), 1))
    del record, paper_number, author_number
    ids = [order[r] for r in by_id.tolist()]
    numbers = np.array([int(paper, 16) for paper in ids], dtype=np.uint64)  # the papers' ids, in incidence order
    papers_by_number = np.argsort(numbers, kind="stable")
    flags = np.zeros(len(ids), dtype=bool)
    flags[_found(numbers, papers_by_number, np.array(list(truncated), dtype=np.uint64))[0]] = True
    paper, index = _found(numbers, papers_by_number, subjects.papers)
    concept = subjects.concept[index]
    # a concept only of papers left out is left out too
    used = sorted(distinct(concept).tolist(), key=lambda c: concept_order(subjects.concepts[c]))
    concepts = [subjects.concepts[c] for c in used]
    concept_new = np.full(len(subjects.concepts), -1, dtype=np.int64)
    concept_new[used] = np.arange(len(used), dtype=np.int64)
    return assembled(
        Strings.joined(person_head, [keys[a] for a in by_key.tolist()]),
        Strings.of(names[a] for a in by_key.tolist()),
        Strings.joined(paper_head, ids),
        flags,
        authorships,
        distinct_pairs(paper, concept_new[concept], max(len(concepts), 1)),
        concepts,
    )


def _found(numbers: np.ndarray, by_number: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The incidence's paper of each of ``wanted`` (paper numbers) that is one of ``numbers`` (``by_number``: their
    sorting order), and where in ``wanted`` each was."""
    sorted_numbers = numbers[by_number]
    at = np.searchsorted(sorted_numbers, wanted)
    inside = at < len(sorted_numbers)
    inside[inside] = sorted_numbers[at[inside]] == wanted[inside]
    where = np.flatnonzero(inside)
    return by_number[at[where]], where
