"""The one engine: every network a view, a download or ``bibgraph export-graph`` shows, from one incidence.

:func:`network` computes what a :class:`.spec.NetworkSpec` names, :func:`positions` lays it out, :func:`summary`
gives the figures beside a co-author map; a file is written by the format's ``export``
(:data:`.exports.NETWORK_SYNTAXES`). The web's cache (``web/maps/cache.py``) keeps what these return,
``bibgraph export-graph`` calls them directly (:func:`exported`), so a download and an export of the same filters
are the same bytes (``tests/networks/exports/test_exports_parity.py``).
"""

from typing import Any

import networkx as nx

from bibgraph.graph.networks import analytics
from bibgraph.graph.networks.coauthor import coauthor_degrees, coauthor_network, collaboration, extent, joint_papers
from bibgraph.graph.networks.ego import ego_network
from bibgraph.graph.networks.exports import network_syntax
from bibgraph.graph.networks.incidence import Incidence
from bibgraph.graph.networks.layout import concentric, layout
from bibgraph.graph.networks.paths import collaboration_path
from bibgraph.graph.networks.spec import COAUTHORS, EGO, RELATED_PER_TOPIC, TOPIC_MAP, TOPICS, NetworkSpec, radii
from bibgraph.graph.networks.topic import topic_map, topic_network

Positions = dict[str, tuple[float, float]]
__all__ = ["coauthor_degrees", "collaboration_path", "exported", "network", "positions", "size", "summary"]


def network(inc: Incidence, spec: NetworkSpec) -> nx.Graph:
    """The network of ``spec``; an EGO spec whose author is unknown raises ``KeyError``."""
    if spec.kind == COAUTHORS:
        return coauthor_network(inc, spec.filters)
    if spec.kind == TOPICS:
        return topic_network(inc)
    if spec.kind == TOPIC_MAP:
        return topic_map(inc, spec.expand, RELATED_PER_TOPIC)
    if spec.kind == EGO and spec.ego is not None:
        return ego_network(inc, *spec.ego)
    raise ValueError(f"unknown network kind {spec.kind!r}")


def size(inc: Incidence, spec: NetworkSpec) -> tuple[int, int]:
    """At most how many nodes and links the network of ``spec`` (a co-author or topic network) has, known before it
    is computed: its nodes, and a bound on its links (:func:`.coauthor.extent`; a topic network's every pair)."""
    if spec.kind == COAUTHORS:
        return extent(inc, spec.filters)
    if spec.kind == TOPICS:
        nodes = len({c.concept for c in inc.concepts} | {c.area for c in inc.concepts})
        return nodes, nodes * (nodes - 1) // 2
    raise ValueError(f"no size known before computing a network of kind {spec.kind!r}")


def positions(spec: NetworkSpec, drawn: nx.Graph) -> Positions:
    """Server-side layout of ``drawn`` (the network of ``spec``), its nodes' discs (as drawn) apart; an ego
    network in rings around its author. One layout per spec: a map and its VOSviewer download agree."""
    if spec.kind == EGO:
        return concentric(drawn.graph["rings"], radii(spec, drawn))
    return layout(drawn, radii(spec, drawn))


def summary(inc: Incidence, spec: NetworkSpec, drawn: nx.Graph) -> dict[str, Any]:
    """The analytics beside a co-author map: components, communities and brokers of the drawn map;
    co-authors and joint papers of its strongest authors over the whole filtered network, as profiles count."""
    stats = analytics.summary(drawn)
    joint = joint_papers(inc, spec.filters, list(drawn))  # the pairs of only the ten shown are listed (np.unique)
    name = drawn.nodes
    strongest = sorted(drawn, key=lambda n: (-joint[n], str(name[n].get("name", n))))[:10]
    counts = collaboration(inc, spec.filters, strongest)
    stats["strongest"] = [(n, name[n]["name"], *counts[n]) for n in strongest]
    stats["drawn_authors"] = drawn.number_of_nodes()
    return stats


def exported(inc: Incidence, spec: NetworkSpec, fmt: str, weight: str = "weight") -> tuple[nx.Graph, bytes]:
    """The network of ``spec`` and its file of format ``fmt``, computed here (what the command writes)."""
    drawn = network(inc, spec)
    return drawn, network_syntax(fmt).export(drawn, lambda: positions(spec, drawn), weight=weight)
