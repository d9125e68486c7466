"""Red team: what a client sends must not buy CPU or memory in the web process beyond its own share.

The web process runs every page, ``/health`` and the guard under one GIL; work done there for one
request delays all the others. Queries are evaluated (and syntax errors explained) in the query
worker, under a deadline and the fair share; what remains here must stay small.
"""

import pytest

from .conftest import make_app
from .test_redteam_explain import cross_product

BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"


@pytest.fixture(scope="module")
def short_app():
    application = make_app(QUERY_TIMEOUT=1.5)
    yield application
    application.extensions["bibgraph"].close()


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
