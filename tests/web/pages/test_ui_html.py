"""What the pages say, read from their HTML (the UI review's findings that need no browser)."""

import html
import shutil
import urllib.parse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bibgraph.graph.ingest.authorline import MAX_AUTHORS
from bibgraph.graph.serving import fairshare, pool, worker
from bibgraph.graph.site.pagedata import histogram_bins
from bibgraph.graph.sparql import guard
from bibgraph.graph.stores import store
from bibgraph.web.errors import answer_exception

HTML = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}  # as a browser asks
EXPECTED_SECTION = 'id="expected-heading"'


@pytest.mark.parametrize(
    "error",
    [
        guard.QueryForbidden("update"),
        guard.QueryRefused("too deep"),
        pool.QueryCrashed("crashed"),
        worker.ResultTooLarge("large"),
        fairshare.OverShare("share", 7),
        pool.QueryTimeout("late"),
        fairshare.ServerBusy("busy"),
        worker.WorkerFailed("failed"),
        store.QueryError("syntax"),  # no query to explain: the engine's message alone
    ],
)
def test_an_error_page_lists_what_the_engine_accepts_only_for_a_syntax_error_it_explains(app, error) -> None:
    """The section "what the engine accepts there" (or "Nothing can follow there") belongs to a syntax
    error's page; every other error page (a 503 after a deadline, a 404...) showed "Nothing can follow there"."""
    with app.test_request_context("/", headers=HTML):
        body = answer_exception(error).get_data(as_text=True)
    assert EXPECTED_SECTION not in body and "Nothing can follow there" not in body


@pytest.mark.parametrize(
    "path", ["/paper/0000000000000000", "/no/such/page", "/graph/coauthors?min_papers=abc", "/area/%01"]
)
def test_404_and_400_pages_have_no_syntax_error_section(client, path: str) -> None:
    response = client.get(path, headers=HTML)
    assert response.status_code in (400, 404) and response.mimetype == "text/html"
    assert EXPECTED_SECTION not in response.get_data(as_text=True)


def test_a_syntax_error_page_keeps_its_section(client) -> None:
    query = "SELECT ?s WHERE { ?s ?p ?o . FILTER (?s = ) }"
    response = client.get("/sparql?" + urllib.parse.urlencode({"query": query}), headers=HTML)
    assert response.status_code == 400
    assert EXPECTED_SECTION in response.get_data(as_text=True)


@pytest.fixture(scope="module")
def crowded(tmp_path_factory):
    """An app over a paper by 1,000 authors (the most an author line names persons for: ``MAX_AUTHORS``) and one
    by the first of them with one more: the first author has 1,000 co-authors."""
    from string import ascii_lowercase as letters

    from tests.conftest import make_app

    names = [f"Al{letters[i % 26]}{letters[i // 26 % 26]} Bo{letters[i // 676]}ne" for i in range(1001)]
    assert MAX_AUTHORS == 1000
    directory = tmp_path_factory.mktemp("crowded")
    (directory / "list.txt").write_text(
        f"论文检索\n\nTheory · Learning Theory\n\n{', '.join(names[:1000])}\n\nWe study one very large collaboration.\n"
        f"\nTheory · Learning Theory\n\n{names[0]}, {names[1000]}\n\nAnd a small one.\n",
        encoding="utf-8",
    )
    application = make_app(BIBGRAPH_INPUTS=[str(directory)])
    yield application, names[0]
    application.extensions["bibgraph"].close()


def test_the_ego_note_groups_thousands_and_offers_k_only_where_k_can_be_raised(crowded) -> None:
    """The profile's embedded ego map said "raise K to see more" with no K in the frame, and "1313 co-authors"."""
    from bibgraph.graph.ingest.names import person_key

    application, name = crowded
    client = application.test_client()
    path = f"/graph/ego/author/{person_key(name)}"
    full = html.unescape(client.get(path).get_data(as_text=True))
    framed = html.unescape(client.get(path + "?embed=1").get_data(as_text=True))
    assert f"Showing the 25 of {name}'s 1,000 co-authors" in full and "raise K" in full and 'name="top"' in full
    assert f"Showing the 25 of {name}'s 1,000 co-authors" in framed
    assert "raise K" not in framed and 'name="top"' not in framed
    profile = client.get(f"/author/{person_key(name)}").get_data(as_text=True)
    assert f'<a href="{path}">Open the full map</a>' in profile


@pytest.mark.parametrize(("groups", "legend"), [(16, "1 smaller community<"), (17, "2 smaller communities<")])
def test_the_legend_counts_the_smaller_communities_in_good_english(tmp_path, groups: int, legend: str) -> None:
    """Disconnected teams are communities of their own; past the 15 coloured ones the legend said "1 smaller
    communities"."""
    from tests.conftest import make_app

    records = []
    for team in range(groups):
        size = groups + 2 - team  # teams of different sizes: a fixed order of the communities
        names = [f"Team{chr(65 + team)} Member{chr(65 + k)}" for k in range(size)]
        records.append(f"Theory · Learning Theory\n\n{', '.join(names)}\n\nTeam {team} studies a problem together.")
    (tmp_path / "teams.txt").write_text("论文检索\n\n" + "\n\n".join(records) + "\n", encoding="utf-8")
    application = make_app(BIBGRAPH_INPUTS=[str(tmp_path)])
    try:
        body = application.test_client().get("/graph/coauthors").get_data(as_text=True)
    finally:
        application.extensions["bibgraph"].close()
    assert legend in body


def _lab(colour: str) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of an sRGB ``#rrggbb``: the space in which a distance is a visible difference."""
    linear = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in linear)
    xyz = ((0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047, 0.2126 * r + 0.7152 * g + 0.0722 * b,
           (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883)  # fmt: skip
    fx, fy, fz = (v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116 for v in xyz)
    return 116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)


def test_community_colours_are_told_apart() -> None:
    """The 1st and the 15th community were #1f77b4 and #3182bd (ΔE 4.6: one blue on a map), two others
    brown and brown (ΔE 12); every coloured community now differs from every other, and from the grey of
    the small ones, by a ΔE (CIE76) of 20 or more."""
    import itertools
    import math

    from bibgraph.graph.networks.palette import OTHER_COLOUR, PALETTE
    from bibgraph.graph.site.mapview import colour

    coloured = [colour(index) for index in range(len(PALETTE))]
    assert len(set(coloured)) == len(PALETTE) and colour(len(PALETTE)) == colour(None) == OTHER_COLOUR
    for a, b in itertools.combinations([*coloured, OTHER_COLOUR], 2):
        assert math.dist(_lab(a), _lab(b)) >= 20, (a, b)


@pytest.mark.parametrize("error", [pool.QueryTimeout("late"), fairshare.ServerBusy("busy"), worker.WorkerFailed("x")])
def test_a_query_that_could_not_be_answered_links_back_to_the_editor_holding_it(app, error) -> None:
    """The 503 page after a query ran past its deadline offered search and home, not the query to change."""
    query = 'SELECT * WHERE { ?a ?b ?c . ?d ?e ?f } # "slow" & <odd>'
    with app.test_request_context("/sparql?" + urllib.parse.urlencode({"query": query}), headers=HTML):
        body = answer_exception(error).get_data(as_text=True)
    link = "/sparql#" + urllib.parse.urlencode({"query": query})
    assert f'href="{html.escape(link)}"' in body and "Edit the query in the SPARQL editor" in body
    with app.test_request_context("/paper/x", headers=HTML):  # elsewhere there is no query to go back to
        assert "Edit the query" not in answer_exception(error).get_data(as_text=True)


def _graph_data(body: str) -> dict:
    import json
    import re

    return json.loads(re.search(r'id="graph-data">(.*?)</script>', body, re.S).group(1))


def test_map_tooltips_count_as_the_pages_do(tmp_path) -> None:
    """Tooltips said "1224 paper(s)": counts grouped by thousands, in the right number, as on every page."""
    from tests.conftest import make_app

    records = [f"Theory · Learning Theory\n\nAnn Lee, Bo Chen\n\nPaper {n} studies question {n}." for n in range(1000)]
    records.append("Optimization · Stochastic\n\nAnn Lee, Cy Diaz\n\nOne more paper on a stochastic method.")
    (tmp_path / "many.txt").write_text("论文检索\n\n" + "\n\n".join(records) + "\n", encoding="utf-8")
    application = make_app(BIBGRAPH_INPUTS=[str(tmp_path)])
    try:
        client = application.test_client()
        authors = _graph_data(client.get("/graph/coauthors").get_data(as_text=True))
        topics = _graph_data(client.get("/graph/topics?subareas=all").get_data(as_text=True))
    finally:
        application.extensions["bibgraph"].close()
    titles = {node["label"]: node["title"] for node in authors["nodes"]}
    assert "\n1,001 papers · " in titles["Ann Lee"]
    assert "\n1 paper · " in titles["Cy Diaz"]
    joint = sorted(edge["title"] for edge in authors["edges"])
    assert joint == ["1 joint paper", "1,000 joint papers"]
    topic_titles = {node["label"]: node["title"] for node in topics["nodes"]}
    assert topic_titles["Theory"].endswith("area · 1,000 papers")
    assert topic_titles["Optimization · Stochastic"].endswith("subarea · 1 paper")
    assert not any("(s)" in title for title in [*titles.values(), *joint, *topic_titles.values()])


@given(low=st.integers(0, 50), span=st.integers(0, 3000), most=st.integers(1, 30), extra=st.lists(st.integers(0, 3000)))
def test_histogram_bins_cover_the_range_once_and_never_label_a_value_as_a_range(low, span, most, extra) -> None:
    """The authors-per-paper chart's last bin read "26-26"; each label is one value or a range of several,
    and the bins cover the smallest to the largest x, each value once, in order."""
    counts = [(low, 1), (low + span, 1)] + [(low + x % (span + 1), 1) for x in extra]
    bins = histogram_bins(counts, most=most)
    assert len(bins) <= most and sum(count for _, count in bins) == len(counts)
    covered = []
    for label, _ in bins:
        start, _, end = label.partition("\u2013")
        assert end != start, label
        covered.extend(range(int(start), int(end or start) + 1))
    assert covered == list(range(low, low + span + 1))


def test_the_related_papers_say_what_their_numbers_count(client, seed_store) -> None:
    """ "By the same authors" listed a bare number beside each paper (shared authors, said only on hover)."""
    from tests.conftest import BASE

    papers = [str(r["p"]) for r in seed_store.select("SELECT ?p WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }")]
    pages = [client.get("/" + paper[len(BASE) :]).get_data(as_text=True) for paper in papers]
    related = [body for body in pages if 'id="related-authors"' in body]
    assert related and all("authors each shares with this paper" in body for body in related)


@pytest.mark.parametrize(("query", "hint"), [("zzqxv", True), ("zzqxv wang", True), ("wang", False), ("", False)])
def test_an_empty_search_says_what_to_try(client, query: str, hint: bool) -> None:
    """ "No results for …" and nothing else: the page now says how words match and what to try."""
    body = client.get("/search?" + urllib.parse.urlencode({"q": query})).get_data(as_text=True)
    assert ('id="no-results-hint"' in body) is hint
    assert ("No results for" in body) is hint


def test_a_dataset_built_with_an_earlier_drawing_style_is_drawn_again(seed_dataset, tmp_path) -> None:
    """A dataset keeps the drawn maps of its build; after the colours and tooltips changed, a dataset built
    before served its old drawing beside a legend of the new colours. A drawing kept under the key of an
    earlier style is never served."""
    from bibgraph.graph.dataset.derived import file_name, page_json
    from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
    from bibgraph.web.maps.args import capped as _capped
    from bibgraph.web.maps.args import filters_from_request
    from bibgraph.web.maps.cache import derived_key
    from tests.conftest import make_app

    root = shutil.copytree(seed_dataset, tmp_path / "dataset", symlinks=True)  # changed below: a copy
    app = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        with app.test_request_context("/graph/coauthors"):
            spec = NetworkSpec(COAUTHORS, _capped(filters_from_request())[0])
        node = {"id": "x", "label": "STALE DRAWING", "size": 5, "x": 0, "y": 0}
        stale = {"nodes": [node], "edges": [], "options": {}}
        derived = next(root.glob("v-*")) / "derived"
        (derived / file_name(derived_key("view", spec, "authors", "weight"))).write_bytes(page_json(stale))
        body = app.test_client().get("/graph/coauthors").get_data(as_text=True)
    finally:
        app.extensions["bibgraph"].close()
    assert "STALE DRAWING" not in body and "Ziniu Li" in body
