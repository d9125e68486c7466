"""Real SPARQL clients against a live ``bibgraph serve``: every return format SPARQLWrapper offers, for every
query form, answered in that format when it fits the form and refused with a clear 406 when it does not
(SPARQLWrapper sends ``format=`` in its own words, which wins over Accept); rdflib's SPARQLStore as it comes."""

import csv
import io
import json
import urllib.error
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import FOAF
from rdflib.plugins.stores.sparqlstore import SPARQLStore
from SPARQLWrapper import CSV, JSON, JSONLD, N3, RDFXML, TSV, TURTLE, XML, QueryResult, SPARQLWrapper

from bench.servers import bibgraph_server
from bibgraph.graph.rdf.vocab import sparql_prologue

NAMES = sparql_prologue() + "SELECT ?a ?name WHERE { ?a foaf:name ?name } ORDER BY ?name LIMIT 7"
ASK = sparql_prologue() + "ASK { ?a foaf:name ?name }"
CONSTRUCT = sparql_prologue() + "CONSTRUCT { ?a foaf:name ?n } WHERE { ?a foaf:name ?n } ORDER BY ?n LIMIT 9"
TABLE_FORMATS = (JSON, XML, CSV, TSV)
pytestmark = pytest.mark.filterwarnings("ignore:Sending Accept header:RuntimeWarning")  # SPARQLWrapper's own
GRAPH_FORMATS = (XML, RDFXML, N3, TURTLE, JSONLD, JSON)  # JSON for a graph: JSON-LD
RDFLIB_NAMES = {XML: "xml", RDFXML: "xml", N3: "n3", TURTLE: "turtle", JSONLD: "json-ld", JSON: "json-ld"}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    with bibgraph_server([], tmp_path_factory.mktemp("serve") / "serve.log") as base:
        yield base


def ask(server: str, query: str, fmt: str, method: str = "GET") -> QueryResult:
    client = SPARQLWrapper(f"{server}/sparql")
    client.setQuery(query)
    client.setReturnFormat(fmt)
    client.setMethod(method)
    return client.query()


@pytest.fixture(scope="module")
def expected(server: str) -> dict[str, object]:
    """The answers in SPARQL JSON results (the reference every other format is read back against)."""
    names = [(b["a"]["value"], b["name"]["value"]) for b in ask(server, NAMES, JSON).convert()["results"]["bindings"]]
    assert len(names) == 7
    return {"names": names}


def rows_of(result, fmt: str) -> list[tuple[str, str]]:
    if fmt == JSON:
        return [(b["a"]["value"], b["name"]["value"]) for b in result.convert()["results"]["bindings"]]
    if fmt == XML:
        solutions = ox.parse_query_results(result.response.read(), format=ox.QueryResultsFormat.XML)
        return [(row["a"].value, row["name"].value) for row in solutions]
    text = result.convert().decode("utf-8")
    reader = csv.reader(io.StringIO(text), delimiter="," if fmt == CSV else "\t")
    rows = list(reader)[1:]
    if fmt == TSV:  # TSV writes terms in Turtle syntax: <iri> and "literal"
        return [(a.strip("<>"), json.loads(name) if name.startswith('"') else name) for a, name in rows]
    return [(a, name) for a, name in rows]


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_select_in_every_table_format(server, expected, fmt: str, method: str) -> None:
    assert rows_of(ask(server, NAMES, fmt, method), fmt) == expected["names"]


@pytest.mark.parametrize("fmt", TABLE_FORMATS)
def test_ask_in_every_table_format(server, fmt: str) -> None:
    result = ask(server, ASK, fmt)
    if fmt == JSON:
        assert result.convert()["boolean"] is True
    elif fmt == XML:
        assert "<boolean>true</boolean>" in result.convert().toxml()
    else:
        assert result.convert().decode("utf-8").strip().splitlines()[-1] == "true"


@pytest.mark.parametrize("form", ["CONSTRUCT", "DESCRIBE"])
@pytest.mark.parametrize("fmt", GRAPH_FORMATS)
def test_graphs_in_every_graph_format(server, expected, fmt: str, form: str) -> None:
    person, name = expected["names"][0]
    query = CONSTRUCT if form == "CONSTRUCT" else f"DESCRIBE <{person}>"
    result = ask(server, query, fmt)
    body = result.response.read()
    graph = Graph().parse(data=body, format=RDFLIB_NAMES[fmt])
    if form == "CONSTRUCT":
        assert len(graph) == 9 and (URIRef(person), FOAF.name, Literal(name)) in graph
    else:
        assert (URIRef(person), FOAF.name, Literal(name)) in graph and len(set(graph.subjects())) == 1


@pytest.mark.parametrize(
    ("query", "fmt"),
    [(NAMES, N3), (NAMES, TURTLE), (NAMES, JSONLD), (NAMES, RDFXML), (ASK, N3), (CONSTRUCT, CSV), (CONSTRUCT, TSV)],
)
def test_a_format_that_does_not_fit_the_form_is_a_clear_406(server, query: str, fmt: str) -> None:
    with pytest.raises(urllib.error.HTTPError) as refused:
        ask(server, query, fmt)
    assert refused.value.code == 406
    message = refused.value.read().decode("utf-8")
    assert "does not fit" in message and ("json, xml, csv, tsv" in message or "turtle, nt, jsonld, xml" in message)


def test_rdflib_sparqlstore_with_its_default_settings(server, expected) -> None:
    graph = Graph(store=SPARQLStore(f"{server}/sparql"))
    assert [(str(a), str(name)) for a, name in graph.query(NAMES)] == expected["names"]
    constructed = graph.query(CONSTRUCT).graph
    assert constructed is not None and len(constructed) == 9
    assert graph.query(ASK).askAnswer is True
