"""A network's size known before it is computed (:func:`engine.size`): what decides whether a download is computed in
the web process. Its nodes are the network's (all of them when no community is asked), and its links bound the
network's from above: the author pairs of the papers in scope, counted here from the plain rows."""

from collections import Counter, defaultdict
from itertools import combinations

import pytest
from hypothesis import HealthCheck, given, settings

from bibgraph.graph.networks import Filters, engine
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.networks.spec import COAUTHORS, TOPICS, NetworkSpec
from tests.conftest import BASE
from tests.network_oracle import Authorship, authorships, concept_slugs, filter_parameters, filters_of


@pytest.fixture(scope="module")
def rows(seed_store) -> list[Authorship]:
    return authorships(seed_store)


@pytest.fixture(scope="module")
def incidence(seed_store) -> Incidence:
    return incidence_of(seed_store)


def _counted(rows: list[Authorship], filters: Filters) -> tuple[int, int, int]:
    """The authors that pass every filter but the community, the pairs of their papers in scope, and the authors before
    the cap, stated plainly: papers with a subject under the area and subarea, authors with enough of them (the most
    prolific ``top``), pairs paper by paper."""
    inside = {
        r.paper
        for r in rows
        if r.concept is not None
        and (not filters.area or r.area == filters.area)
        and (not filters.subarea or r.concept == filters.subarea)
    }
    scoped = {(r.paper, r.author) for r in rows if not (filters.area or filters.subarea) or r.paper in inside}
    papers = Counter(author for _, author in scoped)
    eligible = sorted((a for a, n in papers.items() if n >= filters.min_papers), key=lambda a: (-papers[a], a))
    chosen = set(eligible if filters.top is None else eligible[: filters.top])
    by_paper: dict[str, set[str]] = defaultdict(set)
    for paper, author in scoped:
        if author in chosen:
            by_paper[paper].add(author)
    pairs = sum(len(list(combinations(authors, 2))) for authors in by_paper.values())
    return len(chosen), pairs, len(eligible)


def test_the_size_bounds_the_network_and_is_its_pairs_without_a_cap(rows, incidence) -> None:
    concepts = concept_slugs(rows, BASE)

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
    @given(filter_parameters(*concepts, top=250, communities=12))
    def check(parameters: dict[str, str]) -> None:
        filters = filters_of(parameters)
        nodes, links = engine.size(incidence, NetworkSpec(COAUTHORS, filters))
        network = engine.network(incidence, NetworkSpec(COAUTHORS, filters))
        authors, pairs, eligible = _counted(rows, filters)
        assert nodes == authors >= network.number_of_nodes()
        if filters.community is None:
            assert nodes == network.number_of_nodes()
        assert links >= pairs >= network.number_of_edges()
        if filters.top is None or filters.top >= eligible:  # ties at a cap are counted in: a bound, not the pairs
            assert links == pairs

    check()


def test_the_topic_networks_size_bounds_it(incidence) -> None:
    network = engine.network(incidence, NetworkSpec(TOPICS))
    nodes, links = engine.size(incidence, NetworkSpec(TOPICS))
    assert nodes == network.number_of_nodes() and links >= network.number_of_edges()
