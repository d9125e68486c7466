"""The UI review's findings in a real browser (Playwright + Debian's chromium): what a reader sees."""

import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from bench.servers import bibgraph_server
from bench.serving.screenshots import RESULTS_QUERY
from bibgraph.graph.site.pagedata import TreeArea, histogram_bins
from tests.conftest import BASE

pytestmark = pytest.mark.browser
STATIC = Path(__file__).resolve().parents[3] / "web" / "static"
SIZES = [(1440, 900), (390, 844)]


def _chart_page(browser: Browser, app, width: int, height: int, counts: list[tuple[int, int]], log: bool):
    """The home page's histogram macro alone, with the site's CSS, at a screen size."""
    with app.test_request_context("/"):
        macro = app.jinja_env.get_template("_charts.html").module.histogram
        svg = str(macro("Co-author degree distribution", histogram_bins(counts), "distinct co-authors", "authors", log))
    page = browser.new_page(viewport={"width": width, "height": height})
    css = (STATIC / "site.css").read_text(encoding="utf-8")
    page.set_content(f'<!doctype html><html lang="en"><head><style>{css}</style></head><body><main>{svg}</main></body>')
    return page


@pytest.mark.parametrize("high", [5, 30, 299, 1313, 25_000, 1_200_000])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_histogram_x_labels_never_overlap_and_stay_in_the_chart(browser, app, high, width, height) -> None:
    """The degree histogram of a 10k corpus (degrees up to 1,313) labelled every fourth bin of 24: "220-274",
    "440-494"... ran into each other; the labels are spaced by their width."""
    counts = [(0, 5000), (1, 900), (high // 3, 4), (high, 1)]
    page = _chart_page(browser, app, width, height, counts, log=True)
    boxes = page.evaluate(
        """() => { const svg = document.querySelector('svg.histogram').getBoundingClientRect();
                   return [...document.querySelectorAll('svg.histogram text.tick')]
                     .map(t => { const r = t.getBoundingClientRect();
                                 return {text: t.textContent, x: r.x, y: r.y, w: r.width, h: r.height,
                                         inside: r.left >= svg.left - 0.5 && r.right <= svg.right + 0.5}; }); }"""
    )
    x_labels = [b for b in boxes if b["y"] > max(c["y"] for c in boxes) - 1]  # the bottom row
    assert len(x_labels) >= 2, x_labels
    assert all(b["inside"] for b in boxes), [b["text"] for b in boxes if not b["inside"]]
    ordered = sorted(x_labels, key=lambda b: b["x"])
    for left, right in itertools.pairwise(ordered):
        assert left["x"] + left["w"] <= right["x"], f"{left['text']!r} runs into {right['text']!r} at {width} px"
    page.close()


@pytest.fixture(scope="module")
def server(seed_server: str) -> str:
    return seed_server


def _query_page(browser: Browser, server: str, width: int, height: int = 900):
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{server}/sparql")
    page.wait_for_selector(".yasqe .CodeMirror", timeout=20000)
    return page


def test_query_results_give_every_column_a_readable_width_on_a_desktop(browser, server) -> None:
    """At 1440 px the abstracts took the whole table and the paper and label columns were cut to "pa…"."""
    page = _query_page(browser, server, 1440)
    page.evaluate("(q) => { const t = bibgraphYasgui.getTab(); t.setQuery(q); t.query(); }", RESULTS_QUERY)
    page.wait_for_selector(".yasr tbody tr", timeout=20000)
    widths = page.evaluate(
        """() => [...document.querySelector('.yasr tbody tr').children].slice(1).map(td => {
                 const div = td.firstElementChild;
                 return [div.getBoundingClientRect().width / parseFloat(getComputedStyle(div).fontSize),
                         div.textContent.slice(0, 20)]; })"""
    )
    assert len(widths) == 3
    assert all(em >= 8.5 - 0.01 for em, _ in widths), widths
    page.close()


# A query that shows every kind of token the editor colours: keywords, variables, prefixed names, IRIs,
# strings, numbers, language tags, comments, brackets, functions.
TOKENS = """PREFIX dcterms: <http://purl.org/dc/terms/>
# papers with a short abstract
SELECT ?paper (STRLEN(?abstract) AS ?length) WHERE {
  ?paper dcterms:abstract ?abstract .
  FILTER (STRLEN(?abstract) < 2000 && LANG(?abstract) != "en"@en)
} ORDER BY ?length LIMIT 10"""


def test_the_query_editor_text_has_enough_contrast(browser, server) -> None:
    """CodeMirror's default colours: line numbers #999 (2.8:1 on white), prefixed names #f50 (3.2:1)."""
    page = _query_page(browser, server, 1440)
    page.evaluate("(q) => { bibgraphYasgui.getTab().setQuery(q); }", TOKENS)
    page.wait_for_timeout(200)
    low = json.loads(
        page.evaluate(
            """() => {
          const rgb = s => s.match(/[\\d.]+/g).map(Number);
          const linear = v => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
          const lum = c => c.slice(0, 3).map(linear).reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
          const background = e => { for (; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
                                      if (c.length < 4 || c[3] > 0.5) return c; } return [255, 255, 255]; };
          const cells = document.querySelectorAll('.yasqe .CodeMirror-code span, .yasqe .CodeMirror-linenumber');
          return JSON.stringify([...cells].filter(e => e.textContent.trim() && !e.children.length).map(e => {
            const a = lum(rgb(getComputedStyle(e).color)), b = lum(background(e));
            return [(Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), e.getAttribute('class'), e.textContent];
          }).filter(([ratio]) => ratio < 4.5));
        }"""
        )
    )
    assert low == [], low
    page.close()


LABEL_PLACES = """() => {
  const n = bibgraphNetwork.network, scale = n.getScale(), positions = n.getPositions();
  const box = document.getElementById('network');
  const discs = bibgraphNetwork.nodes.get().map(node => {
    const at = n.canvasToDOM(positions[node.id]);
    return {id: node.id, cx: at.x, cy: at.y, r: node.size * scale};
  });
  return {width: box.clientWidth, height: box.clientHeight, discs: discs, labels: bibgraphNetwork.labels()};
}"""


def _overlaps(a: dict, b: dict) -> bool:
    across = a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
    return across and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]


def _covers_a_disc(box: dict, discs: list[dict], own: str) -> bool:
    return any(
        _overlaps(box, {"x": d["cx"] - d["r"], "y": d["cy"] - d["r"], "w": 2 * d["r"], "h": 2 * d["r"]})
        for d in discs
        if d["id"] != own
    )


@pytest.mark.parametrize(
    "path", ["/graph/topics?subareas=all", "/graph/ego/author/ziniu-li-ce31ebeb?radius=2", "/graph/coauthors"]
)
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_label_covers_a_node_only_when_no_clear_place_is_left(browser, server, path, width, height) -> None:
    """A label was put on the first free place (below the node) even when it covered another node there and
    the place above, right or left was clear: on the topic and ego maps names sat on discs."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + path)
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=20000)
    drawn = page.evaluate(LABEL_PLACES)
    discs = {d["id"]: d for d in drawn["discs"]}
    assert drawn["labels"]
    for index, label in enumerate(drawn["labels"]):
        if not _covers_a_disc(label, drawn["discs"], label["id"]):
            continue
        node, w, h = discs[label["id"]], label["w"], label["h"]
        along = max(0, min(drawn["width"] - w, node["cx"] - w / 2))  # below and above slide to stay in the frame
        places = [
            (along, node["cy"] + node["r"] + 1),
            (along, node["cy"] - node["r"] - 1 - h),
            (node["cx"] + node["r"] + 2, node["cy"] - h / 2),
            (node["cx"] - node["r"] - 2 - w, node["cy"] - h / 2),
        ]
        for x, y in places:
            place = {"x": x, "y": y, "w": w, "h": h}
            if x < 0 or x + w > drawn["width"] or y < 0 or y + h > drawn["height"]:
                continue
            blocked = _covers_a_disc(place, drawn["discs"], label["id"]) or any(
                _overlaps(place, earlier) for earlier in drawn["labels"][:index]
            )
            assert blocked, f"{label['text']!r} covers a node though {place} was clear ({path}, {width} px)"
    page.close()


@pytest.mark.parametrize("high", [54, 12_259, 121_593, 1_200_000])
@pytest.mark.parametrize(("width", "height"), SIZES)
def test_area_counts_stay_on_one_line_beside_their_bars(browser, app, high, width, height) -> None:
    """At 100k papers an area's count ("12,259") wrapped into "12,25" over "9" on a phone, its column sized for
    the seeds' counts: every count, up to a million papers', is one line inside the page, right-aligned."""
    tree = [
        TreeArea(
            f"{BASE}area/a{n}", f"Area {n}", high // (n + 1), 1, [TreeArea(f"{BASE}area/s{n}", "Sub", high // 9, 1)]
        )
        for n in range(3)
    ]
    with app.test_request_context("/"):
        html = str(app.jinja_env.get_template("_charts.html").module.area_bars("Papers per area", tree))
    page = browser.new_page(viewport={"width": width, "height": height})
    css = (STATIC / "site.css").read_text(encoding="utf-8")
    page.set_content(f'<!doctype html><html lang="en"><head><style>{css}</style></head><body><main>{html}</main>')
    values = page.evaluate(
        """() => [...document.querySelectorAll('.bar-value')].map(v => { const r = v.getBoundingClientRect();
                   return {text: v.textContent, h: r.height, line: parseFloat(getComputedStyle(v).lineHeight)
                           || 1.5 * parseFloat(getComputedStyle(v).fontSize), right: r.right,
                           cut: v.scrollWidth > v.clientWidth + 1}; })"""
    )
    assert len(values) == 6
    for value in values:
        assert value["h"] < 1.5 * value["line"], f"{value['text']} wraps at {width} px"
        assert value["right"] <= width and not value["cut"], f"{value['text']} runs out at {width} px"
    rights = {round(value["right"]) for value in values}
    assert len(rights) == 1, f"counts are not right-aligned: {rights}"
    page.close()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_area_names_on_the_home_page_are_shown_whole(browser, server, width, height) -> None:
    """The bars' labels were cut with an ellipsis ("Search, Sampli…" on a phone, "Discrete and Combinatorial
    Opti…" on a desktop), their whole name only in a hover title that phones never show."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(f"{server}/")
    cut = page.evaluate(
        """() => [...document.querySelectorAll('.bar-label')]
                 .filter(a => a.scrollWidth > a.clientWidth + 1 || a.scrollHeight > a.clientHeight + 1)
                 .map(a => a.textContent)"""
    )
    labels = page.locator(".bar-label").count()
    assert labels > 10 and cut == [], cut
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.close()


def test_on_a_phone_the_coauthor_map_starts_on_the_first_screen_with_its_filters_a_tap_away(browser, server) -> None:
    """The filters (seven fields) took the phone's first screen: the map began below it."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server}/graph/coauthors?min_papers=1&weighting=full")
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=20000)
    top = page.evaluate("document.getElementById('network').getBoundingClientRect().top")
    assert top <= 844 - 300, f"the map starts at {top} px: less than 300 px of it on the first screen"
    assert page.inner_text("#map-filters summary") == "Filters (1 set)"
    assert not page.is_visible("#filter-area")
    page.click("#map-filters summary")
    page.select_option("#filter-area", index=1)
    page.click("#map-filters button[type=submit]")
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=20000)
    assert "area=" in page.url and page.inner_text("#map-filters summary") == "Filters (2 set)"
    page.close()
    desktop = browser.new_page(viewport={"width": 1440, "height": 900})
    desktop.goto(f"{server}/graph/coauthors")
    assert desktop.is_visible("#filter-area") and not desktop.is_visible("#map-filters summary")
    desktop.close()


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Iterator[str]:
    """A server over 600 generated papers: enough shared authors for the topic map's links."""
    from bench.generate import write_lists

    lists = tmp_path_factory.mktemp("generated")
    write_lists(lists, 600)
    with bibgraph_server([str(lists)], tmp_path_factory.mktemp("log") / "serve.log") as base:
        yield base


def test_the_topic_maps_panel_speaks_of_topics_not_co_authors(browser, generated) -> None:
    """A click on a topic opened the co-author panel: "Top co-authors on this map", "1,106 joint", "Profile"."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"{generated}/graph/topics?subareas=all")
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=20000)
    name = page.evaluate(
        """() => { const linked = new Map();  // topics by their links of shared authors (dashed)
                   for (const e of bibgraphNetwork.edges.get()) if (e.joint !== undefined)
                     for (const end of [e.from, e.to]) linked.set(end, (linked.get(end) || 0) + 1);
                   const id = [...linked].sort((a, b) => b[1] - a[1])[0][0];
                   bibgraphNetwork.select(id, true); return bibgraphNetwork.nodes.get(id).name; }"""
    )
    page.wait_for_selector("#map-panel:not([hidden])")
    panel = page.inner_text("#map-panel")
    assert panel.startswith("×") and name in panel
    assert "Linked topics on this map" in panel and "co-author" not in panel and "joint" not in panel
    assert "shared author" in panel and page.inner_text("#map-panel .actions") == "Area page"
    counted = ["shared author" in item for item in page.locator("#map-panel ol li").all_inner_texts()]
    assert any(counted) and counted == sorted(counted)  # area and subareas first, without a count
    page.close()


def test_on_a_phone_the_filters_stay_open_when_no_author_matches(browser, server) -> None:
    """With no map to show, the folded filters hid the one thing to change."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(f"{server}/graph/coauthors?min_papers=999")
    assert "No authors match" in page.inner_text(".map-empty")
    assert page.is_visible("#filter-area") and page.is_visible("#map-filters button[type=submit]")
    page.close()


@pytest.mark.parametrize("path", ["/graph/topics", "/graph/topics?subareas=all"])
def test_on_a_phone_an_area_of_the_topic_map_is_named_or_found(browser, generated, path) -> None:
    """Big areas near the frame's side had no name on a phone: centred under the node, their label ran out of
    the frame, so it was dropped; it now slides along the side. An area with no place clear of other topics' discs
    goes unnamed (a name on a subarea's ring hid it): the find box still finds it."""
    page = browser.new_page(viewport={"width": 390, "height": 844})
    page.goto(generated + path)
    page.wait_for_selector("body[data-network-ready]", state="attached", timeout=60000)
    areas, unnamed = page.evaluate(
        """() => { const named = new Set(bibgraphNetwork.labels().map(b => b.id));
                   const areas = bibgraphNetwork.nodes.get().filter(n => n.url.split('/').length === 3);
                   return [areas.length, areas.filter(n => !named.has(n.id)).map(n => n.name)]; }"""
    )
    assert len(unnamed) < areas, unnamed  # some are named (on a 390 px phone with every subarea, 3-5 of 8 not)
    for name in unnamed:
        page.fill("#find-author", name)
        page.press("#find-author", "Enter")
        assert page.locator("#map-panel h2").inner_text() == name
    page.close()


@pytest.mark.parametrize("path", ["/graph/path", "/author/ziniu-li-ce31ebeb"])
def test_path_inputs_are_not_bold_like_their_labels(browser, server, path) -> None:
    """The path form's placeholder ("author name or IRI") was bold, as if already typed."""
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(server + path)
    weights = page.evaluate(
        "[...document.querySelectorAll('.path-form input:not([type=hidden])')].map(i => getComputedStyle(i).fontWeight)"
    )
    assert weights and all(int(weight) == 400 for weight in weights), weights
    page.close()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_profiles_two_ego_links_read_as_one_line(browser, server, width, height) -> None:
    """The Maps list spreads each row's parts to its ends (a label left, a count right): "Ego network · two steps
    out" was spread the same, its "·" alone in the middle of a phone's width; the two links stay together."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + "/author/ziniu-li-ce31ebeb")
    ego, out = (
        page.locator("#maps-heading + .link-list a", has_text=text).first.bounding_box()
        for text in ("Ego network", "two steps out")
    )
    assert ego is not None and out is not None
    assert abs(ego["y"] - out["y"]) < 2 and 0 <= out["x"] - (ego["x"] + ego["width"]) < 40, (ego, out)
    page.close()


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_a_profiles_sections_are_reached_from_the_first_screen(browser, server, width, height) -> None:
    """On a phone the profile is one column: its areas, co-authors and maps came after a page of up to 100 papers
    (12,000 px for the most prolific author at 100k papers); links on the first screen reach them. On a desktop
    they stand beside the papers, and no such links are shown."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server + "/author/ziniu-li-ce31ebeb")
    side = page.locator("#coauthors-heading").bounding_box()
    assert side is not None
    links = page.locator("nav.on-page a")
    if width > 860:
        assert not links.first.is_visible() and side["y"] < 3 * height
        page.close()
        return
    assert links.count() == 4 and all(links.nth(n).is_visible() for n in range(4))
    assert (links.first.bounding_box() or {"y": height})["y"] < height
    for name, heading in (("Co-authors", "#coauthors-heading"), ("Maps", "#maps-heading")):
        links.filter(has_text=name).click()
        page.wait_for_timeout(100)
        box = page.locator(heading).bounding_box()
        assert box is not None and 0 <= box["y"] < height, (name, box)
    page.close()
