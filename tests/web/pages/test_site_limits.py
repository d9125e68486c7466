"""Limits for clients stay limits for clients: ``MAX_RESULT_BYTES`` (a bound on a client's SPARQL answer) turned the
site's own pages into 500s with tracebacks (paper pages, ``/sitemap.xml``, ``/.well-known/void``). The site's
queries are not held to it; a page that does pass a limit or a deadline answers a styled 503 with ``Retry-After``.
"""

import re
import xml.etree.ElementTree as ET
from urllib.parse import quote, urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.serving import worker
from tests.conftest import BASE, app_with

HTML = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
SITEMAP = "{http://www.sitemaps.org/schemas/sitemap/0.9}"


@pytest.fixture(scope="module")
def small_limit_app():
    with app_with(MAX_RESULT_BYTES=2000) as app:
        yield app


def _sitemap_paths(client) -> list[str]:  # type: ignore[no-untyped-def]
    index = client.get("/sitemap.xml")
    assert index.status_code == 200
    paths = []
    for chunk in ET.fromstring(index.data).iter(f"{SITEMAP}loc"):
        answer = client.get(urlsplit(chunk.text or "").path)
        assert answer.status_code == 200, chunk.text
        paths += [urlsplit(loc.text or "").path for loc in ET.fromstring(answer.data).iter(f"{SITEMAP}loc")]
    return paths


def test_site_pages_sitemaps_and_void_are_not_held_to_the_clients_limit(small_limit_app) -> None:
    client = small_limit_app.test_client()
    paths = _sitemap_paths(client)
    assert any(path.startswith("/paper/") for path in paths) and len(paths) > 40
    for path in paths:
        assert client.get(path, headers=HTML).status_code == 200, path
        assert client.get(path + ".ttl").status_code == 200, path
    void = client.get("/.well-known/void", follow_redirects=True, headers={"Accept": "text/turtle"})
    assert void.status_code == 200 and b"void:triples" in void.data
    # the clients' limit itself still holds at the endpoint
    everything = quote("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }")
    assert client.get(f"/sparql?query={everything}").status_code == 422


def test_a_page_over_a_limit_is_a_styled_503_with_a_retry_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker, "SITE_RESULT_BYTES", 0)  # before the fork: the site's bound is the clients' too
    with app_with(MAX_RESULT_BYTES=2000) as app:
        answer = app.test_client().get("/paper/4924f090328d8ff5", headers=HTML)  # a seed paper
        # (tests/web/pages/test_site.py)
        assert answer.status_code == 503 and answer.headers["Retry-After"].isdigit()
        assert answer.mimetype == "text/html" and b"Traceback" not in answer.data and b"<nav" in answer.data


def _paths_of(app) -> list[str]:  # type: ignore[no-untyped-def]
    with app.test_client() as client:
        return _sitemap_paths(client)


@pytest.fixture(scope="module")
def site_paths(small_limit_app) -> list[str]:
    return _paths_of(small_limit_app)


def _route_paths(app) -> list[str]:  # type: ignore[no-untyped-def]
    """Every GET route of the site but the SPARQL endpoint's, its arguments as placeholders ``<name>``."""
    return sorted(
        rule.rule
        for rule in app.url_map.iter_rules()
        if "GET" in (rule.methods or ()) and rule.endpoint.split(".")[0] not in ("sparql", "static")
    )


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)
@given(data=st.data())
def test_no_site_route_answers_500_under_the_clients_limit(small_limit_app, site_paths, data) -> None:  # type: ignore[no-untyped-def]
    rule = data.draw(st.sampled_from(_route_paths(small_limit_app)))
    known = data.draw(st.sampled_from(site_paths))
    parts = known.strip("/").split("/")

    def argument(match: re.Match[str]) -> str:
        name = match.group(1).split(":")[-1]
        real = {"paper_id": parts[-1], "key": parts[-1], "area": parts[min(1, len(parts) - 1)]}.get(name)
        choices = [st.just(real)] if real else []
        choices.append(st.text("abcdefghij-._/0123456789", min_size=1, max_size=12))
        return quote(data.draw(st.one_of(*choices)), safe="/")

    path = re.sub(r"<([^>]+)>", argument, rule)
    query = data.draw(st.sampled_from(["", "?q=a", "?min_papers=2", "?resolution=1.3", "?format=ttl"]))
    answer = small_limit_app.test_client().get(path + query, headers=HTML, base_url=BASE)
    assert answer.status_code != 500, path + query
    if answer.status_code == 503:
        assert "Retry-After" in answer.headers
