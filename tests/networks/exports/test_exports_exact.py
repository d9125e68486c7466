"""Every network download is exactly the network of its own filters, whatever was asked before.

The app caches networks, layouts and drawings; these tests ask for random filter sets in random
orders (views and downloads mixed, as users do) and compare each download, parsed back, with the
network computed directly from the store for those filters.
"""

import io
import json
import math
import urllib.parse

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import BASE
from tests.network_oracle import authorships, coauthor_network, concept_slugs, filter_parameters, filters_of

FORMATS = ("graphml", "gexf", "json", "vosviewer")


@pytest.fixture(scope="module")
def rows(seed_store):
    return authorships(seed_store)


@pytest.fixture(scope="module")
def concepts(rows) -> tuple[list[str], list[str]]:
    """The areas and subareas, and one of each that does not exist."""
    areas, subareas = concept_slugs(rows, BASE)
    return [*areas, "area/nonexistent"], [*subareas, "area/nonexistent/none"]


def _edges(network: nx.Graph) -> dict[frozenset[str], tuple[float, float]]:
    return {
        frozenset((a, b)): (float(data["weight"]), float(data.get("fractional", 0.0)))
        for a, b, data in network.edges(data=True)
    }


def _same_weights(got: dict[frozenset[str], tuple[float, float]], expected: nx.Graph) -> None:
    wanted = _edges(expected)
    assert got.keys() == wanted.keys()
    for edge, (weight, fractional) in got.items():
        assert weight == wanted[edge][0]
        assert math.isclose(fractional, wanted[edge][1], rel_tol=1e-9)


def check_download(fmt: str, body: bytes, expected: nx.Graph, weighting: str) -> None:
    if fmt == "vosviewer":
        network = json.loads(body)["network"]
        items = network["items"]
        urls = {item["id"]: item["url"] for item in items}
        assert sorted(urls.values()) == sorted(expected)
        assert len(urls) == len(items)
        assert all(isinstance(item["x"], float | int) and isinstance(item["y"], float | int) for item in items)
        attribute = "fractional" if weighting == "fractional" else "weight"
        links = {frozenset((urls[link["source_id"]], urls[link["target_id"]])): link for link in network["links"]}
        assert links.keys() == _edges(expected).keys()
        for edge, link in links.items():
            assert math.isclose(link["strength"], expected.edges[tuple(edge)][attribute], rel_tol=1e-9)
        return
    if fmt == "graphml":
        parsed = nx.read_graphml(io.BytesIO(body))
    elif fmt == "gexf":
        parsed = nx.read_gexf(io.BytesIO(body))
    else:
        parsed = nx.node_link_graph(json.loads(body), edges="links")
    assert sorted(parsed) == sorted(expected)
    for node in parsed:
        assert int(parsed.nodes[node]["papers"]) == expected.nodes[node]["papers"]
        assert int(parsed.nodes[node]["community"]) == expected.nodes[node]["community"]
    _same_weights(_edges(parsed), expected)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_downloads_are_the_network_of_their_ownfilters_of(app, rows, concepts, data) -> None:
    client = app.test_client()
    requests = data.draw(
        st.lists(
            st.tuples(filter_parameters(*concepts, top=250, communities=12), st.sampled_from([*FORMATS, "view"])),
            min_size=1,
            max_size=6,
        )
    )
    for parameters, fmt in requests:
        query = urllib.parse.urlencode(parameters)
        url = f"/graph/coauthors?{query}" if fmt == "view" else f"/graph/coauthors.{fmt}?{query}"
        response = client.get(url)
        assert response.status_code == 200, url
        if fmt != "view":
            expected = coauthor_network(rows, filters_of(parameters))
            check_download(fmt, response.data, expected, parameters.get("weighting", "full"))


def test_the_reported_case_top_5_then_top_40(app, rows) -> None:
    client = app.test_client()
    client.get("/graph/coauthors.vosviewer?top=5")
    items = json.loads(client.get("/graph/coauthors.vosviewer?top=40").data)["network"]["items"]
    assert len(items) == 40 and all("x" in item and "y" in item for item in items)


@pytest.mark.parametrize("query", ["area=area/nonexistent", "min_papers=1000", "community=999", "top=1&min_joint=2"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_empty_downloads_are_valid_empty_files(client, rows, query: str, fmt: str) -> None:
    response = client.get(f"/graph/coauthors.{fmt}?{query}")
    assert response.status_code == 200
    parameters = dict(urllib.parse.parse_qsl(query))
    expected = coauthor_network(rows, filters_of(parameters))
    assert expected.number_of_edges() == 0
    check_download(fmt, response.data, expected, "full")


@pytest.mark.parametrize("query", ["area=area/nonexistent", "min_papers=1000", "subarea=area/x/y", "community=999"])
def test_empty_views_say_no_author_matches(client, query: str) -> None:
    response = client.get(f"/graph/coauthors?{query}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert "No authors match these filters" in html
    assert 'class="map-empty"' in html and 'id="network"' not in html  # a message, no empty canvas


def test_every_cache_key_is_made_by_the_one_helper() -> None:
    """Each cached value is keyed by ``derived_key`` and, for network-derived data, made from the
    network of the very spec in its key (positions, views, summaries never take a network)."""
    import inspect
    import re

    from bibgraph.web.maps import cache

    source = inspect.getsource(cache.NetworkCache)
    calls = re.findall(r"self\._get\(\s*([^,]+),", source)
    assert calls and all(call.startswith("derived_key(") for call in calls), calls
    for method in ("positions", "summary", "view"):
        parameters = inspect.signature(getattr(cache.NetworkCache, method)).parameters
        assert "spec" in parameters and not any("network" in name for name in parameters), method
