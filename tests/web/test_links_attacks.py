"""No URL makes the app answer 500: control characters, surrogates, undecodable percent-escapes and
odd keys in any path segment or query value get 404 or 400 (or a normal answer)."""

import re
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.web.maps.cache import NetworkCache, derived_key

PARAMETERS = (
    "area",
    "subarea",
    "min_papers",
    "min_joint",
    "top",
    "community",
    "weighting",
    "resolution",
    "radius",
    "from",
    "to",
    "q",
    "page",
    "embed",
    "format",
)
NASTY = ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\ud800", "\udfff", "\ufffd", " ", "<", ">", '"', "{", "|", "%", "/"]


def _encoded(text: str) -> str:
    """Percent-encoded UTF-8, lone surrogates as the (invalid) bytes they would be."""
    return urllib.parse.quote(text.encode("utf-8", "surrogatepass"), safe="")


_text = st.text(alphabet=st.one_of(st.sampled_from(NASTY), st.characters()), max_size=12)
_value = st.one_of(
    _text.map(_encoded),
    st.binary(max_size=8).map(lambda raw: urllib.parse.quote(raw, safe="")),
    st.sampled_from(["%ff", "%00", "a%0ab", "%ED%A0%80", "area/%ff", "author/a%00b", "1e9", "-1", ""]),
)


def _routes(app) -> list[str]:
    return sorted({rule.rule for rule in app.url_map.iter_rules() if "GET" in rule.methods})


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_url_answers_500(app, data) -> None:
    client = app.test_client()
    rule = data.draw(st.sampled_from(_routes(app)))
    path = re.sub(r"<[^>]+>", lambda _: data.draw(_value) or "x", rule)
    query = data.draw(st.lists(st.tuples(st.sampled_from(PARAMETERS), _value), max_size=4))
    url = path + ("?" + "&".join(f"{name}={value}" for name, value in query) if query else "")
    response = client.get(url)
    assert response.status_code < 500, (url, response.status_code)


@pytest.mark.parametrize(
    ("url", "status"),
    [
        ("/author/a%00b", 404),
        ("/paper/%00.ttl", 404),
        ("/area/%0a", 404),
        ("/author/a%ffb", 404),
        ("/graph/ego/author/%00", 404),
        ("/graph/coauthors?area=%ff", 400),
        ("/graph/coauthors?area=a%0ab", 400),
        ("/graph/coauthors.graphml?subarea=%00", 400),
        ("/graph/path?from=%00&to=b", 400),
        ("/search?q=%ff", 400),
        ("/sparql?query=%ff", 400),
    ],
)
def test_the_reported_urls(client, url: str, status: int) -> None:
    assert client.get(url).status_code == status


def test_a_failed_derivation_leaves_nothing_cached() -> None:
    cache = NetworkCache()
    key = derived_key("network", None, "boom")

    def fail() -> int:
        raise RuntimeError("the store went away")

    with pytest.raises(RuntimeError):
        cache._get(key, fail)
    assert cache._entries == {} and cache._making == {}
    assert cache._get(key, lambda: 7) == 7


def test_a_failed_view_is_derived_again(app, monkeypatch) -> None:
    from bibgraph.graph.networks import engine
    from bibgraph.graph.serving.forked import ForkedFailed

    real = engine.coauthor_network
    monkeypatch.setattr(engine, "coauthor_network", lambda *arguments: 1 / 0)
    client = app.test_client()
    with pytest.raises(ZeroDivisionError):
        client.get("/graph/coauthors?min_joint=3&top=77")
    with pytest.raises(ZeroDivisionError):  # a small download's body: made in the web process, as a map
        client.get("/graph/coauthors.json?min_joint=3&top=77")
    monkeypatch.setitem(app.config, "DOWNLOAD_IN_PROCESS_AUTHORS", 0)
    with pytest.raises(ForkedFailed, match="division by zero"):  # a large one's: made in a child process
        client.get("/graph/coauthors.gexf?min_joint=3&top=77")
    monkeypatch.setattr(engine, "coauthor_network", real)
    assert client.get("/graph/coauthors.gexf?min_joint=3&top=77").status_code == 200
    monkeypatch.setitem(app.config, "DOWNLOAD_IN_PROCESS_AUTHORS", 1000)
    assert client.get("/graph/coauthors.json?min_joint=3&top=77").status_code == 200
    assert client.get("/graph/coauthors?min_joint=3&top=77").status_code == 200


@pytest.mark.parametrize("extra", ["kind=x", "fmt=x", "_method=DELETE", "_external=1&_anchor=x", "_scheme=javascript"])
def test_arguments_that_are_no_filter_are_not_passed_on(client, extra: str) -> None:
    """The map's download links carry its filters only: another argument is not url_for's to take."""
    response = client.get(f"/graph/coauthors?min_papers=1&{extra}")
    assert response.status_code == 200
    html = response.get_data(as_text=True)
    assert 'href="/graph/coauthors.graphml?min_papers=1"' in html
    assert extra.split("=")[0] not in html.split("download:")[1].split("</p>")[0]


def test_a_large_malformed_query_is_not_parsed_again_in_the_web_process(client, monkeypatch) -> None:
    """rdflib's parser (for a better error position) runs in the web process: only on short queries."""
    from rdflib.plugins.sparql import parser  # errors.py imports its parseQuery when first needed

    parsed: list[str] = []
    monkeypatch.setattr(parser, "parseQuery", parsed.append)
    query = "SELECT * WHERE { VALUES ?x { " + "1 " * 10_000 + "} ?x ?y } }"
    response = client.post("/sparql", data={"query": query}, headers={"Accept": "text/html,*/*;q=0.8"})
    assert response.status_code == 400 and "Syntax error" in response.get_data(as_text=True)
    assert parsed == []
