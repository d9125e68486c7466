"""The whole co-author network's exports (every author, no filter) written from the incidence's arrays.

As a networkx graph the whole network costs about a kilobyte per author and link (+740 MB at 100,000 papers, 12 GB
of derive at a million): a dataset keeps its exports, not the graph. Here the links are counted by
:func:`.coauthor.joint_links`, the communities found by igraph from the arrays, and each format written row by row
into a file by the writers of :mod:`.exports`, in the order networkx would give (nodes most prolific first, each
link from its earlier node): the bytes are those of ``engine.exported`` for the same network
(``tests/networks/exports/test_wholecoauthors.py``), without the layout, which a network this large does not get
(:data:`.exports.LAID_OUT_MAX_NODES`).
"""

from collections.abc import Iterator
from typing import Any, BinaryIO

import numpy as np

from bibgraph.graph.networks.coauthor import joint_links, ranked_authors
from bibgraph.graph.networks.communities import leiden
from bibgraph.graph.networks.exports import (
    EdgeColumns,
    Utf8,
    vosviewer_item,
    write_gexf,
    write_graphml,
    write_node_link,
    write_vosviewer,
)
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.incidence import Incidence, ranges

XML_WRITERS = {"graphml": write_graphml, "gexf": write_gexf}
CHUNK = 1 << 16  # rows made Python objects at a time: 9M links' columns as lists would be ~1.2 GB at 1M papers


def _chunked(columns: tuple[np.ndarray, ...]) -> Iterator[tuple[Any, ...]]:
    """The rows of ``columns`` as Python values, ``CHUNK`` at a time."""
    for start in range(0, len(columns[0]), CHUNK):
        yield from zip(*(column[start : start + CHUNK].tolist() for column in columns), strict=True)


class WholeCoauthors:
    """The whole co-author network as arrays: authors (incidence numbers) in rank order, links with their full and
    fractional weights and cut flags held once, in the order networkx lists them (``first``: the earlier node in
    rank order; ``second``: the other), each author's community and areas.

    The links are held compact (ends and weights as 32-bit integers) and in one order only: each format reads them
    as they are, a chunk at a time, and the VOSviewer map sorts an index of them (at a million papers, 10M links:
    the link arrays and every format's sorted copies of them held ~0.7 GB above what a format needs)."""

    def __init__(self, inc: Incidence, resolution: float = 1.0) -> None:
        self.inc = inc
        self.chosen, _, self.counts = ranked_authors(inc, Filters(), None)
        kept = np.zeros(len(inc.authors), dtype=bool)
        kept[self.chosen] = True
        mine = kept[inc.ap_author]
        papers, authors = inc.ap_paper[mine], inc.ap_author[mine]
        del mine
        self.cut_author = np.zeros(len(inc.authors), dtype=bool)
        self.cut_author[authors[inc.truncated[papers]]] = True
        self.area_ptr, self.area_rank, self.area_labels = self._areas(papers, authors)
        a, b, weight, fractional, cut = joint_links(papers, authors, np.diff(inc.paper_ptr), inc.truncated)
        del papers, authors
        a, b, weight = a.astype(np.int32), b.astype(np.int32), weight.astype(np.int32)  # authors, papers < 2**31
        self.rank = np.full(len(inc.authors), -1, dtype=np.int64)
        self.rank[self.chosen] = np.arange(len(self.chosen))
        self.community = self._communities(kept, a, b, weight, resolution)
        order = self._networkx_order(a, b)
        earlier = np.where(self.rank[a] < self.rank[b], a, b)
        b += a  # the other end: the sum of both less the earlier (in place: no third array of ends)
        b -= earlier
        del a
        self.first, self.second = earlier[order], b[order]
        del earlier, b
        self.weight, self.fractional, self.cut = weight[order], fractional[order], cut[order]

    def _networkx_order(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """The links' order as networkx lists them: by their earlier node (rank order), then the other (IRI order);
        one key a link, sorted (no lexsort's copies of two keys)."""
        rank_a, rank_b = self.rank[a], self.rank[b]
        key = np.minimum(rank_a, rank_b)
        key *= len(self.rank)
        key += np.where(rank_a < rank_b, b, a)
        del rank_a, rank_b
        return np.argsort(key)

    def _communities(
        self, kept: np.ndarray, a: np.ndarray, b: np.ndarray, weight: np.ndarray, resolution: float
    ) -> np.ndarray:
        """Each author's community, as :func:`.communities.assign_communities` numbers it: igraph's Leiden on the
        authors in IRI order (incidence order) and the links in that order, seeded; largest first, then least IRI."""
        number = np.cumsum(kept) - 1  # an author's place in IRI order among the kept
        membership = leiden(int(kept.sum()), a, b, weight.astype(np.float64), resolution, number=number)
        by_iri = np.flatnonzero(kept)
        sizes = np.bincount(membership)
        least = np.full(len(sizes), len(kept), dtype=np.int64)
        np.minimum.at(least, membership, by_iri)
        order = np.lexsort((least, -sizes))
        index = np.empty(len(sizes), dtype=np.int64)
        index[order] = np.arange(len(sizes))
        community = np.full(len(kept), -1, dtype=np.int64)
        community[by_iri] = index[membership]
        return community

    def _areas(self, papers: np.ndarray, authors: np.ndarray) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """Each author's distinct area labels, sorted: ``area_labels[area_rank[area_ptr[a]:area_ptr[a + 1]]]``."""
        inc = self.inc
        labels = sorted({c.area_label for c in inc.concepts})
        rank_of = {label: i for i, label in enumerate(labels)}
        concept_rank = np.array([rank_of[c.area_label] for c in inc.concepts], dtype=np.int64)
        starts = np.searchsorted(inc.pc_paper, papers, side="left")
        lengths = np.searchsorted(inc.pc_paper, papers, side="right") - starts
        concepts = inc.pc_concept[ranges(starts, lengths)]
        width = max(len(labels), 1)
        pairs = np.unique(np.repeat(authors.astype(np.int64), lengths) * width + concept_rank[concepts])
        owners = pairs // width
        ptr = np.searchsorted(owners, np.arange(len(inc.authors) + 1))
        return ptr, pairs % width, labels

    def nodes(self) -> Iterator[tuple[str, dict[str, object]]]:
        """The authors and their attributes as ``coauthor_network`` gives them, in its order."""
        inc, ptr, ranks, labels = self.inc, self.area_ptr, self.area_rank, self.area_labels
        for author in self.chosen.tolist():
            yield (
                inc.authors[author],
                {
                    "name": inc.names[author],
                    "papers": int(self.counts[author]),
                    "areas": [labels[r] for r in ranks[ptr[author] : ptr[author + 1]].tolist()],
                    "truncated": bool(self.cut_author[author]),
                    "community": int(self.community[author]),
                },
            )

    def edges(self) -> Iterator[tuple[str, str, dict[str, object]]]:
        """The links and their attributes (``weight``, ``fractional``, ``lower_bound``), in networkx's order."""
        for x, y, w, f, c in self._edge_rows():
            yield x, y, {"weight": w, "fractional": f, "lower_bound": c}

    def _edge_rows(self) -> Iterator[tuple[str, str, int, float, bool]]:
        """The links as rows (IRIs, weight, fractional, lower bound), in networkx's order."""
        iri = self.inc.authors
        columns = (self.first, self.second, self.weight, self.fractional, self.cut)
        last, name = -1, ""
        for x, y, w, f, c in _chunked(columns):
            if x != last:  # the links of one node come together: its IRI decoded once
                last, name = x, iri[x]
            yield name, iri[y], w, f, c

    def edge_columns(self) -> EdgeColumns:
        """The links for the XML writers' fixed-schema path (their fractional weights are finite sums of shares)."""
        schema = (("weight", int), ("fractional", float), ("lower_bound", bool))
        return EdgeColumns(self._edge_rows, schema, len(self.first))

    def vosviewer(self, out: Utf8, weight: str = "weight") -> None:
        """The VOSviewer map, without coordinates: items in IRI order, each link from its earlier node."""
        strengths = {"weight": self.weight, "fractional": self.fractional}[weight]
        first, second = self.first, self.second
        number = np.cumsum(self.rank >= 0)  # an author's VOSviewer id: its place in IRI order, from 1
        integral = weight == "weight"
        degree, total = self._strengths(first, second, strengths, integral)
        inc = self.inc

        def items() -> Iterator[dict[str, object]]:
            for author in np.flatnonzero(self.rank >= 0).tolist():
                # a sum as Python's: 0 (an int) over no links
                strength = int(total[author]) if integral or not degree[author] else float(total[author])
                name = inc.names[author]
                yield vosviewer_item(
                    int(number[author]),
                    inc.authors[author],
                    name or inc.authors[author],
                    int(self.community[author]) + 1,
                    int(self.counts[author]),
                    int(degree[author]),
                    strength,
                )

        key = first.astype(np.int64)  # ids grow with incidence numbers: links by (source, target) id
        key *= len(self.rank)
        key += second
        link_order = np.argsort(key)
        del key
        write_vosviewer(items(), self._gathered(link_order, number, strengths), out)

    def _gathered(
        self, order: np.ndarray, number: np.ndarray, strengths: np.ndarray
    ) -> Iterator[tuple[int, int, object]]:
        """The links' VOSviewer ids and strengths in ``order``, gathered a chunk at a time (no reordered copy of
        every column)."""
        for start in range(0, len(order), CHUNK):
            rows = order[start : start + CHUNK]
            yield from _chunked((number[self.first[rows]], number[self.second[rows]], strengths[rows]))

    def _strengths(
        self, first: np.ndarray, second: np.ndarray, values: np.ndarray, integral: bool
    ) -> tuple[np.ndarray, np.ndarray]:
        """Each author's links and total link strength: a float sum over its neighbours in IRI order, as networkx
        adds it; whole numbers in any order (exact: no sort of both ends of every link, 18M rows at 1M papers)."""
        size = len(self.rank)
        degree = np.bincount(first, minlength=size) + np.bincount(second, minlength=size)
        if integral:
            weights = values.astype(np.float64)
            return degree, np.bincount(first, weights, size) + np.bincount(second, weights, size)
        ends = np.concatenate([first, second])
        others = np.concatenate([second, first])
        rows = np.lexsort((others, ends))
        total = np.bincount(
            ends[rows], weights=np.concatenate([values, values])[rows].astype(np.float64), minlength=size
        )
        return degree, total

    def write(self, fmt: str, out: BinaryIO, weight: str = "weight") -> None:
        """The export of format ``fmt`` (a syntax's name) into the file ``out``."""
        if fmt == "vosviewer":
            self.vosviewer(Utf8(out), weight)
        elif fmt in ("graphml", "gexf"):
            XML_WRITERS[fmt](self.nodes, self.edges, Utf8(out), self.edge_columns())
        else:
            write_node_link(self.nodes, self.edges, Utf8(out))
