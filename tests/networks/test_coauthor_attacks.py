"""Red team: a co-author map costs what it draws, in links as in authors.

The drawn authors are capped (``MAX_VIEW_NODES``, the most prolific), but their links were not: the
authors of one 1,000-name paper are all linked, 499,500 links, and each map of such a dataset took
86-100 s, 1.8 GB of the web process and an 83 MB page, for every filter anyone asked. A map keeps its
:data:`~bibgraph.graph.networks.MAX_MAP_LINKS` strongest links (most joint papers, then the IRIs), the
same ones whichever way it is computed: by the engine from the incidence, or by the row path (the test oracle).
A download keeps every link: it was asked for whole.
"""

from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import coauthor, filters
from bibgraph.graph.networks.filters import link_rank
from bibgraph.graph.networks.incidence import incidence_of
from tests.conftest import make_app
from tests.network_oracle import authorships, coauthor_network
from tests.networks.test_incidence import built, filter_sets, records
from tests.networks_compare import same_network


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(1, 6))
def test_every_path_keeps_the_same_strongest_links(generated, limit: int) -> None:
    store = built(generated)
    rows, incidence = authorships(store), incidence_of(store)
    for everything in filter_sets(rows)[:6]:
        whole = coauthor_network(rows, everything)
        assert whole.graph.get("total_links", 0) == whole.number_of_edges()
        downloaded = coauthor.coauthor_network(incidence, everything)  # a download keeps every link
        assert downloaded.number_of_edges() == whole.number_of_edges()
        filters = replace(everything, links=limit)
        capped = coauthor.coauthor_network(incidence, filters)
        same_network(capped, coauthor_network(rows, filters))
        strongest = sorted(whole.edges(data="weight"), key=lambda e: link_rank(e[2], e[0], e[1]))[:limit]
        assert {frozenset(e[:2]) for e in capped.edges} == {frozenset(e[:2]) for e in strongest}
        assert capped.graph.get("total_links", 0) == whole.number_of_edges()
        assert set(capped.nodes) == set(whole.nodes)  # the authors all stay


@pytest.fixture
def monkeypatch_links(monkeypatch):
    return lambda limit: monkeypatch.setattr(filters, "MAX_MAP_LINKS", limit)


def test_a_map_of_one_large_paper_says_which_links_it_keeps(tmp_path, monkeypatch_links) -> None:
    names = ", ".join(f"Ann{number} Lee" for number in range(60))
    (tmp_path / "list.txt").write_text(
        f"论文检索\n\nArea · Sub\n\n{names}\n\nAn abstract that is a sentence of prose for the parser to read.\n",
        encoding="utf-8",
    )
    monkeypatch_links(100)
    app = make_app(BIBGRAPH_INPUTS=[str(tmp_path)])
    try:
        page = app.test_client().get("/graph/coauthors").get_data(as_text=True)
        assert "keeps the 100 strongest of the 1,770 links" in page
        download = app.test_client().get("/graph/coauthors.json").get_json()
        assert len(download["links"]) == 1770  # a download keeps every link
    finally:
        app.extensions["bibgraph"].close()
