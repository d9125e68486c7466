"""The UI review's findings in a real browser (Playwright + Debian's chromium): what a reader sees."""

import itertools
from pathlib import Path

import pytest
from playwright.sync_api import Browser

from bibgraph.graph.pages import histogram_bins

pytestmark = pytest.mark.browser
STATIC = Path(__file__).resolve().parent.parent / "web" / "static"
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
