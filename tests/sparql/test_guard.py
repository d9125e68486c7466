"""The query guard against the engine: generated queries, a listening socket, the real worker pool.

The ground truth of the differential test is the engine itself: a query the guard lets through
is run by Oxigraph (unsandboxed, in this process) next to a socket that counts connections.
"""

import re
import socket
import threading
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.engines.service_queries import assemble, oxigraph_runs, pieces
from bibgraph.graph.serving.worker import serialise
from bibgraph.graph.sparql import guard
from bibgraph.graph.sparql.guard import MAX_COST, CheckedQuery, QueryForbidden, QueryRefused, check_query
from bibgraph.web.errors import status_of

LONE_CR = re.compile(r"\r(?!\n)")  # the generator's only CRs end comments


class Listener:
    """A loopback TCP socket that accepts, counts and closes every connection (so a client fails fast)."""

    def __init__(self) -> None:
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(64)
        self.server.setblocking(False)
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}/sparql"
        self.connections = 0

    def drain(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except BlockingIOError:
                return
            connection.close()
            self.connections += 1

    def run(self, action) -> int:
        """Connections made while ``action`` ran in a thread."""
        before = self.connections
        thread = threading.Thread(target=action, daemon=True)
        thread.start()
        while thread.is_alive():
            self.drain()
            thread.join(0.01)
        self.drain()
        return self.connections - before


@pytest.fixture(scope="module")
def listener() -> Iterator[Listener]:
    server = Listener()
    yield server
    server.server.close()


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces(), min_size=1, max_size=6))
def test_the_guard_refuses_every_service_the_engine_would_run(listener, parts) -> None:
    query, live, runs = assemble(parts, listener.url)
    try:
        check_query(query)
        accepted = True
    except QueryRefused as refused:
        accepted, status = False, status_of(refused).code
    if live:  # 403, or 400 when the text around it is not SPARQL at all (the lexer fails closed)
        assert not accepted and status in (400, 403), query
    if runs:  # control: the generator's SERVICE really is one Oxigraph runs (when the whole query is valid)
        ran: dict[str, bool] = {}
        connections = listener.run(lambda: ran.setdefault("ran", oxigraph_runs(query)))
        assert connections >= 1 or not ran["ran"], query
    if accepted:
        assert listener.run(lambda: oxigraph_runs(query)) == 0, query
    elif not live and not LONE_CR.search(query):  # a comment ending at a lone CR is refused on purpose
        outcome: dict[str, bool] = {}
        assert listener.run(lambda: outcome.setdefault("ran", oxigraph_runs(query))) == 0
        assert not outcome["ran"], f"refused a benign query Oxigraph runs: {query!r}"


@pytest.mark.parametrize(
    "query",
    [
        r"PREFIX ex: <http://e/> SELECT * WHERE {{ BIND(1 AS ?one) OPTIONAL {{ ?s ?p ex:a\#b }}"
        " SERVICE <{url}> {{ ?x ?y ?z }} }}",
        r"PREFIX ex: <http://e/> SELECT * WHERE {{ BIND(1 AS ?one) OPTIONAL {{ ?s ?p ex:a\'b }}"
        " SERVICE <{url}> {{ ?x ?y ?z }} }}",
        "SELECT * WHERE {{ BIND(1 AS ?one) # a comment\r SERVICE SILENT <{url}> {{ ?x ?y ?z }} }}",
        r"SELECT * WHERE {{ BIND(1 AS ?one) \u0053ERVICE <{url}> {{ ?x ?y ?z }} }}",
    ],
)
def test_the_reported_bypasses_are_refused_403_with_no_connection(client, listener, query: str) -> None:
    text = query.format(url=listener.url)
    assert listener.run(lambda: setattr(listener, "response", client.post("/sparql", data={"query": text}))) == 0
    assert listener.response.status_code == 403, listener.response.get_data(as_text=True)


BENIGN = [
    'SELECT ?x WHERE { BIND("SERVICE INSERT FROM" AS ?x) } # DELETE',
    r"PREFIX ex: <http://e/> SELECT * WHERE { ?s ?p ex:a\#b , ex:c\'d , ex:e\(f }",
    "SELECT * WHERE { BIND(1 AS ?a) FILTER(?a<2&&3>?a) }",
    "SELECT * WHERE { ?s ?p '''it's''' } # SERVICE\r\n",
    "SELECT * WHERE { VALUES ?x { " + " ".join(f'"v{i}"' for i in range(5000)) + " } }",
    "SELECT * WHERE { BIND(1 AS ?x) FILTER(?x IN (" + ",".join(map(str, range(5000))) + ")) }",
    "ASK { <http://dbpedia.org/resource/Foo_(bar)> ?p ?o }",
]


@pytest.mark.parametrize("query", BENIGN)
def test_benign_queries_pass_and_oxigraph_runs_them(query: str) -> None:
    assert isinstance(check_query(query), CheckedQuery)
    assert oxigraph_runs(query)


def test_the_query_runs_as_sent_not_decoded() -> None:
    """Oxigraph reads \\u only inside strings: decoding first would turn "\\u0022" into a quote."""
    query = r'SELECT ?x WHERE { BIND("a\u0022b" AS ?x) }'
    assert check_query(query).text == query


# Nestings: group levels (opening, closing), then [ ] and ( ) levels inside the innermost group.
GROUPS = [("{ ", " }"), ("OPTIONAL { ", " }"), ("{ SELECT * WHERE { ", " } }"), ("FILTER EXISTS { ", " }")]
BLANK, PAREN, NEGATED = len(GROUPS), len(GROUPS) + 1, len(GROUPS) + 2


def nested(kinds: list[int]) -> str:
    """A valid query nesting groups of the kinds in ``kinds``, with as many ``[`` and ``(`` inside."""
    groups = [GROUPS[kind] for kind in kinds if kind < BLANK]
    blanks = kinds.count(BLANK)
    expression = "".join("(" if kind == PAREN else "!(" for kind in kinds if kind > BLANK)
    core = (
        "?s <http://e/p> " + "[ <http://e/q> " * blanks + "1" + " ]" * blanks + " . "
        "FILTER(" + expression + "true" + ")" * len(expression.replace("!", "")) + ")"
    )
    opening = "".join(group[0] for group in groups)
    closing = "".join(group[1] for group in reversed(groups))
    return "SELECT * WHERE { " + opening + core + closing + " }"


@pytest.fixture(scope="module")
def empty_pool():
    from bibgraph.graph.serving.pool import QueryPool
    from bibgraph.graph.stores.store import OxigraphGraphStore

    pool = QueryPool(OxigraphGraphStore.memory, threads=1, deadline=30.0, isolate=True)
    yield pool
    pool.close()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kinds=st.lists(st.integers(0, NEGATED), min_size=1, max_size=3000))
def test_every_nesting_the_guard_accepts_runs_in_the_worker_without_killing_it(empty_pool, kinds) -> None:
    from bibgraph.graph.serving.pool import WorkerFailed

    query = nested(kinds)
    try:
        check_query(query)
    except QueryRefused as refused:
        assert not isinstance(refused, QueryForbidden) and "nested" in str(refused)
        assert guard.structural_cost(guard.tokens(query)) > MAX_COST
        return
    try:
        empty_pool.call(serialise, query, "json", "nt")
    except WorkerFailed:
        pytest.fail(f"an accepted query of {len(kinds)} levels killed the worker")


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE " + "{" * 2189 + "}" * 2189,
        "SELECT * WHERE { BIND(" + "+".join(["1"] * 7000) + " AS ?x) }",
        "SELECT * WHERE { " + " ".join(f"BIND({i} AS ?v{i})" for i in range(3000)) + " }",
        "SELECT " + " ".join(f"({i} AS ?v{i})" for i in range(3000)) + " WHERE {}",
        "ASK { ?a <" + "(" * 3000 + ")" * 3000 + "> ?b }",
        r'SELECT * WHERE { BIND("\u005C" AS ?x) ' + "{" * 2189 + "}" * 2189 + " }",
    ],
)
def test_over_deep_queries_are_refused_400_and_the_worker_lives(client, query: str) -> None:
    pid = client.application.extensions["bibgraph"].pool.worker_pid
    response = client.post("/sparql", data={"query": query})
    assert response.status_code == 400
    assert "nested" in response.get_data(as_text=True)
    assert client.application.extensions["bibgraph"].pool.worker_pid == pid


def test_the_deepest_accepted_group_nesting_runs(client) -> None:
    depth = MAX_COST // (guard.BRACKET_WEIGHT + 1) - 2
    query = "SELECT * WHERE " + "{" * depth + "}" * depth
    response = client.post("/sparql", data={"query": query})
    assert response.status_code == 200, response.get_data(as_text=True)


SERVICE_QUERIES = [
    "SELECT * WHERE {{ SERVICE <{url}> {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ SERVICE SILENT <{url}> {{ ?s ?p ?o }} }}",
    "PREFIX svc: <{url}> SELECT * WHERE {{ SERVICE svc:x {{ ?s ?p ?o }} }}",
    r"PREFIX ex: <http://e/> SELECT * WHERE {{ OPTIONAL {{ ?s ?p ex:a\#b }} SERVICE <{url}> {{ ?x ?y ?z }} }}",
    "SELECT * WHERE {{ # a comment\r SERVICE SILENT <{url}> {{ ?x ?y ?z }} }}",
    "SELECT * WHERE {{ BIND(<{url}> AS ?svc) SERVICE ?svc {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ VALUES ?svc {{ <{url}> }} SERVICE SILENT ?svc {{ ?s ?p ?o }} }}",
    "PREFIX : <{url}> SELECT * WHERE {{ SERVICE:x {{ ?s ?p ?o }} }}",
    "PREFIX svc: <{url}> SELECT * WHERE {{ sErViCesvc:x {{ ?s ?p ?o }} }}",
    "SELECT * WHERE {{ SERVICESILENT<{url}> {{ ?s ?p ?o }} }}",
]


def unguarded(query: str) -> CheckedQuery:
    """The guard switched off: every text passes as a SELECT."""
    return CheckedQuery(query, "select")


@pytest.fixture(scope="module")
def sandboxed_app():
    from bibgraph.web.app import create_app

    application = create_app({"TESTING": True, "QUERY_TIMEOUT": 5.0, "QUERY_THREADS": 2})
    yield application
    application.extensions["bibgraph"].close()


@pytest.mark.parametrize("template", SERVICE_QUERIES)
def test_with_the_guard_off_the_sandboxed_worker_makes_no_connection(
    sandboxed_app, listener, monkeypatch, template: str
) -> None:
    from bibgraph.web.sparql import endpoint

    assert sandboxed_app.extensions["bibgraph"].pool.sandbox_error is None
    monkeypatch.setattr(endpoint, "check_query", unguarded)
    query = template.format(url=listener.url)
    client = sandboxed_app.test_client()
    sent = {"query": query, "format": "json"}
    assert listener.run(lambda: setattr(listener, "response", client.post("/sparql", data=sent))) == 0


@pytest.mark.parametrize("template", SERVICE_QUERIES)
def test_with_the_guard_on_every_form_is_refused_403_with_no_connection(client, listener, template: str) -> None:
    query = template.format(url=listener.url)
    assert listener.run(lambda: setattr(listener, "response", client.post("/sparql", data={"query": query}))) == 0
    assert listener.response.status_code == 403


def test_control_an_unsandboxed_pool_does_connect(listener) -> None:
    """Without the network namespace the same worker connects: the sandbox is what stops it."""
    from bibgraph.graph.serving.pool import QueryPool
    from bibgraph.graph.stores.store import OxigraphGraphStore

    pool = QueryPool(OxigraphGraphStore.memory, threads=1, deadline=5.0, isolate=False)
    try:
        query = SERVICE_QUERIES[1].format(url=listener.url)
        assert listener.run(lambda: pool.call(serialise, query, "json", "nt")) >= 1
    finally:
        pool.close()


@pytest.fixture
def failing_sandbox(monkeypatch):
    from bibgraph.graph.serving import worker

    monkeypatch.setattr(worker, "try_isolate_network", lambda: "cannot enter a network namespace: simulated")


def test_without_a_sandbox_the_endpoint_refuses_503_and_says_why(failing_sandbox) -> None:
    from bibgraph.web.app import create_app

    application = create_app({"TESTING": True, "QUERY_THREADS": 1})
    try:
        client = application.test_client()
        response = client.get("/sparql", query_string={"query": "ASK {}"})
        assert response.status_code == 503
        text = response.get_data(as_text=True)
        assert "simulated" in text and "--unsandboxed" in text
        assert client.get("/").status_code == 200  # the site itself (the app's own queries) still works
    finally:
        application.extensions["bibgraph"].close()


def test_unsandboxed_serves_sparql_anyway(failing_sandbox) -> None:
    from bibgraph.web.app import create_app

    application = create_app({"TESTING": True, "QUERY_THREADS": 1, "SPARQL_UNSANDBOXED": True})
    try:
        response = application.test_client().get("/sparql", query_string={"query": "ASK {}", "format": "json"})
        assert response.status_code == 200 and response.get_json()["boolean"] is True
    finally:
        application.extensions["bibgraph"].close()


def test_serve_says_at_start_that_sparql_is_off(failing_sandbox, capsys, monkeypatch) -> None:
    from bibgraph.web import server
    from bibgraph.web.app import create_app

    monkeypatch.setattr(server, "create_server", lambda *args, **kwargs: SimpleNamespace(run=lambda: None))
    monkeypatch.setattr(server, "warm_up", lambda app: None)
    application = create_app({"TESTING": True, "QUERY_THREADS": 1})
    try:
        server.serve(application, "127.0.0.1", 5999)
    finally:
        application.extensions["bibgraph"].close()
    assert "SPARQL endpoint is off" in capsys.readouterr().out
