"""The shortest chain of co-authors between two authors, searched in the incidence every network is made from.

A bidirectional breadth-first search over the co-author relation, each step one gather of the incidence's arrays
(a frontier's papers, their authors), always growing the smaller side. Authors and papers are numbered in IRI
order, so the tie rules are the IRIs': each new author is reached from the least author of the frontier that
wrote with it, through their least joint paper; the two sides meet at the author nearest the target, the least
IRI among equals. A frontier larger than ``FRONTIER_CAP`` authors, or a chain longer than ``MAX_STEPS`` co-author
steps, ends the search with an answer that says so; so does the request's time budget, checked before each step.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from bibgraph.graph.arrays.sets import first_of_each
from bibgraph.graph.networks.incidence import Incidence, ranges

MAX_STEPS = 12  # co-author steps (collaboration distance) searched at most
FRONTIER_CAP = 20_000  # authors of one side's frontier grown at most, per step
_END, _UNREACHED = -1, -2  # an author's parent: the end its side starts from, or not reached from that side


@dataclass
class PathResult:
    """``chain``: author, paper, author, ... (empty when none was found); ``missing``: the ends that are no
    author; ``exhausted``: the search saw every author reachable from one end (so "not connected" is certain);
    ``steps``: the collaboration distance searched when the search gave up (``exhausted`` false);
    ``out_of_time``: it gave up because its time budget was spent."""

    chain: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    exhausted: bool = False
    steps: int = 0
    out_of_time: bool = False


def collaboration_path(inc: Incidence, source: str, target: str, seconds: float = float("inf")) -> PathResult:
    """The shortest chain author, paper, author, ... from ``source`` to ``target`` (IRIs of people), searched
    for at most ``seconds``."""
    deadline = time.monotonic() + seconds
    ends = {iri: inc.author_id(iri) for iri in dict.fromkeys((source, target))}
    missing = [iri for iri, number in ends.items() if number is None]
    if missing:
        return PathResult(missing=missing)
    start, end = int(ends[source]), int(ends[target])  # type: ignore[arg-type]  # none missing
    if start == end:
        return PathResult(chain=[source])
    # per side: each author's parent (the author one step nearer that side's end) and their joint paper; int32 (ids
    # of a million papers' authors): a search holds 4 numbers an author, 29 MB at a million papers
    parent = [np.full(len(inc.authors), _UNREACHED, dtype=np.int32) for _ in range(2)]
    via = [np.full(len(inc.authors), _UNREACHED, dtype=np.int32) for _ in range(2)]
    parent[0][start] = parent[1][end] = _END
    frontiers = [np.array([start]), np.array([end])]
    depth = [0, 0]
    while depth[0] + depth[1] < MAX_STEPS:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        if not len(frontiers[side]):
            return PathResult(exhausted=True)
        if len(frontiers[side]) > FRONTIER_CAP:
            break
        if time.monotonic() >= deadline:
            return PathResult(steps=depth[0] + depth[1], out_of_time=True)
        author, coauthor, paper = _coauthors(inc, frontiers[side])
        fresh = parent[side][coauthor] == _UNREACHED
        author, coauthor, paper = author[fresh], coauthor[fresh], paper[fresh]
        grown, first = first_of_each(coauthor)  # rows sorted by (author, co-author, paper): the least of each
        parent[side][grown], via[side][grown] = author[first], paper[first]
        depth[side] += 1
        frontiers[side] = grown
        met = grown[parent[1 - side][grown] != _UNREACHED]
        if len(met):
            distance = [_distance(parent[1 - side], int(number)) for number in met]
            meeting = int(min(zip(distance, met.tolist(), strict=True))[1])  # ids in IRI order: the least IRI
            chain = _chain(parent[0], via[0], meeting)[::-1] + _chain(parent[1], via[1], meeting)[1:]
            return PathResult(chain=[_iri(inc, step, number) for step, number in enumerate(chain)])
    return PathResult(steps=depth[0] + depth[1])


def _coauthors(inc: Incidence, authors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(author, co-author, joint paper) of ``authors``, a row per joint paper, sorted by all three."""
    starts = inc.author_ptr[authors]
    lengths = inc.author_ptr[authors + 1] - starts
    papers = inc.author_papers[ranges(starts, lengths)]
    writers = np.repeat(authors, lengths)
    starts, lengths = inc.paper_ptr[papers], inc.paper_ptr[papers + 1] - inc.paper_ptr[papers]
    coauthors = inc.ap_author[ranges(starts, lengths)].astype(np.int64)
    writer, paper = np.repeat(writers, lengths), np.repeat(papers, lengths).astype(np.int64)
    other = coauthors != writer
    writer, coauthors, paper = writer[other], coauthors[other], paper[other]
    order = np.lexsort((paper, coauthors, writer))
    return writer[order], coauthors[order], paper[order]


def _distance(parent: np.ndarray, author: int) -> int:
    steps = 0
    while (author := int(parent[author])) != _END:
        steps += 1
    return steps


def _chain(parent: np.ndarray, via: np.ndarray, author: int) -> list[int]:
    """author, paper, author, ... (numbers) from ``author`` back to the end its side started from."""
    chain = [author]
    while parent[author] != _END:
        chain += [int(via[author]), int(parent[author])]
        author = int(parent[author])
    return chain


def _iri(inc: Incidence, step: int, number: int) -> str:
    """The IRI of a chain's ``step``: authors at even steps, papers at odd ones."""
    return inc.papers[number] if step % 2 else inc.authors[number]
