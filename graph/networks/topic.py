"""The topic networks: areas and subareas linked by the authors and papers they share, from the incidence."""

import weakref
from collections import defaultdict
from itertools import combinations

import networkx as nx
import numpy as np
from scipy import sparse

from bibgraph.graph.networks.filters import AREA, SUBAREA
from bibgraph.graph.networks.incidence import Incidence, ranges


def _topic_authors(inc: Incidence, topic_of: np.ndarray, topics: int) -> sparse.csr_matrix:
    """Bool matrix topics x authors: who wrote a paper drawn under each topic (``topic_of`` per pc pair)."""
    starts, ends = inc.paper_ptr[inc.pc_paper], inc.paper_ptr[inc.pc_paper + 1]
    lengths = ends - starts
    rows = np.repeat(topic_of, lengths)
    cols = inc.ap_author[ranges(starts, lengths)]  # every author of each (paper, topic) pair
    matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(topics, len(inc.authors)))
    matrix.data[:] = 1  # duplicates summed: one per author
    return matrix


# The last incidence's authors and papers by concept: every topic map is made from them (a dataset derives one per
# area and two more: each read the whole incidence again, 17 of an add's s at a million papers).
_by_concept: "tuple[weakref.ref[Incidence], sparse.csr_matrix, sparse.csr_matrix] | None" = None


def _concept_rows(inc: Incidence) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """Bool matrices concepts x authors (:func:`_topic_authors`) and concepts x papers of ``inc``."""
    global _by_concept
    if _by_concept is None or _by_concept[0]() is not inc:
        papers = sparse.csr_matrix(
            (np.ones(len(inc.pc_paper), dtype=np.int32), (inc.pc_concept, inc.pc_paper)),
            shape=(len(inc.concepts), len(inc.papers)),
        )
        papers.data[:] = 1
        _by_concept = (weakref.ref(inc), _topic_authors(inc, inc.pc_concept, len(inc.concepts)), papers)
    return _by_concept[1], _by_concept[2]


def _merged(rows: np.ndarray, into: np.ndarray, count: int, matrix: sparse.csr_matrix) -> sparse.csr_matrix:
    """Bool matrix of ``count`` rows: row ``into[k]`` holds every column of row ``rows[k]`` of ``matrix``."""
    pick = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (into, rows)), shape=(count, matrix.shape[0]))
    merged = (pick @ matrix).tocsr()
    merged.data[:] = 1
    return merged


def _papers_per(inc: Incidence, nodes: np.ndarray, papers: np.ndarray, count: int) -> np.ndarray:
    """Distinct papers per node, given (node, paper) pairs."""
    width = max(len(inc.papers), 1)
    pairs = np.unique(nodes.astype(np.int64) * width + papers)
    return np.bincount(pairs // width, minlength=count)


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
    subject_papers = _papers_per(inc, inc.pc_concept, inc.pc_paper, len(inc.concepts))
    area_papers = _papers_per(inc, concept_area[inc.pc_concept], inc.pc_paper, len(areas))
    for node, kind in network.nodes(data="kind"):
        network.nodes[node]["papers"] = int(
            area_papers[area_index[node]] if kind == AREA else subject_papers[index[node]]
        )
    incidence = sparse.csr_matrix(
        (np.ones(len(inc.pc_paper), dtype=np.int32), (inc.pc_concept, inc.pc_paper)),
        shape=(len(inc.concepts), len(inc.papers)),
    )
    incidence.data[:] = 1
    shared_papers = (incidence @ incidence.T).toarray()
    who = _topic_authors(inc, inc.pc_concept, len(inc.concepts))
    shared_authors = (who @ who.T).toarray()
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
    by_author, by_paper = _concept_rows(inc)
    concepts = np.arange(len(inc.concepts))
    both = _merged(np.concatenate([concepts, concepts]), np.concatenate([drawn_as, area_of]), len(nodes), by_paper)
    papers = np.diff(both.indptr)  # a paper counts for the topic it is drawn under and for its area
    for node, i in node_index.items():
        network.nodes[node]["papers"] = int(papers[i])
    who = _merged(concepts, drawn_as, len(nodes), by_author)
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
