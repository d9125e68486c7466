"""A dataset keeps the whole networks' exports (every format, no filter) as plain files made at build time, and a
download with no filter sends that file: byte for byte what the app computes for the same request from a store
it derives everything for (so a first download at 20,000 papers is a file read, not a 170 s layout)."""

from pathlib import Path

import pytest

from bibgraph.graph.dataset import wholeexports
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name
from bibgraph.graph.dataset.directory import DERIVED
from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, export_file
from bibgraph.graph.networks import engine, exports
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
from tests.conftest import make_app


@pytest.fixture(scope="module")
def derived(seed_dataset: Path) -> Path:
    return seed_dataset / "current" / DERIVED


@pytest.mark.parametrize("spec", DEFAULT_EXPORTS, ids=lambda spec: spec.kind)
def test_a_download_with_no_filter_is_the_file_the_build_kept(client, derived: Path, spec: NetworkSpec) -> None:
    app = make_app(BIBGRAPH_STORE=f"dataset:{derived.parent.parent}")
    try:
        kept_client = app.test_client()
        for syntax in NETWORK_SYNTAXES:
            path = export_file(derived, spec, syntax.name, "weight")
            assert path.is_file(), syntax.name
            kept = kept_client.get(f"/graph/{spec.kind}.{syntax.name}")
            computed = client.get(f"/graph/{spec.kind}.{syntax.name}")
            assert kept.status_code == computed.status_code == 200
            assert kept.get_data() == path.read_bytes() == computed.get_data(), syntax.name
            if spec.kind == COAUTHORS:  # a filtered download is still computed, never the kept file
                filtered = kept_client.get(f"/graph/{spec.kind}.{syntax.name}?min_papers=2")
                assert filtered.status_code == 200 and filtered.get_data() != path.read_bytes()
    finally:
        app.extensions["bibgraph"].close()


def test_a_large_whole_coauthor_network_is_written_from_the_arrays_as_the_engine_writes_it(
    derived: Path, tmp_path: Path
) -> None:
    """Above ``LAID_OUT_MAX_NODES`` authors the build writes the whole co-author network from the incidence's arrays
    (no networkx graph, no layout kept): the bytes the engine gives for a network that large; the topic network is
    the engine's, kept."""
    found, incidence = DerivedFiles(derived).load(derived_key("incidence"))
    assert found
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(exports, "LAID_OUT_MAX_NODES", 0)
        wholeexports.derive(tmp_path, incidence)
        made = {path.name: path.read_bytes() for path in tmp_path.iterdir()}
        for spec in DEFAULT_EXPORTS:
            for syntax in NETWORK_SYNTAXES:
                body = made.pop(export_file(tmp_path, spec, syntax.name, "weight").name)
                assert body == engine.exported(incidence, spec, syntax.name)[1], syntax.name
    assert set(made) == {file_name(derived_key("network", DEFAULT_EXPORTS[1]))}  # no network laid out
