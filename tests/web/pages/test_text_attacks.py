"""Red team: escaping is the first layer against markup in names, areas and abstracts; the Content
Security Policy is the second. No page runs an inline script, a handler attribute or a script from
elsewhere, nor sends data elsewhere, nor is framed by another site; no answer is sniffed as another type."""

import re

import pytest

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
PAGES = [
    "/",
    "/areas",
    "/dataset",
    "/download/",
    "/search?q=learning",
    "/graph/coauthors",
    "/graph/topics",
    "/graph/path?from=a&to=b",
    "/no/such/page",
    "/sparql?query=SELECT%20*%20%7B",  # a syntax error shown to a browser, the query echoed
]


def _directives(policy: str) -> dict[str, list[str]]:
    return {part.split()[0]: part.split()[1:] for part in policy.split(";") if part.strip()}


def _linked_pages(client) -> list[str]:
    """One paper, one author and one area page, as an area's page links them."""
    html = client.get("/area/deep-learning").get_data(as_text=True)
    found = [re.search(rf'href="(/{kind}/[^".#?]+)"', html) for kind in ("paper", "author", "area")]
    return [match.group(1) for match in found if match]


def test_every_page_forbids_inline_and_foreign_scripts(client) -> None:
    pages = PAGES + _linked_pages(client)
    assert len(pages) == len(PAGES) + 3
    for path in pages:
        response = client.get(path, headers=BROWSER)
        assert response.mimetype == "text/html", path
        directives = _directives(response.headers["Content-Security-Policy"])
        assert directives["script-src"] == ["'self'"], path
        assert "script-src-attr" not in directives, path
        assert directives["object-src"] == ["'none'"] and directives["frame-ancestors"] == ["'self'"], path
        assert directives["connect-src"] == ["'self'"] and directives["base-uri"] == ["'self'"], path
        assert response.headers["X-Content-Type-Options"] == "nosniff", path


def test_the_query_page_allows_only_its_sanitisers_inert_handlers(client) -> None:
    response = client.get("/sparql", headers=BROWSER)
    assert response.mimetype == "text/html"
    directives = _directives(response.headers["Content-Security-Policy"])
    assert directives["script-src"] == ["'self'"] and directives["connect-src"] == ["'self'"]


@pytest.mark.parametrize("path", ["/sparql?query=ASK%20%7B%7D", "/download/bibgraph.ttl", "/graph/authors.json?q=a"])
def test_other_answers_are_never_sniffed(client, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 200, path
    assert response.headers["X-Content-Type-Options"] == "nosniff"


def test_cors_preflight_names_only_the_methods_the_endpoint_answers(client) -> None:
    """flask-cors's default advertised DELETE, PATCH and PUT, which /sparql answers 405."""
    response = client.options(
        "/sparql", headers={"Origin": "http://other.example", "Access-Control-Request-Method": "POST"}
    )
    advertised = {m.strip() for m in response.headers["Access-Control-Allow-Methods"].split(",")}
    assert advertised == {"GET", "HEAD", "POST", "OPTIONS"}
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in response.headers
