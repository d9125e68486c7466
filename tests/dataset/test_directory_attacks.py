"""Red team: two writers of one dataset at once never lose what either said it wrote.

Two ``bibgraph add DIR ...`` at once both started from the version served; the one switched last was a copy
of that version plus its own lists, so the other's papers were gone from the dataset although its command
had reported them added (exit status 0). A writer now holds the dataset's lock from reading the version it
starts from to the switch, and a second writer is refused at once with a clear error.
"""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pyoxigraph
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import buildphases, directory, sitedata
from bibgraph.graph.dataset.derived import DamagedFile, DerivedFiles, derived_key, file_name
from bibgraph.graph.dataset.directory import (
    DERIVED,
    DUMPS,
    MANIFEST,
    STORE,
    DatasetDamaged,
    DatasetError,
    current_version,
)
from bibgraph.graph.identity import numbering
from bibgraph.graph.site.search import FILE_NAME
from bibgraph.web.commands import versionwrite
from bibgraph.web.commands.cli import main
from tests.conftest import SEED_FILES, make_app

OTHER_LIST = """论文检索

Social Aspects · Fairness

Ada Quill, Bertrand Nowhere

A paper that no seed list holds, added by the second writer while the first one runs.
"""


def _papers(root: Path) -> int:
    return json.loads((current_version(root) / MANIFEST).read_text(encoding="utf-8"))["counts"]["papers"]


def test_an_add_while_another_runs_is_refused_and_nothing_is_lost(dataset: Path, tmp_path: Path, monkeypatch) -> None:
    other = tmp_path / "other.txt"
    other.write_text(OTHER_LIST, encoding="utf-8")
    first_inside, go_on = threading.Event(), threading.Event()
    original = versionwrite.add_lists
    calls: list[int] = []

    def paused(*args, **kwargs):  # the first add waits, past reading the version served, for the second
        calls.append(1)
        if len(calls) == 1:
            first_inside.set()
            go_on.wait(60)
        return original(*args, **kwargs)

    monkeypatch.setattr(versionwrite, "add_lists", paused)
    results: list[object] = []
    thread = threading.Thread(target=lambda: results.append(versionwrite.add_to_dataset(dataset, [SEED_FILES[1]])))
    thread.start()
    try:
        assert first_inside.wait(60)
        before = _papers(dataset)
        try:
            _, report = versionwrite.add_to_dataset(dataset, [other])
            second_added = report.papers
        except DatasetError as error:
            assert "another build or add is writing" in str(error)
            second_added = 0
    finally:
        go_on.set()
        thread.join(60)
    (_, first_report) = results[0]
    assert _papers(dataset) == before + first_report.papers + second_added


def test_a_writer_in_another_process_holds_the_dataset(dataset: Path) -> None:
    """The lock is the kernel's (``flock`` on the directory): a process holding it refuses this one's add."""
    script = "import fcntl, os, sys; h = os.open(sys.argv[1], os.O_RDONLY); fcntl.flock(h, fcntl.LOCK_EX); print(1)"
    script += "; sys.stdout.flush(); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", script, str(dataset)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        served = current_version(dataset)
        with pytest.raises(DatasetError, match="another build or add"):
            versionwrite.add_to_dataset(dataset, [SEED_FILES[1]])
        assert main(["add", str(dataset), str(SEED_FILES[1])]) != 0
        assert current_version(dataset) == served
    finally:
        holder.communicate("")
    with directory.writing(dataset):  # the lock went with its holder
        pass


def test_the_lock_is_taken_again_within_a_writer(dataset: Path) -> None:
    with directory.writing(dataset), directory.writing(dataset):
        pass
    with directory.writing(dataset):  # released: taken again
        pass


# Red team (issue 25, second round): what a dataset's files may be made to say. Each of these was a traceback, a
# version served from outside DIR, or an add that made a new version of a damaged one and recorded its own checksums
# of the damage (so `check` then passed).


def _bibgraph(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bibgraph.web.commands.cli", *args], capture_output=True, text=True, timeout=120
    )


def _one_line(answer: subprocess.CompletedProcess[str], code: int, *named: str) -> None:
    said = answer.stderr.strip()
    assert answer.returncode == code, said
    assert "Traceback" not in said and said.count("\n") == 0, said
    assert all(name in said for name in named), said


FIELDS = st.sampled_from(["base", "counts", "checksums", "inputs", "dumps", "format", "version", "stats"])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(field=FIELDS, value=JSON | st.just(...))
def test_a_manifest_of_any_shape_is_read_or_refused_in_one_error(
    first_list_dataset: Path, tmp_path_factory, field: str, value: object
) -> None:
    """A manifest that parses but whose field is missing (``...``) or of any other JSON value: either read, with every
    field its readers take of the type they take it as, or :class:`DatasetError`; never an AttributeError, KeyError
    or TypeError in whoever reads it next."""
    version = tmp_path_factory.mktemp("manifest")
    written = json.loads((current_version(first_list_dataset) / MANIFEST).read_text(encoding="utf-8"))
    if value is ...:
        written.pop(field)
    else:
        written[field] = value
    (version / MANIFEST).write_text(json.dumps(written), encoding="utf-8")
    try:
        manifest = directory.read_manifest(version)
    except DatasetError:
        return
    assert isinstance(manifest["base"], str)
    assert all(isinstance(count, int) for count in manifest["counts"].values())
    assert all(isinstance(name, str) and isinstance(digest, str) for name, digest in manifest["checksums"].items())
    for entry in manifest.get("dumps", {}).values():
        for name, size in entry.get("segments", []):
            assert "/" not in name and name not in (".", "..") and size >= 0
    for name, stat in manifest.get("stats", {}).items():  # what an add compares with a file's os.stat
        assert isinstance(name, str) and len(stat) == 3 and all(type(n) is int for n in stat)


@pytest.mark.parametrize(
    "damage", ["a JSON list", "checksums a list", "no base", "a segment outside dumps/", "stats not a file's stat"]
)
def test_a_misshapen_manifest_is_one_line_and_exit_2_in_every_command(dataset: Path, damage: str) -> None:
    path = current_version(dataset) / MANIFEST
    manifest = json.loads(path.read_text(encoding="utf-8"))
    if damage == "a JSON list":
        manifest = [manifest]
    elif damage == "checksums a list":
        manifest["checksums"] = sorted(manifest["checksums"])
    elif damage == "no base":
        del manifest["base"]
    elif damage == "stats not a file's stat":
        manifest["stats"] = {"derived/search.sqlite": [1, 2]}
    else:
        manifest["dumps"]["bibgraph.nt"]["segments"] = [["../../manifest.json", 10]]
    path.write_text(json.dumps(manifest), encoding="utf-8")
    for command in (["stats"], ["check"], ["add"]):
        _one_line(_bibgraph(*command, str(dataset), *([str(SEED_FILES[1])] if command == ["add"] else [])), 2, MANIFEST)


def _outside(path: Path, elsewhere: Path) -> None:
    """Move ``path`` out of the dataset and leave a symbolic link to it in its place."""
    elsewhere.mkdir(exist_ok=True)
    target = elsewhere / path.name
    path.rename(target)
    os.symlink(target, path)


@pytest.mark.parametrize("linked", ["store", "derived", "dumps", "a derived file", "a store table"])
def test_a_link_inside_a_version_is_refused_by_every_reader(dataset: Path, tmp_path: Path, linked: str) -> None:
    """The pointer stayed inside DIR, but ``v-…/store`` (or ``derived``, a file of it...) could lead anywhere: the
    version was served and extended from outside the dataset, and ``check`` passed a linked file of equal bytes."""
    version = current_version(dataset)
    path = {
        "store": version / STORE,
        "derived": version / DERIVED,
        "dumps": version / DUMPS,
        "a derived file": sorted((version / DERIVED).glob("*.json"))[0],
        "a store table": sorted((version / STORE).glob("*.sst"))[0],
    }[linked]
    _outside(path, tmp_path / "elsewhere")
    with pytest.raises(DatasetDamaged, match="a link"):
        make_app(BIBGRAPH_STORE=f"dataset:{dataset}")
    _one_line(_bibgraph("stats", str(dataset)), 1, path.name)
    _one_line(_bibgraph("add", str(dataset), str(SEED_FILES[1])), 1, path.name)
    checked = _bibgraph("check", str(dataset))
    assert checked.returncode == 1 and path.name in checked.stderr
    assert [v.name for v in dataset.iterdir() if v.name.startswith("v-")] == [version.name]


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "damage",
    [
        "the incidence",
        "the concepts' figures",
        "the home figures",
        "the search index",
        "the person map",
        "a missing derived file",
        "a store table",
    ],
)
def test_an_add_refuses_to_extend_a_damaged_version(dataset: Path, damage: str) -> None:
    """An add read the served version's values unchecked and recorded its own checksums of what it made from them:
    a flipped bit became part of a version `check` passed (or a 30-line traceback). Now refused in one line, exit
    1, and nothing is written. The home figures were read unchecked, and the search index's layers too (they are
    not hashed when a version is opened: too large), until each was checked before it is read."""
    version = current_version(dataset)
    derived = DerivedFiles(version / DERIVED)
    path = {
        "the incidence": version / DERIVED / file_name(derived_key("incidence")),
        "the concepts' figures": version / DERIVED / file_name(derived_key("page", None, sitedata.CONCEPT_FIGURES)),
        "the home figures": version / DERIVED / file_name(derived_key("page", None, sitedata.HOME)),
        "the search index": version / DERIVED / FILE_NAME,  # read by the add (its layers), not hashed at an open
        "the person map": version / numbering.FILE_NAME,
        "a missing derived file": version / DERIVED / file_name(derived_key("incidence")),
        "a store table": sorted((version / STORE).glob("*.sst"))[0],
    }[damage]
    assert path.is_file() and derived.directory.is_dir()
    if damage == "a missing derived file":
        path.unlink()
    elif damage == "a store table":
        with path.open("r+b") as table:
            table.truncate(100)
    else:
        _flip(path)
    before = sorted(p.name for p in dataset.iterdir())
    _one_line(_bibgraph("add", str(dataset), str(SEED_FILES[1])), 1, path.name)
    assert sorted(p.name for p in dataset.iterdir()) == before and current_version(dataset) == version


def test_a_version_without_its_store_is_a_damaged_dataset_not_a_usage_error(dataset: Path) -> None:
    """``stats DIR`` whose version lost its ``store/`` said "neither a bibgraph dataset nor one of its versions" (2)."""
    shutil.rmtree(current_version(dataset) / STORE)
    _one_line(_bibgraph("stats", str(dataset)), 1, STORE)


def _interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
    """add_lists that writes its lists, then fails (a disk full, a bug, Ctrl-C: whatever stops an add midway)."""
    real(*args, **kwargs)
    raise KeyboardInterrupt


real = versionwrite.add_lists


def _build_interrupted(*args, **kwargs):  # type: ignore[no-untyped-def]
    """A build's fill that writes its lists into the store, then fails."""
    real_fill(*args, **kwargs)
    raise KeyboardInterrupt


real_fill = buildphases.fill


@pytest.mark.parametrize(
    "failure", ["a damaged incidence", "a failure while the lists are written", "a rebuild failing after its fill"]
)
def test_a_failed_write_closes_its_store_before_removing_its_version(dataset: Path, monkeypatch, failure) -> None:  # type: ignore[no-untyped-def]
    """The half-written version is removed only once the store written into it is closed: while an exception's
    frames held it, RocksDB's threads still wrote into the directory being removed, and under load a refused add
    left its ``.part`` directory behind. Checked where the removal starts: the store opens (RocksDB refuses a
    second open of a store this process holds)."""
    opened: list[str] = []
    remove = shutil.rmtree

    def removing(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if (Path(path) / STORE).is_dir():
            try:
                pyoxigraph.Store(str(Path(path) / STORE))
            except OSError as error:
                opened.append(str(error))
            else:
                opened.append("")
        return remove(path, *args, **kwargs)

    if failure == "a damaged incidence":
        _flip(current_version(dataset) / DERIVED / file_name(derived_key("incidence")))
        expected: type[BaseException] = DamagedFile
    elif failure == "a failure while the lists are written":
        monkeypatch.setattr(versionwrite, "add_lists", _interrupted)
        expected = KeyboardInterrupt
    else:
        monkeypatch.setattr(buildphases, "fill", _build_interrupted)
        expected = KeyboardInterrupt
    before = sorted(p.name for p in dataset.iterdir())
    base = json.loads((current_version(dataset) / MANIFEST).read_text(encoding="utf-8"))["base"]
    monkeypatch.setattr(shutil, "rmtree", removing)
    with pytest.raises(expected):
        if failure.startswith("a rebuild"):
            versionwrite.build_dataset([SEED_FILES[1]], dataset, base)
        else:
            versionwrite.add_to_dataset(dataset, [SEED_FILES[1]])
    monkeypatch.undo()
    assert opened == [""]  # the version's store was removed once, closed
    assert sorted(p.name for p in dataset.iterdir()) == before
