"""A build's concept figures and paper orders counted from the incidence (graph/site/conceptbuild.py): the same as
the store's concept-by-concept queries (graph/site/conceptindex.py) give, on generated corpora and on the seeds."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import write_lists
from bibgraph.graph.dataset import sitedata
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.dataset.directory import DERIVED, STORE, current_version
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.conceptbuild import concept_index_of
from bibgraph.graph.site.conceptindex import concept_index
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.commands.cli import main


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


def test_a_built_datasets_kept_figures_and_orders_are_byte_for_byte_the_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The files a build keeps (figures, each order piece) hold the bytes the store's per-concept queries give."""
    monkeypatch.setattr(sitedata, "ORDER_CHUNK", 40)  # orders of several pieces
    write_lists(tmp_path / "lists", 1000, per_file=500, seed=5, messy=0.3)
    dataset = tmp_path / "dataset"
    assert main(["build", str(tmp_path / "lists"), "--dataset", str(dataset), "--quiet"]) == 0
    version = current_version(dataset)
    reference = DerivedFiles(tmp_path / "reference", writable=True)
    reference.directory.mkdir()
    store = OxigraphGraphStore.disk(version / STORE, read_only=True)
    figures = sitedata.concept_figures(store, reference.save)  # concept by concept, by the store
    reference.save(derived_key("page", None, sitedata.CONCEPT_FIGURES), figures)
    written = sorted(reference.directory.iterdir())
    assert len(written) > len(figures) > 20  # a piece of every concept's order at least, and the figures
    assert any(concept.papers > 2 * sitedata.ORDER_CHUNK for concept in figures.values())
    for path in written:
        assert (version / DERIVED / path.name).read_bytes() == path.read_bytes(), path.name
