"""Publishing into Virtuoso, and serving from it: the one network engine reads a remote store as it reads its own.

Differential: the seeds published through the Graph Store Protocol, then the incidence, every network, page and
view read back through the remote store, must equal what the embedded store gives.
"""

import json
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import build_disk_store
from bibgraph.graph.dump import write_dump
from bibgraph.graph.formats import rdf_syntax
from bibgraph.graph.networks import Filters, coauthor, ego, topic
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.publish import PASSWORD_ENV, PublishError, Target, publish, resolve_source
from bibgraph.graph.stores.remote import RemoteGraphStore
from bibgraph.seeds import seed_directory
from bibgraph.web.cli import main

from . import network_oracle as oracle
from .conftest import BASE, make_app
from .loopback import Handler, serving
from .network_oracle import authorships, bipartite_graph
from .networks_compare import same_network
from .test_incidence import same_incidence

PUBLISHED = "urn:bibgraph:published"


def _server(endpoint: str) -> str:
    """``http://host:port`` of a SPARQL endpoint URL."""
    parts = urllib.parse.urlsplit(endpoint)
    return f"{parts.scheme}://{parts.netloc}"


@pytest.fixture(scope="module")
def seed_nt(tmp_path_factory, seed_store) -> Path:
    path = tmp_path_factory.mktemp("publish") / "seeds.nt"
    write_dump(seed_store, path, rdf_syntax("nt"))
    return path


@pytest.fixture(scope="module")
def graph_store_url(virtuoso_endpoint: str) -> str:
    return _server(virtuoso_endpoint) + "/sparql-graph-crud-auth"


@pytest.fixture(scope="module")
def published(virtuoso_endpoint: str, graph_store_url: str, seed_nt: Path) -> str:
    """The seeds published by the CLI, in small batches; the SPARQL endpoint URL that reads them."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(PASSWORD_ENV, "dba")
        code = main(
            [
                *("publish", str(seed_nt), "--to", graph_store_url, "--user", "dba"),
                *("--graph", PUBLISHED, "--batch", "700", "--replace", "--quiet"),
            ]
        )
    assert code == 0
    return f"{_server(virtuoso_endpoint)}/sparql?default-graph-uri={urllib.parse.quote(PUBLISHED)}"


@pytest.fixture(scope="module")
def remote(published: str) -> RemoteGraphStore:
    return RemoteGraphStore(published)


@pytest.fixture(scope="module")
def rows(seed_store):
    return authorships(seed_store)


def _target(graph_store_url: str, graph: str) -> Target:
    return Target.parse(graph_store_url, graph, user="dba", password="dba")


@pytest.mark.virtuoso
def test_publish_loads_every_triple(remote, seed_store) -> None:
    assert remote.triple_count() == seed_store.triple_count()
    for query in ("SELECT ?s ?p ?o WHERE { ?s ?p ?o }",):
        assert sorted(map(str, remote.select(query))) == sorted(map(str, seed_store.select(query)))


@pytest.mark.virtuoso
def test_publish_again_with_replace_keeps_one_copy(published, graph_store_url, seed_nt, seed_store) -> None:
    report = publish(seed_nt, _target(graph_store_url, PUBLISHED), batch=1000, replace=True)
    assert (report.sent, report.batches, report.before) == (seed_store.triple_count(), -(-report.sent // 1000), 0)
    assert report.remote == seed_store.triple_count()
    again = publish(seed_nt, _target(graph_store_url, PUBLISHED), batch=5000)  # no --replace: nothing new
    assert again.before == again.remote == seed_store.triple_count()


@pytest.mark.virtuoso
def test_publish_from_a_disk_store(tmp_path, graph_store_url, seed_store, virtuoso_endpoint) -> None:
    store = tmp_path / "store"
    build_disk_store(store, [seed_directory()], BASE)
    report = publish(store, _target(graph_store_url, "urn:bibgraph:from-disk"), batch=900, replace=True)
    assert report.sent == report.remote == seed_store.triple_count()


@pytest.mark.virtuoso
def test_a_wrong_password_is_refused_and_never_shown(graph_store_url, seed_nt, capsys) -> None:
    url = graph_store_url.replace("://", "://dba:not-the-password@")
    code = main(["publish", str(seed_nt), "--to", url, "--graph", "urn:bibgraph:refused", "--replace"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "401" in err and "BIBGRAPH_PUBLISH_PASSWORD" in err
    assert "not-the-password" not in out + err


def test_a_dataset_directory_is_published_from_its_store(tmp_path) -> None:
    build_disk_store(tmp_path / "dataset" / "store", [seed_directory()], BASE)
    assert resolve_source(tmp_path / "dataset") == tmp_path / "dataset" / "store"
    assert resolve_source(tmp_path / "dataset" / "store") == tmp_path / "dataset" / "store"


def test_a_source_that_is_neither_dump_nor_store_is_refused(tmp_path) -> None:
    with pytest.raises(PublishError, match="not a dump"):
        publish(tmp_path, Target.parse("http://127.0.0.1:9/crud", "urn:g"))


class _FlakyStore(Handler):
    """A Graph Store that takes the first POST, refuses the second, and counts what it took."""

    posts: list[bytes]
    deadlocks = 0  # answer this many POSTs with a deadlock first

    def do_POST(self) -> None:
        body = self.request_body()
        if self.path.startswith("/sparql"):
            count = sum(post.count(b"\n") for post in self.posts)
            answer = {"head": {"vars": ["n"]}, "results": {"bindings": [{"n": {"type": "literal", "value": count}}]}}
            self.reply(200, json.dumps(answer).encode())
            return
        self.posts.append(body)
        if _FlakyStore.deadlocks:  # rolled back: not counted
            _FlakyStore.deadlocks -= 1
            self.posts.pop()
            self.reply(500, b"Error 40001 SR172: Transaction deadlocked")
            return
        self.reply(200 if len(self.posts) == 1 else 500, b"" if len(self.posts) == 1 else b"disk full")


@pytest.fixture
def flaky_store() -> Iterator[str]:
    """The Graph Store URL of a :class:`_FlakyStore` on loopback."""
    _FlakyStore.posts = []
    _FlakyStore.deadlocks = 0
    with serving(_FlakyStore) as address:
        yield f"{address}/crud"


def test_a_failed_batch_is_named_with_what_stays_loaded(seed_nt, flaky_store) -> None:
    with pytest.raises(PublishError) as failure:
        publish(seed_nt, Target.parse(flaky_store, "urn:g"), batch=100)
    message = str(failure.value)
    assert "batch 2 (triples 101-200) was not loaded" in message
    assert "500: disk full" in message and "Batches 1-1 (100 triples)" in message and "--replace" in message


def _filters(rows) -> st.SearchStrategy[Filters]:
    areas = sorted({row.area for row in rows if row.area})
    subareas = sorted({row.concept for row in rows if row.concept and row.concept != row.area})
    authors = sorted({row.author for row in rows})
    return st.builds(
        Filters,
        area=st.none() | st.sampled_from(areas),
        subarea=st.none() | st.sampled_from(subareas),
        min_papers=st.integers(1, 3),
        min_joint=st.integers(1, 2),
        top=st.none() | st.integers(0, 40),
        authors=st.none() | st.frozensets(st.sampled_from(authors), max_size=30),
    )


@pytest.mark.virtuoso
def test_the_remote_stores_incidence_equals_the_embedded_ones(remote, seed_store) -> None:
    """One streamed read for every store: what Virtuoso answers is the same incidence, so every network is too."""
    same_incidence(incidence_of(remote), incidence_of(seed_store))


@pytest.mark.parametrize("where", ["embedded", pytest.param("virtuoso", marks=pytest.mark.virtuoso)])
def test_the_engines_networks_from_either_store_equal_the_row_path(request, where: str, seed_store, rows) -> None:
    """Generated filter sets: co-author networks, ego rings, collaboration counts and topic maps of the engine
    reading the store (embedded or remote) equal the row path's (the oracle)."""
    store = seed_store if where == "embedded" else request.getfixturevalue("remote")
    incidence = incidence_of(store)

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(_filters(rows))
    def check(filters: Filters) -> None:
        same_network(coauthor.coauthor_network(incidence, filters), oracle.coauthor_network(rows, filters))

    check()
    papers_and_authors = bipartite_graph(rows)
    authors = sorted(node for node, side in papers_and_authors.nodes(data="bipartite") if side)
    for author in authors[::7]:
        for radius in (1, 2):
            expected = oracle.ego_rings(papers_and_authors, author, radius, 4)
            assert ego.ego_rings(incidence, author, radius, 4) == expected
    for filters in (Filters(), Filters(area=next(row.area for row in rows if row.area))):
        scoped = bipartite_graph(rows, filters)
        present = [author for author in authors if author in scoped]
        assert coauthor.collaboration(incidence, filters, present) == oracle.collaboration(scoped, present)
    assert list(topic.topic_network(incidence).edges(data=True)) == list(oracle.topic_network(rows).edges(data=True))
    for expand in (None, "all"):
        found, expected = topic.topic_map(incidence, expand, 3), oracle.topic_map(rows, expand, 3)
        assert list(found.nodes(data=True)) == list(expected.nodes(data=True))
        assert list(found.edges(data=True)) == list(expected.edges(data=True))


@pytest.fixture(scope="module")
def remote_client(published: str):
    application = make_app(BIBGRAPH_STORE=f"sparql:{published}")
    yield application.test_client()
    application.extensions["bibgraph"].close()


def _pages(rows) -> list[str]:
    """One of every page kind and every view: the most prolific author, one of their papers, areas."""
    papers_and_authors = bipartite_graph(rows)
    authors = [node for node, side in papers_and_authors.nodes(data="bipartite") if side]
    prolific = max(sorted(authors), key=papers_and_authors.degree)
    author = "/" + prolific.removeprefix(BASE)
    paper = "/" + sorted(papers_and_authors[prolific])[0].removeprefix(BASE)
    concepts = sorted({"/" + row.concept.removeprefix(BASE) for row in rows if row.concept})
    name = papers_and_authors.nodes[prolific]["name"]
    other = "/" + sorted(authors)[0].removeprefix(BASE)
    return [
        "/",
        paper,
        author,
        *concepts[:4],
        "/areas",
        "/dataset",
        f"/search?q={urllib.parse.quote(name)}",
        "/search?q=learning",
        f"/graph/ego{author}",
        f"/graph/ego{author}?radius=2",
        f"/graph/path?from={urllib.parse.quote(name)}&to={urllib.parse.quote(other)}",
        "/graph/authors.json?q=li",
        "/graph/topics",
        "/graph/topics?expand=all",
        "/graph/coauthors",
    ]


@pytest.mark.virtuoso
def test_every_page_and_view_agrees_with_the_embedded_store(client, remote_client, rows) -> None:
    for path in _pages(rows):
        local, far = client.get(path), remote_client.get(path)
        assert (far.status_code, far.mimetype) == (local.status_code, local.mimetype), path
        if "/graph/coauthors" in path or "/graph/ego" in path:
            continue  # community colours may differ (Louvain); the networks are compared below
        assert far.get_data(as_text=True) == local.get_data(as_text=True), path


@pytest.mark.virtuoso
@pytest.mark.parametrize("query", ["", "top=20", "min_joint=2", "min_papers=2"])
def test_coauthor_downloads_agree(client, remote_client, query: str) -> None:
    local = nx.node_link_graph(client.get(f"/graph/coauthors.json?{query}").get_json(), edges="links")
    far = nx.node_link_graph(remote_client.get(f"/graph/coauthors.json?{query}").get_json(), edges="links")
    same_network(far, local)


def test_blank_nodes_are_refused_before_anything_is_sent(tmp_path, flaky_store) -> None:
    dump = tmp_path / "blank.nt"
    dump.write_text('<http://x/a> <http://x/p> _:b .\n_:b <http://x/p> "v" .\n', encoding="utf-8")
    with pytest.raises(PublishError, match="blank node"):
        publish(dump, Target.parse(flaky_store, "urn:g"))
    assert _FlakyStore.posts == []


def test_a_deadlocked_batch_is_sent_again(seed_nt, flaky_store) -> None:
    _FlakyStore.deadlocks = 2
    with pytest.raises(PublishError, match="batch 2 "):  # the second batch still meets the full disk
        publish(seed_nt, Target.parse(flaky_store, "urn:g"), batch=100)
    assert len(_FlakyStore.posts) == 2 and _FlakyStore.deadlocks == 0


def test_an_engine_failure_reaches_the_client_without_the_engine_text(caplog) -> None:
    """A 5xx from the engine carries its error codes and the query as it rewrote it: logged, never passed on."""
    secret = "SR999: define input:default-graph-uri <urn:internal> SELECT ..."

    class Failing(Handler):
        def do_POST(self) -> None:
            self.request_body()
            self.reply(500, secret.encode())

    with serving(Failing) as address:
        store = RemoteGraphStore(f"{address}/sparql")
        with caplog.at_level("ERROR", logger="bibgraph.remote"), pytest.raises(OSError) as raised:
            store.select("SELECT * WHERE { ?s ?p ?o }")
        assert "SR999" not in str(raised.value) and "500" in str(raised.value)
        assert "SR999" in caplog.text


class _ControlCharacterEndpoint(Handler):
    """A SPARQL endpoint whose one answer holds U+0000: written ``&#0;`` in XML, which no XML 1.0 reader accepts."""

    accepts: list[str]

    def do_POST(self) -> None:
        self.request_body()
        accept = self.headers["Accept"]
        self.accepts.append(accept)
        if "xml" in accept:
            body = (
                b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head>'
                b'<variable name="x"/></head><results><result><binding name="x"><literal>a&#0;b</literal>'
                b"</binding></result></results></sparql>"
            )
        else:
            answer = {"head": {"vars": ["x"]}, "results": {"bindings": [{"x": {"type": "literal", "value": "a\x00b"}}]}}
            body = json.dumps(answer).encode()
        self.reply(200, body, accept)


def test_an_answer_xml_cannot_carry_is_read_as_json() -> None:
    """Solutions are asked for as XML (Virtuoso writes it faster), and again as JSON when the XML is unreadable."""
    _ControlCharacterEndpoint.accepts = []
    with serving(_ControlCharacterEndpoint) as address:
        store = RemoteGraphStore(f"{address}/sparql")
        assert store.select("SELECT ?x WHERE { ?s ?p ?x }") == [{"x": "a\x00b"}]
        xml, json_results = "application/sparql-results+xml", "application/sparql-results+json"
        assert _ControlCharacterEndpoint.accepts == [xml, json_results]
        answer = store.answer("SELECT ?x WHERE { ?s ?p ?x }", "json", "nt")  # what the endpoint serves
        assert json.loads(answer.body)["results"]["bindings"] == [{"x": {"type": "literal", "value": "a\x00b"}}]
        assert _ControlCharacterEndpoint.accepts == [xml, json_results] * 2
