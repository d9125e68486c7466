"""Red team: a record costs only itself, however many names its author line holds.

Each pair of a paper's authors is a co-author link, so a paper of n authors costs n²/2 wherever
links are counted (the home page's co-author degrees, every map drawing its authors). One 290 KB line
of 30,000 names (``P0 Q, P1 Q, …``) took ``build --dataset`` 287 s and 7.2 GB; a megabyte line would
have taken the machine. A list of more than :data:`~bibgraph.graph.authorline.MAX_AUTHORS` names is
kept whole, as a list with no separators is: the record and its text stay, no person is drawn from it.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibgraph.graph import authorline
from bibgraph.graph.authorline import MAX_AUTHORS, TOO_MANY, read_author_line
from bibgraph.graph.build import build_graph

from .conftest import BASE


@pytest.fixture(scope="module")
def monkeypatch_limit():
    """A limit of 40 names, so that generated lists cross it cheaply."""
    original = authorline.MAX_AUTHORS
    authorline.MAX_AUTHORS = 40
    yield
    authorline.MAX_AUTHORS = original


SEPARATORS = [", ", "，", "、", "; ", " and ", " & "]


@given(
    extra=st.integers(1, 50),
    separator=st.sampled_from(SEPARATORS),
    marked=st.booleans(),
    cut=st.booleans(),
)
def test_a_list_of_too_many_names_is_kept_whole_by_any_separator(
    extra: int, separator: str, marked: bool, cut: bool
) -> None:
    names = [f"Ann{number} Lee{'*' if marked else ''}" for number in range(MAX_AUTHORS + extra)]
    text = separator.join(names) + (" 等" if cut else "")
    read = read_author_line(text, 7)
    assert read.names == () and read.unsplit
    assert read.truncated == cut
    assert [(w.kind, w.line) for w in read.warnings] == [(TOO_MANY, 7)]
    assert len(read.warnings[0].written) < 200  # the report shows the line's start, not a megabyte


@given(count=st.integers(1, 40), separator=st.sampled_from(SEPARATORS))
def test_a_list_up_to_the_limit_is_read_name_by_name(monkeypatch_limit, count: int, separator: str) -> None:
    names = [f"Ann{chr(65 + n % 26)}{n} Lee" for n in range(count)]
    read = read_author_line(separator.join(names), 1)
    assert [name.name for name in read.names] == names
    assert not read.unsplit


@given(count=st.integers(41, 80))
def test_past_the_limit_no_name_is_drawn(monkeypatch_limit, count: int) -> None:
    read = read_author_line(", ".join(f"Ann{n} Lee" for n in range(count)), 1)
    assert read.names == () and read.unsplit


def test_a_record_of_30000_names_costs_only_itself(write_list) -> None:
    path = write_list(
        "论文检索\n\nArea · Sub\n\n"
        + ", ".join(f"P{number} Q" for number in range(30_000))
        + "\n\nAn abstract that is a sentence of prose for the parser to read here.\n\n"
        "Area · Sub\n\nP1 Q, Zed Zee\n\nAnother abstract that is a sentence of prose for the parser to read.\n"
    )
    store, report = build_graph([path], base=BASE, progress=False)
    assert report.papers == 2 and report.authors == 2
    assert report.warnings[TOO_MANY].count == 1
    rows = store.select(
        "PREFIX bg: <https://w3id.org/bibgraph/ontology#> SELECT ?n ?u WHERE { ?p bg:listedAuthorCount ?n ;"
        " bg:authorListUnsplit ?u }"
    )
    assert [(row["n"], row["u"]) for row in rows] == [(0, True)]


_LIST = (
    "论文检索\n\nArea · Sub\n\nAnn Lee, Bob Ray\n\n"
    "An abstract that is a sentence of prose for the parser to read here.\n"
)


@given(
    encoding=st.sampled_from(["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be"]),
    text=st.text(max_size=200),
)
def test_a_utf16_or_utf32_file_is_one_clear_problem_and_costs_only_itself(tmp_path_factory, encoding, text) -> None:
    """Read as UTF-8, such a file gave 'not UTF-8' lines and records of NUL-riddled text (U+0000 is valid UTF-8)."""
    directory = tmp_path_factory.mktemp("utf16")
    explicit = "\ufeff" if encoding.endswith(("le", "be")) else ""  # "utf-16" and "utf-32" write their own
    raw = (explicit + _LIST + text).encode(encoding)
    (directory / "a.txt").write_bytes(raw)
    (directory / "b.txt").write_text(_LIST.replace("Ann Lee", "Cy Diaz"), encoding="utf-8")
    _, report = build_graph([directory], base=BASE, progress=False)
    assert [(p.source, p.line) for p in report.problems] == [("a.txt", 1)]
    assert "byte-order mark" in report.problems[0].message and "not UTF-8" in report.problems[0].message
    assert report.papers == 1
