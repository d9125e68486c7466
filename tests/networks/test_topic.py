"""The topic networks counted by concept sets (papers and authors grouped by the concepts they are under) are the
row path's, when a set takes several words (more concepts than a word holds) too."""

import networkx as nx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import topic
from bibgraph.graph.networks.incidence import incidence_of
from tests import network_oracle as oracle
from tests.network_oracle import authorships
from tests.networks.test_incidence import PEOPLE, built, records


def same(new: nx.Graph, old: nx.Graph) -> None:
    assert list(new.nodes(data=True)) == list(old.nodes(data=True))
    assert list(new.edges(data=True)) == list(old.edges(data=True))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(1, 3))
def test_concept_sets_over_several_words_count_as_the_rows(generated, word) -> None:
    """A word of ``word`` concepts: every corpus with more concepts spreads its sets over several words."""
    store = built(generated)
    rows, incidence = authorships(store), incidence_of(store)
    original = topic.WORD
    topic.WORD = word
    try:
        same(topic.topic_network(incidence), oracle.topic_network(rows))
        for expand in (None, "all", *sorted({row.area for row in rows if row.area})):
            same(topic.topic_map(incidence, expand, 3), oracle.topic_map(rows, expand, 3))
    finally:
        topic.WORD = original
        topic._kept = None  # sets made with another word width


def test_many_areas() -> None:
    """70 areas (two words of 62): each paper under its own, authors shared along a ring."""
    generated = [(f"Area {i:02d}", [PEOPLE[i % 8], PEOPLE[(i + 1) % 8]], False) for i in range(70)]
    store = built(generated)
    rows, incidence = authorships(store), incidence_of(store)
    assert len(incidence.concepts) == 70
    same(topic.topic_network(incidence), oracle.topic_network(rows))
    same(topic.topic_map(incidence, None, 3), oracle.topic_map(rows, None, 3))
