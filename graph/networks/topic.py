"""The topic networks: areas and subareas linked by the authors and papers they share, from the incidence."""

import weakref
from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

import networkx as nx
import numpy as np

from bibgraph.graph.networks.filters import AREA, SUBAREA
from bibgraph.graph.networks.incidence import Incidence

WORD = 62  # concepts per int64 word of a concept set (its sums stay exact)


@dataclass(frozen=True)
class ConceptSets:
    """Papers and authors grouped by the set of concepts they have a paper under: a topic network counts groups
    (a few thousand at a million papers), not papers and authors, so each map of one incidence is a small product
    and the incidence is read once for all of them (each map read it again: 17 of an add's s at a million papers).
    """

    papers: np.ndarray  # bool, groups x concepts: the concepts of each group of papers (none without one)
    paper_counts: np.ndarray  # papers in each group
    authors: np.ndarray  # bool, groups x concepts: the concepts each group of authors wrote a paper under
    author_counts: np.ndarray

    def shared(self, nodes: np.ndarray, count: int, authors: bool) -> np.ndarray:
        """Count x count: the papers (or authors) under both nodes (and, on the diagonal, under each) once every
        concept ``c`` is drawn as node ``nodes[c]``."""
        groups, counts = (self.authors, self.author_counts) if authors else (self.papers, self.paper_counts)
        under = self.under(groups, nodes, count)
        return np.rint((under * counts[:, None].astype(np.float64)).T @ under).astype(np.int64)

    @staticmethod
    def under(groups: np.ndarray, nodes: np.ndarray, count: int) -> np.ndarray:
        """Matrix groups x nodes: 1.0 where a concept of the group is drawn as the node (``nodes`` per concept: a node
        number, or a row of them). In floats: the products run in BLAS (integer ones do not: ~0.15 s a map at a
        million papers, 104k author groups), exact for every count below 2**53."""
        drawn = np.zeros((len(nodes), count), dtype=np.float64)
        for column in np.atleast_2d(nodes.T):
            drawn[np.arange(len(nodes)), column] = 1.0
        return ((groups.astype(np.float64) @ drawn) > 0).astype(np.float64)


def _sets(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The distinct non-empty rows of ``values`` (concept sets as int64 words) as bool rows of ``width`` concepts,
    and how many rows hold each."""
    rows = values[values.any(axis=1)]
    if rows.shape[1] == 1:  # one word (up to 62 concepts): a plain sort, ~6x less than comparing rows
        found, counts = np.unique(rows[:, 0], return_counts=True)
        found = found.reshape(-1, 1)
    else:
        found, counts = np.unique(rows, axis=0, return_counts=True)
    columns = np.arange(width)
    bits = (found[:, columns // WORD] >> (columns % WORD)) & 1
    return bits.astype(bool).reshape(len(found), width), counts.astype(np.int64)


def _union(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray, rows: int) -> np.ndarray:
    """Rows x words: the OR of ``values``' rows ``starts[i] .. starts[i] + lengths[i] - 1`` for each row ``i``."""
    found = np.zeros((rows, values.shape[1]), dtype=np.int64)
    some = lengths > 0
    if some.any():
        found[some] = np.bitwise_or.reduceat(values, starts[some], axis=0)
    return found


_kept: "tuple[weakref.ref[Incidence], ConceptSets] | None" = None  # the last incidence's, for its next map


def concept_sets(inc: Incidence) -> ConceptSets:
    """The :class:`ConceptSets` of ``inc`` (kept for the last incidence asked about)."""
    global _kept
    if _kept is not None and _kept[0]() is inc:
        return _kept[1]
    width, words = len(inc.concepts), max(1, -(-len(inc.concepts) // WORD))
    bits = np.zeros((len(inc.pc_paper), words), dtype=np.int64)
    concepts = inc.pc_concept.astype(np.int64)
    bits[np.arange(len(concepts)), concepts // WORD] = np.left_shift(1, concepts % WORD)
    pc_ptr = np.searchsorted(inc.pc_paper, np.arange(len(inc.papers) + 1))
    papers = _union(bits, pc_ptr[:-1], np.diff(pc_ptr), len(inc.papers))
    authors = _union(papers[inc.author_papers], inc.author_ptr[:-1], np.diff(inc.author_ptr), len(inc.authors))
    found = ConceptSets(*_sets(papers, width), *_sets(authors, width))
    _kept = (weakref.ref(inc), found)
    return found


def topic_network(inc: Incidence) -> nx.Graph:
    """Areas and subareas with paper counts; ``broader`` edges area→subarea; ``related`` edges between
    subjects that share authors or papers (weight = shared authors + shared papers)."""
    network = nx.Graph()
    index = {c.concept: i for i, c in enumerate(inc.concepts)}
    for c in inc.concepts:
        network.add_node(c.area, label=c.area_label, kind=AREA)
        if c.concept != c.area:
            network.add_node(c.concept, label=c.label, kind=SUBAREA, area=c.area)
            network.add_edge(c.area, c.concept, kind="broader", weight=1)
    # nodes are concepts (a topic's own papers) and areas (papers under any of its concepts)
    areas = sorted({c.area for c in inc.concepts})
    area_index = {area: i for i, area in enumerate(areas)}
    concept_area = np.array([area_index[c.area] for c in inc.concepts], dtype=np.int64)
    sets, own = concept_sets(inc), np.arange(len(inc.concepts))
    shared_papers = sets.shared(own, len(inc.concepts), authors=False)
    subject_papers = np.diagonal(shared_papers)
    area_papers = np.diagonal(sets.shared(concept_area, len(areas), authors=False))
    for node, kind in network.nodes(data="kind"):
        network.nodes[node]["papers"] = int(
            area_papers[area_index[node]] if kind == AREA else subject_papers[index[node]]
        )
    shared_authors = sets.shared(own, len(inc.concepts), authors=True)
    with_papers = [i for i in range(len(inc.concepts)) if subject_papers[i]]
    for i, j in combinations(sorted(with_papers, key=lambda i: inc.concepts[i].concept), 2):
        a, b = inc.concepts[i].concept, inc.concepts[j].concept
        if not network.has_edge(a, b):
            add_related(network, a, b, int(shared_authors[i, j]), int(shared_papers[i, j]))
    return ordered(network)


def topic_map(inc: Incidence, expand: str | None = None, strongest: int = 3) -> nx.Graph:
    """The topic map as drawn: areas, with the subareas of ``expand`` (an area IRI, or ``"all"``).

    Each paper counts for the topic it is drawn under (its subarea when its area is expanded, else
    its area). ``related`` edges join topics sharing more authors than chance would (association
    strength above 1: shared authors over what chance would give, as VOSviewer normalises); only each
    topic's ``strongest`` ones are kept, so that the map shows structure instead of a complete graph.
    """
    network = nx.Graph()
    for c in inc.concepts:
        network.add_node(c.area, label=c.area_label, kind=AREA, area=c.area)
        if c.concept != c.area and expand in ("all", c.area):
            network.add_node(c.concept, label=c.label, kind=SUBAREA, area=c.area, parent=c.area_label)
            network.add_edge(c.area, c.concept, kind="broader", weight=5)
    nodes = sorted(network)
    node_index = {node: i for i, node in enumerate(nodes)}
    drawn_as = np.array(
        [node_index[c.concept if c.concept != c.area and expand in ("all", c.area) else c.area] for c in inc.concepts],
        dtype=np.int64,
    )
    area_of = np.array([node_index[c.area] for c in inc.concepts], dtype=np.int64)
    sets = concept_sets(inc)
    both = np.column_stack([drawn_as, area_of])  # a paper counts for the topic it is drawn under and for its area
    papers = np.diagonal(sets.shared(both, len(nodes), authors=False))
    for node, i in node_index.items():
        network.nodes[node]["papers"] = int(papers[i])
    shared = sets.shared(drawn_as, len(nodes), authors=True)
    sizes = np.diagonal(shared)
    everyone = int(sets.author_counts.sum())  # every author with a paper under a concept: each is drawn
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


def add_related(network: nx.Graph, a: str, b: str, shared_authors: int, shared_papers: int) -> None:
    """A "related" edge between two topics that share authors or papers (none when they share nothing)."""
    if shared_authors or shared_papers:
        weight = shared_authors + shared_papers
        network.add_edge(
            a, b, kind="related", shared_authors=shared_authors, shared_papers=shared_papers, weight=weight
        )


def add_strongest(network: nx.Graph, candidates: dict[str, list[tuple[float, str, int]]], strongest: int) -> nx.Graph:
    """Keep each topic's ``strongest`` related edges (association strength, shared authors) and order the map."""
    for a, found in candidates.items():
        for strength, b, shared in sorted(found, key=lambda item: (-item[0], item[1]))[:strongest]:
            strength = round(strength, 2)
            network.add_edge(a, b, kind="related", weight=strength, shared_authors=shared, strength=strength)
    return ordered(network)


def ordered(network: nx.Graph) -> nx.Graph:
    """``network`` with nodes and edges in sorted order: the same topics drawn the same way (colours go
    by node order) whatever order the store returned its rows in."""
    ordered = nx.Graph(**network.graph)
    ordered.add_nodes_from(sorted(network.nodes(data=True), key=lambda node: node[0]))
    edges = ((min(a, b), max(a, b), data) for a, b, data in network.edges(data=True))
    ordered.add_edges_from(sorted(edges, key=lambda edge: edge[:2]))
    return ordered
