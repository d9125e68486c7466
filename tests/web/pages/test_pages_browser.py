"""The site's pages in a real browser (Playwright + Debian's chromium): phone widths, errors, the query page."""

import json
import shutil
import socket
import urllib.parse
import urllib.request
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page

from bench.servers import bibgraph_server
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.seeds import seed_directory

pytestmark = pytest.mark.browser
ARABIC_ABSTRACT = "نقترح طريقة جديدة لتعلم النماذج. We evaluate on three benchmarks."
RTL_LIST = f"论文检索\n\nTheory · Learning Theory\n\nمحمد علي, Lina Haddad\n\n{ARABIC_ABSTRACT}\n"


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    directory = tmp_path_factory.mktemp("lists")
    for path in seed_directory().glob("*.txt"):
        shutil.copy(path, directory / path.name)
    (directory / "rtl.txt").write_text(RTL_LIST, encoding="utf-8")
    with bibgraph_server([str(directory)], tmp_path_factory.mktemp("log") / "serve.log") as base:
        yield base


def select(base: str, query: str) -> list[dict[str, str]]:
    body = urllib.parse.urlencode({"query": sparql_prologue() + query}).encode()
    request = urllib.request.Request(f"{base}/sparql", body, {"Accept": "application/sparql-results+json"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return [{k: v["value"] for k, v in row.items()} for row in json.load(answer)["results"]["bindings"]]


def open_page(browser: Browser, base: str, width: int = 1280, height: int = 900) -> tuple[Page, list[str]]:
    """A fresh page (own context, so own storage) and the list of every URL it requests; script errors fail."""
    page = browser.new_page(viewport={"width": width, "height": height})
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda error: requests.append(f"page error: {error}"))
    return page, requests


def page_kinds(base: str) -> dict[str, str]:
    top = select(base, "SELECT ?a WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(COUNT(?p)) ?a LIMIT 1")
    author = top[0]["a"][len(base) + 1 :]
    paper = select(base, 'SELECT ?p WHERE { ?p dcterms:abstract ?a FILTER(CONTAINS(?a, "$")) } ORDER BY ?p LIMIT 1')
    broken = "SELECT ?s WHERE {\n  ?s ?p ?o .\n  FILTER (?s = )\n}"
    return {
        "home": "/",
        "paper": "/" + paper[0]["p"][len(base) + 1 :],
        "author": "/" + author,
        "area": "/area/deep-learning",
        "subarea": "/area/deep-learning/large-language-models",
        "areas": "/areas",
        "dataset": "/dataset",
        "search": "/search?q=wang",
        "sparql": "/sparql",
        "sparql-error": "/sparql?" + urllib.parse.urlencode({"query": broken}),
        "404": "/paper/0000000000000000",
        "download": "/download/",
        "coauthors": "/graph/coauthors",
        "ego": f"/graph/ego/{author}",
        "path": f"/graph/path?from={author}&to={author}",
        "topics": "/graph/topics",
    }


KINDS = [
    "home", "paper", "author", "area", "subarea", "areas", "dataset", "search", "sparql", "sparql-error", "404",
    "download", "coauthors", "ego", "path", "topics",
]  # fmt: skip


@pytest.mark.parametrize("kind", KINDS)
def test_no_horizontal_overflow_on_a_phone(browser, server, kind: str) -> None:
    page, _ = open_page(browser, server, 390, 844)
    page.goto(server + page_kinds(server)[kind], wait_until="load")
    if kind == "sparql":
        page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
        page.click("#examples button >> nth=3")
        page.wait_for_selector(".yasr tbody tr", timeout=15000)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{kind}: {overflow}px wider than the screen"
    small = page.evaluate(
        """[...document.querySelectorAll('input:not([type=hidden]), select, textarea')]
           .filter(e => e.offsetParent !== null && parseFloat(getComputedStyle(e).fontSize) < 16)
           .map(e => e.outerHTML.slice(0, 80))"""
    )
    assert small == [], f"{kind}: inputs under 16 px make phones zoom: {small}"
    page.close()


@pytest.mark.parametrize("kind", ["404", "sparql-error"])
def test_error_pages_are_styled_with_navigation_and_search(browser, server, kind: str) -> None:
    page, _ = open_page(browser, server)
    response = page.goto(server + page_kinds(server)[kind])
    assert response.status == (404 if kind == "404" else 400)
    assert page.query_selector("header.site nav a[href='/']") is not None
    assert page.evaluate("getComputedStyle(document.querySelector('header.site')).borderBottomStyle") == "solid"
    assert float(page.evaluate("parseFloat(getComputedStyle(document.querySelector('h1')).fontSize)")) >= 28
    if kind == "sparql-error":
        assert page.query_selector("mark#error-position") is not None
        page.click("text=Edit the query in the SPARQL editor")
        page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
        value = page.evaluate("bibgraphYasgui.getTab().getQuery()")
        assert "FILTER (?s = )" in value
    else:
        page.fill("#error-q", "wang")
        page.press("#error-q", "Enter")
        page.wait_for_selector("ol.results li")
    page.close()


def test_query_page_ignores_an_endpoint_in_the_url(browser, server) -> None:
    with socket.socket() as foreign:
        foreign.bind(("127.0.0.1", 0))
        foreign.listen(8)
        foreign.setblocking(False)
        elsewhere = f"http://127.0.0.1:{foreign.getsockname()[1]}/sparql"
        page, requests = open_page(browser, server)
        fragment = urllib.parse.urlencode({"endpoint": elsewhere, "query": "SELECT * WHERE { ?s ?p ?o } LIMIT 3"})
        page.goto(f"{server}/sparql#{fragment}")
        page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
        page.wait_for_timeout(500)
        assert page.evaluate("bibgraphYasgui.getTab().getEndpoint()") == f"{server}/sparql"
        assert "LIMIT 3" in page.evaluate("bibgraphYasgui.getTab().getQuery()")
        assert page.query_selector(".yasr tbody tr") is None  # opened in the editor, not run
        page.keyboard.press("Escape")
        page.evaluate("() => { bibgraphYasgui.getTab().query(); }")
        page.wait_for_selector(".yasr tbody tr", timeout=15000)
        assert [u for u in requests if not u.startswith(server)] == []
        with pytest.raises(BlockingIOError):
            foreign.accept()
        page.close()


def test_query_page_keeps_the_query_lets_tab_out_and_shows_plain_values(browser, server) -> None:
    page, requests = open_page(browser, server)
    page.goto(f"{server}/sparql")
    page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
    query = "SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a } GROUP BY ?a LIMIT 5"
    page.evaluate("(q) => { bibgraphYasgui.getTab().setQuery(q); }", query)
    page.reload()
    page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
    assert page.evaluate("bibgraphYasgui.getTab().getQuery()") == query
    page.click(".yasqe .CodeMirror")
    editor = "document.activeElement === bibgraphYasgui.getTab().getYasqe().getInputField()"
    assert page.evaluate(editor) is True
    page.keyboard.press("Tab")
    assert page.evaluate(editor) is False
    assert page.evaluate("bibgraphYasgui.getTab().getQuery()") == query  # no tab character typed
    page.evaluate("() => { bibgraphYasgui.getTab().query(); }")
    page.wait_for_selector(".yasr tbody tr", timeout=15000)
    cells = page.inner_text(".yasr tbody")
    assert "^^" not in cells and "xsd:" not in cells
    assert "author:" in cells  # IRIs in the graph's prefixes
    assert "<http" not in cells
    assert [u for u in requests if not u.startswith(server)] == []
    page.close()


def test_query_behind_a_page_opens_in_the_editor(browser, server) -> None:
    page, requests = open_page(browser, server)
    page.goto(server + page_kinds(server)["paper"])
    page.click("#query-link")
    page.wait_for_selector(".yasqe .CodeMirror", timeout=15000)
    page.wait_for_timeout(500)
    assert page.url.rstrip("/").endswith("/sparql")
    assert page.evaluate("bibgraphYasgui.getTab().getQuery()").count("CONSTRUCT") == 1
    assert page.query_selector(".yasr tbody tr, .yasr .CodeMirror") is None
    assert not any(u.startswith(f"{server}/sparql") and "query=" in u for u in requests)
    assert [u for u in requests if not u.startswith(server)] == []
    page.close()


def test_abstracts_are_bidi_isolated(browser, server) -> None:
    page, _ = open_page(browser, server)
    page.goto(f"{server}/search?q=" + urllib.parse.quote("نقترح"))
    page.click("ol.results a >> nth=0")
    page.wait_for_selector("#abstract")
    style = page.evaluate("(() => { const s = getComputedStyle(document.getElementById('abstract')); "
                          "return [s.direction, s.unicodeBidi]; })()")  # fmt: skip
    assert style == ["rtl", "isolate"]
    page.goto(server + page_kinds(server)["paper"])
    style = page.evaluate("getComputedStyle(document.getElementById('abstract')).direction")
    assert style == "ltr"
    page.close()


def test_profile_counts_and_citation_tags_in_the_browser(browser, server) -> None:
    page, _ = open_page(browser, server)
    key = person_key("Ke Wang")
    iri = f"{server}/author/{key}"
    rows = select(
        server,
        f"""SELECT (COUNT(DISTINCT ?p) AS ?papers) (SUM(IF(?n = 1 && ?l > 1, 1, 0)) AS ?first) WHERE {{
              ?p bg:authorship ?a ; bg:listedAuthorCount ?l . ?a prov:agent <{iri}> ; bg:authorPosition ?n }}""",
    )[0]
    page.goto(iri)
    assert page.inner_text("[data-count=papers]") == rows["papers"]
    assert page.inner_text("[data-count=first]") == rows["first"]
    page.click("#papers-heading ~ section ol a >> nth=0")
    page.wait_for_selector("#abstract")
    tags = page.evaluate("[...document.querySelectorAll('meta[name^=citation_]')].map(m => [m.name, m.content])")
    names = [value for name, value in tags if name == "citation_author"]
    assert "Ke Wang" in names and any(name == "citation_title" and value for name, value in tags)
    assert page.eval_on_selector("#cite-bibtex", "e => e.textContent").startswith("@misc{")
    page.close()
