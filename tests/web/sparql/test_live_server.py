"""A live ``bibgraph serve`` answered through real SPARQL clients: SPARQLWrapper, rdflib's SPARQLStore, curl."""

import json
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from rdflib import Graph, Literal
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, TURTLE, SPARQLWrapper

from bench.servers import bibgraph_server
from bibgraph.graph.rdf.vocab import sparql_prologue

TOP = sparql_prologue() + (
    "SELECT ?name (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator ?a . ?a foaf:name ?name }"
    " GROUP BY ?name ORDER BY DESC(?n) ?name LIMIT 4"
)
EXPECTED_TOP = [("Ke Wang", 2), ("Luwei Wang", 2), ("Oğuz Yüksel", 2), ("Ziniu Li", 2)]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> str:
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with bibgraph_server([], log) as base:
        yield base


def test_sparqlwrapper_select_and_construct(server: str) -> None:
    client = SPARQLWrapper(f"{server}/sparql")
    client.setQuery(TOP)
    client.setReturnFormat(JSON)
    bindings = client.query().convert()["results"]["bindings"]
    assert [(b["name"]["value"], int(b["n"]["value"])) for b in bindings] == EXPECTED_TOP
    client.setMethod("POST")
    client.setReturnFormat(CSV)
    assert client.query().convert().decode("utf-8").splitlines()[1] == "Ke Wang,2"
    client.setQuery(sparql_prologue() + "CONSTRUCT { ?a foaf:name ?n } WHERE { ?a foaf:name ?n }")
    client.setReturnFormat(TURTLE)
    graph = Graph().parse(data=client.query().convert(), format="turtle")
    assert len(graph) == 203


def test_rdflib_sparqlstore(server: str) -> None:
    graph = Graph(store=SPARQLStore(f"{server}/sparql", returnFormat="json"))
    rows = list(graph.query(TOP))
    assert [(str(name), int(n)) for name, n in rows] == EXPECTED_TOP
    names = set(graph.objects(None, Graph().namespace_manager.expand_curie("foaf:name")))
    assert Literal("周欣") in names and len(names) == 203


def test_curl(server: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [
            "curl",
            "-sS",
            "-H",
            "Accept: application/sparql-results+json",
            "--data-urlencode",
            f"query={TOP}",
            f"{server}/sparql",
        ],
        capture_output=True,
        check=True,
        timeout=30,
    )
    bindings = json.loads(done.stdout)["results"]["bindings"]
    assert [b["name"]["value"] for b in bindings] == [name for name, _ in EXPECTED_TOP]
    status = subprocess.run(
        [
            "curl",
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--data-urlencode",
            "update=CLEAR ALL",
            f"{server}/sparql",
        ],
        capture_output=True,
        check=True,
        timeout=30,
    )
    assert status.stdout == b"403"


def test_disk_store_is_kept_between_starts(tmp_path: Path) -> None:
    store = tmp_path / "store"
    with bibgraph_server(["--store", f"disk:{store}"], tmp_path / "first.log") as base:
        first = SPARQLWrapper(f"{base}/sparql", returnFormat=JSON)
        first.setQuery("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
        count = first.query().convert()["results"]["bindings"][0]["n"]["value"]
    assert "40 records" in (tmp_path / "first.log").read_text()
    with bibgraph_server(["--store", f"disk:{store}"], tmp_path / "second.log") as base:
        again = SPARQLWrapper(f"{base}/sparql", returnFormat=JSON)
        again.setQuery("SELECT (COUNT(*) AS ?n) { ?s ?p ?o }")
        assert again.query().convert()["results"]["bindings"][0]["n"]["value"] == count
    assert "reused" in (tmp_path / "second.log").read_text()


def test_an_answer_over_a_mebibyte_is_streamed_whole_from_its_file(server: str) -> None:
    """Past 1 MiB the worker writes the answer to a file that waitress sends as it is: every byte arrives."""
    query = "SELECT ?a ?b WHERE { ?a ?p ?x . ?b ?q ?y } LIMIT 20000"
    data = urllib.parse.urlencode({"query": query}).encode()
    request = urllib.request.Request(
        f"{server}/sparql", data=data, headers={"Accept": "application/sparql-results+json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        body = response.read()
        length = int(response.headers["Content-Length"])
    assert length == len(body) > 1024 * 1024
    assert len(json.loads(body)["results"]["bindings"]) == 20000
