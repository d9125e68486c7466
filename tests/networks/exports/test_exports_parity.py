"""Differential: ``bibgraph export-graph`` and the web's network downloads are the same engine, so the same file.

For generated filter sets (every filter a user sets, the weighting, every format, both network kinds) the
command's file equals, byte for byte, the download the app serves for the same filters: with an engine each
(a row path with its own layout for the command, the incidence for the web), a VOSviewer map's coordinates,
among others, differed. A download is computed in the web process when its network is
small, in a child process when not (``web/maps/bodies.py``): both are checked, on the seeds here and on a generated
dataset in ``tests/web/maps/test_download_bodies_differential.py``.
"""

import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, app_with
from tests.network_oracle import authorships, concept_slugs, filter_parameters

FORMATS = [syntax.name for syntax in NETWORK_SYNTAXES]


@pytest.fixture(scope="module")
def concepts(seed_store) -> tuple[list[str], list[str]]:
    return concept_slugs(authorships(seed_store), BASE)


@pytest.fixture(scope="module")
def in_a_child() -> Iterator:
    """The seeds' app computing every download with an author in a child process (the default computes the seeds'
    small networks in the web process)."""
    with app_with(DOWNLOAD_IN_PROCESS_AUTHORS=0) as application:
        yield application.test_client()


def _command(tmp_path: Path, kind: str, fmt: str, parameters: dict[str, str]) -> bytes:
    out = tmp_path / f"network.{fmt}"
    options = [f"--{name.replace('_', '-')}={value}" for name, value in parameters.items()]
    assert main(["export-graph", "--kind", kind, "--format", fmt, "--base", BASE, "--out", str(out), *options]) == 0
    return out.read_bytes()


def test_the_command_and_the_download_write_the_same_file(client, in_a_child, tmp_path, concepts) -> None:
    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(filter_parameters(*concepts), st.sampled_from(FORMATS))
    def check(parameters: dict[str, str], fmt: str) -> None:
        here, child = (
            c.get(f"/graph/coauthors.{fmt}?{urllib.parse.urlencode(parameters)}") for c in (client, in_a_child)
        )
        assert here.status_code == child.status_code == 200
        assert _command(tmp_path, "coauthors", fmt, parameters) == here.get_data() == child.get_data()

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_topic_network_is_the_same_file_too(client, in_a_child, tmp_path, fmt: str) -> None:
    here, child = (c.get(f"/graph/topics.{fmt}").get_data() for c in (client, in_a_child))
    assert _command(tmp_path, "topics", fmt, {}) == here == child
