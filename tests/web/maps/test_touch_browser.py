"""Maps on a phone: one finger scrolls the page past a map, a tap hands the map its gestures (pan, pinch)
until Done. Driven with real touch events (Chrome DevTools ``Input.dispatchTouchEvent``) on a touch screen."""

import pytest
from playwright.sync_api import Browser, Page, expect

pytestmark = pytest.mark.browser
READY = "body[data-network-ready]"
PHONE = {"width": 390, "height": 844}


@pytest.fixture(scope="module")
def base(seed_server: str) -> str:
    return seed_server


def phone_page(browser: Browser, url: str) -> Page:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(READY, state="attached", timeout=15000)
    return page


def swipe(page: Page, x: float, y: float, dx: float, dy: float, fingers: int = 1) -> None:
    """A slow swipe of ``fingers`` fingers from (x, y) by (dx, dy), in viewport pixels, as a touch screen sends it."""
    cdp = page.context.new_cdp_session(page)

    def points(k: float) -> list[dict]:
        return [{"x": x + 40 * f + dx * k, "y": y + dy * k, "id": f} for f in range(fingers)]

    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": points(0)})
    for step in range(1, 11):
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": points(step / 10)})
    for _ in range(4):  # the finger held still before it lifts: no fling for a tap to fall into (a tap during one
        page.wait_for_timeout(50)  # only stops it, as on a phone; on a busy machine the map's tap was lost so)
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": points(1)})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    settle(page)


def settle(page: Page) -> None:
    """Wait until a swipe's fling has stopped: a tap during one stops it instead of clicking, as on a phone. A
    fixed 700 ms was too short on a busy machine (two test workers): the tap then fell in the fling."""
    still, last = 0, None
    for _ in range(100):  # 15 s at most
        page.wait_for_timeout(150)
        now = page.evaluate("() => [window.scrollX, window.scrollY]")
        still = still + 1 if now == last else 0
        last = now
        if still == 3:
            return
    raise AssertionError("the page was still scrolling 15 s after the swipe")


def view(page: Page) -> dict:
    return page.evaluate(
        "() => ({scrollY: window.scrollY, at: bibgraphNetwork.network.getViewPosition(),"
        " scale: bibgraphNetwork.network.getScale()})"
    )


def map_box(page: Page) -> dict:
    box = page.locator("#network").bounding_box()
    assert box is not None
    return box


@pytest.mark.parametrize("path", ["/graph/coauthors", "/graph/topics?subareas=all"])
def test_one_finger_scrolls_the_page_past_a_map_until_a_tap_hands_it_the_map(browser, base, path: str) -> None:
    page = phone_page(browser, base + path)
    page.evaluate("() => document.getElementById('network').scrollIntoView({block: 'center'})")
    guard = page.locator("#map-guard")
    assert guard.is_visible() and "Tap" in guard.inner_text()
    box = map_box(page)
    before = view(page)
    swipe(page, box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.7, 0, -250)
    after = view(page)
    assert after["scrollY"] > before["scrollY"] + 50, (before, after)  # the page scrolled (as far as it goes)
    assert after["at"] == before["at"]  # the map stayed where it was

    box = map_box(page)
    page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    expect(guard).to_be_hidden()  # the tap's click comes after the touch ends: awaited, not assumed
    expect(page.locator("#map-done")).to_be_visible()
    before = view(page)
    swipe(page, box["x"] + box["width"] / 2 - 60, box["y"] + box["height"] / 2, 0, -150)
    after = view(page)
    assert after["scrollY"] == before["scrollY"]  # the map took the swipe: it panned, the page did not move
    assert after["at"]["y"] > before["at"]["y"] + 50, (before, after)

    page.locator("#map-done").tap()
    expect(guard).to_be_visible()
    page.context.close()


def test_the_embedded_ego_map_lets_the_author_page_scroll(browser, base) -> None:
    page = phone_page(browser, base + "/graph/coauthors")
    author = page.evaluate("() => bibgraphNetwork.nodes.get()[0].url")
    page.goto(base + author)
    frame_element = page.locator("iframe").first
    frame_element.scroll_into_view_if_needed()
    frame = frame_element.element_handle().content_frame()
    assert frame is not None
    frame.wait_for_selector(READY, state="attached", timeout=15000)
    assert frame.locator("#map-guard").is_visible()
    box = frame_element.bounding_box()
    assert box is not None
    before = page.evaluate("() => window.scrollY")
    swipe(page, box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.8, 0, -200)
    assert page.evaluate("() => window.scrollY") > before + 80
    page.context.close()


def test_a_desktop_mouse_drags_the_map_without_a_guard(browser, base) -> None:
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(base + "/graph/coauthors")
    page.wait_for_selector(READY, state="attached", timeout=15000)
    assert not page.locator("#map-guard").is_visible()
    box = map_box(page)
    before = view(page)
    page.mouse.move(box["x"] + 200, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + 300, box["y"] + 300, steps=5)
    page.mouse.up()
    assert view(page)["at"] != before["at"]
    page.close()
