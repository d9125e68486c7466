"""One formats table: what the endpoint, the downloads and the network exports offer is read from it."""

import pytest
from rdflib import Graph, URIRef

from bibgraph.graph.networks.exports import NETWORK_SYNTAXES, network_syntax
from bibgraph.graph.rdf.formats import ANSWER_FORMAT_IRIS, RDF_SYNTAXES
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.rdf.vocab import PREFIXES, prefixed_graph

SD_RESULT_FORMAT = URIRef("http://www.w3.org/ns/sparql-service-description#resultFormat")


def test_the_service_description_lists_exactly_the_formats_of_the_table(client) -> None:
    response = client.get("/sparql", headers={"Accept": "text/turtle"})
    graph = Graph().parse(data=response.data, format="turtle")
    assert {str(o) for o in graph.objects(None, SD_RESULT_FORMAT)} == set(ANSWER_FORMAT_IRIS)
    assert len(ANSWER_FORMAT_IRIS) == len(set(ANSWER_FORMAT_IRIS)) == 8


def test_every_network_format_downloads_with_its_media_type_and_suffix(client) -> None:
    page = client.get("/download/").get_data(as_text=True)
    for syntax in NETWORK_SYNTAXES:
        assert syntax.label in page
        response = client.get(f"/graph/topics.{syntax.name}")
        assert response.status_code == 200, syntax.name
        assert response.mimetype == syntax.media_type
        assert f'filename="bibgraph-topics.{syntax.suffix}"' in response.headers["Content-Disposition"]
    assert client.get("/graph/topics.png").status_code == 404


def test_the_command_line_offers_the_network_formats_of_the_table(capsys, tmp_path) -> None:
    from bibgraph.web.commands.cli import main

    with pytest.raises(SystemExit) as refused:
        main(["export-graph", "--format", "png", "--out", str(tmp_path / "x")])
    assert refused.value.code == 2
    offered = capsys.readouterr().err.rsplit("choose from", 1)[1]
    assert [name.strip(" '\n)") for name in offered.split(",")] == [syntax.name for syntax in NETWORK_SYNTAXES]
    assert network_syntax("vosviewer.json").name == "vosviewer"


def test_dumps_are_offered_in_every_rdf_format(client) -> None:
    page = client.get("/download/").get_data(as_text=True)
    for syntax in RDF_SYNTAXES:
        assert f"bibgraph.{syntax.suffix}" in page


def test_a_prefixed_graph_writes_the_project_prefixes() -> None:
    graph = prefixed_graph()
    assert {prefix: str(namespace) for prefix, namespace in graph.namespaces() if prefix in PREFIXES} == PREFIXES
    iris = Iris("http://example.org/")
    assert iris.kinds() == {kind: f"http://example.org/{kind}/" for kind in ("paper", "author", "area")}
