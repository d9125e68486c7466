"""The views in a real browser (Playwright driving Debian's chromium): offline, counted, clickable, safe."""

import json
import re
import shutil
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from bench.servers import bibgraph_server, free_port
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.ingest.parse import parse_file
from bibgraph.graph.ingest.records import paper_id
from bibgraph.graph.networks import Filters
from bibgraph.seeds import seed_directory
from tests.network_oracle import authorships, coauthor_network, topic_map

pytestmark = pytest.mark.browser
HOSTILE = "<img src=x onerror=alert(1)>"
HREF_NAME = 'Ann href="javascript:alert(2)"'
ABSTRACT = "We show that <script>alert(3)</script> and **bold** text stay text. It works on benchmarks."
HOSTILE_LIST = f"论文检索\n\nSocial Aspects · Security\n\n{HOSTILE}, {HREF_NAME}, 王小明, محمد علي\n\n{ABSTRACT}\n"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("lists")
    for path in seed_directory().glob("*.txt"):
        shutil.copy(path, directory / path.name)
    (directory / "hostile.txt").write_text(HOSTILE_LIST, encoding="utf-8")
    return directory


@pytest.fixture(scope="module")
def server(inputs: Path, tmp_path_factory) -> Iterator[tuple[str, Path]]:
    port = free_port()
    log = tmp_path_factory.mktemp("log") / "serve.log"
    with bibgraph_server([str(inputs)], log, port=port) as base:
        yield base, inputs


@pytest.fixture(scope="module")
def expected(server) -> dict:
    base, inputs = server
    store, _ = build_graph([inputs], base=base + "/", progress=False)
    rows = authorships(store)
    return {
        "coauthors": coauthor_network(rows),
        "min2": coauthor_network(rows, Filters(min_papers=2)),
        "topics": topic_map(rows),
    }


class Watched:
    """A page that records console errors, page errors, dialogs and every request it makes."""

    def __init__(self, browser: Browser, base: str) -> None:
        self.page: Page = browser.new_page()
        self.base = base
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page.on("console", lambda m: m.type == "error" and self.errors.append(m.text))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))

    def open(self, path: str, ready: str = "body[data-network-ready]") -> Page:
        self.page.goto(self.base + path)
        self.page.wait_for_selector(ready, state="attached", timeout=15000)
        return self.page

    def assert_clean(self) -> None:
        outside = [u for u in self.requests if not u.startswith((self.base, "data:", "blob:"))]
        assert outside == [], outside
        assert self.errors == []
        assert self.dialogs == []

    def counts(self) -> tuple[int, int]:
        nodes, edges = self.page.evaluate("[bibgraphNetwork.nodes.length, bibgraphNetwork.edges.length]")
        return nodes, edges


def math_paper_path() -> str:
    """The page of the first seed paper whose abstract has LaTeX math."""
    for path in sorted(seed_directory().glob("*.txt")):
        for record in parse_file(path)[0]:
            if "$" in record.abstract:
                return f"/paper/{paper_id(record)}"
    raise AssertionError("the seeds have math")


def author_path(name: str) -> str:
    return f"author/{person_key(name)}"


@pytest.mark.parametrize(
    ("path", "key"),
    [("/graph/coauthors", "coauthors"), ("/graph/coauthors?min_papers=2", "min2"), ("/graph/topics", "topics")],
)
def test_view_counts_match_the_network(browser, server, expected, path: str, key: str) -> None:
    watched = Watched(browser, server[0])
    watched.open(path)
    network = expected[key]
    assert watched.counts() == (network.number_of_nodes(), network.number_of_edges())
    shown = watched.page.inner_text("#node-count"), watched.page.inner_text("#edge-count")
    assert shown == (str(network.number_of_nodes()), str(network.number_of_edges()))
    watched.assert_clean()


def test_filters_change_the_counts(browser, server, expected) -> None:
    watched = Watched(browser, server[0])
    watched.open("/graph/coauthors")
    everyone = watched.counts()
    watched.page.fill("input[name=min_papers]", "2")
    watched.page.click("form.filters button[type=submit]")
    watched.page.wait_for_url(re.compile(r"min_papers=2"))
    watched.page.wait_for_selector("body[data-network-ready]", state="attached")
    assert watched.counts() == (expected["min2"].number_of_nodes(), expected["min2"].number_of_edges())
    assert watched.counts()[0] < everyone[0]
    watched.assert_clean()


def test_ego_view(browser, server) -> None:
    watched = Watched(browser, server[0])
    watched.open(f"/graph/ego/{author_path('Ke Wang')}?radius=1")
    assert watched.counts()[0] == 7  # Ke Wang, Luwei Wang and the five other co-authors of their two papers
    watched.assert_clean()


def test_clicking_a_node_opens_the_side_panel_and_a_double_click_the_profile(browser, server) -> None:
    watched = Watched(browser, server[0])
    page = watched.open(f"/graph/ego/{author_path('Ke Wang')}?radius=1")
    node_id = f"{server[0]}/{author_path('Ke Wang')}"
    point = page.evaluate(
        """(id) => { const n = bibgraphNetwork.network; const p = n.getPositions([id])[id];
                     const d = n.canvasToDOM(p); const r = document.getElementById('network').getBoundingClientRect();
                     return [r.left + d.x, r.top + d.y]; }""",
        node_id,
    )
    page.mouse.click(point[0], point[1])
    page.wait_for_selector("#map-panel:not([hidden])")
    assert page.inner_text("#map-panel h2") == "Ke Wang"
    assert page.get_attribute("#map-panel .actions a", "href") == "/" + author_path("Ke Wang")
    page.mouse.dblclick(point[0], point[1])
    page.wait_for_url(re.compile(re.escape(author_path("Ke Wang")) + "$"))
    assert page.inner_text("h1") == "Ke Wang"
    watched.assert_clean()


def test_hostile_names_are_shown_as_text(browser, server) -> None:
    watched = Watched(browser, server[0])
    page = watched.open("/graph/coauthors?area=area/social-aspects")
    hostile_id = f"{server[0]}/{author_path(HOSTILE)}"
    assert page.evaluate("(id) => bibgraphNetwork.nodes.get(id).name", hostile_id) == HOSTILE
    point = page.evaluate(
        """(id) => { const n = bibgraphNetwork.network; const d = n.canvasToDOM(n.getPositions([id])[id]);
                     const r = document.getElementById('network').getBoundingClientRect();
                     return [r.left + d.x, r.top + d.y]; }""",
        hostile_id,
    )
    page.mouse.move(point[0], point[1])
    tooltip = page.wait_for_selector("div.vis-tooltip", state="visible", timeout=5000)
    assert HOSTILE in tooltip.inner_text()
    assert tooltip.query_selector("img") is None
    assert page.query_selector("img[src=x]") is None
    page.goto(f"{server[0]}/{author_path(HREF_NAME)}")
    assert page.inner_text("h1") == HREF_NAME
    assert page.query_selector("a[href^=javascript]") is None
    page.goto(f"{server[0]}/{author_path(HOSTILE)}")
    assert page.inner_text("h1") == HOSTILE
    watched.assert_clean()


def test_query_page_runs_offline(browser, server) -> None:
    watched = Watched(browser, server[0])
    page = watched.open("/sparql", ready=".yasqe .CodeMirror")
    page.click("#examples button >> nth=3")
    page.wait_for_selector(".yasr tbody tr", timeout=15000)
    query = page.evaluate("() => document.querySelector('.CodeMirror').CodeMirror.getValue()")
    request = urllib.request.Request(
        f"{server[0]}/sparql",
        data=urllib.parse.urlencode({"query": query}).encode(),
        headers={"Accept": "application/sparql-results+json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:  # the same query asked directly
        first = json.load(answer)["results"]["bindings"][0]
    shown = page.inner_text(".yasr")
    literals = [value["value"] for value in first.values() if value["type"] == "literal"]
    assert literals and all(literal in shown for literal in literals), (literals, shown[:300])
    watched.assert_clean()


@pytest.mark.parametrize(
    ("path", "check"),
    [
        ("/", "svg"),
        ("MATH_PAPER", ".katex"),
        (f"/{author_path('Oğuz Yüksel')}", "table"),
        ("/area/deep-learning", "ol"),
        ("/area/deep-learning/large-language-models", "ol"),
        ("/areas", "#area-tree li"),
        ("/dataset", "table"),
        ("/search?q=yuk", "ol.results li"),
        ("/download/", "table"),
    ],
)
def test_pages_open_cleanly(browser, server, tmp_path_factory, path: str, check: str) -> None:
    watched = Watched(browser, server[0])
    page = watched.page
    path = math_paper_path() if path == "MATH_PAPER" else path
    page.goto(server[0] + path)
    page.wait_for_load_state("load")
    page.wait_for_selector(check, state="attached", timeout=10000)
    shot = tmp_path_factory.mktemp("screenshots") / (re.sub(r"\W+", "_", path).strip("_") or "home")
    page.screenshot(path=f"{shot}.png", full_page=True)
    assert Path(f"{shot}.png").stat().st_size > 5000
    watched.assert_clean()


def test_math_is_rendered_and_hostile_abstracts_stay_text(browser, server) -> None:
    watched = Watched(browser, server[0])
    page = watched.page
    page.goto(f"{server[0]}/search?q=stay+text")
    page.click("ol.results a >> nth=0")
    page.wait_for_load_state("load")
    abstract = page.inner_text("#abstract")
    assert "<script>alert(3)</script>" in abstract
    assert page.query_selector("#abstract script") is None
    assert page.query_selector("#abstract strong").inner_text() == "bold"
    watched.assert_clean()


def test_cjk_and_right_to_left_names(browser, server) -> None:
    watched = Watched(browser, server[0])
    page = watched.page
    for name in ("محمد علي", "王小明"):
        page.goto(f"{server[0]}/{author_path(name)}")
        heading = page.query_selector("h1")
        assert heading.inner_text() == name
        assert heading.get_attribute("dir") == "auto"
        direction = page.evaluate("(el) => getComputedStyle(el).direction", heading)
        assert direction == ("rtl" if name.startswith("م") else "ltr")
    watched.assert_clean()
