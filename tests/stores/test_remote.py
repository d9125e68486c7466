"""Publishing into Virtuoso, and serving from it: the one network engine reads a remote store as it reads its own.

Differential: the seeds published through the Graph Store Protocol, then the incidence, every network, page and
view read back through the remote store, must equal what the embedded store gives.
"""

import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from unittest.mock import patch

import networkx as nx
import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.oxigraphserver import oxigraph_server, point
from bench.servers import free_port, stop, wait_for_http
from bibgraph.graph.dataset.directory import current_version, identified_manifest
from bibgraph.graph.dataset.dumps import write_dump
from bibgraph.graph.dataset.opener import build_disk_store
from bibgraph.graph.engines.client import Deadline, Session
from bibgraph.graph.engines.publish import PASSWORD_ENV, Engine, PublishError, Target, clean, publish, resolve_source
from bibgraph.graph.networks import Filters, coauthor, ego, topic
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.rdf.formats import rdf_syntax
from bibgraph.graph.site import search, searchbuild
from bibgraph.graph.site.search import SearchIndexError
from bibgraph.graph.stores import remote as remote_store
from bibgraph.graph.stores.remote import CONTENT, IN_PLACE, RemoteGraphStore, pinned_endpoint, pointer_graph
from bibgraph.seeds import seed_directory
from bibgraph.web.commands.cli import main
from tests import network_oracle as oracle
from tests.conftest import BASE, make_app
from tests.loopback import Handler, serving
from tests.network_oracle import authorships, bipartite_graph
from tests.networks.test_incidence import same_incidence
from tests.networks_compare import same_network
from tests.web.test_enginedumps import downloaded

PUBLISHED = "urn:bibgraph:published"
DATASET_GRAPH = "urn:bibgraph:dataset"  # where the seed dataset (not a dump) is published
VIRTUOSO = pytest.mark.virtuoso


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
def test_publish_again_switches_versions_and_drops_the_one_before(published, graph_store_url, seed_nt, seed_store):
    """Each publish is a new version graph; the pointer names it; the version before the replaced one is dropped."""
    target = _target(graph_store_url, PUBLISHED)
    first = publish(seed_nt, target, batch=1000)
    assert (first.sent, first.batches) == (seed_store.triple_count(), -(-first.sent // 1000))
    assert first.remote == seed_store.triple_count()
    second = publish(seed_nt, target, batch=5000)
    third = publish(seed_nt, target, batch=5000)
    assert len({first.version, second.version, third.version}) == 3
    assert third.dropped == (first.version,)  # second stays as the previous version, for readers still on it
    reader = RemoteGraphStore(f"{_server(graph_store_url)}/sparql?default-graph-uri={urllib.parse.quote(PUBLISHED)}")
    assert reader.triple_count() == seed_store.triple_count()
    engine = RemoteGraphStore(f"{_server(graph_store_url)}/sparql")
    count = "SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{}> {{ ?s ?p ?o }} }}"
    counts = [engine.select(count.format(v.version))[0]["n"] for v in (first, second, third)]
    assert counts == [0, first.sent, first.sent]


@pytest.mark.virtuoso
def test_publish_from_a_disk_store(tmp_path, graph_store_url, seed_store, virtuoso_endpoint) -> None:
    store = tmp_path / "store"
    build_disk_store(store, [seed_directory()], BASE)
    report = publish(store, _target(graph_store_url, "urn:bibgraph:from-disk"), batch=900)
    assert report.sent == report.remote == seed_store.triple_count()


@pytest.mark.virtuoso
def test_a_wrong_password_is_refused_and_never_shown(graph_store_url, seed_nt, capsys, monkeypatch) -> None:
    monkeypatch.setenv(PASSWORD_ENV, "not-the-password")
    code = main(["publish", str(seed_nt), "--to", graph_store_url, "--user", "dba", "--graph", "urn:bibgraph:refused"])
    out, err = capsys.readouterr()
    assert code == 1
    assert "401" in err and "BIBGRAPH_PUBLISH_PASSWORD" in err
    assert "not-the-password" not in out + err


def test_a_dataset_root_and_a_version_are_published_from_the_current_store(seed_dataset, tmp_path) -> None:
    version = seed_dataset / os.readlink(seed_dataset / "current")
    assert resolve_source(seed_dataset) == version / "store"
    assert resolve_source(version) == version / "store"
    assert resolve_source(version / "store") == version / "store"
    build_disk_store(tmp_path / "store", [seed_directory()], BASE)
    assert resolve_source(tmp_path / "store") == tmp_path / "store"


@pytest.mark.virtuoso
def test_a_reader_polling_during_a_publish_sees_one_whole_version(graph_store_url, seed_nt, seed_dataset, tmp_path):
    """Nothing, then the first version, then the second: never a partial graph, nor the pointer graph's own triples
    while the first publish loads."""
    graph = "urn:bibgraph:polled"
    target = _target(graph_store_url, graph)
    part = tmp_path / "part.nt"
    part.write_text("".join(seed_nt.read_text(encoding="utf-8").splitlines(keepends=True)[:1000]), encoding="utf-8")
    reader = RemoteGraphStore(f"{_server(graph_store_url)}/sparql?default-graph-uri={graph}")
    seen: list[int] = []
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            seen.append(reader.triple_count())

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(remote_store, "POINTER_TTL", 0.0)  # the pointer looked up for every query
        thread = threading.Thread(target=poll)
        thread.start()
        try:
            first = publish(part, target, batch=100)
            report = publish(seed_dataset, target, batch=300)  # the dataset's root: its current version
        finally:
            done.set()
            thread.join()
    seen.append(reader.triple_count())
    assert first.remote == 1000 and report.batches > 5 and report.remote > 1000
    assert set(seen) == {0, 1000, report.remote}, sorted(set(seen))
    assert seen == sorted(seen)  # once switched, never back


@pytest.mark.virtuoso
def test_an_interrupted_publish_leaves_readers_on_the_old_version(graph_store_url, seed_nt, seed_store) -> None:
    graph = "urn:bibgraph:interrupted"
    target = _target(graph_store_url, graph)
    before = publish(seed_nt, target)
    reader = RemoteGraphStore(f"{_server(graph_store_url)}/sparql?default-graph-uri={graph}")

    def interrupt(line: str) -> None:
        if line.startswith("batch 2:"):
            raise KeyboardInterrupt

    with pytest.raises(PublishError) as stopped:
        publish(seed_nt, target, batch=500, progress=interrupt)
    message = str(stopped.value)
    assert "interrupted (2 batches, 1000 triples, loaded)" in message
    assert "untouched" in message and "--clean" in message
    staging = message.split("The partial load is in <")[1].split(">")[0]
    engine = RemoteGraphStore(f"{_server(graph_store_url)}/sparql")
    count = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{staging}> {{ ?s ?p ?o }} }}"
    assert engine.select(count)[0]["n"] == 1000  # two batches loaded into the staging graph
    time.sleep(remote_store.POINTER_TTL)
    assert reader.triple_count() == seed_store.triple_count()
    assert reader._parameters()[0] == ("default-graph-uri", before.version)
    assert clean(target) == [staging]
    assert engine.select(count)[0]["n"] == 0
    assert clean(target) == []


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
            value = {"type": "literal", "value": str(count)}
            answer = {"head": {"vars": ["n"]}, "results": {"bindings": [{"n": value}]}}
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
    assert "answered 500: disk full (1 batches, 100 triples, loaded)" in message
    assert "is untouched" in message and "publish again" in message


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
def oxigraph_published(tmp_path_factory, seed_nt: Path) -> Iterator[str]:
    """The Oxigraph server (``oxigraph serve``, PyPI) on loopback, the seeds published into it by the CLI (no
    login: its Graph Store is ``/store``, queries ``/query``, updates ``/update``); the endpoint that reads them."""
    port = free_port()
    location = tmp_path_factory.mktemp("oxigraph")
    command = [str(Path(sys.executable).parent / "oxigraph"), "serve", "--location", str(location)]
    process = subprocess.Popen([*command, "--bind", f"127.0.0.1:{port}"], stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/query?query=ASK%7B%7D", process)
        url = f"http://127.0.0.1:{port}/store"
        assert main(["publish", str(seed_nt), "--to", url, "--graph", PUBLISHED, "--batch", "700", "--quiet"]) == 0
        yield f"http://127.0.0.1:{port}/query?default-graph-uri={urllib.parse.quote(PUBLISHED)}"
    finally:
        stop(process)


@pytest.fixture(scope="module")
def oxigraph_in_place(tmp_path_factory, seed_dataset: Path) -> Iterator[str]:
    """The seed dataset's own store served in place by ``oxigraph serve-read-only`` (a copy of it, its pointer
    written once by ``bench.oxigraphserver --in-place``: nothing loaded); the endpoint that reads it."""
    location = Path(shutil.copytree(current_version(seed_dataset) / "store", tmp_path_factory.mktemp("in-place") / "s"))
    with oxigraph_server(location) as server:
        point(server, PUBLISHED, IN_PLACE, current_version(seed_dataset) / "store")
    with oxigraph_server(location, read_only=True) as server:
        yield f"{server}/query?default-graph-uri={urllib.parse.quote(PUBLISHED)}"


def test_a_store_served_in_place_is_read_through_its_pointer(oxigraph_in_place, seed_dataset, seed_store) -> None:
    """The pointer names the engine's default graph: the data alone (not the pointer graph), with the dataset's
    identity, and a dump pinned to that version holds the embedded store's triples."""
    remote = RemoteGraphStore(oxigraph_in_place)
    assert remote.published() == (IN_PLACE, identified_manifest(current_version(seed_dataset))[1])
    assert remote.triple_count() == seed_store.triple_count()
    pinned = RemoteGraphStore(pinned_endpoint(oxigraph_in_place, IN_PLACE))
    assert "default-graph-uri" not in pinned_endpoint(oxigraph_in_place, IN_PLACE)
    local, far = io.BytesIO(), io.BytesIO()
    seed_store.dump(local, rdf_syntax("nt"))
    pinned.dump(far, rdf_syntax("nt"))
    assert set(far.getvalue().splitlines()) == set(local.getvalue().splitlines())


@pytest.fixture(scope="module")
def dataset_published(virtuoso_endpoint: str, graph_store_url: str, seed_dataset: Path) -> str:
    """The seed dataset published into Virtuoso (its root: the version graph's name carries the version's)."""
    publish(seed_dataset, _target(graph_store_url, DATASET_GRAPH), batch=5000)
    return f"{_server(virtuoso_endpoint)}/sparql?default-graph-uri={urllib.parse.quote(DATASET_GRAPH)}"


@pytest.fixture(
    scope="module",
    params=[pytest.param("virtuoso", marks=VIRTUOSO), "oxigraph", pytest.param("", marks=VIRTUOSO), "in-place"],
)
def remote_client(request):
    """The app over each engine the seeds were published into: Virtuoso, and the Oxigraph server; over Virtuoso
    with the published dataset given (``--published DIR``: its derived figures read, not computed); and over the
    dataset's own store served in place by the Oxigraph server, the dataset given."""
    if request.param in ("", "in-place"):
        served = "dataset_published" if not request.param else "oxigraph_in_place"
        endpoint, dataset = request.getfixturevalue(served), request.getfixturevalue("seed_dataset")
        application = make_app(BIBGRAPH_STORE=f"sparql:{endpoint}", PUBLISHED=str(dataset))
    else:
        endpoint = request.getfixturevalue("published" if request.param == "virtuoso" else "oxigraph_published")
        application = make_app(BIBGRAPH_STORE=f"sparql:{endpoint}")
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
        "/graph/topics.json",
        "/graph/topics.json?expand=all",
        "/graph/coauthors.json?top=20",
    ]


@pytest.mark.virtuoso
def test_every_page_and_view_agrees_with_the_embedded_store(client, remote_client, rows) -> None:
    for path in _pages(rows):
        local, far = client.get(path), remote_client.get(path)
        assert (far.status_code, far.mimetype) == (local.status_code, local.mimetype), path
        if "/graph/coauthors" in path or "/graph/ego" in path:
            continue  # community colours may differ (Leiden); the networks are compared below
        assert far.get_data(as_text=True) == local.get_data(as_text=True), path


@pytest.mark.virtuoso
@pytest.mark.parametrize("query", ["a", "the", "network", "李"])
def test_a_broad_search_agrees_with_the_embedded_store(client, remote_client, query: str) -> None:
    """Past RANKED matches papers are ranked from those indexed last: the index built through an engine (which
    lists papers in its own order) and the dataset's give the same pages as the embedded store's."""
    with patch.object(search, "RANKED", 2):
        for page in (1, 2):
            path = f"/search?q={urllib.parse.quote(query)}&page={page}"
            assert remote_client.get(path).get_data(as_text=True) == client.get(path).get_data(as_text=True), path


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


def test_a_deadlocked_batch_is_sent_again(seed_nt, flaky_store, monkeypatch) -> None:
    monkeypatch.setattr("bibgraph.graph.engines.client.PAUSE", 0.01)
    _FlakyStore.deadlocks = 2
    with pytest.raises(PublishError, match=r"disk full \(1 batches"):  # the second batch still meets the full disk
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


class _SlowEndpoint(Handler):
    """An engine that answers after a silence (as Virtuoso does with a large CONSTRUCT: made whole, then sent)."""

    def do_POST(self) -> None:
        query = urllib.parse.parse_qs(self.request_body().decode())["query"][0]
        time.sleep(0.6)
        if query.startswith("CONSTRUCT"):
            self.reply(200, b"<http://x/s> <http://x/p> <http://x/o> .\n", "application/n-triples")
            return
        body = (
            b'<?xml version="1.0"?><sparql xmlns="http://www.w3.org/2005/sparql-results#"><head><variable name="p"/>'
            b'<variable name="n"/></head><results><result><binding name="p"><uri>http://x/p</uri></binding>'
            b'<binding name="n"><literal>1</literal></binding></result></results></sparql>'
        )
        self.reply(200, body, "application/sparql-results+xml")


def test_a_dump_waits_for_an_engine_silent_longer_than_a_query_may_be(monkeypatch) -> None:
    """A page's query gives up after the store's timeout; a dump's queries wait up to DUMP_SILENCE (the dump's own
    deadline bounds it): at 100k papers Virtuoso was silent over 60 s before a predicate's CONSTRUCT answer."""
    import io

    with serving(_SlowEndpoint) as address:
        store = RemoteGraphStore(f"{address}/sparql", timeout=0.2)
        with pytest.raises(OSError, match="timed out"):
            store.select("SELECT ?p ?n WHERE { ?s ?p ?n }")
        out = io.BytesIO()
        store.dump(out, rdf_syntax("nt"))
        assert out.getvalue() == b"<http://x/s> <http://x/p> <http://x/o> .\n"
        monkeypatch.setattr(remote_store, "DUMP_SILENCE", 0.2)
        with pytest.raises(OSError, match="timed out"):
            store.dump(io.BytesIO(), rdf_syntax("nt"))


def test_a_streamed_read_waits_for_an_engine_silent_longer_than_a_query_may_be(monkeypatch) -> None:
    """The incidence and an index's texts are read by ``iter_select``: bulk reads, which wait up to DUMP_SILENCE
    as a dump does (under load the maps answered 503 when an incidence query's answer came after the timeout)."""
    with serving(_SlowEndpoint) as address:
        store = RemoteGraphStore(f"{address}/sparql", timeout=0.2)
        query = "SELECT ?p ?n WHERE { ?s ?p ?n }"
        with pytest.raises(OSError, match="timed out"):
            store.select(query)
        assert list(store.iter_select(query)) == [{"p": "http://x/p", "n": "1"}]
        monkeypatch.setattr(remote_store, "DUMP_SILENCE", 0.2)
        with pytest.raises(OSError, match="timed out"):
            list(store.iter_select(query))


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


def _dump_triples(name: str, body: bytes) -> set[str]:
    body = gzip.decompress(body) if name.endswith(".gz") else body
    syntax = {"nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE, "rdf": ox.RdfFormat.RDF_XML}
    return {str(quad.triple) for quad in ox.parse(body, format=syntax[name.split(".")[1]])}


@pytest.mark.virtuoso
@pytest.mark.parametrize("name", ["bibgraph.nt", "bibgraph.ttl", "bibgraph.rdf", "bibgraph.nt.gz"])
def test_dump_downloads_hold_the_same_triples(client, remote_client, name: str) -> None:
    """The remote dump is streamed predicate by predicate from the engine; its triples are the embedded dump's."""
    local, first = client.get(f"/download/{name}"), remote_client.get(f"/download/{name}")
    assert first.status_code == 200 or (first.status_code, first.headers["Retry-After"]) == (503, "10")
    far = downloaded(remote_client, f"/download/{name}")
    assert (far.status_code, far.mimetype) == (local.status_code, local.mimetype) == (200, local.mimetype)
    assert _dump_triples(name, far.get_data()) == _dump_triples(name, local.get_data())


@pytest.mark.virtuoso
def test_an_engine_is_read_once_for_every_dump_syntax(published, client, tmp_path, monkeypatch) -> None:
    """The Turtle and RDF/XML dumps of an engine are written from its N-Triples dump, read from it once (each
    reading took 250-300 s at 100k papers); they hold the embedded dump's triples (the test above)."""
    readings = tmp_path / "readings"
    dump = RemoteGraphStore.dump

    def counted(store: RemoteGraphStore, out, syntax) -> None:
        with readings.open("a") as log:  # the query worker is another process: it tells through a file
            log.write(f"{syntax.name}\n")
        dump(store, out, syntax)

    monkeypatch.setattr(RemoteGraphStore, "dump", counted)  # before the app forks its query worker
    application = make_app(BIBGRAPH_STORE=f"sparql:{published}", DOWNLOAD_DIR=str(tmp_path / "downloads"))
    try:
        remote_client = application.test_client()
        for name in ("bibgraph.ttl", "bibgraph.rdf", "bibgraph.nt", "bibgraph.ttl.gz"):
            far, local = downloaded(remote_client, f"/download/{name}"), client.get(f"/download/{name}")
            assert far.status_code == 200, name
            assert _dump_triples(name, far.get_data()) == _dump_triples(name, local.get_data()), name
        assert readings.read_text().split() == ["nt"]
    finally:
        application.extensions["bibgraph"].close()


@settings(max_examples=50, deadline=None)
def _posing_as(dataset: Path, other: Path) -> Path:
    """``other`` (a dataset of other papers) under the name of ``dataset``'s current version, its manifest saying
    that name too: only the contents tell them apart."""
    name = os.readlink(dataset / "current")
    version = other / os.readlink(other / "current")
    manifest = json.loads((version / "manifest.json").read_text(encoding="utf-8"))
    (version / "manifest.json").write_text(json.dumps({**manifest, "name": name}), encoding="utf-8")
    version.rename(other / name)
    (other / "current").unlink()
    (other / "current").symlink_to(name)
    return other


@pytest.mark.virtuoso
def test_a_dataset_of_the_published_name_but_other_contents_is_not_read(
    client, dataset_published, seed_dataset, tmp_path, caplog
) -> None:
    """The engine holds the seed dataset; the site is given another dataset under the very same version name (a
    rebuild, a copy renamed): its figures, search and dumps are not read; every page equals the engine's answers."""
    other = tmp_path / "other"
    first_list = str(sorted(seed_directory().glob("*.txt"))[0])
    assert main(["build", "--dataset", str(other), "--base", BASE, "--quiet", first_list]) == 0
    _posing_as(seed_dataset, other)
    with caplog.at_level("WARNING", logger="bibgraph.maps"):
        application = make_app(BIBGRAPH_STORE=f"sparql:{dataset_published}", PUBLISHED=str(other))
        try:
            far = application.test_client()
            for path in ("/", "/areas", "/search?q=learning", "/graph/topics.json", "/graph/authors.json?q=li"):
                assert far.get(path).get_data() == client.get(path).get_data(), path
            dumped = downloaded(far, "/download/bibgraph.nt").get_data()
            assert len(dumped.splitlines()) == len(client.get("/download/bibgraph.nt").get_data().splitlines())
        finally:
            application.extensions["bibgraph"].close()
    assert "is not what the engine holds" in caplog.text


def test_a_dataset_whose_store_differs_from_its_manifest_is_not_published(seed_dataset, tmp_path) -> None:
    """The identity recorded in the engine is the manifest's: a store file changed since the build (or one the
    manifest does not list) is refused before any request (the target here answers nothing)."""
    target = Target.parse("http://127.0.0.1:9/store", "urn:bibgraph:g")
    for change in ("changed", "added"):
        copy = tmp_path / change
        shutil.copytree(seed_dataset, copy, symlinks=True)
        store = copy / "current" / "store"
        if change == "changed":
            table = sorted(store.glob("*.sst"))[0]
            table.write_bytes(table.read_bytes() + b"\0")
        else:
            (store / "000999.sst").write_bytes(b"")
        with pytest.raises(PublishError, match="nothing was sent") as refused:
            publish(copy, target)
        assert ("differs from the checksum" if change == "changed" else "not in the manifest") in str(refused.value)


def _computed(*args: object) -> None:
    raise AssertionError("computed through the engine, not read from the published dataset")


@pytest.mark.virtuoso
def test_an_engine_with_its_published_dataset_reads_its_figures(
    client, dataset_published, seed_dataset, rows, monkeypatch
):
    """With the dataset that was published, the home page, concept pages, default maps, search and the author
    autocomplete are read from its derived files (nothing computed through the engine) and equal the embedded
    store's pages."""
    concepts = sorted({"/" + row.concept.removeprefix(BASE) for row in rows if row.concept})
    name = bipartite_graph(rows).nodes[rows[0].author]["name"]
    paths = ["/", *concepts, "/areas", "/search?q=learning", f"/search?q={urllib.parse.quote(name)}"]
    paths += ["/graph/topics", "/graph/topics?expand=all", "/graph/authors.json?q=li"]
    expected = {path: client.get(path).get_data() for path in paths}  # before any derivation is barred
    for name in ("bibgraph.graph.dataset.sitedata.concept_index", "bibgraph.graph.dataset.sitedata.home_figures"):
        monkeypatch.setattr(name, _computed)
    for name in ("bibgraph.graph.networks.incidence.incidence_of", "bibgraph.web.pages.paper_order"):
        monkeypatch.setattr(name, _computed)
    monkeypatch.setattr(searchbuild, "store_documents", _computed)
    application = make_app(BIBGRAPH_STORE=f"sparql:{dataset_published}", PUBLISHED=str(seed_dataset))
    try:
        far = application.test_client()
        for path in paths:
            answer = far.get(path)
            assert answer.status_code == 200 and answer.get_data() == expected[path], path
        assert far.get("/graph/coauthors").status_code == 200  # the default map's network and layout, kept
    finally:
        application.extensions["bibgraph"].close()


@pytest.mark.virtuoso
def test_a_dataset_that_is_not_the_published_version_is_not_read(client, published, seed_dataset, caplog) -> None:
    """The engine's graph was published from a dump (no dataset version named): the figures and search are
    computed from the engine, and the operator is told why."""
    with caplog.at_level("WARNING", logger="bibgraph.maps"):
        application = make_app(BIBGRAPH_STORE=f"sparql:{published}", PUBLISHED=str(seed_dataset))
        try:
            for path in ("/", "/areas", "/search?q=learning"):
                assert application.test_client().get(path).get_data() == client.get(path).get_data(), path
        finally:
            application.extensions["bibgraph"].close()
    assert "figures are computed from the engine" in caplog.text


@pytest.mark.virtuoso
def test_the_site_follows_a_publish_within_the_pointers_ttl(client, graph_store_url, seed_dataset, tmp_path) -> None:
    """A running site drops what it derived from the version before once the pointer moves (figures, network
    exports, dumps): the seed dataset (read from its files), then a smaller store (computed from the engine),
    then the dataset again (its files again)."""
    graph = "urn:bibgraph:followed"
    target = _target(graph_store_url, graph)
    first_list = sorted(seed_directory().glob("*.txt"))[0]
    build_disk_store(tmp_path / "store", [first_list], BASE)
    smaller = make_app(BIBGRAPH_INPUTS=[str(first_list)])
    application = make_app(
        BIBGRAPH_STORE=f"sparql:{_server(graph_store_url)}/sparql?default-graph-uri={graph}",
        PUBLISHED=str(seed_dataset),
    )
    try:
        far, local = application.test_client(), smaller.test_client()
        paths = ("/", "/areas", "/graph/topics.json", "/search?q=learning")
        for source, expected in ((seed_dataset, client), (tmp_path / "store", local), (seed_dataset, client)):
            publish(source, target, batch=5000)
            time.sleep(remote_store.POINTER_TTL + 0.2)
            for path in paths:
                assert far.get(path).get_data() == expected.get(path).get_data(), (source, path)
            dumped = downloaded(far, "/download/bibgraph.nt").get_data()
            assert len(dumped.splitlines()) == len(expected.get("/download/bibgraph.nt").get_data().splitlines())
    finally:
        application.extensions["bibgraph"].close()
        smaller.extensions["bibgraph"].close()
    engine = Engine(target, Session(target.credentials, Deadline(60)))
    marked = engine.pointers()
    where = f"<{pointer_graph(graph)}>"
    described = engine.select(f"SELECT ?v ?c WHERE {{ GRAPH {where} {{ ?v <{CONTENT}> ?c }} }}")
    # the dataset's version (current) has its content; the store's (previous) none; the first one's left with it
    assert [row["v"] for row in described] == marked[remote_store.CURRENT]


def test_a_published_dataset_whose_index_is_not_one_is_refused_at_start(seed_dataset, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(seed_dataset, copy, symlinks=True)
    (copy / "current" / "derived" / "search.sqlite").write_bytes(b"not an index")
    with pytest.raises(SearchIndexError):
        make_app(BIBGRAPH_STORE="sparql:http://127.0.0.1:9/sparql", PUBLISHED=str(copy))
    with pytest.raises(ValueError, match="sparql"):
        make_app(PUBLISHED=str(seed_dataset))


@pytest.mark.virtuoso
def test_a_graph_loaded_before_versions_is_read_until_the_switch_then_dropped(graph_store_url, seed_nt, seed_store):
    """A graph loaded the old way (or by the engine's bulk loader) is what readers read until the first version."""
    graph = "urn:bibgraph:legacy"
    target = _target(graph_store_url, graph)
    part = "".join(seed_nt.read_text(encoding="utf-8").splitlines(keepends=True)[:700]).encode()
    engine = Engine(target, Session(target.credentials, Deadline(60)))
    engine.session.login(target.url)
    engine.load(graph, part)
    reader = RemoteGraphStore(f"{_server(graph_store_url)}/sparql?default-graph-uri={graph}")
    assert reader.triple_count() == 700
    report = publish(seed_nt, target)
    assert graph in report.dropped
    time.sleep(remote_store.POINTER_TTL)
    assert reader.triple_count() == seed_store.triple_count()
    assert engine.count(graph) == 0


class _PointerEngine(Handler):
    """A SPARQL endpoint answering from an Oxigraph store in memory (the pointer graph a test writes)."""

    store: ox.Store

    def do_POST(self) -> None:
        query = urllib.parse.parse_qs(self.request_body().decode())["query"][0]
        answer = self.store.query(query)
        assert isinstance(answer, ox.QuerySolutions)
        self.reply(200, answer.serialize(format=ox.QueryResultsFormat.XML) or b"", remote_store.XML_RESULTS)


_MARKS = st.dictionaries(
    st.sampled_from([f"urn:g/version-2026120{day}T000000000000Z" for day in range(1, 6)]),
    st.sets(st.sampled_from(["sha256:aa", "sha256:bb", "sha256:cc"]), max_size=2),
    max_size=3,
)


def test_the_content_read_is_the_one_recorded_for_the_version_read() -> None:
    """The reader takes the latest ``current`` and the content recorded for that very version, or none when there
    is none or two (a content recorded for a version the pointer does not name is never taken)."""
    pointer, graph = ox.NamedNode(pointer_graph("urn:g")), ox.NamedNode("urn:g")
    with serving(_PointerEngine) as address:

        @settings(max_examples=60, deadline=None)
        @given(marks=_MARKS, others=st.sets(st.sampled_from(["urn:g/version-20261209T000000000000Z", "urn:g/x"])))
        def check(marks: dict[str, set[str]], others: set[str]) -> None:
            store = ox.Store()
            for version, contents in marks.items():
                store.add(ox.Quad(graph, ox.NamedNode(remote_store.CURRENT), ox.NamedNode(version), pointer))
                for content in contents:
                    store.add(ox.Quad(ox.NamedNode(version), ox.NamedNode(CONTENT), ox.Literal(content), pointer))
            for version in others:  # recorded, not current (staging, previous): never what is read
                store.add(ox.Quad(ox.NamedNode(version), ox.NamedNode(CONTENT), ox.Literal("sha256:ff"), pointer))
            _PointerEngine.store = store
            reader = RemoteGraphStore(f"{address}/sparql?default-graph-uri=urn:g")
            latest = max(marks, default=None)
            recorded = marks.get(latest, set()) if latest else set()
            assert reader.published() == (latest, next(iter(recorded)) if len(recorded) == 1 else None)

        check()
