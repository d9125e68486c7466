"""A dataset build keeps the incidence its own pass made (``graph/networks/incidencebuild.py``): the derive does
not read it back from the store, and what is kept is what the store would give."""

from pathlib import Path

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.networks import incidence
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE
from tests.networks.test_incidencebuild import same_incidence


def test_a_dataset_build_keeps_its_passes_incidence_and_never_reads_it_from_the_store(
    tmp_path: Path, monkeypatch
) -> None:
    read_from_store = incidence.incidence_of

    def not_read(*args: object, **kwargs: object) -> None:
        raise AssertionError("the incidence was read from the store")

    monkeypatch.setattr(incidence, "incidence_of", not_read)
    version, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    found, kept = DerivedFiles.unpublished(version).load(derived_key("incidence"))
    store = OxigraphGraphStore.disk(version / "store", read_only=True)
    assert found and same_incidence(kept, read_from_store(store))
