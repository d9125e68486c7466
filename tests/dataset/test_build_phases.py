"""A dataset build's load and VoID counts run in child processes that exit before the derive (issue 28: the 1M
build's memory peak), and a child that dies leaves nothing half-written; the load's spool of the search index's texts
is read by the derive and never published."""

import json
import os
import shutil
import signal
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bibgraph.graph.dataset import build, searchspool
from bibgraph.graph.dataset.directory import current_version, read_manifest
from bibgraph.graph.serving import childprocess
from bibgraph.graph.serving.childprocess import PhaseFailed, in_child
from bibgraph.graph.site import searchbuild
from bibgraph.graph.site.search import FILE_NAME
from bibgraph.seeds import seed_directory
from bibgraph.web.commands import versionwrite
from bibgraph.web.commands.cli import main
from tests.conftest import BASE


def _phase_children() -> list[int]:
    """The build phases' processes this process has started and that still run (:mod:`buildphases`)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # gone meanwhile
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"serve_child" in command:
            found.append(int(entry.name))
    return found


def test_the_load_and_the_counts_run_in_processes_that_have_exited_when_the_derive_starts(
    tmp_path: Path, monkeypatch
) -> None:
    def not_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("ran in the build's own process")

    seen: list[list[int]] = []
    real_derive = versionwrite.derive

    def derive(*args: object, **kwargs: object) -> None:
        seen.append(_phase_children())
        real_derive(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(childprocess, "CHILDREN_FROM_BYTES", 0)  # the seeds are small: in children all the same
    monkeypatch.setattr(build, "build_graph", not_here)  # the parse and load
    monkeypatch.setattr(build, "engine_counts", not_here)  # the VoID counts
    monkeypatch.setattr(versionwrite, "derive", derive)
    version, report = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    assert seen == [[]]  # the derive ran here, once, with no phase's process left
    manifest = json.loads((version / "manifest.json").read_text())
    assert report.triples == manifest["counts"]["triples"] > report.authorships > 0  # counted, in the child
    dump = (version / "dumps" / "bibgraph.nt").read_bytes()
    ends = manifest["dumps"]["bibgraph.nt"]["data_bytes"]
    tail = dump[ends:]  # the VoID description, counted by the child, ends the dump
    assert b"void#triples" not in dump[:ends]
    data = report.triples - len(tail.splitlines())  # its void:triples: the data's count
    assert f'"{data}"'.encode() in tail
    assert (version / "persons.json").is_file() and report.numbering is None  # written by the load's child
    assert (version / "derived").is_dir()


def _files(version: Path) -> dict[str, bytes]:
    """What a version holds but its store (RocksDB's files differ from run to run) and its manifest (its name)."""
    return {
        str(path.relative_to(version)): path.read_bytes()
        for path in sorted(version.rglob("*"))
        if path.is_file() and "store" not in path.relative_to(version).parts and path.name != "manifest.json"
    }


def test_small_inputs_build_in_process_and_the_same_dataset_as_in_children(
    built: Path, tmp_path: Path, monkeypatch
) -> None:
    """Below :data:`~childprocess.CHILDREN_FROM_BYTES` no phase starts an interpreter; above it the same files."""
    started: list[object] = []
    monkeypatch.setattr(childprocess, "in_child", lambda work, *args: started.append(work) or work(*args))
    here, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "here", BASE)
    assert started == []
    assert _files(here) == _files(current_version(built)) != {}  # built in children (module fixture, below)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset of the seeds, built once with its phases in children: each test below rebuilds a copy of it."""
    root = tmp_path_factory.mktemp("built") / "data"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(childprocess, "CHILDREN_FROM_BYTES", 0)
        versionwrite.build_dataset([seed_directory()], root, BASE)
    return root


@pytest.mark.parametrize("phase", [1, 2])
def test_a_phase_whose_process_dies_leaves_no_version_and_the_dataset_as_it_was(
    built: Path, tmp_path: Path, capsys, monkeypatch, phase: int
) -> None:
    """The load's process (1) or the counts' (2) killed (as by the kernel's OOM killer) while it runs."""
    monkeypatch.setattr(childprocess, "CHILDREN_FROM_BYTES", 0)
    root = tmp_path / "data"
    shutil.copytree(built, root, symlinks=True)
    served = current_version(root)
    listing = sorted(path.name for path in root.iterdir())
    done = threading.Event()

    def kill_the_phase() -> None:
        started: list[int] = []
        while not done.is_set():
            for pid in _phase_children():
                if pid not in started:
                    started.append(pid)
                    if len(started) == phase:
                        os.kill(pid, signal.SIGKILL)
                        return
            time.sleep(0.005)

    killer = threading.Thread(target=kill_the_phase)
    killer.start()
    try:
        status = main(["build", "--dataset", str(root), "--quiet", str(seed_directory())])
    finally:
        done.set()
        killer.join()
    assert status == 1
    err = capsys.readouterr().err
    assert "ended without finishing (exit status -9)" in err and "the dataset is unchanged" in err
    assert sorted(path.name for path in root.iterdir()) == listing  # no half-written version left beside it
    assert current_version(root) == served


def fails(message: str) -> None:
    """A phase that fails (a module's function: a phase's process is a new interpreter, it imports what it runs)."""
    raise ValueError(message)


class Unpicklable(Exception):
    def __init__(self, reason: str, code: int) -> None:
        super().__init__(f"{reason} ({code})")


def fails_unpicklably() -> None:
    raise Unpicklable("a store refused", 7)


def test_an_error_in_a_phase_is_raised_again_with_its_type_and_message() -> None:
    with pytest.raises(ValueError, match="cannot load this dump: bad") as raised:
        in_child(fails, "lists.txt: cannot load this dump: bad")
    assert any("child process" in note for note in raised.value.__notes__)


def test_an_error_that_cannot_be_sent_back_is_a_phase_failure_with_its_message() -> None:
    with pytest.raises(PhaseFailed, match=r"Unpicklable: a store refused \(7\)"):
        in_child(fails_unpicklably)


def test_a_phase_value_comes_back_whole() -> None:
    value = {"triples": 3142, "dumps": {"bibgraph.nt": {"data_bytes": 10}}}
    assert in_child(dict, value) == value


def test_the_whole_exports_made_in_a_child_are_the_bytes_made_in_process(
    built: Path, tmp_path: Path, monkeypatch
) -> None:
    """Above ``LAID_OUT_MAX_NODES`` authors the whole exports run in a process holding the kept incidence alone; the
    threshold lowered so the seeds' go there too, the in-process path barred."""
    from bibgraph.graph.dataset import sitedata

    def not_here(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole exports were made in the build's own process")

    monkeypatch.setattr(sitedata, "LAID_OUT_MAX_NODES", 0)
    monkeypatch.setattr(sitedata, "derive_exports", not_here)
    version, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    before, after = current_version(built) / "derived", version / "derived"
    names = sorted(path.name for path in before.iterdir())
    assert sum(name.endswith((".graphml", ".gexf")) for name in names) == 4  # co-author and topic networks
    assert sorted(path.name for path in after.iterdir()) == names
    for name in names:  # every derived file, the exports among them, the same bytes
        assert (after / name).read_bytes() == (before / name).read_bytes(), name
    assert _phase_children() == []


def _spool_seen(monkeypatch: pytest.MonkeyPatch, seen: list[Any], then: Exception | None = None) -> None:
    """The search index's writer records whether it was given the spool's rows (and the spool was there), and
    raises ``then`` once it has read them."""
    original = searchbuild.build_search_index

    def writer(store: Any, path: Path, incidence: Any = None, documents: Any = None) -> None:
        seen.append((documents is not None, (path.parent.parent / searchspool.SPOOL).exists()))
        original(store, path, incidence, documents)
        if then is not None:
            raise then

    monkeypatch.setattr(searchbuild, "build_search_index", writer)


def test_a_build_reads_its_spool_and_publishes_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    _spool_seen(monkeypatch, seen)
    version, _ = versionwrite.build_dataset([seed_directory()], tmp_path / "data", BASE)
    assert seen == [(True, True)]
    assert not (version / searchspool.SPOOL).exists()
    assert searchspool.SPOOL not in "".join(read_manifest(version)["checksums"])
    assert (version / "derived" / FILE_NAME).exists()


@pytest.mark.parametrize("step", ["index", "exports"])
def test_a_build_that_dies_after_its_load_leaves_no_spool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str
) -> None:
    """The derive failing once the spool was read (``index``), or in a later step with it removed (``exports``): no
    version is published, and no spool is left anywhere in the dataset."""
    root = tmp_path / "data"
    before, _ = versionwrite.build_dataset([seed_directory()], root, BASE)
    seen: list[Any] = []
    _spool_seen(monkeypatch, seen, RuntimeError("died") if step == "index" else None)
    if step == "exports":
        monkeypatch.setattr("bibgraph.graph.dataset.sitedata.derive_exports", _dies)
    with pytest.raises(versionwrite.DeriveError, match="died"):
        versionwrite.build_dataset([seed_directory()], root, BASE)
    assert seen == [(True, True)]
    assert current_version(root) == before
    assert [path for path in root.rglob("*") if path.name == searchspool.SPOOL] == []


def _dies(*args: Any) -> None:
    raise RuntimeError("died")
