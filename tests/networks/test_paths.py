"""The collaboration path search (graph/networks/paths.py, on the incidence) against networkx's shortest path and
against the store's own search (a query per step: tests/network_oracle.py) on generated networks."""

import html
import re

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import paths
from bibgraph.graph.networks.incidence import Incidence, incidence_of
from bibgraph.graph.rdf import vocab
from bibgraph.graph.rdf.ntriples import is_iri
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.web.maps.cache import EXTENSION
from tests.network_oracle import store_path

BASE = "http://example.org/"
RDF_TYPE, LABEL, NAME = str(vocab.RDF.type), str(vocab.RDFS.label), str(vocab.FOAF.name)
PERSON, ARTICLE, CREATOR = str(vocab.FOAF.Person), str(vocab.SCHEMA.ScholarlyArticle), str(vocab.DCTERMS.creator)


def author(n: int) -> str:
    return f"{BASE}author/a{n}"


def store_of(papers: list[frozenset[int]], people: int) -> OxigraphGraphStore:
    """A store holding ``people`` authors and the papers, each written by a set of them."""
    lines = [f'<{author(n)}> <{RDF_TYPE}> <{PERSON}> .\n<{author(n)}> <{NAME}> "A {n}" .' for n in range(people)]
    for number, writers in enumerate(papers):
        paper = f"{BASE}paper/p{number}"
        lines.append(f'<{paper}> <{RDF_TYPE}> <{ARTICLE}> .\n<{paper}> <{LABEL}> "P {number}" .')
        lines += [f"<{paper}> <{CREATOR}> <{author(n)}> ." for n in sorted(writers)]
    store = OxigraphGraphStore.memory()
    store.load_ntriples(line + "\n" for line in lines)
    return store


def incidence(papers: list[frozenset[int]], people: int) -> tuple[OxigraphGraphStore, Incidence]:
    store = store_of(papers, people)
    return store, incidence_of(store)


def bipartite(papers: list[frozenset[int]], people: int) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(author(n) for n in range(people))
    for number, writers in enumerate(papers):
        graph.add_edges_from((f"{BASE}paper/p{number}", author(n)) for n in writers)
    return graph


networks = st.integers(2, 14).flatmap(
    lambda people: st.tuples(
        st.just(people),
        st.lists(st.frozensets(st.integers(0, people - 1), min_size=1, max_size=4), max_size=16),
        st.integers(0, people - 1),
        st.integers(0, people - 1),
    )
)


@settings(max_examples=120, deadline=None)
@given(networks)
def test_the_path_is_as_short_as_networkx_finds_valid_and_the_stores_own_search(case) -> None:
    people, papers, source, target = case
    store, inc = incidence(papers, people)
    graph = bipartite(papers, people)
    if not graph.degree(author(source)) or not graph.degree(author(target)):
        assert paths.collaboration_path(inc, author(source), author(target)).missing  # no paper: in no network
        return
    found = paths.collaboration_path(inc, author(source), author(target))
    assert not found.missing
    assert found.chain == store_path(store, author(source), author(target))  # the same ties, step for step
    try:
        expected = nx.shortest_path(graph, author(source), author(target))
    except nx.NetworkXNoPath:
        assert found.chain == [] and found.exhausted
        return
    assert len(found.chain) == len(expected)
    assert found.chain[0] == author(source) and found.chain[-1] == author(target)
    for before, after in zip(found.chain, found.chain[1:], strict=False):
        assert graph.has_edge(before, after), "every step is an authorship"


def test_unknown_ends_are_named_and_a_long_chain_is_cut(monkeypatch) -> None:
    chain = [frozenset({n, n + 1}) for n in range(6)]  # a0 - a1 - ... - a6: distance 6
    _, inc = incidence(chain, 7)
    assert paths.collaboration_path(inc, author(0), f"{BASE}author/nobody").missing == [f"{BASE}author/nobody"]
    assert len(paths.collaboration_path(inc, author(0), author(6)).chain) == 13
    monkeypatch.setattr(paths, "MAX_STEPS", 4)
    cut = paths.collaboration_path(inc, author(0), author(6))
    assert (cut.chain, cut.exhausted, cut.steps) == ([], False, 4)
    monkeypatch.setattr(paths, "MAX_STEPS", 12)
    monkeypatch.setattr(paths, "FRONTIER_CAP", 0)
    assert not paths.collaboration_path(inc, author(0), author(6)).exhausted


def test_a_spent_time_budget_ends_the_search_and_says_so(client, seed_store) -> None:
    chain = [frozenset({n, n + 1}) for n in range(6)]
    _, inc = incidence(chain, 7)
    assert len(paths.collaboration_path(inc, author(0), author(6), seconds=60).chain) == 13
    spent = paths.collaboration_path(inc, author(0), author(6), seconds=0)
    assert (spent.chain, spent.out_of_time, spent.exhausted, spent.steps) == ([], True, False, 0)
    assert paths.collaboration_path(inc, author(0), author(0), seconds=0).chain == [author(0)]  # no step needed
    before = client.application.config["QUERY_TIMEOUT"]
    client.application.config["QUERY_TIMEOUT"] = 0
    try:
        query = f"SELECT DISTINCT ?a WHERE {{ ?p <{CREATOR}> ?a }} LIMIT 2"
        people = [str(r["a"]) for r in seed_store.select(query)]
        text = client.get("/graph/path", query_string={"from": people[0], "to": people[1]}).get_data(as_text=True)
    finally:
        client.application.config["QUERY_TIMEOUT"] = before
    assert "the search stopped there, after 0 seconds" in text


def test_the_path_page_tells_a_cut_search_from_no_connection(client, seed_store, monkeypatch) -> None:
    from bibgraph.graph.ingest.names import person_key
    from tests.network_oracle import authorships, bipartite_graph

    graph = bipartite_graph(authorships(seed_store))
    people = sorted(n for n, d in graph.nodes(data="bipartite") if d == 1)
    lengths = {p: nx.single_source_shortest_path_length(graph, p) for p in people}
    start, far = max(((a, b) for a in people for b in lengths[a]), key=lambda pair: lengths[pair[0]][pair[1]])
    start_name, far_name = graph.nodes[start]["name"], graph.nodes[far]["name"]

    def page(source: str, target: str) -> str:
        query = {"from": source, "to": target}
        return client.get("/graph/path", query_string=query).get_data(as_text=True)

    whole = page(start_name, far_name)
    distance = int(re.search(r'id="distance">(\d+)<', whole)[1])
    assert distance >= 2 and whole.count('class="author"') == distance + 1
    monkeypatch.setattr(paths, "MAX_STEPS", distance - 1)
    client.application.extensions.pop(EXTENSION)  # a server with the new bound: no path searched under the old one
    cut = page(start_name, far_name)
    assert f"No chain of at most {distance - 1} co-authors" in cut and 'id="distance"' not in cut
    assert "No such author: “Nobody Atall”" in page("Nobody Atall", f"author/{person_key('Ke Wang')}")


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(["http://", "https://"]), st.text(st.characters(blacklist_categories=("Cc", "Cs"))))
def test_an_end_given_as_any_text_after_http_is_an_iri_or_refused(client, scheme: str, rest: str) -> None:
    """Red team: ``from=http://x> ?s ?p ?o . <`` reached the path query's binding and failed there (500)."""
    given = scheme + rest
    answer = client.get("/graph/path", query_string={"from": given, "to": "Ke Wang"})
    if is_iri(given.strip()):
        assert answer.status_code == 200
    else:
        assert answer.status_code == 400 and "not an IRI" in answer.get_data(as_text=True)


def test_the_form_shows_names_for_ends_given_by_key_and_submitting_it_again_gives_the_same_path(
    client, seed_store
) -> None:
    """A profile's "Path to" sends the author's key: the form showed ``author/wang-wei``, not the name."""
    from bibgraph.web.links import local_url
    from tests.network_oracle import authorships, bipartite_graph

    graph = bipartite_graph(authorships(seed_store))
    people = sorted(n for n, d in graph.nodes(data="bipartite") if d == 1)[:40]
    target = graph.nodes[people[-1]]["name"]

    def page(source: str) -> tuple[str, str, str]:
        """The form's two values and what the page found (the chain, or why there is none)."""
        text = client.get("/graph/path", query_string={"from": source, "to": target}).get_data(as_text=True)
        shown = [html.unescape(re.search(rf'name="{end}" value="([^"]*)"', text)[1]) for end in ("from", "to")]
        return shown[0], shown[1], re.search(r"</form>(.*?)<script", text, re.S)[1]

    named = 0
    for person in people[:-1]:
        with client.application.test_request_context():
            key = local_url(person).lstrip("/")
        shown, to, found = page(key)
        assert shown in (graph.nodes[person]["name"], key) and to == target and 'role="status"' in found
        assert page(shown)[2] == found
        named += shown == graph.nodes[person]["name"]
    assert named >= len(people) // 2  # most authors' names lead back to them


@pytest.mark.parametrize(
    "name", ["Ana\x85Lee", "Ana\x07Lee", "author/", "author/%zz", "http://a b", "https://ex.test/"]
)
def test_a_name_no_form_could_send_leaves_the_end_as_given(app, name: str) -> None:
    """Names come from the lists: one the form would refuse (or read as another IRI) is not shown for a key."""
    from bibgraph.graph.ingest.names import person_key
    from bibgraph.web.links import app_iris
    from bibgraph.web.maps.views import _as_written

    with app.test_request_context():
        iri = app_iris().person(person_key("Ke Wang"))
        assert _as_written("author/k", iri, {iri: name}) == "author/k"
        assert _as_written("author/k", iri, {iri: "Ke Wang"}) == "Ke Wang"
