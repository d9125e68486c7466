"""Differential, on a generated dataset: a network download computed in the web process (its network small enough,
``web/maps/bodies.py``) and the same download computed in a child process are the same bytes, and both are the file
``bibgraph export-graph`` writes, for generated filter sets, every format, both network kinds. The command reads
a dataset built once from the same lists (the site reads the lists): one graph, whichever way it was read."""

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.generate import write_corpus
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, app_with
from tests.network_oracle import authorships, concept_slugs, filter_parameters

FORMATS = [syntax.name for syntax in NETWORK_SYNTAXES]


@pytest.fixture(scope="module")
def lists(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("generated")
    write_corpus(folder, 240, seed=7, messy=0.1)
    return folder


@pytest.fixture(scope="module")
def concepts(lists: Path) -> tuple[list[str], list[str]]:
    store, _ = build_graph([lists], base=BASE, progress=False)
    return concept_slugs(authorships(store), BASE)


@pytest.fixture(scope="module")
def dataset(lists: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The lists built once as a dataset, which each ``export-graph`` opens rather than parsing the lists again."""
    built = tmp_path_factory.mktemp("dataset") / "generated"
    assert main(["build", str(lists), "--dataset", str(built), "--base", BASE, "--quiet"]) == 0
    return built


@pytest.fixture(scope="module")
def clients(lists: Path) -> Iterator[tuple[FlaskClient, FlaskClient]]:
    """The generated lists served twice: every download in the web process, and every one with an author in a
    child process."""
    with (
        app_with(BIBGRAPH_INPUTS=[str(lists)], DOWNLOAD_IN_PROCESS_AUTHORS=10**6) as here,
        app_with(BIBGRAPH_INPUTS=[str(lists)], DOWNLOAD_IN_PROCESS_AUTHORS=0) as child,
    ):
        yield here.test_client(), child.test_client()


def _command(dataset: Path, out: Path, kind: str, fmt: str, parameters: dict[str, str]) -> bytes:
    options = [f"--{name.replace('_', '-')}={value}" for name, value in parameters.items()]
    command = ["export-graph", str(dataset), "--kind", kind, "--format", fmt, "--base", BASE, "--out", str(out)]
    assert main([*command, *options]) == 0
    return out.read_bytes()


def test_a_download_in_the_web_process_is_the_childs_and_the_commands(clients, concepts, dataset, tmp_path) -> None:
    here, child = clients

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(filter_parameters(*concepts, top=120, communities=8), st.sampled_from(FORMATS))
    def check(parameters: dict[str, str], fmt: str) -> None:
        path = f"/graph/coauthors.{fmt}?{urllib.parse.urlencode(parameters)}"
        mine, theirs = here.get(path), child.get(path)
        assert mine.status_code == theirs.status_code == 200
        assert mine.data == theirs.data == _command(dataset, tmp_path / f"out.{fmt}", "coauthors", fmt, parameters)

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_topic_network_too(clients, dataset, tmp_path, fmt: str) -> None:
    here, child = (client.get(f"/graph/topics.{fmt}") for client in clients)
    assert here.data == child.data == _command(dataset, tmp_path / f"out.{fmt}", "topics", fmt, {})
