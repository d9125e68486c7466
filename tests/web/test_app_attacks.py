"""Red team: what a client sends must not buy CPU or memory in the web process beyond its own share.

The web process runs every page, ``/health`` and the guard under one GIL; work done there for one
request delays all the others. Queries are evaluated (and syntax errors explained) in the query
worker, under a deadline and the fair share; what remains here must stay small.
"""

from urllib.parse import urlencode

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.sparql.test_expected_attacks import cross_product

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


def test_a_syntax_error_the_worker_could_not_explain_is_not_parsed_again_here(short_app, monkeypatch) -> None:
    """The explanation runs past the deadline (an attacker can arrange that): the error page then took
    rdflib's parser to the query in this process, 2-4 s of CPU for an 8 KB ``IN (1,1,...)`` list."""
    from rdflib.plugins.sparql import parser

    parsed: list[str] = []
    monkeypatch.setattr(parser, "parseQuery", parsed.append)
    query = cross_product(30, 5).replace("= -1)", "= -1 || ?v0 IN (" + ",".join(["7"] * 500) + "))")
    response = short_app.test_client().get("/sparql", query_string={"query": query}, headers={"Accept": BROWSER})
    assert response.status_code == 400
    assert "Syntax error in the query" in response.get_data(as_text=True)
    assert parsed == []


_FORM = "application/x-www-form-urlencoded"
_QUERY = 'SELECT ?x WHERE {{ BIND("{}" AS ?x) }}'


def _bodies(bad: bytes) -> list[tuple[bytes, str]]:
    """``bad`` (bytes that are no UTF-8) in a query sent in each kind of POST body."""
    query = _QUERY.encode()
    percent = "".join(f"%{byte:02X}" for byte in bad).encode()
    return [
        (query.replace(b"{}", b"a" + bad + b"b"), "application/sparql-query"),
        (b"query=" + query.replace(b"{}", b"a" + percent + b"b"), _FORM),
        (b"query=" + query.replace(b"{}", b"a" + bad + b"b"), _FORM),
        (
            b'--x\r\nContent-Disposition: form-data; name="query"\r\n\r\n'
            + query.replace(b"{}", b"a" + bad + b"b")
            + b"\r\n--x--\r\n",
            "multipart/form-data; boundary=x",
        ),
    ]


def _not_utf8(raw: bytes) -> bool:
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=st.binary(min_size=1, max_size=6).filter(_not_utf8))
def test_a_body_that_is_not_utf8_is_refused_never_run_as_another_query(client, bad: bytes) -> None:
    """As the URL is (400): werkzeug read such bytes as U+FFFD, and a form's %FF as the text "%FF"."""
    for body, content_type in _bodies(bad):
        response = client.post("/sparql", data=body, headers={"Content-Type": content_type})
        assert response.status_code == 400, (body, content_type, response.get_data(as_text=True))
        assert "UTF-8" in response.get_data(as_text=True)


@pytest.mark.parametrize("text", ["é", "数", "\U0001f600", "%", "a+b"])
def test_utf8_bodies_still_run_as_sent(client, text: str) -> None:
    query = _QUERY.format(text)
    for body, content_type in [
        (query.encode(), "application/sparql-query"),
        (urlencode({"query": query}).encode(), _FORM),
    ]:
        response = client.post(
            "/sparql", data=body, headers={"Content-Type": content_type, "Accept": "application/json"}
        )
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.get_json()["results"]["bindings"][0]["x"]["value"] == text


def test_long_queries_are_read_a_few_at_a_time(client, monkeypatch) -> None:
    """The guard reads a query here, before any fair share: 1-4 s of CPU and ~54 MB for a 1 MB one. With
    every turn taken, one more long query is 503 with Retry-After at once; short ones pass as before."""
    from bibgraph.web.sparql import endpoint

    monkeypatch.setattr(endpoint, "LARGE_WAIT", 0.05)
    long = "SELECT * WHERE { VALUES ?x { " + "1 " * 20_000 + "} } LIMIT 1"
    assert client.post("/sparql", data={"query": long}).status_code == 200
    for _ in range(endpoint.LARGE_AT_ONCE):
        assert endpoint._large_checks.acquire(timeout=1)
    try:
        refused = client.post("/sparql", data={"query": long})
        assert refused.status_code == 503 and refused.headers["Retry-After"]
        assert "long queries" in refused.get_data(as_text=True)
        assert client.get("/sparql", query_string={"query": "ASK {}"}).status_code == 200
    finally:
        for _ in range(endpoint.LARGE_AT_ONCE):
            endpoint._large_checks.release()
    assert client.post("/sparql", data={"query": long}).status_code == 200
