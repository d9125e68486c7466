"""A dataset keeps the whole networks' exports (every format, no filter) as plain files made at build time, and a
download with no filter sends that file: byte for byte what the app computes for the same request from a store
it derives everything for (so a first download at 20,000 papers is a file read, not a 170 s layout)."""

from pathlib import Path

import pytest

from bibgraph.graph.dataset import wholeexports
from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name
from bibgraph.graph.dataset.directory import DERIVED
from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, export_file
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


def test_the_exports_made_in_a_child_process_are_the_bytes_made_in_process(
    derived: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A large network's exports are made by a child that exits (its memory given back): the same files, network
    and layout as the build made in-process from the same incidence; a child that fails says why."""
    monkeypatch.setattr(wholeexports, "CHILD_MIN_AUTHORSHIPS", 0)
    key = derived_key("incidence")
    found, incidence = DerivedFiles(derived).load(key)
    assert found
    child = tmp_path / "derived"
    child.mkdir()
    DerivedFiles(child, writable=True).save(key, incidence)
    wholeexports.derive(child, incidence)
    made = {path.name: path.read_bytes() for path in child.iterdir()}
    for spec in DEFAULT_EXPORTS:
        names = [export_file(child, spec, syntax.name, "weight").name for syntax in NETWORK_SYNTAXES]
        names += [file_name(derived_key(what, spec)) for what in ("network", "layout")]
        for name in names:
            assert made.pop(name) == (derived / name).read_bytes(), name
    assert set(made) == {file_name(key)}
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(wholeexports.ExportError, match="keeps no incidence"):
        wholeexports.derive(empty, incidence)
