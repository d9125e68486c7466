"""Counts people read are grouped by thousands on every page (one template filter, ``thousands``)."""

import re
import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibgraph.web.text import thousands
from tests.conftest import BASE, make_app

RECORDS = 1_100  # one area and subarea: its pages count over a thousand papers and authors


def _code(index: int) -> str:
    """A letter code (digits would read as affiliation markers or counts)."""
    letters = string.ascii_lowercase
    return "".join(letters[(index // 26**k) % 26] for k in range(3)).capitalize()


def _corpus() -> str:
    records = []
    for index in range(RECORDS):
        first, second = _code(index), _code((index * 7 + 3) % 1_300)
        records.append(
            f"Theory · Learning Theory\n\nAnn {first}, Bo {second}\n\n"
            f"We study kernels and bounds, variant {_code(index)}, with a simple method.\n"
        )
    return "论文检索\n\n" + "\n".join(records)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    directory = tmp_path_factory.mktemp("thousand")
    (directory / "list.txt").write_text(_corpus(), encoding="utf-8")
    application = make_app(BIBGRAPH_INPUTS=[str(directory)], MAX_VIEW_NODES=5000)
    yield application.test_client()
    application.extensions["bibgraph"].close()


def _visible_numbers(html: str) -> list[str]:
    """The numbers a reader sees: text outside tags, scripts, styles and attribute values; an address in ``<code>``
    (a base IRI with its port) is no count."""
    html = re.sub(r"<(script|style|code)\b.*?</\1>", " ", html, flags=re.S)
    text = re.sub(r"<[^>]*>", " ", html)
    return re.findall(r"\d[\d,]*", text)


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/areas",
        "/dataset",
        "/area/theory",
        "/area/theory/learning-theory",
        "/search?q=ann",
        "/graph/coauthors",
    ],
)
def test_every_count_of_a_thousand_or_more_is_grouped(big, path) -> None:
    response = big.get(path, headers={"Accept": "text/html"})
    assert response.status_code == 200
    numbers = _visible_numbers(response.get_data(as_text=True))
    assert any(int(n.replace(",", "")) >= 1000 for n in numbers), (path, numbers)  # the page does show one
    ungrouped = [n for n in numbers if n.replace(",", "") != n.replace(",", "").lstrip("0") or "," not in n]
    assert not [n for n in ungrouped if len(n) >= 4], (path, ungrouped)


@given(st.one_of(st.integers(-(10**12), 10**12), st.floats(0, 1e9, allow_nan=False).map(lambda f: round(f, 2))))
def test_thousands_groups_digits_and_keeps_the_value(value) -> None:
    shown = thousands(value)
    assert float(shown.replace(",", "")) == value
    whole = shown.lstrip("-").split(".")[0]
    assert re.fullmatch(r"\d{1,3}(,\d{3})*", whole), shown
    assert thousands(str(value)) == shown  # a literal's lexical form reads the same


@pytest.mark.parametrize("text", ["bibgraph", "Infinity", "1e5", "nan", "12 papers", "", "http://x.org/1234"])
def test_thousands_leaves_text_that_is_not_a_plain_decimal(text) -> None:
    assert thousands(text) == text


def test_a_later_page_of_an_area_is_its_own_canonical_page(big) -> None:
    canonical = re.compile(r'<link rel="canonical" href="([^"]+)">')
    first = big.get("/area/theory", headers={"Accept": "text/html"}).get_data(as_text=True)
    second = big.get("/area/theory?page=2", headers={"Accept": "text/html"}).get_data(as_text=True)
    assert canonical.search(first).group(1) == BASE + "area/theory"
    assert canonical.search(second).group(1) == BASE + "area/theory?page=2"
