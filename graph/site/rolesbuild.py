"""The roles a build keeps (:mod:`.roles`), made from what its own pass knows once the persons are decided.

Reading them back from the store took three queries over every authorship after the build: +16.3 CPU-s at 100,000
papers, +343.6 CPU-s and a 1.10 GB peak at a million. The build holds them already: each distinct paper's record in
reading order (its id, its authors: the list length it writes as ``bg:listedAuthorCount``), each authorship's
person and its place in the list (``bg:authorPosition`` is that place + 1). The incidence a dataset reads from the
store is these papers and persons in IRI order (a paper with no author left out), and the IRIs of one kind share
their prefix: the ids' order is the IRIs'. So the arrays are numbered here without a single IRI, and the checksum of
the pairs made here is the one :func:`~.roles.matches` asks of the incidence the dataset keeps (made by the same
pass, :mod:`~bibgraph.graph.networks.incidencebuild`): one that says otherwise keeps none.
"""

from collections.abc import Callable, Sequence

import numpy as np

from bibgraph.graph.networks.incidence import Strings
from bibgraph.graph.networks.incidencebuild import numbered
from bibgraph.graph.site.roles import Roles, of_rows


def roles_of_persons(
    order: Sequence[str],
    starts: np.ndarray,
    person: np.ndarray,
    keys: Sequence[str],
    paper_iri: Callable[[str], str],
) -> Roles | None:
    """The roles of a build's papers: ``order``, each distinct paper's id in reading order; ``starts``, where each
    one's authorships begin (its ``k``-th author is authorship ``starts[r] + k``); ``person``, each authorship's
    person (an index of ``keys``, the persons' IRI keys); ``paper_iri`` makes a paper's IRI (of those without an
    author only). None as :func:`~.roles.of_rows` refuses."""
    lengths: np.ndarray = np.diff(np.asarray(starts, dtype=np.int64))
    by_id, paper_number, by_key, author_number = numbered(order, lengths, person, keys)  # the incidence's numbers
    record = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    width = max(len(by_id), 1)
    keyed = author_number[person]  # then author * width + paper, in place: at a million papers each copy is 36 MB
    keyed *= width
    keyed += paper_number[record]
    positions = np.arange(1, len(person) + 1, dtype=np.int64)
    positions -= np.asarray(starts, dtype=np.int64)[record]
    del record, paper_number, author_number
    # authorships are in reading order, a record's in list order: a stable sort keeps a pair's positions ascending
    sort = np.argsort(keyed, kind="stable")
    keyed = keyed[sort]
    positions = positions[sort].astype(np.int32)
    del sort
    first = np.r_[True, keyed[1:] != keyed[:-1]] if len(keyed) else np.zeros(0, dtype=bool)
    author_ptr = np.searchsorted(keyed[first] // width, np.arange(len(by_key) + 1)).astype(np.int64)
    author_papers = (keyed[first] % width).astype(np.int32)
    del first
    others = Strings.of(sorted(paper_iri(order[r]) for r in np.flatnonzero(lengths == 0).tolist()))
    return of_rows(author_ptr, author_papers, keyed, positions, lengths[by_id], others)
