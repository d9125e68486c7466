"""A request above a cap says so on the page, and the form shows the value actually used."""

import re

import pytest

from tests.conftest import make_app


@pytest.fixture(scope="module")
def client():
    app = make_app(MAX_VIEW_NODES=40)
    yield app.test_client()
    app.extensions["bibgraph"].close()


def top_box(body: str) -> str:
    found = re.search(r'<input type="number" name="top"[^>]*value="([^"]*)"', body)
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(
    ("asked", "used", "said"), [(3000, "40", True), (41, "40", True), (40, "40", False), (7, "7", False)]
)
def test_the_coauthor_map_says_when_top_is_above_the_cap(client, asked: int, used: str, said: bool) -> None:
    body = client.get("/graph/coauthors", query_string={"top": asked}).get_data(as_text=True)
    assert top_box(body) == used
    assert (f"You asked for the top {asked:,} authors" in body) is said
    if said:
        assert "a map draws at most 40, so it shows the 40 most prolific" in body


def test_the_box_stays_empty_when_no_top_was_asked(client) -> None:
    assert top_box(client.get("/graph/coauthors").get_data(as_text=True)) == ""


def test_the_ego_map_says_when_k_is_above_its_cap(client) -> None:
    author = re.search(r'"url":"(/author/[^"]+)"', client.get("/graph/coauthors").get_data(as_text=True))
    assert author is not None
    body = client.get(f"/graph/ego{author.group(1)}", query_string={"top": 900}).get_data(as_text=True)
    assert "You asked for 900 co-authors (K)" in body and 'value="500"' in body
