"""The maps in a real browser: culled labels, legend, find author, side panel, ego, path, empty state, phones."""

import re

import networkx as nx
import pytest
from playwright.sync_api import Browser, Page

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.ingest.names import person_key
from bibgraph.seeds import seed_directory
from tests.network_oracle import authorships, bipartite_graph, joint_papers

pytestmark = pytest.mark.browser
READY = "body[data-network-ready]"


@pytest.fixture(scope="module")
def base(seed_server: str) -> str:
    return seed_server


@pytest.fixture(scope="module")
def papers_and_authors(base) -> nx.Graph:
    store, _ = build_graph([seed_directory()], base=base + "/", progress=False)
    return bipartite_graph(authorships(store))


def open_map(browser: Browser, url: str, width: int = 1440, height: int = 900) -> Page:
    page = browser.new_page(viewport={"width": width, "height": height})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(url)
    page.wait_for_selector(READY, state="attached", timeout=15000)
    page.errors = errors  # type: ignore[attr-defined]
    return page


def labels_at(page: Page, factor: float) -> list[dict]:
    """The label boxes drawn after zooming to ``factor`` times the fitted scale."""
    return page.evaluate(
        """(factor) => { const n = bibgraphNetwork.network; n.fit({maxZoomLevel: 1.6, animation: false});
                         n.moveTo({scale: n.getScale() * factor, animation: false}); n.redraw();
                         return bibgraphNetwork.labels(); }""",
        factor,
    )


def overlapping(boxes: list[dict]) -> list[tuple[str, str]]:
    return [
        (a["text"], b["text"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and a["y"] < b["y"] + b["h"]
        and b["y"] < a["y"] + a["h"]
    ]


def node_point(page: Page, node_id: str) -> tuple[float, float]:
    """Where a node is drawn, relative to the map's top-left corner."""
    point = page.evaluate(
        "(id) => { const n = bibgraphNetwork.network; return n.canvasToDOM(n.getPositions([id])[id]); }", node_id
    )
    return point["x"], point["y"]


def map_centre(page: Page) -> tuple[float, float]:
    box = page.locator("#network").bounding_box()
    return box["width"] / 2, box["height"] / 2


def test_more_labels_appear_as_you_zoom_in_and_none_overlap(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    counts = []
    for factor in (0.3, 0.6, 1.0):
        boxes = labels_at(page, factor)
        assert overlapping(boxes) == []
        assert all(box["text"] for box in boxes)
        counts.append(len(boxes))
    nodes = page.evaluate("bibgraphNetwork.nodes.length")
    assert 0 < counts[0] < counts[1] < counts[2] <= nodes, counts
    assert page.errors == []


def test_the_legend_names_communities_after_people_or_areas(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    legend = page.inner_text("#legend")
    assert "size: papers" in legend and "colour: community" in legend and "width: joint papers" in legend
    names = page.locator("#legend .communities li").all_inner_texts()
    assert len(names) > 3
    assert not any(re.search(r"community \d", name, re.I) for name in names)
    largest = page.evaluate(
        """() => { const c = bibgraphNetwork.nodes.get().filter(n => n.community === 0);
                   c.sort((a, b) => b.papers - a.papers || (a.name < b.name ? -1 : 1)); return c[0].name; }"""
    )
    assert names[0].startswith(largest)


def test_find_author_centres_selects_and_opens_the_panel(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    page.fill("#find-author", "ziniu l")
    page.press("#find-author", "Enter")
    page.wait_for_selector("#map-panel:not([hidden])")
    node_id = f"{base}/author/{person_key('Ziniu Li')}"
    assert node_point(page, node_id) == pytest.approx(map_centre(page), abs=2)
    assert page.evaluate("bibgraphNetwork.network.getSelectedNodes()") == [node_id]
    assert page.inner_text("#map-panel h2") == "Ziniu Li"
    assert "paper" in page.inner_text("#map-panel .facts")
    assert page.locator("#map-panel ol li").count() > 0
    page.keyboard.press("Escape")  # closes the panel, as the × button does
    page.wait_for_selector("#map-panel", state="hidden")
    assert page.evaluate("bibgraphNetwork.network.getSelectedNodes()") == []
    assert page.errors == []


def test_the_wheel_scrolls_the_page_until_the_map_has_focus(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors", height=700)
    box = page.locator("#network").bounding_box()
    scale = page.evaluate("bibgraphNetwork.network.getScale()")
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 20)
    page.mouse.wheel(0, 300)
    page.wait_for_function("() => window.scrollY > 0")  # a function: an expression is eval-ed, which the CSP forbids
    assert page.evaluate("bibgraphNetwork.network.getScale()") == scale
    page.locator("#network").focus()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2 - page.evaluate("window.scrollY"))
    page.mouse.wheel(0, -300)
    page.wait_for_function(f"() => bibgraphNetwork.network.getScale() !== {scale}")


def test_empty_filters_say_no_authors_match(browser, base) -> None:
    page = browser.new_page()
    response = page.goto(base + "/graph/coauthors?min_papers=999")
    assert response.status == 200
    assert "No authors match" in page.inner_text(".map-empty")
    assert page.locator("#network").count() == 0


def test_the_ego_is_marked_and_centred_with_its_top_coauthors(browser, base, papers_and_authors) -> None:
    ego = f"{base}/author/{person_key('Ziniu Li')}"
    joint = joint_papers(papers_and_authors, ego)
    page = open_map(browser, f"{base}/graph/ego/author/{person_key('Ziniu Li')}?top=3")
    marked = page.evaluate("bibgraphNetwork.nodes.get().filter(n => n.ego).map(n => [n.id, n.borderWidth])")
    assert marked == [[ego, 5]]
    assert node_point(page, ego) == pytest.approx(map_centre(page), abs=2)
    drawn = set(page.evaluate("bibgraphNetwork.nodes.getIds()")) - {ego}
    assert len(drawn) == 3
    assert min(joint[a] for a in drawn) >= max(joint[a] for a in set(joint) - drawn)
    assert "Showing the 3 of Ziniu Li's" in page.inner_text(".note")
    assert page.get_attribute("form.filters a", "href") == f"/author/{person_key('Ziniu Li')}"


def test_the_embedded_ego_opens_a_coauthor_in_the_whole_window(browser, base) -> None:
    page = browser.new_page()
    page.goto(f"{base}/author/{person_key('Ke Wang')}")
    frame = page.frame_locator("iframe.ego")
    frame.locator(READY).wait_for(state="attached")
    inner = next(f for f in page.frames if "embed=1" in f.url)
    other = f"{base}/author/{person_key('Luwei Wang')}"
    point = inner.evaluate(
        "(id) => { const n = bibgraphNetwork.network; return n.canvasToDOM(n.getPositions([id])[id]); }", other
    )
    inner.locator("#network").click(position=point)
    page.wait_for_url(other)
    assert page.inner_text("h1") == "Luwei Wang"


def test_the_path_is_a_chain_with_its_papers_and_distance(browser, base, papers_and_authors) -> None:
    authors = sorted(n for n, d in papers_and_authors.nodes(data=True) if d["bipartite"])
    lengths = nx.single_source_shortest_path_length(papers_and_authors, authors[0])
    far = next(a for a in authors if lengths.get(a) == 4)  # two co-author steps away
    chain = nx.shortest_path(papers_and_authors, authors[0], far)
    names = [papers_and_authors.nodes[a]["name"] for a in chain[::2]]
    page = browser.new_page()
    page.goto(base + "/graph/path")
    page.fill("input[name=from]", names[0])
    page.fill("input[name=to]", far.rsplit("/", 2)[-2] + "/" + far.rsplit("/", 1)[-1])  # an app path works too
    page.click("form.path-form button")
    page.wait_for_selector("#chain")
    assert page.locator("#chain li.author").all_inner_texts() == names
    assert page.locator("#chain li.paper a").count() == 2
    assert page.inner_text("#distance") == "2"
    page.goto(base + "/graph/path?from=Nobody+Atall&to=" + names[0])
    assert "No such author: “Nobody Atall”" in page.inner_text(".problem")
    lonely = next(a for a in authors if a not in lengths)
    page.goto(f"{base}/graph/path?from={names[0]}&to={papers_and_authors.nodes[lonely]['name']}")
    assert "not connected" in page.inner_text(".problem")


@pytest.mark.parametrize(
    "path",
    [
        "/graph/coauthors",
        "/graph/topics?subareas=all",
        "/graph/ego/author/KEY?radius=2",
        "/graph/path?from=Ke+Wang&to=Luwei+Wang",
    ],
)
def test_no_horizontal_overflow_on_a_phone(browser, base, path: str) -> None:
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(base + path.replace("KEY", person_key("Ziniu Li")))
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390


def test_a_slow_download_shows_a_loading_bar(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    page.route("**/graph/coauthors.graphml*", lambda route: None)  # never answered: a download that takes long
    page.click("a[data-download]:text('graphml')")
    bar = page.wait_for_selector(".loading-bar:not([hidden])", timeout=5000)
    assert "download" in bar.inner_text()
    assert page.evaluate("getComputedStyle(document.querySelector('.loading-bar')).position") == "fixed"
    assert page.errors == []


def test_every_topic_of_the_seeds_topic_map_has_its_name(browser, base) -> None:
    """On the fitted topic map (8 areas), a topic hemmed in on four sides by bigger ones had no name at all: its
    corners are tried after below, above, right and left (Imhof's order), and one of them was free."""
    page = open_map(browser, base + "/graph/topics")
    boxes = labels_at(page, 1.0)
    assert overlapping(boxes) == []
    names = page.evaluate("bibgraphNetwork.nodes.get().map(n => n.name)")
    assert sorted(box["text"] for box in boxes) == sorted(names)
    assert page.errors == []
