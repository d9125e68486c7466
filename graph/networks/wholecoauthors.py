"""The whole co-author network's exports (every author, no filter) written from the incidence's arrays.

As a networkx graph the whole network costs about a kilobyte per author and link (+740 MB at 100,000 papers, 12 GB
of derive at a million): a dataset keeps its exports, not the graph. Here the links are counted by
:func:`.coauthor.joint_links`, the communities found by igraph from the arrays, and each format written a block of
rows at a time into a file by :mod:`.wholetext`, in the order networkx would give (nodes most prolific first, each
link from its earlier node): the bytes are those of ``engine.exported`` for the same network
(``tests/networks/exports/test_wholecoauthors.py``), without the layout, which a network this large does not get
(:data:`.exports.LAID_OUT_MAX_NODES`).
"""

from typing import BinaryIO

import numpy as np

from bibgraph.graph.arrays.sets import distinct
from bibgraph.graph.networks import wholetext
from bibgraph.graph.networks.coauthor import joint_links, ranked_authors
from bibgraph.graph.networks.communities import leiden
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.incidence import Incidence, ranges
from bibgraph.graph.networks.wholetext import Columns, Quote, blocks


class WholeCoauthors:
    """The whole co-author network as arrays: authors (incidence numbers) in rank order, links with their full and
    fractional weights and cut flags held once, in the order networkx lists them (``first``: the earlier node in
    rank order; ``second``: the other), each author's community and areas.

    The links are held compact (ends and weights as 32-bit integers) and in one order only: each format reads them
    as they are, a block at a time, and the VOSviewer map sorts an index of them (at a million papers, 10M links:
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
        self.area_combo, self.area_texts = self._areas(papers, authors)
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
        self.columns = Columns.of((inc.authors, inc.names), self.area_texts)
        self.columns.numbers(len(inc.authors) + 2)  # a VOSviewer id, a paper count, a degree
        self._iris: tuple[tuple[Quote, bytes], np.ndarray] | None = None

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

    def _areas(self, papers: np.ndarray, authors: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """Each author's distinct area labels, sorted and joined by ``; ``, as a number: ``area_texts[combo[a]]``
        (an author's list a row of a matrix of the lists as long, the distinct rows numbered: a few hundred)."""
        inc = self.inc
        labels = sorted({c.area_label for c in inc.concepts})
        rank_of = {label: i for i, label in enumerate(labels)}
        concept_rank = np.array([rank_of[c.area_label] for c in inc.concepts], dtype=np.int64)
        starts = np.searchsorted(inc.pc_paper, papers, side="left")
        lengths = np.searchsorted(inc.pc_paper, papers, side="right") - starts
        concepts = inc.pc_concept[ranges(starts, lengths)]
        width = max(len(labels), 1)
        pairs = distinct(np.repeat(authors.astype(np.int64), lengths) * width + concept_rank[concepts])
        ptr = np.searchsorted(pairs // width, np.arange(len(inc.authors) + 1))
        ranks, sizes = pairs % width, np.diff(ptr)
        combo = np.zeros(len(inc.authors), dtype=np.int32)
        texts: list[str] = []
        for size in distinct(sizes).tolist():
            who = np.flatnonzero(sizes == size)
            lists, number = np.unique(ranks[ptr[who][:, None] + np.arange(size)], axis=0, return_inverse=True)
            combo[who] = len(texts) + number.ravel()
            texts += ["; ".join(labels[r] for r in row) for row in lists.tolist()]
        return combo, texts

    def iris(self, quoting: tuple[Quote, bytes]) -> np.ndarray:
        """Every author's IRI as ``quoting`` writes it, made once for the formats written one after another
        (GraphML's and GEXF's are the same), a block at a time (the gather of every IRI's bytes at once held
        ~60 MB at 100,000 papers)."""
        if self._iris is None or self._iris[0] != quoting:
            self._iris = None  # the last quoting's let go before this one is made
            made = [
                self.columns.strings(self.inc.authors, np.arange(len(self.inc.authors))[rows], quoting)
                for rows in blocks(len(self.inc.authors))
            ]
            self._iris = quoting, np.concatenate(made) if made else self.columns.table([])
        return self._iris[1]

    def areas(self, quoting: tuple[Quote, bytes]) -> np.ndarray:
        """Each distinct list of areas as ``quoting`` writes it: ``areas(...)[area_combo[a]]``."""
        return self.columns.table([quoting[0](text) for text in self.area_texts])

    def vosviewer_figures(self, weight: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The VOSviewer map's ids (an author's place in IRI order, from 1), each author's links and total link
        strength, and the links' order by their ends' ids (ids grow with incidence numbers)."""
        strengths = {"weight": self.weight, "fractional": self.fractional}[weight]
        number = np.cumsum(self.rank >= 0)
        degree, total = self._strengths(self.first, self.second, strengths, weight == "weight")
        key = self.first.astype(np.int64)
        key *= len(self.rank)
        key += self.second
        return number, degree, total, np.argsort(key)

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
            wholetext.write_vosviewer(self, out, weight)
        elif fmt == "graphml":
            wholetext.write_graphml(self, out)
        elif fmt == "gexf":
            wholetext.write_gexf(self, out)
        else:
            wholetext.write_node_link(self, out)
