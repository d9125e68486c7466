"""One client cannot starve or break the others: shares (429), crashes (400), dead processes, idle connections."""

import json
import os
import signal
import socket
import subprocess
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from bench.servers import bibgraph_process
from bibgraph.web.graphstore import client_key
from bibgraph.web.server import waitress_options
from bibgraph.web.settings import defaults
from tests.conftest import make_app
from tests.serving.test_pool import CRASHER, MEDIUM, children, wait_until


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[str, subprocess.Popen]]:
    """``bibgraph serve`` behind a pretend reverse proxy at 127.0.0.1 (it trusts X-Forwarded-For from there)."""
    args = ["--query-threads", "2", "--client-queries", "1", "--trusted-proxy", "127.0.0.1"]
    args += ["--channel-timeout", "60", "--timeout", "60"]
    with bibgraph_process(args, tmp_path_factory.mktemp("fair") / "serve.log", ready="/health") as served:
        yield served


def get(
    url: str, headers: dict[str, str] | None = None, data: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def sparql(base: str, query: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    data = urllib.parse.urlencode({"query": query}).encode()
    return get(f"{base}/sparql?format=json", {"Cache-Control": "no-cache", **headers}, data)


def test_a_client_over_its_share_gets_429_and_another_client_is_served(server) -> None:
    base, _ = server
    outcomes: dict[str, int] = {}

    def slow(name: str, forwarded: str) -> None:
        outcomes[name] = sparql(base, MEDIUM, **{"X-Forwarded-For": forwarded})[0]

    first = threading.Thread(target=slow, args=("first", "192.0.2.1"))
    first.start()
    wait_until(lambda: json.loads(get(f"{base}/health")[2])["running"] == 1)
    status, headers, _ = sparql(base, MEDIUM, **{"X-Forwarded-For": "192.0.2.1"})
    assert status == 429 and int(headers["Retry-After"]) >= 1
    other = sparql(base, "ASK { ?s ?p ?o }", **{"X-Forwarded-For": "192.0.2.2"})
    assert other[0] == 200 and json.loads(other[2])["boolean"] is True
    first.join(timeout=60)
    assert outcomes == {"first": 200}


def test_a_query_that_crashes_the_engine_gets_400_never_500(server) -> None:
    base, _ = server
    for _ in range(2):  # the second time it is refused from memory
        status, _, body = sparql(base, CRASHER)
        assert status == 400, body
    assert sparql(base, "ASK { ?s ?p ?o }")[0] == 200


def test_idle_connections_do_not_lock_a_normal_client_out(server) -> None:
    base, _ = server
    port = int(base.rsplit(":", 1)[1])
    with ExitStack() as idle:
        for _ in range(200):  # more than waitress's default limit of 100
            connection = idle.enter_context(socket.create_connection(("127.0.0.1", port)))
            connection.send(b"GET / HTTP/1.1\r\n")  # a request that never ends
        status, _, body = sparql(base, "ASK { ?s ?p ?o }")
        assert status == 200 and json.loads(body)["boolean"] is True


def test_every_url_answers_after_the_zygote_and_then_the_worker_are_killed(server) -> None:
    base, process = server
    (zygote,) = children(process.pid)
    (worker,) = children(zygote)
    os.kill(zygote, signal.SIGKILL)
    os.kill(worker, signal.SIGKILL)
    for path in ("/", "/areas", "/sparql?query=ASK%7B%7D"):
        assert get(f"{base}{path}", {"Cache-Control": "no-cache"})[0] == 200, path
    status, _, body = get(f"{base}/health")
    state = json.loads(body)
    assert status == 200 and state["ok"] is True and state["restarts"]["zygote"] == 1
    (new_zygote,) = children(process.pid)
    assert new_zygote != zygote and len(children(new_zygote)) == 1


def test_health_is_503_when_the_pool_cannot_serve() -> None:
    app = make_app()
    app.extensions["bibgraph"].close()
    response = app.test_client().get("/health")
    assert response.status_code == 503 and response.get_json()["ok"] is False


@pytest.mark.parametrize(
    ("address", "client"),
    [
        ("192.0.2.7", "192.0.2.7"),
        ("::ffff:192.0.2.7", "192.0.2.7"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::9", "2001:db8:1:2::/64"),
        ("192.0.2.7:5678", "192.0.2.7"),  # a proxy's address with the client's port
        ("[2001:db8:1:2::9]:5678", "2001:db8:1:2::/64"),
    ],
)
def test_a_client_is_its_address_and_an_ipv6_client_its_64(app, address: str, client: str) -> None:
    with app.test_request_context(environ_base={"REMOTE_ADDR": address}):
        assert client_key() == client


def test_waitress_trusts_forwarded_addresses_only_from_the_configured_proxy() -> None:
    settings = defaults()
    assert "trusted_proxy" not in waitress_options(settings)
    options = waitress_options({**settings, "TRUSTED_PROXY": "10.0.0.1"})
    assert options["trusted_proxy"] == "10.0.0.1" and options["trusted_proxy_headers"] == {"x-forwarded-for"}
    assert options["connection_limit"] == settings["CONNECTION_LIMIT"] and options["asyncore_use_poll"] is True


def test_serve_options_reach_the_settings() -> None:
    from bibgraph.web.commands.cli import _parser

    args = _parser().parse_args(["serve", "--connection-limit", "7", "--client-queries", "3", "--trusted-proxy", "::1"])
    assert (args.CONNECTION_LIMIT, args.CLIENT_QUERIES, args.TRUSTED_PROXY) == (7, 3, "::1")


def test_a_browser_over_its_share_gets_the_site_s_error_page(monkeypatch) -> None:
    from bibgraph.graph.serving.fairshare import OverShare

    app = make_app()
    try:

        def refuse(*args, **kwargs):
            raise OverShare("too many queries at once from one client", 1)

        monkeypatch.setattr(app.extensions["bibgraph"].pool, "call", refuse)
        browser = app.test_client().get("/areas", headers={"Accept": "text/html"})
        assert browser.status_code == 429 and browser.headers["Retry-After"] == "1"
        assert browser.mimetype == "text/html" and "too many queries" in browser.get_data(as_text=True)
        script = app.test_client().get("/sparql", query_string={"query": "ASK {}"}, headers={"Accept": "*/*"})
        assert script.status_code == 429 and script.mimetype == "text/plain"
    finally:
        app.extensions["bibgraph"].close()


def _address_space_limit(pid: int) -> str:
    with open(f"/proc/{pid}/limits") as limits:
        line = next(line for line in limits if line.startswith("Max address space"))
    return line.split()[3]  # the soft limit, in bytes or "unlimited"


def test_the_worker_has_a_memory_limit_by_default(app) -> None:
    """Half the machine's memory unless configured: a runaway query costs its worker, never the host."""
    from bibgraph.web.settings import worker_memory_limit

    expected = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    assert worker_memory_limit(None) == expected
    assert worker_memory_limit(0) is None and worker_memory_limit(2**30) == 2**30
    assert _address_space_limit(app.extensions["bibgraph"].pool.worker_pid) == str(expected)
