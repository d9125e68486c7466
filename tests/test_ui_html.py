"""What the pages say, read from their HTML (the UI review's findings that need no browser)."""

import urllib.parse

import pytest

from bibgraph.graph.serving import fairshare, guard, pool, worker
from bibgraph.graph.stores import store
from bibgraph.web.errors import answer_exception

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # as a browser asks
EXPECTED_SECTION = 'id="expected-heading"'


@pytest.mark.parametrize(
    "error",
    [
        guard.QueryForbidden("update"),
        guard.QueryRefused("too deep"),
        pool.QueryCrashed("crashed"),
        worker.ResultTooLarge("large"),
        fairshare.OverShare("share", 7),
        pool.QueryTimeout("late"),
        fairshare.ServerBusy("busy"),
        worker.WorkerFailed("failed"),
        store.QueryError("syntax"),  # no query to explain: the engine's message alone
    ],
)
def test_an_error_page_lists_what_the_engine_accepts_only_for_a_syntax_error_it_explains(app, error) -> None:
    """The section "what the engine accepts there" (or "Nothing can follow there") belongs to a syntax
    error's page; every other error page (a 503 after a deadline, a 404...) showed "Nothing can follow there"."""
    with app.test_request_context("/", headers=HTML):
        body = answer_exception(error).get_data(as_text=True)
    assert EXPECTED_SECTION not in body and "Nothing can follow there" not in body


@pytest.mark.parametrize(
    "path", ["/paper/0000000000000000", "/no/such/page", "/graph/coauthors?min_papers=abc", "/area/%01"]
)
def test_404_and_400_pages_have_no_syntax_error_section(client, path: str) -> None:
    response = client.get(path, headers=HTML)
    assert response.status_code in (400, 404) and response.mimetype == "text/html"
    assert EXPECTED_SECTION not in response.get_data(as_text=True)


def test_a_syntax_error_page_keeps_its_section(client) -> None:
    query = "SELECT ?s WHERE { ?s ?p ?o . FILTER (?s = ) }"
    response = client.get("/sparql?" + urllib.parse.urlencode({"query": query}), headers=HTML)
    assert response.status_code == 400
    assert EXPECTED_SECTION in response.get_data(as_text=True)
