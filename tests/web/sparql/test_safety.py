"""The endpoint is read-only, makes no outbound request, and stops runaway queries."""

import contextlib
import os
import signal
import socket
import threading
import time
from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.serving.scratch import LOCK
from tests.conftest import RUNAWAY, STAMP, make_app, stamps
from tests.procfs import proc_text, task_ids

COUNT = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"


def triple_count(client) -> int:
    return int(
        client.get("/sparql", query_string={"query": COUNT, "format": "json"}).get_json()["results"]["bindings"][0][
            "n"
        ]["value"]
    )


@pytest.mark.parametrize(
    "send",
    [
        lambda c: c.post("/sparql", data={"update": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"}),
        lambda c: c.post("/sparql", data="DELETE WHERE { ?s ?p ?o }", content_type="application/sparql-update"),
        lambda c: c.post("/sparql", data={"query": "INSERT DATA { <urn:a> <urn:b> <urn:c> }"}),
        lambda c: c.get("/sparql", query_string={"query": "DELETE WHERE { ?s ?p ?o }"}),
        lambda c: c.get("/sparql", query_string={"update": "CLEAR DEFAULT"}),
        lambda c: c.post("/sparql", data="DROP ALL", content_type="application/sparql-query"),
        lambda c: c.post("/sparql", data={"query": "LOAD <http://127.0.0.1:9/x.ttl>"}),
        lambda c: c.post("/sparql", data={"query": r"\u0049NSERT DATA { <urn:a> <urn:b> <urn:c> }"}),
    ],
)
def test_updates_are_refused_and_change_nothing(client, send) -> None:
    before = triple_count(client)
    response = send(client)
    assert response.status_code == 403
    assert "read-only" in response.get_data(as_text=True)
    assert triple_count(client) == before


@pytest.fixture
def listener() -> Iterator[tuple[str, socket.socket]]:
    """A local TCP socket that records whether anybody connects to it."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(1.0)
    yield f"http://127.0.0.1:{server.getsockname()[1]}/sparql", server
    server.close()


def connected(server: socket.socket) -> bool:
    try:
        connection, _ = server.accept()
    except TimeoutError:
        return False
    connection.close()
    return True


def test_the_listener_does_detect_a_federating_store(listener) -> None:
    """Control: pyoxigraph on its own does connect for SERVICE, so the guard is what prevents it."""
    url, server = listener
    store = ox.Store()

    def federate() -> None:
        with contextlib.suppress(OSError, SyntaxError):
            list(store.query(f"SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}"))

    thread = threading.Thread(target=federate, daemon=True)
    thread.start()
    assert connected(server)


@pytest.mark.parametrize(
    "template",
    [
        "SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
        "SELECT * WHERE {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }}",
        "select * where {{ service silent <{url}> {{ ?s ?p ?o }} }}",
        "SELECT * WHERE {{ \\u0053ERVICE <{url}> {{ ?s ?p ?o }} }}",
        "SELECT * FROM <{url}> WHERE {{ ?s ?p ?o }}",
        "SELECT * FROM NAMED <{url}> WHERE {{ GRAPH ?g {{ ?s ?p ?o }} }}",
        "LOAD <{url}>",
    ],
)
def test_no_outbound_request_leaves_the_server(client, listener, template: str) -> None:
    url, server = listener
    response = client.post("/sparql", data={"query": template.format(url=url)})
    assert 400 <= response.status_code < 500
    dataset = client.get("/sparql", query_string={"query": "SELECT * {?s ?p ?o}", "default-graph-uri": url})
    assert dataset.status_code == 400
    assert not connected(server)


def test_keywords_inside_literals_and_iris_are_not_refused(client) -> None:
    query = 'SELECT ?x WHERE { BIND("SERVICE INSERT FROM" AS ?x) } # DELETE'
    response = client.get("/sparql", query_string={"query": query, "format": "json"})
    assert response.status_code == 200
    assert response.get_json()["results"]["bindings"][0]["x"]["value"] == "SERVICE INSERT FROM"


@pytest.fixture(scope="module")
def slow_app():
    from bibgraph.web.app import create_app

    application = create_app({"TESTING": True, "QUERY_TIMEOUT": 1.5, "QUERY_THREADS": 2})
    yield application
    application.extensions["bibgraph"].close()


def worker_pid(app) -> int:
    return app.extensions["bibgraph"].pool.worker_pid


def thread_states(pid: int) -> list[str]:
    """The scheduler state of each thread of ``pid`` (empty once the process is gone)."""
    stats = (proc_text(f"/proc/{pid}/task/{task}/stat") for task in task_ids(pid))
    return [stat.rsplit(")", 1)[1].split()[0] for stat in stats if stat is not None]


@pytest.mark.parametrize(
    "runaway",
    [
        RUNAWAY,
        "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?x FILTER(REGEX(CONCAT(STR(?c), STR(?f), "
        'STR(?x)), "(a|aa)+(b|bb)+$")) }',
    ],
)
def test_a_runaway_query_is_stopped_while_others_are_served(slow_app, runaway: str) -> None:
    client = slow_app.test_client()
    before = worker_pid(slow_app)
    outcome: dict[str, object] = {}

    def run_runaway() -> None:
        started = time.monotonic()
        outcome["response"] = client.get("/sparql", query_string={"query": runaway})
        outcome["seconds"] = time.monotonic() - started

    thread = threading.Thread(target=run_runaway)
    thread.start()
    time.sleep(0.3)
    quick = slow_app.test_client().get("/sparql", query_string={"query": "ASK { ?s ?p ?o }", "format": "json"})
    running = "R" in thread_states(before)  # the cheap query was answered while the runaway still ran
    thread.join(timeout=30)
    response = outcome["response"]
    assert quick.status_code == 200 and quick.get_json()["boolean"] is True
    assert response.status_code == 503  # type: ignore[attr-defined]
    assert "deadline" in response.get_data(as_text=True)  # type: ignore[attr-defined]
    assert outcome["seconds"] > 1.4  # type: ignore[operator]  # stopped at the deadline, not before
    assert running, "the runaway query should have been running in the worker"
    after = worker_pid(slow_app)
    assert after != before
    # the killed worker is reaped and the new one settles to idle (both take a moment on a busy machine)
    settle = time.monotonic() + 10
    while (thread_states(before) or set(thread_states(after)) != {"S"}) and time.monotonic() < settle:
        time.sleep(0.05)
    assert thread_states(before) == [], "the runaway worker must be gone"
    assert set(thread_states(after)) == {"S"}, "the new worker is idle"
    spool_root = slow_app.extensions["bibgraph"].pool.spool_root
    assert _spools(spool_root) == [str(after)], "the killed worker's answer files went with it"
    assert slow_app.test_client().get("/sparql", query_string={"query": "ASK {}"}).status_code == 200


def test_a_query_running_beside_a_runaway_one_is_answered_by_the_next_worker() -> None:
    from bibgraph.graph.dataset.build import build_graph
    from bibgraph.graph.serving.pool import QueryPool, QueryTimeout
    from bibgraph.graph.stores.store import GraphStore
    from bibgraph.seeds import seed_directory

    store, _ = build_graph([seed_directory()], progress=False)
    medium = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f FILTER(?c != ?f) }"  # ~1 s on the seeds
    expected = store.select(medium)
    pool = QueryPool(lambda: store, threads=2, deadline=30.0)
    try:
        first = pool.worker_pid
        outcome: dict[str, object] = {}

        def run_medium() -> None:
            started = time.monotonic()
            outcome["rows"] = pool.call(GraphStore.select, medium)
            outcome["seconds"] = time.monotonic() - started

        thread = threading.Thread(target=run_medium)
        thread.start()
        time.sleep(0.05)
        with pytest.raises(QueryTimeout):
            pool.call(GraphStore.select, RUNAWAY, deadline=0.3)
        assert pool.worker_pid != first
        thread.join(timeout=60)
        assert outcome["rows"] == expected
        assert outcome["seconds"] > 0.3  # type: ignore[operator]
    finally:
        pool.close()


def test_a_result_over_the_limit_is_refused() -> None:
    from bibgraph.web.app import create_app

    app = create_app({"TESTING": True, "MAX_RESULT_BYTES": 10_000, "QUERY_THREADS": 1})
    try:
        response = app.test_client().get("/sparql", query_string={"query": "SELECT * { ?s ?p ?o }"})
        assert response.status_code == 422
        assert "LIMIT" in response.get_data(as_text=True)
        small = app.test_client().get("/sparql", query_string={"query": "SELECT * { ?s ?p ?o } LIMIT 3"})
        assert small.status_code == 200
    finally:
        app.extensions["bibgraph"].close()


_header_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=st.one_of(
        st.text(max_size=200),
        st.sampled_from(["SELECT", "ASK {", "CONSTRUCT WHERE { ?s ?p ?o }", "DESCRIBE ?x", "SELECT * {} LIMIT -1"]),
    ),
    accept=_header_text,
    content_type=_header_text,
    method=st.sampled_from(["GET", "POST-form", "POST-body"]),
)
def test_generated_requests_never_produce_a_500(
    client, query: str, accept: str, content_type: str, method: str
) -> None:
    headers = {"Accept": accept}
    if method == "GET":
        response = client.get("/sparql", query_string={"query": query}, headers=headers)
    elif method == "POST-form":
        response = client.post("/sparql", data={"query": query}, headers=headers)
    else:
        response = client.post(
            "/sparql", data=query.encode("utf-8", "surrogatepass"), headers={**headers, "Content-Type": content_type}
        )
    assert response.status_code < 500, response.get_data(as_text=True)


def test_the_worker_is_a_child_of_this_test_run(slow_app) -> None:
    assert os.getpid() in ancestors(worker_pid(slow_app))


def ancestors(pid: int) -> list[int]:
    found = []
    while pid > 1:
        with open(f"/proc/{pid}/stat") as stat:
            pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        found.append(pid)
    return found


def test_repeated_queries_are_answered_from_the_cache_unless_the_client_says_no_cache() -> None:
    from bibgraph.web.app import create_app

    app = create_app({"TESTING": True, "QUERY_THREADS": 1})
    client = app.test_client()
    params = {"query": f"SELECT ?n ?stamp WHERE {{ {{ {COUNT} }} {STAMP} }}", "format": "json"}
    try:
        first = client.get("/sparql", query_string=params)
        assert first.status_code == 200 and len(stamps(first.data, "json")) == 1
        again = client.get("/sparql", query_string=params)
        assert again.status_code == 200 and again.data == first.data  # the first answer's stamp: the cache's
        fresh = client.get("/sparql", query_string=params, headers={"Cache-Control": "no-cache"})
        assert fresh.status_code == 200 and stamps(fresh.data, "json").isdisjoint(stamps(first.data, "json"))
        assert client.get("/sparql", query_string=params).data == fresh.data  # the cache keeps the newest answer
        pragma = client.get("/sparql", query_string=params, headers={"Pragma": "no-cache"})
        assert stamps(pragma.data, "json").isdisjoint(stamps(first.data, "json") | stamps(fresh.data, "json"))
    finally:
        app.extensions["bibgraph"].close()


def test_a_large_answer_passes_through_a_file_that_is_gone_once_sent(monkeypatch, seed_store) -> None:
    from bibgraph.graph.serving import worker

    monkeypatch.setattr(worker, "SPOOL_AFTER", 10_000)  # the worker is forked after this, so it spools
    app = make_app(QUERY_THREADS=1)
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    try:
        response = app.test_client().get("/sparql", query_string={"query": query, "format": "tsv"})
        assert response.status_code == 200
        assert response.content_length == len(response.data) > 10_000
        served = ox.parse_query_results(response.data, format=ox.QueryResultsFormat.TSV)
        expected = seed_store.store.query(query)
        assert sorted(tuple(map(str, row)) for row in served) == sorted(tuple(map(str, row)) for row in expected)
        spool_root = app.extensions["bibgraph"].pool.spool_root
        assert [os.listdir(os.path.join(spool_root, d)) for d in _spools(spool_root)] == [[]]
    finally:
        app.extensions["bibgraph"].close()
    assert not os.path.exists(spool_root)


def test_answer_files_go_even_when_the_web_process_dies_without_closing_the_pool() -> None:
    from bibgraph.graph.dataset.build import build_graph
    from bibgraph.graph.serving.pool import QueryPool
    from bibgraph.graph.stores.store import GraphStore
    from bibgraph.seeds import seed_directory

    store, _ = build_graph([seed_directory()], progress=False)
    pool = QueryPool(lambda: store, threads=1)
    assert pool.call(GraphStore.triple_count) > 0
    assert os.path.isdir(pool.spool_root)
    pool._control.close()  # what the zygote sees when the web process dies
    for _ in range(50):
        if not os.path.exists(pool.spool_root):
            break
        time.sleep(0.1)
    assert not os.path.exists(pool.spool_root)
    os.kill(pool.worker_pid, signal.SIGKILL)
    os.waitpid(pool._zygote, 0)


def _spools(spool_root: str) -> list[str]:
    """The workers' answer directories in the pool's scratch directory (its lock file aside)."""
    return [name for name in os.listdir(spool_root) if name != LOCK]
