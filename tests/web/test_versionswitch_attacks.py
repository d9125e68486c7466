"""Red team (issue 25): a dataset's pointer that cannot be read (removed, or replaced by a directory or a file) was
passed over in silence by a running server: no log line, nothing on ``/health`` or ``/metrics``. It is a switch
that cannot be made: the version served stays, and the refusal is logged and shown until the pointer is readable.
Issue 28: a server that got no request went on serving the version before an add until a request came."""

import os
import shutil
import time
from pathlib import Path

import pytest

from bench.servers import bibgraph_server
from bibgraph.graph.dataset.directory import POINTER, current_version
from bibgraph.web import versionswitch
from bibgraph.web.commands.cli import main
from tests.conftest import SEED_FILES, make_app


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


def test_a_version_overtaken_while_it_is_opened_is_no_refusal(dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pointer named a version when the switch began; two adds later it was removed while the server opened it
    (before its lease), and the failure to open it showed on ``/health`` as a refused version, although the pointer
    had moved on to one that opens. A failure once the pointer names another version is no refusal: the newest is
    served."""
    from bibgraph.graph.dataset import directory
    from bibgraph.web.commands.cli import main
    from tests.conftest import SEED_FILES

    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        overtaken = current_version(dataset).name
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        newest = current_version(dataset).name
        directory.switch(dataset, overtaken)  # the pointer as the switch found it
        real = versionswitch.dataset_version

        def removed_meanwhile(path: Path) -> Path:
            directory.switch(dataset, newest)  # a newer add's switch, and its prune of the version being opened
            raise directory.DatasetDamaged(f"{path / directory.STORE}: missing (the manifest lists it)")

        monkeypatch.setattr(versionswitch, "dataset_version", removed_meanwhile)
        [watcher] = [check.__self__ for check in app.before_request_funcs[None] if check.__name__ == "check"]
        watcher.switch(overtaken)
        # Put back before any request: a request's check may start the next switch at once (it once ran the
        # patched opener too, and the newest was refused: the test's race, not the watcher's).
        monkeypatch.setattr(versionswitch, "dataset_version", real)
        client = app.test_client()
        state = client.get("/health").get_json()["dataset"]
        assert (state["failed_switches"], state["refused"]) == (0, None)
        monkeypatch.setattr(versionswitch, "CHECK_SECONDS", 0.0)
        deadline = time.monotonic() + 60
        while client.get("/health").get_json()["dataset"]["version"] != newest:
            assert time.monotonic() < deadline, "the newest version was never served"
            time.sleep(0.2)
        assert client.get("/health").get_json()["dataset"]["refused"] is None
    finally:
        app.extensions["bibgraph"].close()


def _wait_for(condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.1)


def test_a_watched_dataset_switches_to_an_add_without_any_request(
    dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(versionswitch, "CHECK_SECONDS", 0.1)
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    thread = versionswitch.watch(app)
    switches: versionswitch.Switches = app.extensions[versionswitch.EXTENSION]
    try:
        assert thread is not None and thread.is_alive()
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        newest = current_version(dataset).name
        _wait_for(lambda: switches.served == newest)  # no request was made
        assert (switches.succeeded, switches.failed, switches.refused) == (1, 0, None)
    finally:
        app.extensions[versionswitch.WATCHER].stop()
        app.extensions["bibgraph"].close()
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_nothing_is_watched_but_a_dataset_directory(dataset: Path) -> None:
    app = make_app(BIBGRAPH_STORE=f"dataset:{current_version(dataset)}")  # a version: no pointer to follow
    try:
        assert versionswitch.watch(app) is None
    finally:
        app.extensions["bibgraph"].close()


def test_serve_switches_to_an_add_with_no_request_after_it(dataset: Path, tmp_path: Path) -> None:
    """``bibgraph serve DIR`` watches the pointer itself: its log says it serves the add's version, asked nothing."""
    log = tmp_path / "serve.log"
    with bibgraph_server([str(dataset)], log):
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        newest = current_version(dataset).name
        _wait_for(lambda: f"now serving dataset version {dataset.absolute() / newest}" in log.read_text("utf-8"))
