"""Red team: two writers of one dataset at once never lose what either said it wrote.

Two ``bibgraph add DIR ...`` at once both started from the version served; the one switched last was a copy
of that version plus its own lists, so the other's papers were gone from the dataset although its command
had reported them added (exit status 0). A writer now holds the dataset's lock from reading the version it
starts from to the switch, and a second writer is refused at once with a clear error.
"""

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.directory import MANIFEST, DatasetError, current_version
from bibgraph.web.commands import versionwrite
from bibgraph.web.commands.cli import main
from tests.conftest import SEED_FILES

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
