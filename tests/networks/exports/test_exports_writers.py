"""The streamed GraphML and GEXF writers against networkx's own: any network read back by networkx's readers is
the same graph, attribute for attribute, from our bytes as from networkx's (a differential test: networkx's writers
build the whole document in memory, ours write it element by element)."""

import io
import json

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.networks.exports import flat
from bibgraph.graph.networks import exports

TEXT = st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n&<>\"'"), max_size=12)
NODE_VALUES = {  # one type per attribute name, as the engine's networks have them
    "name": TEXT,
    "label": TEXT,
    "papers": st.integers(-(2**40), 2**40),
    "community": st.integers(0, 50),
    "x": st.floats(allow_nan=False, width=64),
    "central": st.booleans(),
    "areas": st.lists(TEXT, max_size=3),
    "kind": st.sampled_from(["author", "area", "subarea"]),
    "gone": st.none(),
}
EDGE_VALUES = {
    "weight": st.integers(1, 1000),
    "fractional": st.floats(0, 100, allow_nan=False),
    "joint": st.integers(0, 9),
}


@st.composite
def networks(draw: st.DrawFn) -> nx.Graph:
    network = nx.Graph()
    nodes = draw(
        st.lists(
            TEXT | st.from_regex(r"https://ex\.org/author/[a-z0-9-]{1,8}", fullmatch=True),
            min_size=0,
            max_size=8,
            unique=True,
        )
    )
    for node in nodes:
        names = draw(st.sets(st.sampled_from(sorted(NODE_VALUES))))
        network.add_node(node, **{name: draw(NODE_VALUES[name]) for name in sorted(names)})
    if len(nodes) > 1:
        for a, b in draw(st.lists(st.tuples(st.sampled_from(nodes), st.sampled_from(nodes)), max_size=12)):
            names = draw(st.sets(st.sampled_from(sorted(EDGE_VALUES))))
            network.add_edge(a, b, **{name: draw(EDGE_VALUES[name]) for name in sorted(names)})
    return network


def _read(reader, body: bytes) -> tuple[dict, dict]:
    """The graph read back, each value with its type (5 == 5.0 in Python: an int read back as a float differs)."""
    graph = reader(io.BytesIO(body))

    def typed(data: dict) -> dict:
        return {name: (type(value).__name__, value) for name, value in data.items()}

    return (
        {node: typed(data) for node, data in graph.nodes(data=True)},
        {frozenset((a, b)): typed(data) for a, b, data in graph.edges(data=True)},
    )


@pytest.mark.parametrize(
    ("ours", "write", "read"),
    [(exports.graphml, nx.write_graphml, nx.read_graphml), (exports.gexf, nx.write_gexf, nx.read_gexf)],
    ids=["graphml", "gexf"],
)
@settings(max_examples=60, deadline=None)
@given(network=networks())
def test_xml_reads_back_as_networkx_writes_it(ours, write, read, network: nx.Graph) -> None:
    theirs = io.BytesIO()
    write(flat(network), theirs, encoding="utf-8")
    assert _read(read, ours(network)) == _read(read, theirs.getvalue())


@settings(max_examples=60, deadline=None)
@given(networks())
def test_node_link_json_is_networkx_node_link_data(network: nx.Graph) -> None:
    """Written item by item, read back it is what networkx's ``node_link_data`` gives (lists as in GraphML)."""
    theirs = nx.node_link_data(flat(network), edges="links")
    assert json.loads(exports.node_link(network)) == theirs


def test_the_same_network_gives_the_same_bytes() -> None:
    """No modification date (networkx's GEXF writer stamps the day): a kept export changes only with its network."""
    network = nx.path_graph(["a", "b", "c"])
    assert exports.gexf(network) == exports.gexf(network.copy())
    assert exports.graphml(network) == exports.graphml(network.copy())
