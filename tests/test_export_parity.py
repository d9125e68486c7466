"""Differential: ``bibgraph export-graph`` and the web's network downloads are the same engine, so the same file.

For generated filter sets (every filter a user sets, the weighting, every format, both network kinds) the
command's file equals, byte for byte, the download the app serves for the same filters: they once went through
two engines (the command through the row path with its own layout, the web through the incidence), and a
VOSviewer map's coordinates, among others, differed.
"""

import urllib.parse
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.formats import NETWORK_SYNTAXES
from bibgraph.graph.networks import SUBAREA
from bibgraph.graph.networks.filters import user_filters
from bibgraph.web.cli import main

from .conftest import BASE
from .network_oracle import authorships, topic_network

FORMATS = [syntax.name for syntax in NETWORK_SYNTAXES]


@pytest.fixture(scope="module")
def concepts(seed_store) -> tuple[list[str], list[str]]:
    topics = topic_network(authorships(seed_store))
    areas = sorted(n.removeprefix(BASE) for n, kind in topics.nodes(data="kind") if kind != SUBAREA)
    subareas = sorted(n.removeprefix(BASE) for n, kind in topics.nodes(data="kind") if kind == SUBAREA)
    return areas, subareas


def _parameters(areas: list[str], subareas: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """Some of the filters a user sets, as a request and the command both write them."""
    optional = {
        "area": st.sampled_from(areas),
        "subarea": st.sampled_from(subareas),
        "min_papers": st.integers(1, 3).map(str),
        "min_joint": st.integers(1, 3).map(str),
        "top": st.integers(1, 60).map(str),
        "community": st.integers(0, 5).map(str),
        "resolution": st.sampled_from(["0.5", "1.0", "2.0"]),
        "weighting": st.sampled_from(["full", "fractional"]),
    }
    # every filter a user sets is drawn here: a filter added without this test is a failure, not a gap
    assert set(optional) == {f.name for f in user_filters()} | {"weighting"}
    return st.fixed_dictionaries({}, optional=optional)


def _command(tmp_path: Path, kind: str, fmt: str, parameters: dict[str, str]) -> bytes:
    out = tmp_path / f"network.{fmt}"
    options = [f"--{name.replace('_', '-')}={value}" for name, value in parameters.items()]
    assert main(["export-graph", "--kind", kind, "--format", fmt, "--base", BASE, "--out", str(out), *options]) == 0
    return out.read_bytes()


def test_the_command_and_the_download_write_the_same_file(client, tmp_path, concepts) -> None:
    @settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_parameters(*concepts), st.sampled_from(FORMATS))
    def check(parameters: dict[str, str], fmt: str) -> None:
        response = client.get(f"/graph/coauthors.{fmt}?{urllib.parse.urlencode(parameters)}")
        assert response.status_code == 200
        assert _command(tmp_path, "coauthors", fmt, parameters) == response.get_data()

    check()


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_topic_network_is_the_same_file_too(client, tmp_path, fmt: str) -> None:
    assert _command(tmp_path, "topics", fmt, {}) == client.get(f"/graph/topics.{fmt}").get_data()
