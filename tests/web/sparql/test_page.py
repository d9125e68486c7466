"""``/sparql?query=…`` opened by a browser: the query page with the query in the editor and the answer as a table
(checked against the engine's own answer); a malformed query, a misspelt keyword too, is a styled 400 with the
position. Clients that ask for results (or name no preference) keep getting them unchanged."""

import html
import json
import re

import pyoxigraph as ox
import pytest

from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.web.sparql.page import SHOWN_ROWS

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


def _page_examples(client) -> list[str]:
    """The example queries as the query page hands them to the editor."""
    body = client.get("/sparql", headers=BROWSER).get_data(as_text=True)
    return [html.unescape(query) for query in re.findall(r'data-query="([^"]*)"', body)]


def test_every_example_on_the_page_answers_with_rows_and_names_one_resource(client, seed_store) -> None:
    """Each example the page offers parses and returns rows on the seeds; those that need an author or a concept
    name one (a VALUES clause), so none groups every creator of the graph (slow at 20,000 papers)."""
    from bibgraph.graph.sparql.queries import EXAMPLES

    shown = _page_examples(client)
    assert len(shown) == len(EXAMPLES)
    for text, (name, variable) in zip(shown, EXAMPLES.items(), strict=True):
        ox.Store().query(text)  # parses (an empty store answers at once)
        response = client.post("/sparql", data={"query": text}, headers={"Accept": "application/json"})
        assert response.status_code == 200, name
        assert json.loads(response.get_data())["results"]["bindings"], name
        assert (variable is None) == (f"VALUES ?{variable} " not in text), name


def test_named_examples_count_as_python_does(client, seed_store) -> None:
    """The co-authors and top authors examples agree with counts made in Python from the creator triples."""
    from collections import Counter

    from bibgraph.graph.sparql.queries import EXAMPLES

    creators = [
        (s["p"].value, s["a"].value)
        for s in seed_store.store.query(sparql_prologue() + "SELECT ?p ?a WHERE { ?p dcterms:creator ?a }")
    ]
    shown = dict(zip(EXAMPLES, _page_examples(client), strict=True))

    def rows(text: str) -> list[dict]:
        response = client.post("/sparql", data={"query": text}, headers={"Accept": "application/json"})
        return json.loads(response.get_data())["results"]["bindings"]

    author = re.search(r"VALUES \?author \{ <([^>]+)> \}", shown["coauthors"]).group(1)
    papers = {p for p, a in creators if a == author}
    joint = Counter(a for p, a in creators if p in papers and a != author)
    found = rows(shown["coauthors"])
    assert (
        sorted((int(r["jointPapers"]["value"]) for r in found), reverse=True)
        == sorted(joint.values(), reverse=True)[:50]
    )
    assert all(joint[r["coauthor"]["value"]] == int(r["jointPapers"]["value"]) for r in found)
    concept = re.search(r"VALUES \?concept \{ <([^>]+)> \}", shown["top_authors"]).group(1)
    subjects = sparql_prologue() + f"SELECT DISTINCT ?p WHERE {{ ?p dcterms:subject/skos:broader? <{concept}> }}"
    in_concept = {s["p"].value for s in seed_store.store.query(subjects)}
    counts = Counter(a for p, a in creators if p in in_concept)
    top = rows(shown["top_authors"])
    assert [int(r["papers"]["value"]) for r in top] == sorted(counts.values(), reverse=True)[:20]
    assert all(counts[r["author"]["value"]] == int(r["papers"]["value"]) for r in top)


GROUPED_BY_LABEL = """SELECT ?areaLabel ?subareaLabel (COUNT(?paper) AS ?papers) WHERE {
  ?paper a schema:ScholarlyArticle ; dcterms:subject ?concept .
  OPTIONAL { ?concept skos:broader ?parent }
  BIND (COALESCE(?parent, ?concept) AS ?area)
  ?area skos:prefLabel ?areaLabel .
  OPTIONAL { FILTER (BOUND(?parent)) ?concept skos:prefLabel ?subareaLabel }
} GROUP BY ?areaLabel ?subareaLabel"""
EVERY_ABSTRACT = """SELECT ?paper ?label WHERE {
  ?paper a schema:ScholarlyArticle ; rdfs:label ?label ; dcterms:abstract ?a .
  FILTER (CONTAINS(LCASE(?a), "reinforcement")) }"""


@pytest.mark.parametrize(
    ("name", "direct"), [("papers_per_area", GROUPED_BY_LABEL), ("abstract_search", EVERY_ABSTRACT)]
)
def test_examples_counted_first_answer_as_the_direct_query_does(seed_store, name: str, direct: str) -> None:
    """Counting per concept (or filtering abstracts) before looking labels up gives the direct query's answer."""
    from bibgraph.graph.sparql.queries import named_query

    def answer(text: str) -> list[tuple[str, ...]]:
        solutions = seed_store.store.query(text)
        return sorted(tuple("" if s[v] is None else s[v].value for v in solutions.variables) for s in solutions)

    assert answer(named_query(name).text) == answer(sparql_prologue() + direct) != []
