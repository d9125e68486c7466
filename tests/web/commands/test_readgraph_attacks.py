"""Red team (issue 25): a command that reads paper lists, given a dataset, a version of one, its pointer, a
directory holding no list, or lists that hold no record, refuses it in one line (exit 2); ``serve`` of one version
serves that version.

``build EMPTY --out`` wrote an empty graph, ``authors DATASET`` found nobody, ``add DIR EMPTY`` published a version
with nothing added, ``serve DIR/v-…`` served an empty in-memory graph: all exit 0, on nothing. ``serve DIR/current``
(the pointer as if a version) was served unchecked, and a query worker started later would have opened whatever the
pointer named by then.
"""

import json
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from bibgraph.graph.dataset.directory import POINTER, current_version
from tests.conftest import SEED_FILES

COMMANDS = {
    "build --out": lambda given, tmp: ["build", given, "--out", str(tmp / "out.ttl")],
    "build --dataset": lambda given, tmp: ["build", given, "--dataset", str(tmp / "new")],
    "authors": lambda given, tmp: ["authors", given],
    "add": lambda given, tmp: ["add", str(tmp / "added"), given],
    "serve": lambda given, tmp: ["serve", given, "--port", "0"],
}


def _given(dataset: Path, tmp: Path, what: str) -> str:
    if what == "a dataset":
        return str(dataset)
    if what == "a version":
        return str(current_version(dataset))
    if what == "its pointer":
        return str(dataset / POINTER)
    if what == "lists that hold no record":  # a header alone, an empty file, an author line with no abstract
        (tmp / "lists").mkdir()
        (tmp / "lists" / "header.txt").write_text("论文检索\n", encoding="utf-8")
        (tmp / "lists" / "empty.txt").write_text("", encoding="utf-8")
        (tmp / "lists" / "lonely.txt").write_text("论文检索\n\nA · B\nLonely Author\n", encoding="utf-8")
        return str(tmp / "lists")
    (tmp / "nothing" / "deeper").mkdir(parents=True)
    (tmp / "nothing" / "deeper" / "notes.md").write_text("no list here\n", encoding="utf-8")
    return str(tmp / "nothing")


WHAT = ["a dataset", "a version", "its pointer", "a directory with no list", "lists that hold no record"]
SERVED = ("a dataset", "a version")  # serve reads them as built: test_serve_of_one_version_serves_it


@pytest.mark.parametrize(
    ("command", "what"),
    [(command, what) for command in sorted(COMMANDS) for what in WHAT if command != "serve" or what not in SERVED],
)
def test_a_list_reading_command_refuses_what_holds_no_list(
    first_list_dataset: Path, tmp_path: Path, command: str, what: str
) -> None:
    shutil.copytree(first_list_dataset, tmp_path / "added", symlinks=True)
    before = sorted(path.name for path in (tmp_path / "added").iterdir())
    given = _given(first_list_dataset, tmp_path, what)
    try:
        answer = subprocess.run(
            [sys.executable, "-m", "bibgraph.web.commands.cli", *COMMANDS[command](given, tmp_path)],
            capture_output=True,
            text=True,
            timeout=90,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{command} {what}: not refused (it ran on)")
    said = answer.stderr.strip()
    assert answer.returncode == 2 and said.count("\n") == 0 and "Traceback" not in said, said
    assert not (tmp_path / "out.ttl").exists() and not (tmp_path / "new").exists()
    assert sorted(path.name for path in (tmp_path / "added").iterdir()) == before  # no version published


def test_serve_of_one_version_serves_it(first_list_dataset: Path, tmp_path: Path) -> None:
    from bench.servers import bibgraph_server

    version = current_version(first_list_dataset)
    triples = json.loads((version / "manifest.json").read_text(encoding="utf-8"))["counts"]["triples"]
    with bibgraph_server([str(version)], tmp_path / "serve.log") as base:
        with urllib.request.urlopen(f"{base}/health", timeout=60) as health:
            assert json.load(health)["dataset"]["version"] == version.name
        query = urllib.parse.quote("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")
        with urllib.request.urlopen(f"{base}/sparql?query={query}&format=csv", timeout=60) as answer:
            assert answer.read().decode().split()[-1] == str(triples)


def test_lists_beside_a_version_are_refused(first_list_dataset: Path) -> None:
    answer = subprocess.run(
        [
            sys.executable,
            "-m",
            "bibgraph.web.commands.cli",
            "stats",
            str(SEED_FILES[1]),
            str(current_version(first_list_dataset)),
        ],
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert answer.returncode == 2 and answer.stderr.strip().count("\n") == 0, answer.stderr
