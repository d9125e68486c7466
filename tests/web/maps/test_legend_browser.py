"""The co-author map's legend picks out a community; the tooltip keeps clear of the side panel."""

import pytest

from tests.web.maps.test_maps_browser import open_map

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def base(seed_server: str) -> str:
    return seed_server


def opacities(page) -> dict[int, set[float]]:
    """Each community's node opacities as drawn."""
    return page.evaluate(
        """() => { const out = {}; for (const n of bibgraphNetwork.nodes.get()) {
             (out[n.community] = out[n.community] || new Set()).add(n.opacity === undefined ? 1 : n.opacity); }
           return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v]])); }"""
    )


def test_a_legend_entry_picks_out_its_community_and_a_second_click_shows_all(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    buttons = page.locator("#legend button.community")
    assert buttons.count() >= 2
    second = buttons.nth(1)
    picked = int(second.get_attribute("data-community"))
    second.click()
    assert second.get_attribute("aria-pressed") == "true"
    drawn = opacities(page)
    assert drawn[str(picked)] == [1]
    assert all(values == [0.12] for community, values in drawn.items() if community != str(picked))
    hidden = page.evaluate(
        """(c) => bibgraphNetwork.edges.get().filter(e => !e.hidden).every(e =>
             bibgraphNetwork.nodes.get(e.from).community === c && bibgraphNetwork.nodes.get(e.to).community === c)""",
        picked,
    )
    assert hidden  # only the community's own links stay drawn
    named = page.evaluate("() => bibgraphNetwork.labels().map(box => bibgraphNetwork.nodes.get(box.id).community)")
    assert named and set(named) == {picked}  # the faded ones keep no label
    box = page.locator("#network").bounding_box()
    page.mouse.move(box["x"] + 5, box["y"] + 5)  # hover elsewhere and away: the pick holds
    assert opacities(page)[str(picked)] == [1]
    second.click()
    assert all(values == [1] for values in opacities(page).values())
    assert second.get_attribute("aria-pressed") == "false"
    assert page.errors == []  # type: ignore[attr-defined]


def test_the_tooltip_never_overlaps_the_side_panel(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    ids = page.evaluate("() => bibgraphNetwork.nodes.getIds()")
    page.evaluate("(id) => bibgraphNetwork.select(id, true)", ids[0])
    panel = page.locator("#map-panel").bounding_box()
    frame = page.locator("#network").bounding_box()
    assert panel is not None and frame is not None
    # Bring another node just left of the panel: its tooltip, drawn to the right of the pointer, would run under it.
    target = (panel["x"] - frame["x"] - 40, panel["y"] - frame["y"] + 120)
    point = page.evaluate(
        """([id, x, y]) => { const n = bibgraphNetwork.network; const at = n.getPositions([id])[id];
             const scale = n.getScale(); const view = n.getViewPosition();
             const dom = n.canvasToDOM(at);
             n.moveTo({position: {x: view.x + (dom.x - x) / scale, y: view.y + (dom.y - y) / scale}, scale: scale,
                       animation: false});
             return n.canvasToDOM(at); }""",
        [ids[1], *target],
    )
    page.mouse.move(frame["x"] + point["x"], frame["y"] + point["y"])
    page.mouse.move(frame["x"] + point["x"] + 1, frame["y"] + point["y"])
    tip = page.locator("#network .vis-tooltip")
    tip.wait_for(state="visible", timeout=5000)
    box = tip.bounding_box()
    panel = page.locator("#map-panel").bounding_box()
    assert box is not None and panel is not None
    assert (
        box["x"] + box["width"] <= panel["x"]
        or box["x"] >= panel["x"] + panel["width"]
        or (box["y"] + box["height"] <= panel["y"] or box["y"] >= panel["y"] + panel["height"])
    )


def test_the_ego_map_is_within_the_first_screen_and_a_half_of_an_author_page(browser, base) -> None:
    page = open_map(browser, base + "/graph/coauthors")
    # the most prolific author: the longest paper list, which the map used to sit below
    author = page.evaluate("() => bibgraphNetwork.nodes.get().sort((a, b) => b.papers - a.papers)[0].url")
    page.goto(base + author)
    top = page.evaluate("() => document.querySelector('iframe.ego').getBoundingClientRect().top + window.scrollY")
    assert top < 1.5 * 900
    assert page.locator("#author-downloads a").all_inner_texts() == ["BibTeX", "RIS", "CSV"]


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("path", ["/graph/topics", "/graph/topics?subareas=all"])
def test_the_topic_map_has_a_key_a_find_box_and_no_label_on_another_disc(browser, base, path: str, width: int) -> None:
    """No topic's label, an area's included, covers another topic's disc, on a desktop and on a 390 px phone."""
    page = open_map(browser, base + path, width=width, height=900 if width > 600 else 844)
    areas = page.evaluate(
        """() => bibgraphNetwork.nodes.get().filter(n => typeof n.color === 'string')
                 .map(n => [n.name, n.color])"""
    )
    key = page.evaluate(
        """() => [...document.querySelectorAll('#area-key li')].map(li => [li.querySelector('bdi').textContent,
                 getComputedStyle(li.querySelector('.swatch')).backgroundColor])"""
    )
    assert sorted(name for name, _ in key) == sorted(name for name, _ in areas)
    rgb = {name: colour for name, colour in key}
    for name, colour in areas:
        red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
        assert rgb[name] == f"rgb({red}, {green}, {blue})"
    discs = page.evaluate(
        """() => { const n = bibgraphNetwork.network; const s = n.getScale();
                   return bibgraphNetwork.nodes.get().map(node => {
                     const p = n.canvasToDOM(n.getPositions([node.id])[node.id]);
                     return {id: node.id, x: p.x, y: p.y, r: node.size * s}; }); }"""
    )
    boxes = page.evaluate("() => bibgraphNetwork.labels()")
    assert boxes  # some topics are named
    for box in boxes:
        for disc in discs:
            if disc["id"] == box["id"]:
                continue
            nearest_x = min(max(disc["x"], box["x"]), box["x"] + box["w"])
            nearest_y = min(max(disc["y"], box["y"]), box["y"] + box["h"])
            assert (nearest_x - disc["x"]) ** 2 + (nearest_y - disc["y"]) ** 2 >= disc["r"] ** 2 - 1, (box, disc)
    first = areas[-1][0]
    page.fill("#find-author", first)
    page.press("#find-author", "Enter")
    assert page.locator("#map-panel h2").inner_text() == first
