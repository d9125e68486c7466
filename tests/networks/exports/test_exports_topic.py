"""The topic map's VOSviewer export carries the areas as clusters: one per area, a subarea in its area's."""

import json

from bibgraph.graph.networks import AREA
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.topic import topic_network


def test_the_topic_export_has_a_cluster_per_area_and_subareas_in_their_areas(client, seed_store) -> None:
    network = topic_network(incidence_of(seed_store))
    areas = [node for node, kind in network.nodes(data="kind") if kind == AREA]
    assert len(areas) > 1
    items = json.loads(client.get("/graph/topics.vosviewer").get_data())["network"]["items"]
    cluster = {item["url"]: item["cluster"] for item in items}
    assert sorted(cluster[area] for area in areas) == list(range(1, len(areas) + 1))
    for node, data in network.nodes(data=True):
        if data["kind"] != AREA:
            assert cluster[node] == cluster[data["area"]], node
    biggest = min(areas, key=lambda a: (-network.nodes[a]["papers"], a))
    assert cluster[biggest] == 1


def test_the_coauthor_export_keeps_the_communities_as_clusters(client) -> None:
    coauthors = json.loads(client.get("/graph/coauthors.json").get_data())
    exported = json.loads(client.get("/graph/coauthors.vosviewer").get_data())["network"]["items"]
    community = {node["id"]: node.get("community") for node in coauthors["nodes"]}
    assert all(item["cluster"] == community[item["url"]] + 1 for item in exported)
