"""The shortest chain of co-authors between two authors, found by the store, a bounded query per step.

A bidirectional breadth-first search over the co-author relation: each step asks the store for the
co-authors of one side's whole frontier (``VALUES``, in batches), always growing the smaller side, so
no process ever holds the paper-author graph. A frontier larger than ``FRONTIER_CAP`` authors, or a
chain longer than ``MAX_STEPS`` co-author steps, ends the search with an answer that says so; so does
the request's time budget (each query has its own deadline in the pool, but a search is many queries).
"""

import time
from dataclasses import dataclass, field

from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import GraphStore

MAX_STEPS = 12  # co-author steps (collaboration distance) searched at most
FRONTIER_CAP = 20_000  # authors of one side's frontier asked for at most, per step
BATCH = 500  # authors per query


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


class _OutOfTime(Exception):
    pass


def _coauthors(store: GraphStore, authors: list[str], deadline: float) -> list[tuple[str, str, str]]:
    """(author, co-author, a joint paper) for every co-author of ``authors``, the paper the smallest IRI."""
    found: list[tuple[str, str, str]] = []
    for start in range(0, len(authors), BATCH):
        if time.monotonic() >= deadline:
            raise _OutOfTime
        query = bind(named_query("path_coauthors").text, author=authors[start : start + BATCH])
        found += [(str(r["author"]), str(r["coauthor"]), str(r["via"])) for r in store.select(query)]
    return found


def labels(store: GraphStore, iris: list[str]) -> dict[str, str]:
    """The name of each author and the label of each paper among ``iris`` (those that exist)."""
    if not iris:
        return {}
    return {str(r["item"]): str(r["label"]) for r in store.select(bind(named_query("path_labels").text, item=iris))}


def collaboration_path(store: GraphStore, source: str, target: str, seconds: float = float("inf")) -> PathResult:
    """The shortest chain author, paper, author, ... from ``source`` to ``target`` (IRIs of people), searched
    for at most ``seconds`` (checked before each query)."""
    deadline = time.monotonic() + seconds
    known = labels(store, [source, target])
    missing = [iri for iri in dict.fromkeys((source, target)) if iri not in known]
    if missing:
        return PathResult(missing=missing)
    if source == target:
        return PathResult(chain=[source])
    # per side: author -> (the author one step nearer that side's end, the joint paper), and its frontier
    parents: list[dict[str, tuple[str, str] | None]] = [{source: None}, {target: None}]
    frontiers = [[source], [target]]
    depth = [0, 0]
    while depth[0] + depth[1] < MAX_STEPS:
        side = 0 if len(frontiers[0]) <= len(frontiers[1]) else 1
        if not frontiers[side]:
            return PathResult(exhausted=True)
        if len(frontiers[side]) > FRONTIER_CAP:
            break
        mine, theirs = parents[side], parents[1 - side]
        grown: list[str] = []
        try:
            found = _coauthors(store, frontiers[side], deadline)
        except _OutOfTime:
            return PathResult(steps=depth[0] + depth[1], out_of_time=True)
        for author, coauthor, paper in sorted(found):
            if coauthor not in mine:
                mine[coauthor] = (author, paper)
                grown.append(coauthor)
        depth[side] += 1
        frontiers[side] = grown
        met = [author for author in grown if author in theirs]
        if met:
            distance = {author: _distance(theirs, author) for author in met}
            meeting = min(met, key=lambda author: (distance[author], author))
            return PathResult(chain=_chain(parents[0], meeting)[::-1] + _chain(parents[1], meeting)[1:])
    return PathResult(steps=depth[0] + depth[1])


def _distance(parents: dict[str, tuple[str, str] | None], author: str) -> int:
    steps = 0
    while (step := parents[author]) is not None:
        author, steps = step[0], steps + 1
    return steps


def _chain(parents: dict[str, tuple[str, str] | None], author: str) -> list[str]:
    """author, paper, author, ... from ``author`` back to the end its side started from."""
    chain = [author]
    while (step := parents[author]) is not None:
        author = step[0]
        chain += [step[1], author]
    return chain
