"""Red team: a record costs only itself, however many names its author line holds.

Each pair of a paper's authors is a co-author link, so a paper of n authors costs n²/2 wherever
links are counted (the home page's co-author degrees, every map drawing its authors). One 290 KB line
of 30,000 names (``P0 Q, P1 Q, …``) took ``build --dataset`` 287 s and 7.2 GB; a megabyte line would
have taken the machine. A list of more than :data:`~bibgraph.graph.ingest.authorline.MAX_AUTHORS` names is
kept whole, as a list with no separators is: the record and its text stay, no person is drawn from it.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.ingest import authorline
from bibgraph.graph.ingest.authorline import MAX_AUTHORS, TOO_MANY, read_author_line
from tests.conftest import BASE


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


@settings(max_examples=30)  # each example is a whole build (~0.25 s): 6 encodings, and the text after the list
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


_GOOD = "Area · Sub\n\nCy Diaz, Dee Day\n\nA second abstract that is a sentence of prose for the parser to read.\n"


def _built(tmp_path_factory, text: str):
    path = tmp_path_factory.mktemp("lines") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    return build_graph([path], base=BASE, progress=False)


@settings(max_examples=30, deadline=None)
@given(
    breaker=st.sampled_from(["\x0b", "\x0c", "\x1c", "\x1d", "\x1e"]),
    where=st.sampled_from(["author", "abstract"]),
    line_end=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_a_control_inside_a_line_is_a_bad_record_never_two_lines(tmp_path_factory, breaker, where, line_end) -> None:
    """str.splitlines broke lines at VT, FF, FS, GS, RS: 'Ann\\x0bLee, Bob' made the records 'Ann' / 'Lee, Bob'."""
    authors = "Ann Lee, Bob Ray" if where == "abstract" else f"Ann Lee, Bob{breaker}Ray"
    abstract = "An abstract that is a sentence of prose" + (breaker if where == "abstract" else "") + " for the parser."
    text = f"论文检索\n\nArea · Sub\n\n{authors}\n\n{abstract}\n\n{_GOOD}".replace("\n", line_end)
    store, report = _built(tmp_path_factory, text)
    names = {row["n"] for row in store.select("SELECT ?n { ?p <http://xmlns.com/foaf/0.1/name> ?n }")}
    if where == "author":  # a control in a name is read as a space, as other unusual spaces are
        assert report.problems == [] and report.papers == 2
        assert names == {"Ann Lee", "Bob Ray", "Cy Diaz", "Dee Day"}
    else:  # an abstract no dump can carry: the record is bad, reported at its first line
        assert [p.line for p in report.problems] == [3] and report.papers == 1
        assert f"U+{ord(breaker):04X}" in report.problems[0].message
        assert names == {"Cy Diaz", "Dee Day"}


@settings(max_examples=10, deadline=None)
@given(separator=st.sampled_from(["\x85", "\u2028", "\u2029"]))
def test_unicode_line_separators_inside_an_abstract_stay_in_it(tmp_path_factory, separator: str) -> None:
    abstract = f"An abstract that is a sentence{separator}of prose for the parser to read."
    store, report = _built(tmp_path_factory, f"论文检索\n\nArea · Sub\n\nAnn Lee, Bob Ray\n\n{abstract}\n\n{_GOOD}")
    assert report.problems == [] and report.papers == 2
    rows = store.select("SELECT ?a WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }")
    assert abstract in {row["a"] for row in rows}
