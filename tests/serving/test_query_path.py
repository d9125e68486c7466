"""The SPARQL query path as waitress serves it: a large answer goes from its spool file to the socket
without a copy, complete, for GET and HEAD alike, and a client that leaves mid-answer leaves nothing open."""

import http.client
import io
import os
import pickle
import socket
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from subprocess import Popen

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from waitress.buffers import ReadOnlyFileBasedBuffer

from bench.servers import bibgraph_process
from bibgraph.graph.serving import worker
from bibgraph.graph.serving.worker import SPOOL_AFTER, Call, Serialised, serialise
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE, STAMP, make_app, stamps

COPIES = 48  # the seeds' 2,725 triples 48 times over: about 19 MB of TSV, far over any socket or server buffer
LARGE = "SELECT ?s ?p ?o ?n WHERE { ?s ?p ?o VALUES ?n { " + " ".join(map(str, range(COPIES))) + " } }"
TSV = "text/tab-separated-values"


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, Popen[bytes]]]:
    """``bibgraph serve`` over the seeds (waitress, the query worker), with the tests' base IRI."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    with bibgraph_process(["--base", BASE], log) as running:
        yield running


def _get(base: str, query: str, method: str = "GET", headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    connection = http.client.HTTPConnection(base.removeprefix("http://"), timeout=60)
    connection.request(
        method, "/sparql?" + urllib.parse.urlencode({"query": query}), headers={"Accept": TSV, **(headers or {})}
    )
    return connection.getresponse()


def _answer_files(pid: int) -> list[str]:
    """The (unlinked) answer files the web process ``pid`` still holds open."""
    held = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except FileNotFoundError:  # closed meanwhile
            continue
        if "bibgraph-answers-" in target and os.path.basename(target).startswith("answer-"):
            held.append(target)
    return held


def _until_none_held(pid: int, seconds: float = 30.0) -> list[str]:
    """The answer files still open once they are all closed, or when ``seconds`` have passed (the server
    closes a file when the channel lets it go, on its own thread: a moment after the client saw the end)."""
    ends = time.monotonic() + seconds
    while (held := _answer_files(pid)) and time.monotonic() < ends:
        time.sleep(0.05)
    return held


def test_a_large_answer_arrives_whole_and_its_file_is_closed(served, seed_store: OxigraphGraphStore) -> None:
    base, process = served
    expected = seed_store.store.query(LARGE).serialize(format=ox.QueryResultsFormat.TSV)
    assert len(expected) > 16 * 1024 * 1024  # spooled by the worker, larger than waitress's and the sockets' buffers
    for headers in ({}, {"Cache-Control": "no-cache"}, {"Range": "bytes=0-99"}):  # no ranges: always the whole answer
        response = _get(base, LARGE, headers=headers)
        body = response.read()
        assert response.status == 200
        assert int(response.headers["Content-Length"]) == len(body)
        assert sorted(body.split(b"\n")) == sorted(expected.split(b"\n"))
    assert _until_none_held(process.pid) == []


def test_head_of_a_large_answer_says_its_length_and_closes_its_file(served) -> None:
    base, process = served
    whole = _get(base, LARGE)
    length = len(whole.read())
    head = _get(base, LARGE, method="HEAD")
    assert head.status == 200 and int(head.headers["Content-Length"]) == length
    assert head.read() == b""
    assert _until_none_held(process.pid) == []


@pytest.mark.parametrize(
    "query", ["ASK { ?s ?p ?o }", "SELECT ?s WHERE { ?s a ?type } LIMIT 3", "DESCRIBE ?s WHERE { ?s a ?t } LIMIT 1"]
)
def test_head_answers_as_get_does_without_the_body(client, query: str) -> None:
    """HEAD is GET without the body (RFC 9110): same status and headers, never a 415 for want of a body type."""
    get = client.get("/sparql", query_string={"query": query})
    head = client.head("/sparql", query_string={"query": query})
    assert (head.status_code, head.content_type, head.content_length) == (200, get.content_type, len(get.data))
    assert head.data == b""


@pytest.mark.parametrize("taken", [0, 1, 64 * 1024])
def test_a_client_leaving_mid_answer_leaves_no_file_open(served, taken: int) -> None:
    """A client that reads only the headers (or part of the body) and hangs up: its spool file is closed
    and the server goes on answering the next client."""
    base, process = served
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as client:
        path = "/sparql?" + urllib.parse.urlencode({"query": LARGE})
        client.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept: {TSV}\r\n\r\n".encode())
        received = b""
        while b"\r\n\r\n" not in received or len(received.partition(b"\r\n\r\n")[2]) < taken:
            chunk = client.recv(4096)
            assert chunk, "the server closed the connection before the answer"
            received += chunk
        assert received.startswith(b"HTTP/1.1 200 ")
        assert _answer_files(process.pid) != []  # the rest of the answer is still to send, from its file
    assert _until_none_held(process.pid) == []
    after = _get(base, "ASK { ?s ?p ?o }", headers={"Accept": "application/sparql-results+json"})
    assert after.status == 200 and b"true" in after.read()


@pytest.mark.parametrize("hops", [0, 1])
def test_a_spooled_answer_reaches_waitress_as_its_file_wrapper(monkeypatch, hops: int) -> None:
    """Every middleware and hook on the way (proxy headers, CORS, the access log) hands waitress the
    answer's file wrapper itself, which it sends from the file in large blocks: wrapped in another
    iterable, it would copy the answer into buffers of its own (a temporary file past 1 MiB)."""
    from bibgraph.graph.serving import worker

    monkeypatch.setattr(worker, "SPOOL_AFTER", 10_000)  # the worker is forked after this, so it spools
    app = make_app(QUERY_THREADS=1, PROXY_HOPS=hops)
    query = "SELECT ?s ?p ?o WHERE { ?s ?p ?o }"
    environ = {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": "/sparql",
        "QUERY_STRING": urllib.parse.urlencode({"query": query}),
        "SERVER_NAME": "bibgraph.test",
        "SERVER_PORT": "80",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_ACCEPT": TSV,
        "HTTP_ORIGIN": "http://elsewhere.test",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(),
        "wsgi.errors": io.StringIO(),
        "wsgi.file_wrapper": ReadOnlyFileBasedBuffer,
    }
    started: list[tuple[str, list[tuple[str, str]]]] = []
    try:
        body = app(environ, lambda status, headers, exc_info=None: started.append((status, headers)))
        assert isinstance(body, ReadOnlyFileBasedBuffer)
        headers = dict(started[0][1])
        assert started[0][0].startswith("200") and headers["Access-Control-Allow-Origin"] == "*"
        assert int(headers["Content-Length"]) == body.prepare() > 10_000
        body.close()
    finally:
        app.extensions["bibgraph"].close()


def _socket_buffer() -> int:
    """What one write to a fresh socket pair (the worker's kind of connection) can hold at once."""
    ours, theirs = socket.socketpair()
    with ours, theirs:
        return ours.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.integers(0, 2725),
    form=st.sampled_from(["SELECT ?s ?p ?o WHERE { ?s ?p ?o }", "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"]),
    results=st.sampled_from(["json", "xml", "tsv"]),
    graphs=st.sampled_from(["nt", "turtle"]),
)
def test_a_reply_fits_in_one_write_to_the_workers_socket(
    monkeypatch, tmp_path: Path, seed_store: OxigraphGraphStore, rows: int, form: str, results: str, graphs: str
) -> None:
    """Whatever the answer's size, the worker's reply fits in the socket's buffer (half of it: the kernel
    counts its own overhead too), so it is sent in one write; a larger answer comes as a file, byte for byte."""
    monkeypatch.setattr(worker, "_limits", worker._Limits(1 << 40, str(tmp_path)))
    query = f"{form} LIMIT {rows}"
    raw = worker._run(seed_store, pickle.dumps(Call(serialise, (query, results, graphs))))
    assert len(raw) <= _socket_buffer() // 2
    reply = pickle.loads(raw)
    assert isinstance(reply, Serialised)
    body = Path(reply.path).read_bytes() if reply.path else reply.body
    expected = io.BytesIO()
    seed_store.write_answer(query, results, graphs, expected)
    assert body == expected.getvalue()
    assert (reply.path is not None) == (len(body) > SPOOL_AFTER)


def test_a_spooled_answer_up_to_a_mebibyte_is_cached_and_a_larger_one_is_not() -> None:
    """Answers past ``SPOOL_AFTER`` come as files but are kept in the answer cache as before (up to 1 MiB): a
    middle-sized answer comes again with its first evaluation's stamp, a large one with a new stamp each time."""
    app = make_app(QUERY_THREADS=1)
    client = app.test_client()
    middle = {"query": f"SELECT ?s ?p ?o ?stamp WHERE {{ ?s ?p ?o {STAMP} }}", "format": "tsv"}
    large = {"query": LARGE.replace("WHERE {", f"?stamp WHERE {{ {STAMP}", 1), "format": "tsv"}
    try:
        first = client.get("/sparql", query_string=middle)
        assert first.status_code == 200 and SPOOL_AFTER < len(first.data) < 1024 * 1024
        again = client.get("/sparql", query_string=middle)
        assert again.status_code == 200 and again.data == first.data
        answers = [client.get("/sparql", query_string=large) for _ in range(2)]
        assert [(a.status_code, len(stamps(a.data, "tsv"))) for a in answers] == [(200, 1), (200, 1)]
        assert len(answers[0].data) > 1024 * 1024
        assert stamps(answers[0].data, "tsv") != stamps(answers[1].data, "tsv")  # evaluated again: not cached
    finally:
        app.extensions["bibgraph"].close()
