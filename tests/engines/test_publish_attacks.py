"""Red team: ``bibgraph publish`` meets an engine on the network, whose answers are not trusted.

Its counts are read strictly, its error text is escaped before it reaches a terminal, and the login is kept out
of argv, URLs and plain HTTP to other hosts (moved from tests/stores/test_remote_attacks.py: these cases are the
publisher's, graph/engines/).
"""

import base64
import json
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest

from bibgraph.graph.engines import client
from bibgraph.graph.engines.client import PASSWORD_ENV
from bibgraph.graph.engines.publish import Target
from bibgraph.web.commands.cli import main
from tests.loopback import Handler, serving


class _Engine(Handler):
    """A Graph Store, query and update endpoint in one, configured per test; it records every request."""

    requests: list[tuple[str, str, bool, int]]  # method, path, carried Authorization, body length
    count = "0"  # the value of every COUNT answer
    load_answer: tuple[int, bytes] = (204, b"")
    delay = 0.0  # seconds each load takes
    basic: str | None = None  # the Authorization header required, if any

    def _handle(self) -> bytes | None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        auth = self.headers.get("Authorization")
        self.requests.append((self.command, self.path, auth is not None, len(body)))
        if self.basic is not None and auth != self.basic:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="engine"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return body

    def do_GET(self) -> None:
        if self._handle() is not None:
            self.reply(404, b"no such graph")

    def do_DELETE(self) -> None:
        if self._handle() is not None:
            self.reply(204, b"")

    def do_POST(self) -> None:
        body = self._handle()
        if body is None:
            return
        endpoints = ("/sparql", "/query", "/update")  # Virtuoso's, the Oxigraph server's
        form = urllib.parse.parse_qs(body.decode("utf-8", "replace")) if self.path.startswith(endpoints) else {}
        if "query" in form:
            pointer = "GRAPH <urn:g> " in form["query"][0]  # the pointer graph holds no data; a version, ``count``
            value = {"type": "literal", "value": "0" if pointer else self.count}
            rows = [{"n": value}] if "COUNT" in form["query"][0] else []
            self.reply(200, json.dumps({"head": {"vars": ["n"]}, "results": {"bindings": rows}}).encode())
        elif "update" in form:
            self.reply(204, b"")
        else:
            time.sleep(self.delay)
            self.reply(*self.load_answer)


@pytest.fixture
def engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[type[_Engine]]:
    monkeypatch.setattr(client, "PAUSE", 0.01)
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    _Engine.requests, _Engine.count, _Engine.load_answer, _Engine.delay, _Engine.basic = [], "0", (204, b""), 0.0, None
    with serving(_Engine) as address:
        _Engine.url = f"{address}/crud"  # type: ignore[attr-defined]
        yield _Engine


@pytest.fixture
def small_dump(tmp_path: Path) -> Path:
    path = tmp_path / "small.nt"
    path.write_text("".join(f"<http://x/s{i}> <http://x/p> <http://x/o{i}> .\n" for i in range(10)), encoding="utf-8")
    return path


def _error_line(err: str) -> str:
    """The one line the error takes: the last line of stderr, after the line saying what is published."""
    lines = err.splitlines()
    assert "Traceback" not in err and lines[-1].startswith("bibgraph: error: "), err
    assert [line for line in lines if not line.startswith("publishing ")] == lines[-1:], err
    return lines[-1]


def _publish(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["publish", *argv, "--graph", "urn:g", "--quiet"])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("count", ["1e999", "-5", "12.0", "NaN", "9" * 20, " 10", "\uff11\uff10"])
def test_a_count_that_is_not_a_whole_number_is_one_clear_line(engine, small_dump, capsys, count: str) -> None:
    engine.count = count
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url)
    assert code == 1 and "is not a whole number" in _error_line(err)


def test_an_answer_that_is_not_json_results_is_one_clear_line(engine, small_dump, capsys) -> None:
    engine.count = "10"

    class Broken(_Engine):
        def do_POST(self) -> None:
            if self._handle() is not None:
                self.reply(200, b'{"results": {"bindings": [{"n": {"value": Infinity}}]}}')

    with serving(Broken) as address:
        code, _, err = _publish(capsys, str(small_dump), "--to", f"{address}/crud")
    assert code == 1 and "gave no SPARQL JSON results" in _error_line(err)


def test_the_engines_error_text_reaches_the_terminal_escaped(engine, small_dump, capsys) -> None:
    engine.load_answer = (500, "\x1b[2J\x1b]0;owned\x07 disk \u202efull\r\nnext".encode())
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url)
    assert code == 1
    assert not {"\x1b", "\x07", "\u202e", "\r"} & set(err), repr(err)
    assert "\\x1b[2J\\x1b]0;owned\\x07 disk \\u202efull\\x0d\\x0anext" in _error_line(err)


def test_a_password_in_the_url_is_refused_before_anything_is_sent(engine, small_dump, capsys) -> None:
    url = engine.url.replace("://", "://dba:s3cret@")
    code, out, err = _publish(capsys, str(small_dump), "--to", url)
    assert code == 2 and "BIBGRAPH_PUBLISH_PASSWORD" in err and "--password-file" in err
    assert "s3cret" not in out + err
    assert engine.requests == []


@pytest.mark.parametrize(
    ("url", "insecure", "allowed"),
    [
        ("http://engine.example:8890/crud", False, False),
        ("http://10.0.0.5/crud", False, False),
        ("http://engine.example:8890/crud", True, True),
        ("https://engine.example/crud", False, True),
        ("http://127.0.0.1:8890/crud", False, True),
        ("http://[::1]:8890/crud", False, True),
        ("http://localhost/crud", False, True),
    ],
)
def test_credentials_cross_plain_http_only_to_this_machine_or_when_allowed(url: str, insecure: bool, allowed: bool):
    if allowed:
        assert Target.parse(url, "urn:g", user="u", password="p", insecure_http=insecure).credentials is not None
    else:
        with pytest.raises(ValueError, match="in clear"):
            Target.parse(url, "urn:g", user="u", password="p", insecure_http=insecure)
    Target.parse(url, "urn:g")  # no credentials: nothing to protect


@pytest.mark.parametrize("where", ["environment", "file"])
def test_the_login_is_negotiated_before_any_body_is_sent(engine, small_dump, capsys, tmp_path, monkeypatch, where):
    """A bodiless probe learns the scheme; every request with a body carries the login, and is sent once."""
    engine.basic = "Basic " + base64.b64encode(b"dba:pw").decode()
    engine.count = "10"
    login = ["--user", "dba"]
    if where == "file":
        (tmp_path / "password").write_text("pw\n", encoding="utf-8")
        login += ["--password-file", str(tmp_path / "password")]
    else:
        monkeypatch.setenv(PASSWORD_ENV, "pw")
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url, "--batch", "4", *login)
    assert code == 0, err
    with_body = [request for request in engine.requests if request[3] > 0]
    assert with_body and all(authorised for _, _, authorised, _ in with_body), engine.requests
    loads = [request for request in with_body if request[1].startswith("/crud")]
    assert len(loads) == 3  # 10 triples in batches of 4, each sent once
    assert engine.requests[0][2:] == (False, 0)  # the probe: no login, no body
    assert "pw" not in " ".join(sys.argv)


def test_the_deadline_bounds_the_whole_publish(engine, small_dump, capsys) -> None:
    engine.delay = 0.7
    started = time.monotonic()
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url, "--batch", "1", "--timeout", "1.5")
    assert code == 1 and time.monotonic() - started < 4
    assert "timed out" in err or "deadline of 1.5 s" in err
    assert "untouched" in err


def test_retries_are_bounded(engine, small_dump, capsys) -> None:
    engine.load_answer = (503, b"busy")
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url)
    assert code == 1 and "answered 503: busy" in err
    loads = [request for request in engine.requests if request[0] == "POST" and request[1].startswith("/crud")]
    assert len(loads) == client.RETRIES + 1


@pytest.mark.parametrize(("path", "bulk"), [("/store", True), ("/store/", True), ("/crud", False)])
def test_loads_into_the_oxigraph_server_use_its_bulk_loader(engine, small_dump, capsys, path: str, bulk: bool) -> None:
    """The Oxigraph server keeps a transaction's write-ahead log until it restarts (44 GB for a 1M-paper publish):
    its ``/store`` is sent each batch with ``no_transaction``; another engine is sent the Graph Store Protocol alone."""
    engine.count = "10"
    code, _, err = _publish(capsys, str(small_dump), "--to", engine.url.removesuffix("/crud") + path, "--batch", "4")
    assert code == 0, err
    loads = [target for method, target, _, size in engine.requests if method == "POST" and size and "graph=" in target]
    assert len(loads) == 3
    assert ["no_transaction" in urllib.parse.urlsplit(target).query.split("&") for target in loads] == [bulk] * 3
