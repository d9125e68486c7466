"""A dataset is trusted only as it was built: what a server reads is checked against the manifest, the pointer
stays inside the directory, a damaged or missing file is one line naming it, and a version a server reads is never
removed under it (issue 25)."""

import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.directory import (
    DERIVED,
    DUMPS,
    POINTER,
    STORE,
    DatasetDamaged,
    DatasetError,
    current_version,
)
from bibgraph.graph.dataset.opener import whole_exports
from bibgraph.graph.dataset.wholeexports import DEFAULT_EXPORTS, export_file
from bibgraph.web import versionswitch
from bibgraph.web.commands.cli import main
from tests.conftest import SEED_FILES, make_app

DOCS = Path(__file__).resolve().parents[2] / "docs" / "operating.md"


def _exit(args: list[str]) -> int:
    """The exit status of ``bibgraph ARGS`` run in this process (a refusal may raise SystemExit)."""
    try:
        return main(args)
    except SystemExit as leaving:
        return int(leaving.code or 0)


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _bibgraph(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bibgraph.web.commands.cli", *args], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_a_flipped_bit_in_derived_data_refuses_the_version_naming_the_file(dataset: Path) -> None:
    version = current_version(dataset)
    damaged = sorted((version / DERIVED).iterdir())[0]
    _flip(damaged)
    with pytest.raises(DatasetDamaged, match=re.escape(str(damaged))):
        make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    found = _bibgraph("check", str(dataset))
    assert found.returncode == 1 and damaged.name in found.stderr


def test_a_derived_file_the_manifest_does_not_name_refuses_the_version(dataset: Path) -> None:
    planted = current_version(dataset) / DERIVED / "planted.pickle"
    planted.write_bytes(b"cos\nsystem\n(S'true'\ntR.")
    with pytest.raises(DatasetDamaged, match=r"planted\.pickle"):
        make_app(BIBGRAPH_STORE=f"dataset:{dataset}")


def test_a_missing_store_file_is_one_line_and_exit_1(dataset: Path) -> None:
    table = next((current_version(dataset) / STORE).glob("*.sst"))
    table.unlink()
    answer = _bibgraph("serve", str(dataset), "--port", "0")
    assert answer.returncode == 1, answer.stderr
    assert answer.stderr.strip().count("\n") == 0 and "Traceback" not in answer.stderr
    assert table.name in answer.stderr
    assert _bibgraph("stats", str(dataset)).returncode == 1


@pytest.mark.parametrize("target", ["absolute", "parent", "nested"])
def test_a_pointer_outside_the_directory_is_refused(dataset: Path, tmp_path: Path, target: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(current_version(dataset), elsewhere / "v-000009-x", symlinks=True)
    name = {
        "absolute": str(elsewhere / "v-000009-x"),
        "parent": "../elsewhere/v-000009-x",
        "nested": f"{current_version(dataset).name}/../../elsewhere/v-000009-x",
    }[target]
    (dataset / POINTER).unlink()
    os.symlink(name, dataset / POINTER)
    with pytest.raises(DatasetError, match="not a version directory"):
        current_version(dataset)
    assert _exit(["stats", str(dataset)]) == 2


SEGMENTS = st.sampled_from(["..", ".", "v-000001-x", "v-000009-x", "elsewhere", "dataset", "store", ""])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(absolute=st.booleans(), parts=st.lists(SEGMENTS, min_size=1, max_size=5))
def test_the_pointer_is_followed_only_to_a_version_directly_inside(
    tmp_path: Path, absolute: bool, parts: list[str]
) -> None:
    """Against the kernel's own resolution: a pointer is followed iff it names, by one plain name, a ``v-``
    directory whose real parent is DIR's real path."""
    root = tmp_path / "dataset"
    for version in (root / "v-000001-x", root / "v-000009-x", tmp_path / "elsewhere" / "v-000009-x"):
        version.mkdir(parents=True, exist_ok=True)
    name = os.path.join(str(root) if absolute else "", *parts)
    assume(name != "")  # no symlink can hold an empty target
    pointer = root / POINTER
    pointer.unlink(missing_ok=True)
    os.symlink(name, pointer)
    real = os.path.realpath(pointer)
    expected = (
        os.sep not in name
        and name.startswith("v-")
        and os.path.isdir(real)
        and os.path.dirname(real) == os.path.realpath(root)
    )
    try:
        assert directory.pointed(root) == name and expected
    except DatasetError:
        assert not expected


def test_a_relative_dataset_path_serves_its_dumps(first_list_dataset: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``serve d10k`` (relative): Flask's send_file read the dump's relative path against the package: 500."""
    monkeypatch.chdir(first_list_dataset.parent)
    app = make_app(BIBGRAPH_STORE=f"dataset:{first_list_dataset.name}")
    try:
        client = app.test_client()
        for name in ("bibgraph.nt", "bibgraph.ttl", "bibgraph.nt.gz"):
            answer = client.get(f"/download/{name}")
            assert answer.status_code == 200, name
            if name == "bibgraph.nt":
                assert answer.data == (current_version(first_list_dataset) / DUMPS / name).read_bytes()
    finally:
        app.extensions["bibgraph"].close()


def test_a_relative_download_directory_serves_its_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = make_app(DOWNLOAD_DIR="downloads")
    try:
        answer = app.test_client().get("/download/bibgraph.nt")
        assert answer.status_code == 200 and answer.data == (tmp_path / "downloads" / "bibgraph.nt").read_bytes()
    finally:
        app.extensions["bibgraph"].close()


def test_a_damaged_dump_is_refused_before_it_is_first_served(dataset: Path) -> None:
    _flip(current_version(dataset) / DUMPS / "bibgraph.nt")
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        client = app.test_client()
        answer = client.get("/download/bibgraph.nt")
        assert answer.status_code == 503 and b"bibgraph.nt" in answer.data
        assert client.get("/download/bibgraph.ttl").status_code == 200
        assert "dumps/bibgraph.nt" in client.get("/health").get_json()["dataset"]["damaged_files"]
        assert "bibgraph_dataset_damaged_files 1.0" in client.get("/metrics").get_data(as_text=True)
    finally:
        app.extensions["bibgraph"].close()


def test_a_damaged_whole_export_is_refused_before_it_is_first_sent_not_at_each_start(dataset: Path) -> None:
    """The whole networks' exports are sent as they are (1 GB at 100k papers): not hashed at each start (1.9 s of it
    at 100k), but checked before the first download of each, as a dump is; a damaged one is never sent."""
    version = current_version(dataset)
    coauthors = DEFAULT_EXPORTS[0]
    damaged = export_file(version / DERIVED, coauthors, "gexf", "weight")
    assert damaged.relative_to(version).as_posix() in whole_exports()
    _flip(damaged)
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")  # refused at the start before
    try:
        client = app.test_client()
        answer = client.get("/graph/coauthors.gexf")
        assert answer.status_code == 503 and answer.data != damaged.read_bytes()
        assert damaged.relative_to(version).as_posix() in client.get("/health").get_json()["dataset"]["damaged_files"]
        sound = client.get("/graph/coauthors.graphml")
        assert (
            sound.status_code == 200
            and sound.data == export_file(version / DERIVED, coauthors, "graphml", "weight").read_bytes()
        )
    finally:
        app.extensions["bibgraph"].close()
    assert _exit(["check", str(dataset)]) == 1  # the whole check still hashes it
    with pytest.raises(DatasetDamaged, match=re.escape(str(damaged))):
        directory.check_opened(version)  # and every file but the search index when not told it is sent as it is


def _wait_for(condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the time"
        time.sleep(0.2)


def test_a_switch_overtaken_by_a_newer_add_is_no_failure_and_the_newest_is_served(dataset: Path) -> None:
    """Two adds in quick succession: the switch to the first one finds the pointer already moved on. That was
    reported as a refused version and a failed switch (a false alarm on ``/health`` and ``/metrics``)."""
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        overtaken = current_version(dataset).name
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        [watcher] = [check.__self__ for check in app.before_request_funcs[None] if check.__name__ == "check"]
        watcher.switch(overtaken)  # as if the pointer moved while this switch was under way
        client = app.test_client()
        assert client.get("/health").get_json()["dataset"]["refused"] is None
        _wait_for(lambda: client.get("/health").get_json()["dataset"]["version"] == current_version(dataset).name)
        state = client.get("/health").get_json()["dataset"]
        assert (state["failed_switches"], state["refused"]) == (0, None)
    finally:
        app.extensions["bibgraph"].close()


@pytest.mark.parametrize("why", ["a damaged file", "another base IRI"])
def test_a_failed_switch_is_reported_and_the_version_served_stays(dataset: Path, why: str) -> None:
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}", NETWORK_TIMEOUT=5.0)
    try:
        client = app.test_client()
        served = current_version(dataset).name
        assert main(["add", str(dataset), str(SEED_FILES[1]), "--strict"]) == 0
        newer = current_version(dataset)
        if why == "a damaged file":
            _flip(sorted((newer / DERIVED).iterdir())[0])
            expected = str(newer / DERIVED)
        else:
            manifest = json.loads((newer / directory.MANIFEST).read_text(encoding="utf-8"))
            manifest["base"] = "http://elsewhere.test/"
            (newer / directory.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
            expected = "http://elsewhere.test/"

        def refused() -> bool:
            client.get("/")
            return client.get("/health").get_json()["dataset"]["refused"] is not None

        _wait_for(refused)
        state = client.get("/health").get_json()["dataset"]
        assert state["version"] == served and state["refused"]["version"] == newer.name
        assert expected in state["refused"]["reason"]
        metrics = client.get("/metrics").get_data(as_text=True)
        assert "bibgraph_dataset_switch_failures_total 1.0" in metrics
        assert "bibgraph_dataset_version_refused 1.0" in metrics
        assert client.get("/").status_code == 200
    finally:
        app.extensions["bibgraph"].close()


def test_an_add_never_removes_the_version_a_server_reads(dataset: Path) -> None:
    app = make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    try:
        served = current_version(dataset)
        # the served version's own lease: the request below starts a switch to the newest version in a thread,
        # which replaces the app's lease (and retires this one 5 s after) at a moment the test does not know
        lease = app.extensions[versionswitch.EXTENSION].lease
        assert lease is not None and lease.version == served
        for path in [SEED_FILES[1]] * 3:  # more adds than versions kept
            assert main(["add", str(dataset), str(path)]) == 0
        assert served.is_dir() and app.test_client().get("/").status_code == 200
        lease.release()
        assert main(["add", str(dataset), str(SEED_FILES[1])]) == 0
        assert not served.exists()  # released: removed by the next add
    finally:
        app.extensions["bibgraph"].close()


def _documented_exit_codes() -> dict[str, int]:
    """The table of docs/operating.md: ``| situation | code |``."""
    rows = re.findall(r"^\| ([^|]+?) \| (\d) \|$", DOCS.read_text(encoding="utf-8"), re.M)
    return {situation: int(code) for situation, code in rows}


def test_exit_codes_are_as_documented(dataset: Path, tmp_path: Path) -> None:
    table = _documented_exit_codes()
    empty = tmp_path / "empty"
    empty.mkdir()
    header = tmp_path / "header.txt"
    header.write_text("论文检索\n", encoding="utf-8")
    holder = os.open(dataset, os.O_RDONLY)
    try:
        import fcntl

        fcntl.flock(holder, fcntl.LOCK_EX)
        # another process holds the lock (flock is per open file: this one's own add would be refused too)
        second_writer = _bibgraph("add", str(dataset), str(SEED_FILES[1])).returncode
    finally:
        os.close(holder)
    seen = {
        "success": _exit(["stats", str(dataset)]),
        "a second writer of the same dataset": second_writer,
        "inputs that hold no paper list, dump or dataset": _exit(["stats", str(empty)]),
        "paper lists that hold no record (a header alone, an empty file, problems only)": _exit(
            ["build", str(header), "--out", str(tmp_path / "nothing.ttl")]
        ),
        "a pointer (`current`) that leaves DIR, or DIR not a dataset": _exit(["check", str(empty)]),
    }
    _flip(sorted((current_version(dataset) / DERIVED).iterdir())[0])
    seen["a dataset file that differs from its manifest, or is missing"] = _exit(["check", str(dataset)])
    assert seen == {situation: table[situation] for situation in seen}


def test_the_manifest_checksums_are_what_check_compares(dataset: Path) -> None:
    version = current_version(dataset)
    manifest = json.loads((version / directory.MANIFEST).read_text(encoding="utf-8"))
    assert main(["check", str(dataset)]) == 0
    assert set(manifest["checksums"]) == set(directory.checksums(version))


ADDS_IN_A_ROW = int(os.environ.get("BIBGRAPH_ADDS_IN_A_ROW", "12"))  # 100 by hand for the figure


def test_many_adds_in_a_row_beside_a_running_server_never_fail(first_list_dataset: Path, tmp_path: Path) -> None:
    """Each add opened its new store read-only while its own read-write handle was still alive (RocksDB
    "Corruption ... .sst", 5 adds in 19); and a running server's version must survive every add's pruning."""
    from bench.servers import bibgraph_server

    root = Path(shutil.copytree(first_list_dataset, tmp_path / "dataset", symlinks=True))
    failures: list[str] = []
    with bibgraph_server([str(root)], tmp_path / "serve.log") as base:
        for number in range(ADDS_IN_A_ROW):
            paper = tmp_path / f"added-{number}.txt"
            paper.write_text(
                f"论文检索\n\nSocial Aspects · Fairness\n\nAda Quill, Bert Number{number}\n\n"
                f"Paper number {number} added in a row beside a running server.\n",
                encoding="utf-8",
            )
            # in this process (an interpreter's start is most of a small add's cost): the add's handles are its own
            if (status := _exit(["add", str(root), str(paper)])) != 0:
                failures.append(f"add {number}: exit {status}")
            with urllib.request.urlopen(f"{base}/health", timeout=60) as health:
                state = json.load(health)
            assert state["ok"] and state["dataset"]["refused"] is None, state
        assert failures == []
        # the versions the server left are removed by later adds once it has retired them (5 s idle): not 300 s
        # (an add every 4 s keeps one version always within its 5 s: wait past it before the next add)
        deadline = time.monotonic() + 120
        while len([v for v in root.iterdir() if v.name.startswith("v-")]) > directory.KEPT_VERSIONS:
            assert time.monotonic() < deadline, sorted(v.name for v in root.iterdir())
            for _ in range(7):  # requests over 7 s: the server retires what it switched away from
                urllib.request.urlopen(f"{base}/health", timeout=60).read()
                time.sleep(1.0)
            assert _exit(["add", str(root), str(paper)]) == 0
            urllib.request.urlopen(f"{base}/health", timeout=60).read()  # lets the server switch to it
    assert _exit(["check", str(root)]) == 0


@pytest.mark.parametrize("command", ["stats", "validate", "query", "export-graph"])
def test_commands_given_a_dataset_read_it_and_refuse_nothing_in_one_line(
    first_list_dataset: Path, tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """They read a dataset DIR as an empty list of files and exited 0 (``validate`` said "conforms")."""
    first = {
        "stats": ["stats", "{}"],
        "validate": ["validate", "{}"],
        "query": ["query", "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }", "{}", "--format", "csv"],
        "export-graph": ["export-graph", "{}", "--out", str(tmp_path / "net.graphml")],
    }[command]

    def given(path: Path) -> list[str]:
        return [str(path) if part == "{}" else part for part in first]

    assert _exit(given(first_list_dataset)) == 0
    said = capsys.readouterr().out
    triples = json.loads((current_version(first_list_dataset) / directory.MANIFEST).read_text(encoding="utf-8"))[
        "counts"
    ]["triples"]
    if command in ("stats", "query"):
        assert str(triples) in said
    if command == "export-graph":
        assert int(re.search(r": (\d+) nodes", said).group(1)) > 0  # type: ignore[union-attr]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _exit(given(empty)) == 2
    assert capsys.readouterr().err.count("\n") == 1


class _Opens:
    """A pickle whose loading runs code: it creates the file ``path`` (what a planted derived file could do)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return open, (str(self.path), "w")


def _pages(root: Path) -> dict[str, str]:
    """The home page, the area tree, the maps and the first area and subarea pages, served from ``root``."""
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        client = app.test_client()
        paths = ["/", "/areas", "/graph/coauthors", "/graph/topics"]
        areas = client.get("/areas").get_data(as_text=True)
        paths += sorted(set(re.findall(r'href="(/area/[^"?#]+)"', areas)) - set(paths))[:6]
        answers = {path: client.get(path) for path in paths}
        assert all(answer.status_code == 200 for answer in answers.values()), paths
        return {path: answer.get_data(as_text=True) for path, answer in answers.items()}
    finally:
        app.extensions["bibgraph"].close()


def test_a_pickle_an_older_build_kept_is_never_loaded_its_value_is_derived_again(dataset: Path, tmp_path: Path) -> None:
    """A dataset built by a bibgraph that pickled page values (or one whose files someone replaced) holds
    ``derived/*.pickle`` files under the names that bibgraph read, with the manifest's checksums: the server never
    loads them (loading one would create a file), and derives the values again: the pages are those of the dataset
    as built now."""
    expected = _pages(dataset)
    version = current_version(dataset)
    marker = tmp_path / "code-ran"
    manifest = json.loads((version / directory.MANIFEST).read_text(encoding="utf-8"))
    for kept in sorted(path for path in (version / DERIVED).iterdir() if path.suffix in (".json", ".pickle")):
        planted = kept.with_suffix(".pickle")
        if kept != planted:
            kept.unlink()
            del manifest["checksums"][f"{DERIVED}/{kept.name}"]
        planted.write_bytes(pickle.dumps(_Opens(marker)))
        manifest["checksums"][f"{DERIVED}/{planted.name}"] = hashlib.sha256(planted.read_bytes()).hexdigest()
    (version / directory.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    assert _pages(dataset) == expected
    assert not marker.exists()
