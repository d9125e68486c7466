"""The engine's networks and analytics on hand-made lists with known answers, and on the seeds."""

import json
import xml.etree.ElementTree as ET

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks import Filters, analytics
from bibgraph.graph.networks.coauthor import coauthor_network
from bibgraph.graph.networks.communities import assign_communities
from bibgraph.graph.networks.ego import ego_rings
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.networks.paths import collaboration_path
from bibgraph.graph.networks.topic import topic_network
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks number {}."
# A, B, C wrote two papers together; C and D one; E and F one (a separate component); G alone.
LISTS = "\n\n".join(
    [
        "X · One\nAnn A, Bob B, Cid C\n" + ABSTRACT.format(1),
        "X · One\nAnn A, Bob B, Cid C\n" + ABSTRACT.format(2),
        "X · Two\nCid C, Dan D\n" + ABSTRACT.format(3),
        "Y · Three\nEve E, Fay F, " + ", ".join(f"P{i} Q" for i in range(8)) + " 等\n" + ABSTRACT.format(4),
        "Y\nGil G\n" + ABSTRACT.format(5),
    ]
)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> OxigraphGraphStore:
    path = tmp_path_factory.mktemp("net") / "list.txt"
    path.write_text(LISTS, encoding="utf-8")
    built, report = build_graph([path], base=BASE, progress=False)
    assert report.problems == []
    return built


@pytest.fixture(scope="module")
def rows(store) -> Incidence:
    return incidence_of(store)


def iri(name: str) -> str:
    from bibgraph.graph.ingest.names import person_key

    return f"{BASE}author/{person_key(name)}"


def test_full_and_fractional_weights(rows) -> None:
    network = coauthor_network(rows, Filters())
    ab = network.edges[iri("Ann A"), iri("Bob B")]
    cd = network.edges[iri("Cid C"), iri("Dan D")]
    ef = network.edges[iri("Eve E"), iri("Fay F")]
    assert (ab["weight"], cd["weight"], ef["weight"]) == (2, 1, 1)
    assert ab["fractional"] == pytest.approx(2 / 3)  # two papers, three pairs each
    assert cd["fractional"] == pytest.approx(1.0)
    assert ef["fractional"] == pytest.approx(1 / 45)  # ten listed authors: 45 pairs
    assert ef["lower_bound"] is True and ab["lower_bound"] is False
    assert network.nodes[iri("Cid C")]["papers"] == 3
    assert network.nodes[iri("Eve E")]["truncated"] is True
    assert network.nodes[iri("Cid C")]["areas"] == ["X"]
    assert network.number_of_nodes() == 15
    assert network.degree(iri("Gil G")) == 0


def test_filters(rows) -> None:
    x_area = f"{BASE}area/x"
    assert set(coauthor_network(rows, Filters(area=x_area))) == {iri(n) for n in ("Ann A", "Bob B", "Cid C", "Dan D")}
    subarea_two = f"{BASE}area/x/two"
    assert set(coauthor_network(rows, Filters(subarea=subarea_two))) == {iri("Cid C"), iri("Dan D")}
    assert set(coauthor_network(rows, Filters(min_papers=2))) == {iri("Ann A"), iri("Bob B"), iri("Cid C")}
    strong = coauthor_network(rows, Filters(min_joint=2))
    assert {frozenset(e) for e in strong.edges} == {
        frozenset((iri(a), iri(b))) for a, b in (("Ann A", "Bob B"), ("Ann A", "Cid C"), ("Bob B", "Cid C"))
    }
    assert set(coauthor_network(rows, Filters(top=1))) == {iri("Cid C")}


def test_communities_and_components(rows) -> None:
    network = coauthor_network(rows, Filters())
    components = analytics.components(network)
    assert [len(c) for c in components] == [10, 4, 1]
    community = network.nodes[iri("Ann A")]["community"]
    assert network.nodes[iri("Bob B")]["community"] == community
    assert network.nodes[iri("Eve E")]["community"] != community
    only = coauthor_network(rows, Filters(community=community))
    assert iri("Ann A") in only and iri("Eve E") not in only


def test_louvain_resolution_splits_more_when_higher() -> None:
    barbell = nx.barbell_graph(5, 0)
    nx.set_edge_attributes(barbell, 1, "weight")
    assert len(assign_communities(barbell.copy(), resolution=1.0)) == 2
    assert len(assign_communities(barbell.copy(), resolution=0.01)) == 1


def test_centralities_ego_and_path(store, rows) -> None:
    network = coauthor_network(rows, Filters())
    degree, weighted = analytics.degrees(network)[iri("Cid C")]
    assert (degree, weighted) == (3, 5)
    between = analytics.betweenness(network)
    assert max(between, key=between.get) == iri("Cid C")
    rings, coauthors = ego_rings(rows, iri("Dan D"), 1, top=10)
    assert rings == [[iri("Dan D")], [iri("Cid C")]] and coauthors == 1
    rings, _ = ego_rings(rows, iri("Dan D"), 2, top=10)
    assert sum(len(ring) for ring in rings) == 4
    path = collaboration_path(rows, iri("Ann A"), iri("Dan D")).chain
    assert path[::2] == [iri("Ann A"), iri("Cid C"), iri("Dan D")]
    assert all(p in set(rows.papers) for p in path[1::2])
    assert collaboration_path(rows, iri("Ann A"), iri("Eve E")).chain == []


def test_topic_network(rows) -> None:
    topics = topic_network(rows)
    assert topics.nodes[f"{BASE}area/x"]["papers"] == 3
    assert topics.nodes[f"{BASE}area/x/one"]["papers"] == 2
    assert topics.edges[f"{BASE}area/x", f"{BASE}area/x/one"]["kind"] == "broader"
    related = topics.edges[f"{BASE}area/x/one", f"{BASE}area/x/two"]
    assert (related["kind"], related["shared_authors"], related["shared_papers"]) == ("related", 1, 0)
    assert topics.nodes[f"{BASE}area/y"]["papers"] == 2


def test_seed_networks(seed_store) -> None:
    rows = incidence_of(seed_store)
    network = coauthor_network(rows, Filters())
    assert (network.number_of_nodes(), network.number_of_edges()) == (203, 537)
    topics = topic_network(rows)
    assert len([n for n, k in topics.nodes(data="kind") if k == "area"]) == 8


def test_exports_parse_back(rows) -> None:
    network = coauthor_network(rows, Filters())
    for syntax in NETWORK_SYNTAXES:
        name = syntax.name
        data = syntax.export(network, lambda: {node: (0.0, 1.0) for node in network})
        if name in ("graphml", "gexf"):
            ET.fromstring(data)
            back = nx.read_graphml(__import__("io").BytesIO(data)) if name == "graphml" else None
            if back is not None:
                assert back.number_of_edges() == network.number_of_edges()
        elif name == "json":
            assert len(json.loads(data)["links"]) == network.number_of_edges()
        else:
            document = json.loads(data)["network"]
            assert len(document["items"]) == network.number_of_nodes()
            assert len(document["links"]) == network.number_of_edges()
            assert {"Documents", "Links", "Total link strength"} <= set(document["items"][0]["weights"])
            assert all((item["x"], item["y"]) == (0.0, 1.0) for item in document["items"])  # positions are used


def test_export_graph_command(tmp_path) -> None:
    from bibgraph.web.commands.cli import main

    out = tmp_path / "coauthors.graphml"
    assert main(["export-graph", "--format", "graphml", "--out", str(out)]) == 0
    graph = nx.read_graphml(out)
    assert (graph.number_of_nodes(), graph.number_of_edges()) == (203, 537)
    vos = tmp_path / "map.json"
    assert main(["export-graph", "--format", "vosviewer", "--min-papers", "2", "--out", str(vos)]) == 0
    items = json.loads(vos.read_text(encoding="utf-8"))["network"]["items"]
    assert sorted(item["label"] for item in items) == ["Ke Wang", "Luwei Wang", "Oğuz Yüksel", "Ziniu Li"]
    assert all("x" in item for item in items)
    topics = tmp_path / "topics.gexf"
    assert main(["export-graph", "--kind", "topics", "--format", "gexf", "--out", str(topics)]) == 0
    assert nx.read_gexf(topics).number_of_nodes() == 29


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.floats(0.0, 0.5), st.integers(0, 10_000))
def test_betweenness_equals_networkx_exact(nodes: int, density: float, seed: int) -> None:
    """igraph computes it (fast, exact): the same values as networkx's exact normalised betweenness."""
    network = nx.relabel_nodes(nx.gnp_random_graph(nodes, density, seed=seed), lambda n: f"a{n:03d}")
    found = analytics.betweenness(network)
    expected = nx.betweenness_centrality(network, normalized=True)
    assert found.keys() == expected.keys()
    assert all(found[node] == pytest.approx(expected[node], abs=1e-12) for node in expected)
