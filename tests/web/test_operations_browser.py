"""On a 390 px phone in a real browser: the degree histogram on a log scale, SPARQL syntax errors with all
that the engine expects, YASGUI's result cells whole (Playwright + Debian's chromium)."""

import math
import re
import urllib.parse
from collections.abc import Iterator

import pytest

from bench.servers import bibgraph_server
from bibgraph.graph.sparql.expected import explain

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
BROKEN = "SELECT (COUNT(?p) ?n) WHERE {\n  ?p ?x ?y .\n}"  # Oxigraph: "expected DISTINCT"


@pytest.fixture(scope="module")
def server(seed_server: str) -> str:
    return seed_server


def _phone_page(browser):
    page = browser.new_page(viewport=PHONE)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, errors


def test_degree_histogram_is_log_scaled_with_labelled_ticks(browser, server) -> None:
    page, errors = _phone_page(browser)
    page.goto(f"{server}/")
    chart = page.locator("svg.histogram", has_text="distinct co-authors")
    assert "log scale" in (chart.text_content() or "")
    bars = chart.locator("g").evaluate_all(
        """groups => groups.map(g => [g.querySelector('title').textContent,
                                      g.querySelector('rect').getBoundingClientRect().height])"""
    )
    counts = [(int(re.search(r": ([\d,]+) authors?\b", t).group(1).replace(",", "")), height) for t, height in bars]
    shown = [(count, height) for count, height in counts if count]
    assert len(shown) >= 3
    top_count, top_height = max(shown)
    for count, height in shown:  # height ∝ log10(1 + count): a bin of one author is still a bar
        assert height == pytest.approx(top_height * math.log10(1 + count) / math.log10(1 + top_count), abs=1.0)
        assert height >= 3, (count, height)
    ticks = chart.locator("text.tick").all_text_contents()
    assert {"1", "10"} <= set(ticks)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert errors == []
    page.close()


def test_syntax_error_page_lists_everything_expected_on_a_phone(browser, server) -> None:
    page, errors = _phone_page(browser)
    page.goto(f"{server}/sparql?" + urllib.parse.urlencode({"query": BROKEN}))
    problem = explain(BROKEN)
    assert problem is not None and len(problem.expected) > 5
    listed = page.locator("#expected li").all_inner_texts()
    assert listed == list(problem.expected)  # all of it, in the engine's order
    assert "DISTINCT" not in listed and "AS" in listed
    assert page.locator("#error-position").inner_text() == "?"  # the mark is on ?n, the token it cannot read
    assert "line 1, column 19" in page.locator("#error-message").inner_text()
    box = page.locator("#expected").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert errors == []
    page.close()


def test_syntax_error_in_the_editor_names_everything_expected(browser, server) -> None:
    page, errors = _phone_page(browser)
    page.goto(f"{server}/sparql")
    page.wait_for_selector(".yasqe .CodeMirror", timeout=20000)
    page.evaluate("(q) => { const t = bibgraphYasgui.getTab(); t.setQuery(q); t.query(); }", BROKEN)
    page.wait_for_selector(".yasr .errorResult", timeout=20000)
    shown = page.locator(".yasr .errorResult").inner_text()
    assert "line 1, column 19" in shown and "AS" in shown and "&&" in shown
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert all(error.startswith("query syntax error") for error in errors)  # YASGUI rethrows the 400
    page.close()


def test_result_cells_are_whole_and_readable_on_a_phone(browser, server) -> None:
    page, errors = _phone_page(browser)
    page.goto(f"{server}/sparql")
    page.wait_for_selector(".yasqe .CodeMirror", timeout=20000)
    query = (
        "SELECT ?paper ?label ?abstract WHERE { ?paper <http://www.w3.org/2000/01/rdf-schema#label> ?label ;"
        " <http://purl.org/dc/terms/abstract> ?abstract } LIMIT 3"
    )
    page.evaluate("(q) => { const t = bibgraphYasgui.getTab(); t.setQuery(q); t.query(); }", query)
    page.wait_for_selector(".yasr tbody tr", timeout=20000)
    cells = page.evaluate(
        """() => [...document.querySelectorAll('.yasr tbody td:not(:first-child) > div')].map(d => ({
             text: d.textContent, cut: d.scrollWidth > d.clientWidth + 1 || d.scrollHeight > d.clientHeight + 1,
             width: d.getBoundingClientRect().width, ellipsis: getComputedStyle(d).textOverflow === 'ellipsis'
               && getComputedStyle(d).overflow !== 'visible' }))"""
    )
    assert len(cells) == 9
    assert not [c["text"][:40] for c in cells if c["cut"] or c["ellipsis"]]  # every value shown whole
    assert min(c["width"] for c in cells) >= 120  # columns wide enough to read (8.5em), not a few letters
    assert any(len(c["text"]) > 500 for c in cells)  # the abstracts really are long
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]  # the table scrolls, not the page
    assert errors == []
    page.close()


@pytest.fixture(scope="module")
def proxied(tmp_path_factory) -> Iterator[str]:
    """``serve --proxy-hops 1``; the browser reaches it at ``/bib/`` through a pretend proxy (see behind_proxy)."""
    with bibgraph_server(["--proxy-hops", "1"], tmp_path_factory.mktemp("log") / "serve.log") as base:
        yield base


def behind_proxy(browser, base: str):
    """A page whose requests to ``BASE/bib/…`` are forwarded as nginx would (prefix stripped,
    ``X-Forwarded-Prefix: /bib``); it records every request that left the prefix."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    escaped: list[str] = []
    errors: list[str] = []

    def forward(route) -> None:
        url = route.request.url.replace(f"{base}/bib/", f"{base}/", 1)
        route.fulfill(response=route.fetch(url=url, headers={**route.request.headers, "x-forwarded-prefix": "/bib"}))

    page.route(f"{base}/bib/**", forward)
    page.on("request", lambda r: escaped.append(r.url) if r.url.startswith(base) and "/bib/" not in r.url else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    return page, escaped, errors


def test_map_panel_and_loading_bar_stay_under_the_proxys_prefix(browser, proxied) -> None:
    page, escaped, errors = behind_proxy(browser, proxied)
    page.goto(f"{proxied}/bib/graph/coauthors")
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=20000)
    page.fill("#find-author", "ziniu l")
    page.press("#find-author", "Enter")
    page.wait_for_selector("#map-panel:not([hidden])")
    links = page.locator("#map-panel .actions a").evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert links and all(link.startswith("/bib/") for link in links), links
    assert any(link.startswith("/bib/graph/ego/author/") for link in links), links
    page.route("**/coauthors.graphml*", lambda route: None)  # a download that never ends: the bar shows
    page.click("a[data-download]:text('graphml')")
    assert "download" in page.wait_for_selector(".loading-bar:not([hidden])", timeout=5000).inner_text()
    profile = next(link for link in links if link.startswith("/bib/author/"))
    page.goto(f"{proxied}{profile}")
    assert page.locator("h1").inner_text() == "Ziniu Li"
    canonical = page.locator("link[rel=canonical]").get_attribute("href")
    assert canonical == f"{proxied}{profile}"  # the public URL the proxy named, prefix included
    assert escaped == [] and errors == []
    # requests still in flight (the map's data of the page left) must not be fulfilled into a closed page
    page.unroute_all(behavior="ignoreErrors")
    page.close()
