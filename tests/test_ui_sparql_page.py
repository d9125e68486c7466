"""``/sparql?query=…`` opened by a browser: the query page with the query in the editor and the answer as a table
(checked against the engine's own answer); a malformed query, a misspelt keyword too, is a styled 400 with the
position. Clients that ask for results (or name no preference) keep getting them unchanged."""

import html
import json
import re

import pyoxigraph as ox
import pytest

from bibgraph.graph.vocab import sparql_prologue
from bibgraph.web.sparqlpage import SHOWN_ROWS

BROWSER = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
NAMES = sparql_prologue() + "SELECT ?person ?name WHERE { ?person foaf:name ?name } ORDER BY ?name LIMIT 30"
GRAPH = sparql_prologue() + "CONSTRUCT { ?a foaf:name ?n } WHERE { ?a foaf:name ?n } LIMIT 12"


def table(body: str) -> tuple[list[str], list[list[str]]]:
    """The answer table's header and rows, as the reader sees their text."""
    section = body[body.index('id="answer-table"') :]
    section = section[: section.index("</table>")]
    text = lambda fragment: html.unescape(re.sub(r"<[^>]+>", "", fragment)).strip()  # noqa: E731
    head = [text(cell) for cell in re.findall(r"<th[^>]*>(.*?)</th>", section, re.S)]
    rows = [
        [text(c) for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
        for row in re.findall(r"<tr>(.*?)</tr>", section, re.S)
    ]
    return head, [row for row in rows if row]


def test_a_browser_gets_the_query_page_with_the_answer_as_a_table(client, seed_store) -> None:
    response = client.get("/sparql", query_string={"query": NAMES}, headers=BROWSER)
    assert response.status_code == 200 and response.mimetype == "text/html"
    body = response.get_data(as_text=True)
    assert 'id="yasgui"' in body and 'href="/graph/coauthors"' in body  # the query page, with the site's navigation
    assert html.escape(NAMES, quote=True) in body  # handed to the editor
    head, rows = table(body)
    expected = list(seed_store.store.query(NAMES))
    assert head == ["person", "name"]
    assert [row[1] for row in rows] == [solution["name"].value for solution in expected]
    assert "accept" in response.headers["Vary"].lower()


def test_an_ask_shows_its_boolean_and_a_construct_its_triples(client, seed_store) -> None:
    ask = client.get("/sparql", query_string={"query": "ASK { ?s ?p ?o }"}, headers=BROWSER).get_data(as_text=True)
    assert re.search(r'id="answer-boolean"><strong>true</strong>', ask)
    graph = client.get("/sparql", query_string={"query": GRAPH}, headers=BROWSER)
    head, rows = table(graph.get_data(as_text=True))
    names = sorted(t.object.value for t in seed_store.store.query(GRAPH))
    assert head == ["subject", "predicate", "object"] and sorted(row[2] for row in rows) == names
    assert len(rows) == 12 <= SHOWN_ROWS


@pytest.mark.parametrize(
    ("query", "where"),
    [("SELEC * WHERE { ?s ?p ?o }", "line 1, column 1"), ("SELECT * WHERE { ?s ?p ?o", "line 1, column 26")],
)
def test_a_malformed_query_from_a_browser_is_a_styled_400_with_the_position(client, query: str, where: str) -> None:
    response = client.get("/sparql", query_string={"query": query}, headers=BROWSER)
    assert response.status_code == 400 and response.mimetype == "text/html"
    body = response.get_data(as_text=True)
    assert "Syntax error in the query" in body and where in body


@pytest.mark.parametrize("accept", [None, "*/*", "application/sparql-results+json", "application/json"])
def test_clients_asking_for_results_get_them_unchanged(client, seed_store, accept: str | None) -> None:
    headers = {"Accept": accept} if accept else {}
    response = client.get("/sparql", query_string={"query": NAMES}, headers=headers)
    assert response.status_code == 200 and response.mimetype == "application/sparql-results+json"
    rows = json.loads(response.get_data())["results"]["bindings"]
    assert [row["name"]["value"] for row in rows] == [s["name"].value for s in seed_store.store.query(NAMES)]
    named = client.get("/sparql", query_string={"query": NAMES, "format": "tsv"}, headers=BROWSER)
    assert named.mimetype == "text/tab-separated-values"  # format= names the answer, whatever Accept says
    solutions = ox.parse_query_results(named.get_data(), format=ox.QueryResultsFormat.TSV)
    assert len(list(solutions)) == len(rows)


def test_every_example_query_answers_and_top_authors_counts_as_python_does(client, seed_store) -> None:
    from collections import Counter

    from bibgraph.graph.queries import examples

    for example in examples():
        response = client.post("/sparql", data={"query": example.text}, headers={"Accept": "application/json"})
        assert response.status_code == 200, example.name
        rows = json.loads(response.get_data())["results"]["bindings"]
        assert rows or example.name == "abstract_search", example.name
        if example.name == "top_authors":
            creators = seed_store.store.query(sparql_prologue() + "SELECT ?p ?a WHERE { ?p dcterms:creator ?a }")
            counts = Counter(solution["a"].value for solution in creators)
            expected = sorted(counts.values(), reverse=True)[:20]
            assert [int(row["papers"]["value"]) for row in rows] == expected
            assert all(counts[row["author"]["value"]] == int(row["papers"]["value"]) for row in rows)
