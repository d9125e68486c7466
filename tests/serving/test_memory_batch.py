"""A batch job's memory behaviour (:mod:`bibgraph.graph.serving.memory`): an add, and a build's derive, run with
the cyclic collector run rarely, and ``bibgraph add`` turns numpy's transparent huge pages off for itself and its
children unless the operator chose."""

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bibgraph.graph.serving.memory import RARE_COLLECTIONS, fewer_collections
from bibgraph.web.commands import versionwrite
from tests.conftest import BASE
from tests.identity.test_dumps import write

LISTS = {
    "a": [("Biology · Proteins", ["Ada Quill", "Bert Norm"], ["protein"])],
    "b": [("Physics · Optics", ["Cleo Marsh", "Ada Quill"], ["lens"])],
}
# Run by a fresh interpreter: the add through the command line, then what numpy and the environment say
ADD_THEN_REPORT = """
import os, sys
from bibgraph.web.commands.cli import main
status = main(["add", sys.argv[1], sys.argv[2]])
import numpy._core.multiarray as multiarray
print(status, multiarray._get_madvise_hugepage(), os.environ["NUMPY_MADVISE_HUGEPAGE"])
"""


@pytest.fixture
def built(tmp_path: Path) -> Path:
    """A dataset of list ``a``; list ``b`` beside it, to add."""
    for name, records in LISTS.items():
        write(tmp_path / name, {f"{name}.txt": records})
    versionwrite.build_dataset([tmp_path / "a"], tmp_path / "d", BASE)
    return tmp_path


def test_fewer_collections_sets_and_restores_the_youngest_threshold() -> None:
    before = gc.get_threshold()
    with fewer_collections():
        assert gc.get_threshold() == (RARE_COLLECTIONS, *before[1:])
    assert gc.get_threshold() == before
    with pytest.raises(ValueError), fewer_collections(5000):
        raise ValueError("restored on the way out too")
    assert gc.get_threshold() == before


def thresholds_seen(monkeypatch, name: str) -> list[int]:
    """The collector's youngest threshold each time ``versionwrite``'s function ``name`` is called."""
    seen: list[int] = []
    called = getattr(versionwrite, name)

    def watched(*args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(gc.get_threshold()[0])
        return called(*args, **kwargs)

    monkeypatch.setattr(versionwrite, name, watched)
    return seen


def test_an_add_runs_with_the_collector_run_rarely(built: Path, monkeypatch) -> None:
    seen = thresholds_seen(monkeypatch, "_fill")
    before = gc.get_threshold()
    versionwrite.add_to_dataset(built / "d", [built / "b"])
    assert seen == [RARE_COLLECTIONS] and gc.get_threshold() == before


def test_a_build_derives_with_the_collector_run_rarely(tmp_path: Path, monkeypatch) -> None:
    write(tmp_path / "a", {"a.txt": LISTS["a"]})
    seen = thresholds_seen(monkeypatch, "derive")
    before = gc.get_threshold()
    versionwrite.build_dataset([tmp_path / "a"], tmp_path / "d", BASE)
    assert seen == [RARE_COLLECTIONS] and gc.get_threshold() == before


@pytest.mark.parametrize(("chosen", "expected"), [(None, "0 False 0"), ("1", "0 True 1")])
def test_bibgraph_add_turns_numpys_huge_pages_off_unless_the_operator_chose(
    built: Path, chosen: str | None, expected: str
) -> None:
    environment = {name: value for name, value in os.environ.items() if name != "NUMPY_MADVISE_HUGEPAGE"}
    if chosen is not None:
        environment["NUMPY_MADVISE_HUGEPAGE"] = chosen
    done = subprocess.run(
        [sys.executable, "-c", ADD_THEN_REPORT, str(built / "d"), str(built / "b")],
        capture_output=True,
        text=True,
        env=environment,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == expected
