"""The paper-author incidence of the whole graph as compact arrays, and every drawn network computed from it.

A view draws a capped number of authors, but the whole-network networkx objects it used to be cut
from (the paper-author bipartite graph, the co-author network) cost about a kilobyte per node and
edge: at a million papers they do not fit. This module reads the store's authorship rows once
(:func:`incidence_of`, streamed) into integer arrays (a few bytes per authorship: tens of MB at a
million papers) and answers each view from them with vectorised passes plus work bounded by what is
drawn: the top-N authors under the filters, the edges among them, ego rings, collaboration counts,
topic maps and paths. Each result is the networkx graph the row path of :mod:`.networks` gives
(``tests/test_incidence.py`` checks them against it on generated filters).

Authors and papers are numbered in IRI order, so every result is the same whatever order a store
lists its rows in.
"""

import bisect
import heapq
from array import array
from collections import Counter, defaultdict, deque
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

import networkx as nx
import numpy as np
import pyoxigraph as ox
from scipy import sparse

from .networks import AREA, SUBAREA, Filters, add_related, add_strongest, ordered, with_communities
from .queries import named_query
from .stores.store import GraphStore
from .vocab import BG, DCTERMS, FOAF


class Strings(Sequence[str]):
    """Many strings in one UTF-8 buffer with offsets: ~1 byte per character instead of ~60 bytes per object.

    The prefix they all share (an IRI's base and kind: ~29 bytes of each at a million papers) is held once."""

    prefix = ""  # a value kept before prefixes were held apart has none

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, prefix: str = "") -> None:
        self.blob = blob
        self.offsets = offsets
        self.prefix = prefix

    @classmethod
    def of(cls, strings: Iterable[str]) -> "Strings":
        texts = list(strings)
        prefix = _shared_prefix(texts)
        encoded = [text[len(prefix) :].encode("utf-8") for text in texts]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(data) for data in encoded], out=offsets[1:])
        return cls(np.frombuffer(b"".join(encoded), dtype=np.uint8).copy(), offsets, prefix)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        return self.prefix + self.blob[self.offsets[index] : self.offsets[index + 1]].tobytes().decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for index in range(len(self)):
            yield self[index]

    def find(self, text: str) -> int | None:
        """The index of ``text`` in these strings, which must be sorted (binary search), or None."""
        index = bisect.bisect_left(self, text)
        return index if index < len(self) and self[index] == text else None


def _shared_prefix(texts: list[str]) -> str:
    """The longest prefix of every text: that of the least and the greatest, which share the least."""
    if not texts:
        return ""
    least, greatest = min(texts), max(texts)
    size = next(
        (i for i, (a, b) in enumerate(zip(least, greatest, strict=False)) if a != b), min(len(least), len(greatest))
    )
    return least[:size]


@dataclass(frozen=True)
class Concept:
    concept: str
    label: str
    area: str
    area_label: str


@dataclass
class Incidence:
    """Papers, authors and subjects as arrays; ``ap_*`` are the (paper, author) pairs sorted by paper,
    ``author_papers`` the same pairs' papers sorted by author, ``pc_*`` the (paper, concept) pairs by paper."""

    authors: Strings  # author IRIs, sorted
    names: Strings  # each author's name
    papers: Strings  # paper IRIs, sorted
    truncated: np.ndarray  # bool per paper: its author list was cut
    ap_paper: np.ndarray
    ap_author: np.ndarray
    paper_ptr: np.ndarray  # the authors of paper p are ap_author[paper_ptr[p]:paper_ptr[p + 1]]
    author_ptr: np.ndarray  # the papers of author a are author_papers[author_ptr[a]:author_ptr[a + 1]]
    author_papers: np.ndarray
    pc_paper: np.ndarray
    pc_concept: np.ndarray
    concepts: list[Concept]

    # --- scope -------------------------------------------------------------------------------------

    def _concepts_in(self, filters: Filters) -> np.ndarray:
        """Bool per concept: under the area and subarea of ``filters`` (every concept when there is none)."""
        return np.array(
            [
                (not filters.subarea or c.concept == filters.subarea) and (not filters.area or c.area == filters.area)
                for c in self.concepts
            ],
            dtype=bool,
        )

    def scope(self, filters: Filters) -> np.ndarray | None:
        """Bool per paper: under the area/subarea of ``filters``; None when every paper is (no such filter)."""
        if not (filters.area or filters.subarea):
            return None
        inside = np.zeros(len(self.papers), dtype=bool)
        matched = self._concepts_in(filters)
        if len(matched):
            inside[self.pc_paper[matched[self.pc_concept]]] = True
        return inside

    def paper_counts(self, inside: np.ndarray | None) -> np.ndarray:
        """Papers of every author under the scope ``inside``."""
        authors = self.ap_author if inside is None else self.ap_author[inside[self.ap_paper]]
        return np.bincount(authors, minlength=len(self.authors))

    def author_id(self, iri: str) -> int | None:
        return self.authors.find(iri)

    # --- the co-author network ------------------------------------------------------------------------

    def ranked_authors(self, filters: Filters, inside: np.ndarray | None) -> tuple[np.ndarray, int, np.ndarray]:
        """The authors a map draws (most papers first, then IRI), how many pass every filter but the cap,
        and the paper counts they are ranked by."""
        counts = self.paper_counts(inside)
        if filters.authors is None:
            candidates = np.flatnonzero(counts >= max(filters.min_papers, 1))
        else:
            found = (self.author_id(iri) for iri in filters.authors)
            ids = np.array(sorted(i for i in found if i is not None), dtype=np.int64)
            candidates = ids[counts[ids] >= max(filters.min_papers, 1)] if len(ids) else ids
        eligible = len(candidates)
        if filters.top is not None and 0 < filters.top < eligible:
            # only the authors at least as prolific as the N-th are sorted
            threshold = np.partition(counts[candidates], eligible - filters.top)[eligible - filters.top]
            candidates = candidates[counts[candidates] >= threshold]
        order = np.lexsort((candidates, -counts[candidates]))
        chosen = candidates[order]
        return (chosen if filters.top is None else chosen[: filters.top]), eligible, counts

    def coauthor_network(self, filters: Filters = Filters()) -> nx.Graph:
        """:func:`bibgraph.graph.networks.coauthor_network` of the whole graph, costing what is drawn."""
        inside = self.scope(filters)
        chosen, eligible, counts = self.ranked_authors(filters, inside)
        if not len(chosen):
            return nx.Graph(total_authors=eligible)
        kept = np.zeros(len(self.authors), dtype=bool)
        kept[chosen] = True
        mine = kept[self.ap_author]
        if inside is not None:
            mine &= inside[self.ap_paper]
        papers, authors = self.ap_paper[mine], self.ap_author[mine]  # by paper, then author
        network = nx.Graph(total_authors=eligible)
        self._add_authors(network, chosen, counts, papers, authors, filters)
        edges: dict[tuple[int, int], list] = {}
        sizes = np.diff(self.paper_ptr)
        starts = np.flatnonzero(np.r_[True, papers[1:] != papers[:-1]])
        ends = np.r_[starts[1:], len(papers)]
        for start, end in zip(starts[ends - starts > 1].tolist(), ends[ends - starts > 1].tolist(), strict=True):
            paper = int(papers[start])
            size = int(sizes[paper])
            share, cut = 2.0 / (size * (size - 1)), bool(self.truncated[paper])
            for a, b in combinations(authors[start:end].tolist(), 2):
                edge = edges.setdefault((a, b), [0, 0.0, False])
                edge[0] += 1
                edge[1] += share
                edge[2] = edge[2] or cut
        links = [(pair, edge) for pair, edge in edges.items() if edge[0] >= filters.min_joint]
        network.graph["total_links"] = len(links)
        if filters.links is not None and len(links) > filters.links:  # authors are numbered in IRI order: so are (a, b)
            links = heapq.nsmallest(filters.links, links, key=lambda link: (-link[1][0], link[0]))
        for (a, b), (weight, fractional, lower_bound) in sorted(links):
            network.add_edge(
                self.authors[a], self.authors[b], weight=weight, fractional=fractional, lower_bound=lower_bound
            )
        return with_communities(network, filters)

    def _add_authors(
        self,
        network: nx.Graph,
        chosen: np.ndarray,
        counts: np.ndarray,
        papers: np.ndarray,
        authors: np.ndarray,
        filters: Filters,
    ) -> None:
        """The drawn authors as nodes, in rank order: name, papers, areas of their papers (those under the
        scope) and whether any of their lists was cut."""
        matched = self._concepts_in(filters)
        areas: dict[int, set[str]] = defaultdict(set)
        starts = np.searchsorted(self.pc_paper, papers, side="left")
        ends = np.searchsorted(self.pc_paper, papers, side="right")
        for author, start, end in zip(authors.tolist(), starts.tolist(), ends.tolist(), strict=True):
            for concept in self.pc_concept[start:end].tolist():
                if matched[concept]:
                    areas[author].add(self.concepts[concept].area_label)
        cut = set(authors[self.truncated[papers]].tolist())
        for author in chosen.tolist():
            network.add_node(
                self.authors[author],
                name=self.names[author],
                papers=int(counts[author]),
                areas=sorted(areas[author]),
                truncated=author in cut,
            )

    # --- ego networks and collaboration ---------------------------------------------------------------

    def joint_papers(self, author: int, inside: np.ndarray | None = None) -> Counter[int]:
        """Joint papers of ``author`` with each co-author (under the scope ``inside``)."""
        own = self.author_papers[self.author_ptr[author] : self.author_ptr[author + 1]]
        if inside is not None:
            own = own[inside[own]]
        joint: Counter[int] = Counter()
        for paper in own.tolist():
            joint.update(self.ap_author[self.paper_ptr[paper] : self.paper_ptr[paper + 1]].tolist())
        joint.pop(author, None)
        return joint

    def ego_rings(self, center: str, radius: int, top: int) -> tuple[list[list[str]], int]:
        """:func:`bibgraph.graph.analytics.ego_rings`; ``KeyError``: no such author."""
        found = self.author_id(center)
        if found is None:
            raise KeyError(center)

        def ranked(counts: Counter[int], limit: int) -> list[int]:
            return sorted(counts, key=lambda a: (-counts[a], self.names[a], a))[:limit]

        direct = self.joint_papers(found)
        first = ranked(direct, top)
        rings = [[found], first]
        if radius >= 2:
            seen = {found, *first}
            outer: Counter[int] = Counter()
            for author in first:
                outer.update({a: n for a, n in self.joint_papers(author).items() if a not in seen})
            rings.append(ranked(outer, 2 * top))
        return [[self.authors[a] for a in ring] for ring in rings], len(direct)

    def collaboration(self, filters: Filters, authors: Iterable[str]) -> dict[str, tuple[int, int]]:
        """:func:`bibgraph.graph.analytics.collaboration` over the network ``filters`` select: distinct
        co-authors and joint papers of each of ``authors``, counted over every paper under the filters at once."""
        wanted = list(authors)
        ids = {iri: self.author_id(iri) for iri in wanted}
        kept = np.zeros(len(self.authors), dtype=bool)
        kept[[i for i in ids.values() if i is not None]] = True
        mine = kept[self.ap_author]
        inside = self.scope(filters)
        if inside is not None:
            mine &= inside[self.ap_paper]
        papers, owners = self.ap_paper[mine], self.ap_author[mine]
        starts, lengths = self.paper_ptr[papers], np.diff(self.paper_ptr)[papers]
        # every (owner, co-author) row of the owners' papers: positions starts..starts+length-1, end to end
        offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        others = self.ap_author[np.repeat(starts, lengths) + offsets]
        owners = np.repeat(owners, lengths)
        real = others != owners
        owners, others = owners[real], others[real]
        joint = np.bincount(owners, minlength=len(self.authors))
        pairs = np.unique(owners.astype(np.int64) * len(self.authors) + others)
        distinct = np.bincount(pairs // len(self.authors), minlength=len(self.authors))
        return {iri: (0, 0) if i is None else (int(distinct[i]), int(joint[i])) for iri, i in ids.items()}

    def coauthor_degrees(self, block: int = 1 << 16) -> Counter[int]:
        """How many authors have each number of distinct co-authors (0: no joint paper), for the home page's
        chart: the co-author matrix is multiplied out ``block`` authors at a time, never held whole (the SPARQL
        form of this, ``coauthor_degrees.rq``, joins every pair of creators and did not end at a million papers)."""
        matrix = sparse.csc_matrix(
            (np.ones(len(self.ap_paper), dtype=np.int32), (self.ap_paper, self.ap_author)),
            shape=(len(self.papers), len(self.authors)),
        )
        found: Counter[int] = Counter()
        for start in range(0, len(self.authors), block):
            shared = (matrix[:, start : start + block].T @ matrix).tocsr()
            found.update((np.diff(shared.indptr) - 1).tolist())  # less the author themself
        return found

    def author_names(self) -> set[str]:
        return set(self.names)

    def path(self, source: str, target: str) -> list[str]:
        """A shortest chain author, paper, author, ... between two authors (empty when not connected or unknown):
        breadth-first over the arrays, so no graph of the whole network is built."""
        start, goal = self.author_id(source), self.author_id(target)
        if start is None or goal is None:
            return []
        came: dict[int, tuple[int, int]] = {start: (-1, -1)}  # author: (previous author, paper)
        queue = deque([start])
        while queue and goal not in came:
            author = queue.popleft()
            for paper in self.author_papers[self.author_ptr[author] : self.author_ptr[author + 1]].tolist():
                for other in self.ap_author[self.paper_ptr[paper] : self.paper_ptr[paper + 1]].tolist():
                    if other not in came:
                        came[other] = (author, paper)
                        queue.append(other)
        if goal not in came:
            return []
        chain, author = [self.authors[goal]], goal
        while author != start:
            author, paper = came[author]
            chain[:0] = [self.authors[author], self.papers[paper]]
        return chain

    # --- topic networks -------------------------------------------------------------------------------

    def _topic_authors(self, topic_of: np.ndarray, topics: int) -> sparse.csr_matrix:
        """Bool matrix topics x authors: who wrote a paper drawn under each topic (``topic_of`` per pc pair)."""
        starts, ends = self.paper_ptr[self.pc_paper], self.paper_ptr[self.pc_paper + 1]
        lengths = ends - starts
        rows = np.repeat(topic_of, lengths)
        # every author of each (paper, topic) pair: positions starts..ends-1 laid end to end
        positions = (
            np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths) + np.repeat(starts, lengths)
        )
        cols = self.ap_author[positions]
        matrix = sparse.csr_matrix(
            (np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(topics, len(self.authors))
        )
        matrix.data[:] = 1  # duplicates summed: one per author
        return matrix

    def _papers_per(self, nodes: np.ndarray, papers: np.ndarray, count: int) -> np.ndarray:
        """Distinct papers per node, given (node, paper) pairs."""
        width = max(len(self.papers), 1)
        pairs = np.unique(nodes.astype(np.int64) * width + papers)
        return np.bincount(pairs // width, minlength=count)

    def topic_network(self) -> nx.Graph:
        """:func:`bibgraph.graph.networks.topic_network` from the arrays."""
        network = nx.Graph()
        index = {c.concept: i for i, c in enumerate(self.concepts)}
        for c in self.concepts:
            network.add_node(c.area, label=c.area_label, kind=AREA)
            if c.concept != c.area:
                network.add_node(c.concept, label=c.label, kind=SUBAREA, area=c.area)
                network.add_edge(c.area, c.concept, kind="broader", weight=1)
        # nodes are concepts (a topic's own papers) and areas (papers under any of its concepts)
        areas = sorted({c.area for c in self.concepts})
        area_index = {area: i for i, area in enumerate(areas)}
        concept_area = np.array([area_index[c.area] for c in self.concepts], dtype=np.int64)
        subject_papers = self._papers_per(self.pc_concept, self.pc_paper, len(self.concepts))
        area_papers = self._papers_per(concept_area[self.pc_concept], self.pc_paper, len(areas))
        for node, kind in network.nodes(data="kind"):
            network.nodes[node]["papers"] = int(
                area_papers[area_index[node]] if kind == AREA else subject_papers[index[node]]
            )
        incidence = sparse.csr_matrix(
            (np.ones(len(self.pc_paper), dtype=np.int32), (self.pc_concept, self.pc_paper)),
            shape=(len(self.concepts), len(self.papers)),
        )
        incidence.data[:] = 1
        shared_papers = (incidence @ incidence.T).toarray()
        who = self._topic_authors(self.pc_concept, len(self.concepts))
        shared_authors = (who @ who.T).toarray()
        with_papers = [i for i in range(len(self.concepts)) if subject_papers[i]]
        for i, j in combinations(sorted(with_papers, key=lambda i: self.concepts[i].concept), 2):
            a, b = self.concepts[i].concept, self.concepts[j].concept
            if not network.has_edge(a, b):
                add_related(network, a, b, int(shared_authors[i, j]), int(shared_papers[i, j]))
        return ordered(network)

    def topic_map(self, expand: str | None = None, strongest: int = 3) -> nx.Graph:
        """:func:`bibgraph.graph.networks.topic_map` from the arrays."""
        network = nx.Graph()
        for c in self.concepts:
            network.add_node(c.area, label=c.area_label, kind=AREA, area=c.area)
            if c.concept != c.area and expand in ("all", c.area):
                network.add_node(c.concept, label=c.label, kind=SUBAREA, area=c.area, parent=c.area_label)
                network.add_edge(c.area, c.concept, kind="broader", weight=5)
        nodes = sorted(network)
        node_index = {node: i for i, node in enumerate(nodes)}
        drawn_as = np.array(
            [
                node_index[c.concept if c.concept != c.area and expand in ("all", c.area) else c.area]
                for c in self.concepts
            ],
            dtype=np.int64,
        )
        area_of = np.array([node_index[c.area] for c in self.concepts], dtype=np.int64)
        topic_of = drawn_as[self.pc_concept]
        both = np.concatenate([topic_of, area_of[self.pc_concept]])
        papers = self._papers_per(both, np.concatenate([self.pc_paper, self.pc_paper]), len(nodes))
        for node, i in node_index.items():
            network.nodes[node]["papers"] = int(papers[i])
        who = self._topic_authors(topic_of, len(nodes))
        sizes = np.asarray(who.sum(axis=1)).ravel()
        everyone = int(np.count_nonzero(np.asarray(who.sum(axis=0)).ravel()))
        shared = (who @ who.T).toarray()
        drawn = [i for i in range(len(nodes)) if sizes[i]]
        candidates: dict[str, list[tuple[float, str, int]]] = defaultdict(list)
        for i, j in combinations(drawn, 2):
            a, b = nodes[i], nodes[j]
            common = int(shared[i, j])
            if network.has_edge(a, b) or not common:
                continue
            strength = common * everyone / (int(sizes[i]) * int(sizes[j]))
            if strength > 1.0:
                candidates[a].append((strength, b, common))
                candidates[b].append((strength, a, common))
        return add_strongest(network, candidates, strongest)


def incidence_of(store: GraphStore) -> Incidence:
    """The incidence of ``store``'s papers and authors, read in streamed passes (no row list is kept).

    Each part is one triple pattern (``incidence_*.rq``), joined here by IRI: on a large store a query
    joining them all costs ~20x more per row (0.57 ms vs 14-48 us a row at a million papers). As in the row path of
    :mod:`.networks`, an author without a name is left out, and so is a paper left without authors.
    """
    reader = _Reader()
    reader.read(store, store)
    return reader.incidence()


def extended(previous: Incidence, added: GraphStore, store: GraphStore) -> Incidence:
    """``previous`` (the incidence of a store before an add) with the papers of ``added`` (the triples the add
    wrote); ``store`` is the store after the add (for the labels of concepts ``added`` only refers to). Equal to
    :func:`incidence_of` of ``store``, since an add never changes a paper already there; costs what is added
    plus a renumbering, not a read of the whole store."""
    reader = _Reader.of(previous)
    reader.read(added, store)
    return reader.incidence()


# The predicates the ``incidence_*.rq`` patterns read from the data (concepts' labels are read from the whole store):
# an add keeps only the added triples with these, for :func:`extended`.
READ_PREDICATES = frozenset(str(term) for term in (DCTERMS.creator, DCTERMS.subject, FOAF.name, BG.authorListTruncated))


def incidence_part(quads: Iterable[ox.Quad]) -> list[ox.Quad]:
    """The triples among ``quads`` that :func:`extended` reads."""
    return [quad for quad in quads if quad.predicate.value in READ_PREDICATES]


class _Reader:
    """Papers, authors and their pairs as they are read, numbered in the order first seen."""

    def __init__(self) -> None:
        self.paper_ids: dict[str, int] = {}
        self.author_ids: dict[str, int] = {}
        self.names: list[str | None] = []
        self.truncated: set[int] = set()
        self.concept_ids: dict[Concept, int] = {}
        self.ap = array("q")  # (paper, author) numbers laid flat: 8 bytes each, not a Python int object
        self.pc = array("q")

    @classmethod
    def of(cls, incidence: Incidence) -> "_Reader":
        reader = cls()
        reader.paper_ids = {iri: number for number, iri in enumerate(incidence.papers)}
        reader.author_ids = {iri: number for number, iri in enumerate(incidence.authors)}
        reader.names = list(incidence.names)
        reader.truncated = set(np.flatnonzero(incidence.truncated).tolist())
        reader.concept_ids = {concept: number for number, concept in enumerate(incidence.concepts)}
        reader.ap.frombytes(np.column_stack([incidence.ap_paper, incidence.ap_author]).astype(np.int64).tobytes())
        reader.pc.frombytes(np.column_stack([incidence.pc_paper, incidence.pc_concept]).astype(np.int64).tobytes())
        return reader

    def read(self, store: GraphStore, labels: GraphStore) -> None:
        """Add the papers of ``store``; concepts are labelled from ``labels``."""
        paper_ids, author_ids, names, ap = self.paper_ids, self.author_ids, self.names, self.ap
        for row in _rows(store, "incidence_creators"):
            ap.append(paper_ids.setdefault(str(row["paper"]), len(paper_ids)))
            ap.append(author_ids.setdefault(str(row["author"]), len(author_ids)))
        names += [None] * (len(author_ids) - len(names))
        for row in _rows(store, "incidence_names"):
            a = author_ids.get(str(row["author"]))
            if a is not None and names[a] is None:
                names[a] = str(row["name"])
        for row in _rows(store, "incidence_truncated"):
            p = paper_ids.get(str(row["paper"]))
            if p is not None:
                self.truncated.add(p)
        labelled: defaultdict[str, list[Concept]] = defaultdict(list)
        for row in _rows(labels, "incidence_concepts"):
            concept = str(row["concept"])
            labelled[concept].append(
                Concept(concept, str(row["conceptLabel"]), str(row["area"]), str(row["areaLabel"]))
            )
        for row in _rows(store, "incidence_subjects"):
            p = paper_ids.get(str(row["paper"]))
            if p is None:
                continue
            for subject in labelled.get(str(row["concept"]), ()):
                self.pc.append(p)
                self.pc.append(self.concept_ids.setdefault(subject, len(self.concept_ids)))

    def incidence(self) -> Incidence:
        truncated = np.zeros(len(self.paper_ids), dtype=bool)
        truncated[sorted(self.truncated)] = True
        return _arrays(self.author_ids, self.names, self.paper_ids, truncated, self.concept_ids, self.ap, self.pc)


def _rows(store: GraphStore, name: str) -> Iterator[dict]:
    return store.iter_select(named_query(name).text)


def _renumbered(ids: dict[str, int], used: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The keys of ``ids`` whose number is ``used``, sorted, and each old number's new one (-1 when unused)."""
    keys = sorted(key for key, number in ids.items() if used[number])
    new = np.full(len(ids), -1, dtype=np.int64)
    new[[ids[key] for key in keys]] = np.arange(len(keys), dtype=np.int64)
    return keys, new


def _pairs(values: np.ndarray, first: np.ndarray, second: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """Distinct (first, second) rows of ``values``, renumbered, sorted by first then second."""
    keys = np.unique(first[values[:, 0]] * width + second[values[:, 1]])
    return (keys // width).astype(np.int32), (keys % width).astype(np.int32)


def _arrays(
    author_ids: dict[str, int],
    names: list[str | None],
    paper_ids: dict[str, int],
    truncated: np.ndarray,
    concept_ids: dict[Concept, int],
    ap: array,
    pc: array,
) -> Incidence:
    """The incidence of numbered rows; ``author_ids`` and ``paper_ids`` are consumed (left empty)."""
    named = np.array([name is not None for name in names], dtype=bool)
    pairs = np.frombuffer(ap, dtype=np.int64).reshape(-1, 2)
    pairs = pairs[named[pairs[:, 1]]]
    used_papers = np.zeros(len(paper_ids), dtype=bool)
    used_papers[pairs[:, 0]] = True
    authors, author_new = _renumbered(author_ids, named)
    papers, paper_new = _renumbered(paper_ids, used_papers)
    author_ids.clear()  # consumed: at a million papers these dicts are ~0.6 GB, and the arrays are built next
    paper_ids.clear()
    subjects = np.frombuffer(pc, dtype=np.int64).reshape(-1, 2)
    subjects = subjects[used_papers[subjects[:, 0]]]
    used_concepts = np.zeros(len(concept_ids), dtype=bool)
    used_concepts[subjects[:, 1]] = True  # a concept only of papers left out is left out too
    concepts = sorted(
        (c for c, number in concept_ids.items() if used_concepts[number]), key=lambda c: (c.concept, c.area)
    )
    concept_new = np.full(len(concept_ids), -1, dtype=np.int64)
    concept_new[[concept_ids[c] for c in concepts]] = np.arange(len(concepts), dtype=np.int64)
    ap_paper, ap_author = _pairs(pairs, paper_new, author_new, max(len(authors), 1))
    pc_paper, pc_concept = _pairs(subjects, paper_new, concept_new, max(len(concepts), 1))
    by_author = np.lexsort((ap_paper, ap_author))
    order = np.argsort(author_new[named])  # the named authors' old numbers, in new order
    kept_names = [name for name in names if name is not None]
    flags = np.zeros(len(papers), dtype=bool)
    flags[paper_new[used_papers]] = truncated[used_papers]
    return Incidence(
        authors=Strings.of(authors),
        names=Strings.of(kept_names[i] for i in order),
        papers=Strings.of(papers),
        truncated=flags,
        ap_paper=ap_paper,
        ap_author=ap_author,
        paper_ptr=np.searchsorted(ap_paper, np.arange(len(papers) + 1)).astype(np.int64),
        author_ptr=np.searchsorted(ap_author[by_author], np.arange(len(authors) + 1)).astype(np.int64),
        author_papers=ap_paper[by_author],
        pc_paper=pc_paper,
        pc_concept=pc_concept,
        concepts=concepts,
    )
