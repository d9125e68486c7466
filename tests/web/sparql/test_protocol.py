"""The SPARQL 1.1 Protocol matrix, in-process: every response is parsed back and compared by terms."""

import csv
import io

import pyoxigraph as ox
import pytest
from rdflib import Graph
from rdflib.compare import isomorphic

from bibgraph.graph.rdf.vocab import sparql_prologue
from tests.conftest import BASE, make_app

AUTHORS = (
    sparql_prologue()
    + """SELECT ?person ?name ?alt WHERE {
  ?person foaf:name ?name . OPTIONAL { ?person skos:altLabel ?alt } } ORDER BY ?name LIMIT 25"""
)
ABSTRACTS = (
    sparql_prologue()
    + """SELECT ?paper ?abstract ?n WHERE {
  ?paper dcterms:abstract ?abstract ; bg:listedAuthorCount ?n } ORDER BY ?paper LIMIT 10"""
)
GRAPH_QUERY = sparql_prologue() + """CONSTRUCT { ?a foaf:name ?n } WHERE { ?a foaf:name ?n }"""
RESULT_TYPES = {
    "json": ("application/sparql-results+json", ox.QueryResultsFormat.JSON),
    "xml": ("application/sparql-results+xml", ox.QueryResultsFormat.XML),
    "tsv": ("text/tab-separated-values", ox.QueryResultsFormat.TSV),
}
GRAPH_TYPES = {
    "turtle": ("text/turtle", "turtle"),
    "nt": ("application/n-triples", "nt"),
    "jsonld": ("application/ld+json", "json-ld"),
    "xml": ("application/rdf+xml", "xml"),
}


@pytest.fixture(scope="module", params=["memory", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def app(request):
    """The protocol matrix runs against the embedded store and, through bibgraph, a real Virtuoso."""
    if request.param == "memory":
        yield request.getfixturevalue("app")
        return
    application = make_app(BIBGRAPH_STORE=f"sparql:{request.getfixturevalue('virtuoso_endpoint')}")
    yield application
    application.extensions["bibgraph"].close()


def expected_rows(seed_store, query: str) -> list[dict[str, ox.NamedNode | ox.Literal]]:
    solutions = seed_store.store.query(query)
    names = [v.value for v in solutions.variables]
    return [{name: s[name] for name in names if s[name] is not None} for s in solutions]


def parsed_rows(body: bytes, fmt: ox.QueryResultsFormat) -> list[dict]:
    solutions = ox.parse_query_results(body, format=fmt)
    names = [v.value for v in solutions.variables]
    return [{name: s[name] for name in names if s[name] is not None} for s in solutions]


@pytest.mark.parametrize("name", list(RESULT_TYPES))
@pytest.mark.parametrize("query", [AUTHORS, ABSTRACTS])
def test_select_in_each_results_format_by_accept(client, seed_store, name: str, query: str) -> None:
    media_type, fmt = RESULT_TYPES[name]
    response = client.get("/sparql", query_string={"query": query}, headers={"Accept": media_type})
    assert response.status_code == 200
    assert response.mimetype == media_type
    assert "Accept" in response.headers["Vary"]
    assert parsed_rows(response.data, fmt) == expected_rows(seed_store, query)


def test_the_three_ways_to_send_a_query_agree(client, seed_store) -> None:
    accept = {"Accept": "application/sparql-results+json"}
    by_get = client.get("/sparql", query_string={"query": AUTHORS}, headers=accept)
    by_form = client.post("/sparql", data={"query": AUTHORS}, headers=accept)
    by_body = client.post(
        "/sparql", data=AUTHORS.encode(), headers={**accept, "Content-Type": "application/sparql-query"}
    )
    assert by_get.data == by_form.data == by_body.data
    assert parsed_rows(by_get.data, ox.QueryResultsFormat.JSON) == expected_rows(seed_store, AUTHORS)


def test_unbound_variables_are_absent_in_json(client) -> None:
    response = client.get("/sparql", query_string={"query": AUTHORS, "format": "json"})
    bindings = response.get_json()["results"]["bindings"]
    assert any("alt" not in binding for binding in bindings)
    assert all(binding.get("alt", {"value": "x"})["value"] for binding in bindings)


def test_csv_has_lexical_forms_and_rfc4180_quoting(client, seed_store) -> None:
    response = client.get("/sparql", query_string={"query": ABSTRACTS}, headers={"Accept": "text/csv"})
    assert response.mimetype == "text/csv"
    assert b"\r\n" in response.data
    rows = list(csv.reader(io.StringIO(response.data.decode("utf-8"), newline="")))
    assert rows[0] == ["paper", "abstract", "n"]
    expected = expected_rows(seed_store, ABSTRACTS)
    assert [[r["paper"].value, r["abstract"].value, r["n"].value] for r in expected] == rows[1:]
    assert any('"' in r["abstract"].value or "," in r["abstract"].value for r in expected)


def test_tsv_writes_terms_in_sparql_syntax(client) -> None:
    response = client.get("/sparql", query_string={"query": ABSTRACTS, "format": "tsv"})
    header, first = response.data.decode("utf-8").split("\n")[:2]
    assert header == "?paper\t?abstract\t?n"
    paper, abstract, count = first.split("\t")
    assert paper.startswith("<http://bibgraph.test/paper/") and paper.endswith(">")
    assert abstract.startswith('"') and abstract.endswith('"')
    assert count.isdigit()


@pytest.mark.parametrize("fmt", ["json", "xml"])
def test_ask(client, fmt: str) -> None:
    media_type, oxformat = RESULT_TYPES[fmt]
    yes = client.get("/sparql", query_string={"query": "ASK { ?s ?p ?o }"}, headers={"Accept": media_type})
    no = client.get("/sparql", query_string={"query": "ASK { ?s <urn:x:none> ?o }"}, headers={"Accept": media_type})
    assert bool(ox.parse_query_results(yes.data, format=oxformat)) is True
    assert bool(ox.parse_query_results(no.data, format=oxformat)) is False


@pytest.mark.parametrize("name", list(GRAPH_TYPES))
def test_construct_in_each_graph_format(client, seed_store, name: str) -> None:
    media_type, rdflib_format = GRAPH_TYPES[name]
    response = client.post("/sparql", data={"query": GRAPH_QUERY}, headers={"Accept": media_type})
    assert response.status_code == 200
    assert response.mimetype == media_type
    got = Graph().parse(data=response.data, format=rdflib_format)
    assert len(got) == 203
    assert isomorphic(got, seed_store.construct(GRAPH_QUERY))


def test_describe_a_paper(client, seed_store) -> None:
    paper = seed_store.select(sparql_prologue() + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle } LIMIT 1")[0]["p"]
    response = client.get("/sparql", query_string={"query": f"DESCRIBE <{paper}>", "format": "nt"})
    graph = Graph().parse(data=response.data, format="nt")
    assert len(graph) > 5
    assert {str(s) for s in graph.subjects()} == {paper}


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        ("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "text/html"),  # a browser: the query page
        ("application/sparql-results+json,*/*;q=0.9", "application/sparql-results+json"),
        ("text/csv;q=0.5, text/tab-separated-values;q=0.9", "text/tab-separated-values"),
        ("*/*", "application/sparql-results+json"),
        ("application/json", "application/sparql-results+json"),
    ],
)
def test_accept_with_q_values(client, accept: str, expected: str) -> None:
    response = client.get(
        "/sparql", query_string={"query": "SELECT * { ?s ?p ?o } LIMIT 1"}, headers={"Accept": accept}
    )
    assert response.status_code == 200
    assert response.mimetype == expected


def test_format_parameter_wins_over_accept(client) -> None:
    response = client.get(
        "/sparql", query_string={"query": "SELECT * { ?s ?p ?o } LIMIT 1", "format": "csv"}, headers={"Accept": "*/*"}
    )
    assert response.mimetype == "text/csv"


def test_not_acceptable(client) -> None:
    select = client.get("/sparql", query_string={"query": "SELECT * {?s ?p ?o}"}, headers={"Accept": "image/png"})
    construct = client.get("/sparql", query_string={"query": GRAPH_QUERY}, headers={"Accept": "text/csv"})
    unknown = client.get("/sparql", query_string={"query": "SELECT * {?s ?p ?o}", "format": "docx"})
    assert (select.status_code, construct.status_code, unknown.status_code) == (406, 406, 406)


def test_malformed_query_gets_400_with_position(client) -> None:
    response = client.get("/sparql", query_string={"query": "SELECT * WHERE { ?s ?p "})
    assert response.status_code == 400
    assert response.mimetype == "text/plain"
    assert "1:24" in response.get_data(as_text=True)
    assert "Traceback" not in response.get_data(as_text=True)


def test_no_query_gives_the_page_to_browsers_and_the_description_to_rdf_clients(client) -> None:
    page = client.get("/sparql", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.status_code == 200 and page.mimetype == "text/html"
    assert b"yasgui.min.js" in page.data and b"Authors of a paper, in order" in page.data
    description = client.get("/sparql", headers={"Accept": "text/turtle"})
    graph = Graph().parse(data=description.data, format="turtle")
    sd = "http://www.w3.org/ns/sparql-service-description#"
    services = {str(s) for s, _, o in graph.triples((None, None, None)) if str(o) == f"{sd}Service"}
    # the public endpoint (the base IRI's), never a name taken from the request's Host header
    assert services == {client.application.config["BIBGRAPH_BASE"] + "sparql"}
    spoofed = client.get("/sparql", headers={"Accept": "text/turtle", "Host": "evil.example:666"})
    assert b"evil.example" not in spoofed.data
    page = client.get("/sparql", headers={"Accept": "text/html", "Host": "evil.example:666"})
    assert b"evil.example" not in page.data
    assert (None, None, None) in graph


def test_wrong_methods_and_content_types(client) -> None:
    assert client.put("/sparql", data="x").status_code == 405
    assert client.delete("/sparql").status_code == 405
    assert client.post("/sparql", data="SELECT * {}", content_type="text/plain").status_code == 415
    assert client.post("/sparql", data={"format": "json"}).status_code == 400


def test_dataset_parameters_are_refused(client) -> None:
    for parameter in ("default-graph-uri", "named-graph-uri"):
        response = client.get("/sparql", query_string={"query": "SELECT * {?s ?p ?o}", parameter: "http://x/"})
        assert response.status_code == 400
        assert parameter in response.get_data(as_text=True)


def test_cors(client) -> None:
    response = client.get("/sparql", query_string={"query": "ASK {}"}, headers={"Origin": "https://yasgui.example"})
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    preflight = client.options(
        "/sparql",
        headers={
            "Origin": "https://yasgui.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "Content-Type",
        },
    )
    assert preflight.status_code == 200
    assert "POST" in preflight.headers["Access-Control-Allow-Methods"]


def test_request_limits(client, app) -> None:
    big = "SELECT * WHERE { ?s ?p ?o } #" + "x" * app.config["MAX_CONTENT_LENGTH"]
    assert client.post("/sparql", data=big, content_type="application/sparql-query").status_code == 413
    long_url = "/sparql?query=" + "x" * app.config["MAX_URL_LENGTH"]
    assert client.get(long_url).status_code == 414


def test_answers_are_cached_only_for_the_embedded_store(app) -> None:
    """A remote store's data can change behind bibgraph, so its answers are never kept."""
    store = app.extensions["bibgraph"]
    assert (store.pool.cache is None) == (store.kind == "sparql")


@pytest.mark.parametrize(("threshold", "hinted"), [(10, True), (10**9, False)])
def test_a_large_in_memory_graph_gets_a_hint_towards_the_disk_store(monkeypatch, threshold, hinted) -> None:
    from bibgraph.graph.dataset import opener
    from bibgraph.graph.dataset.build import build_graph
    from bibgraph.seeds import seed_directory

    monkeypatch.setattr(opener, "LARGE_GRAPH_TRIPLES", threshold)
    opened, summary = opener.prepare([seed_directory()], "memory", BASE)
    assert ("--store disk:PATH" in summary) is hinted
    built, _ = build_graph([seed_directory()], base=BASE, progress=False)
    assert opened().triple_count() == built.triple_count()  # the seeds, loaded whole


@pytest.mark.parametrize(
    ("name", "select", "construct"),
    [
        ("json", "application/sparql-results+json", "application/ld+json"),
        ("xml", "application/sparql-results+xml", "application/rdf+xml"),
        ("n3", None, "text/turtle"),
        ("turtle", None, "text/turtle"),
        ("rdf+xml", None, "application/rdf+xml"),
        ("json-ld", None, "application/ld+json"),
        ("csv", "text/csv", None),
        ("tsv", "text/tab-separated-values", None),
        ("text/tab-separated-values", "text/tab-separated-values", None),
        ("application/rdf+xml", None, "application/rdf+xml"),
        ("text/n3", None, "text/turtle"),
        ("application/sparql-results+json", "application/sparql-results+json", None),
    ],
)
def test_format_takes_the_names_clients_use_and_media_types(client, name: str, select, construct) -> None:
    for query, expected in (("SELECT * { ?s ?p ?o } LIMIT 1", select), (GRAPH_QUERY, construct)):
        response = client.get("/sparql", query_string={"query": query, "format": name}, headers={"Accept": "*/*"})
        if expected is None:
            assert response.status_code == 406 and "does not fit" in response.get_data(as_text=True)
        else:
            assert response.status_code == 200 and response.mimetype == expected
