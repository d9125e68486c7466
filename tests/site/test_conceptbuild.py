"""A build's concept figures and paper orders counted from the incidence (graph/site/conceptbuild.py): the same as
the store's concept-by-concept queries (graph/site/conceptindex.py) give, on generated corpora and on the seeds."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import write_lists
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.conceptbuild import concept_index_of
from bibgraph.graph.site.conceptindex import concept_index


def both(store) -> tuple[list, list]:
    return list(concept_index(store)), list(concept_index_of(store, incidence_of(store)))


def test_the_seeds_figures_and_orders_are_the_stores() -> None:
    store = build_graph([], progress=False)[0]
    old, new = both(store)
    assert old and new == old


@pytest.mark.parametrize("size, messy", [(1500, 0.3), (400, 0.0)])
def test_a_corpus_figures_and_orders_are_the_stores(tmp_path: Path, size: int, messy: float) -> None:
    write_lists(tmp_path, size, per_file=500, seed=11, messy=messy)
    old, new = both(build_graph([tmp_path], progress=False)[0])
    assert sum(figures.papers for figures, _ in old) > size  # papers under their subarea and their area
    assert any(len(figures.top_authors) == 20 for figures, _ in old)
    assert new == old


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(size=st.integers(1, 120), seed=st.integers(0, 1000))
def test_any_small_corpus_figures_and_orders_are_the_stores(tmp_path_factory, size: int, seed: int) -> None:
    directory = tmp_path_factory.mktemp("lists")
    write_lists(directory, size, per_file=50, seed=seed, messy=0.5)
    old, new = both(build_graph([directory], progress=False)[0])
    assert new == old
