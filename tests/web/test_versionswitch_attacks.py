"""Red team (issue 25): a dataset's pointer that cannot be read (removed, or replaced by a directory or a file) was
passed over in silence by a running server: no log line, nothing on ``/health`` or ``/metrics``. It is a switch
that cannot be made: the version served stays, and the refusal is logged and shown until the pointer is readable."""

import os
import shutil
from pathlib import Path

import pytest

from bibgraph.graph.dataset.directory import POINTER, current_version
from bibgraph.web import versionswitch
from tests.conftest import make_app


@pytest.mark.parametrize("pointer", ["removed", "a directory", "a file"])
def test_an_unreadable_pointer_is_reported_and_the_version_served_stays(
    dataset: Path, pointer: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(versionswitch, "CHECK_SECONDS", 0.0)
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        client = app.test_client()
        served = current_version(dataset).name
        name = os.readlink(dataset / POINTER)
        (dataset / POINTER).unlink()
        if pointer == "a directory":
            (dataset / POINTER).mkdir()
        elif pointer == "a file":
            (dataset / POINTER).write_text(name, encoding="utf-8")
        assert client.get("/").status_code == 200
        state = client.get("/health").get_json()["dataset"]
        assert state["version"] == served and state["refused"]["version"] == POINTER
        assert "cannot read the pointer" in state["refused"]["reason"]
        assert client.get("/").status_code == 200  # said once
        metrics = client.get("/metrics").get_data(as_text=True)
        assert "bibgraph_dataset_switch_failures_total 1.0" in metrics
        assert "bibgraph_dataset_version_refused 1.0" in metrics
        if (dataset / POINTER).is_dir():
            shutil.rmtree(dataset / POINTER)
        else:
            (dataset / POINTER).unlink(missing_ok=True)
        os.symlink(name, dataset / POINTER)  # readable again, naming the version served
        client.get("/")
        assert client.get("/health").get_json()["dataset"]["refused"] is None
    finally:
        app.extensions["bibgraph"].close()


def test_a_store_file_found_damaged_as_it_is_read_is_named_on_health(dataset: Path) -> None:
    """A flipped bit in a table file is only seen by RocksDB when a query reads its block: the page answered a
    styled 503 and the log had a line, but ``/health`` and ``/metrics`` said nothing was damaged."""
    from bibgraph.graph.dataset.directory import STORE

    for table in sorted((current_version(dataset) / STORE).glob("*.sst"), key=lambda path: path.stat().st_size)[-3:]:
        data = bytearray(table.read_bytes())
        data[len(data) // 3] ^= 0xFF
        table.write_bytes(bytes(data))
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        client = app.test_client()
        query = "SELECT * WHERE { ?s ?p ?o }"
        assert client.get("/sparql", query_string={"query": query}, headers={"Accept": "text/html"}).status_code == 503
        damaged = client.get("/health").get_json()["dataset"]["damaged_files"]
        assert damaged and all(name.startswith(f"{STORE}/") and name.endswith(".sst") for name in damaged)
        assert f"bibgraph_dataset_damaged_files {float(len(damaged))}" in client.get("/metrics").get_data(as_text=True)
    finally:
        app.extensions["bibgraph"].close()
