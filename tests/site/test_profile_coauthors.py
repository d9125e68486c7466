"""An author's co-authors read from the incidence a dataset keeps are the store's answer (``author_coauthors.rq``):
a profile served from an engine with its published dataset asks the engine nothing for them. Only the co-authors a
page shows are named (13,342 for the most prolific author at a million papers): the same as the store's whole
list, ordered, then cut."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.conceptindex import reading_key
from bibgraph.graph.site.profile import author_profile, coauthors_from, papers_from
from bibgraph.graph.site.search import SearchIndex
from bibgraph.graph.site.searchbuild import build_search_index
from bibgraph.graph.sparql.queries import bind, integer, named_query
from tests.networks.test_incidence import built, records_of

# many names, few papers each: most co-authors tie at the cut (one or two joint papers), as at a million papers
PEOPLE = [f"{given} {family}" for family in ("Li", "li", "Lí", "Wang", "Ōta") for given in ("An", "an", "Bo", "Ém")]


def test_every_seed_authors_coauthors_from_the_incidence_are_the_stores(seed_store) -> None:
    incidence = incidence_of(seed_store)
    assert len(incidence.authors) > 100  # the seeds' authors, each compared
    compared = 0
    for author in incidence.authors:
        rows = seed_store.select(bind(named_query("author_coauthors").text, author=author))
        expected = sorted((str(r["coauthor"]), str(r["name"]), integer(r["joint"])) for r in rows)
        found = coauthors_from(incidence, author, len(expected) + 1)
        assert found is not None and found[1] == len(expected)
        assert sorted((c.iri, c.name, c.joint) for c in found[0]) == expected, author
        compared += bool(expected)
    assert compared > 100
    assert coauthors_from(incidence, "http://example.org/nobody") is None


def test_a_profile_from_the_incidence_is_the_profile_from_the_store(seed_store) -> None:
    """Every seed author's profile: its papers' subjects, areas and cut lists read from the incidence (a paper of
    two subjects, an area without subareas, a cut list), the rest from the store, equal to the store's alone."""
    incidence = incidence_of(seed_store)
    read = []
    for author in incidence.authors:
        assert author_profile(seed_store, author, incidence) == author_profile(seed_store, author), author
        read.append(papers_from(seed_store, incidence, author))
    papers = [paper for found in read if found is not None for paper in found]
    assert len(papers) > 100 and all(found is not None for found in read)
    assert {paper.truncated for paper in papers} == {True, False}
    assert any(paper.area_iri for paper in papers) and any(paper.subject_iri and not paper.area_iri for paper in papers)


def test_a_profile_with_labels_from_the_search_index_is_the_profile_from_the_store(seed_store, tmp_path) -> None:
    """With the labels read from the search index built from the same store (a dataset's, kept by its build),
    every seed author's profile still equals the store's alone; a paper the index does not hold (no abstract: not
    searchable) makes the labels come from the store."""
    incidence = incidence_of(seed_store)
    build_search_index(seed_store, tmp_path / "search.sqlite")
    index = SearchIndex(tmp_path / "search.sqlite")
    asked: list[int] = []

    def titles(iris: list[str]) -> dict[str, str]:
        asked.append(len(iris))
        return index.titles(iris)

    for author in incidence.authors:
        assert author_profile(seed_store, author, incidence, titles) == author_profile(seed_store, author), author
    assert len(asked) == len(incidence.authors) and sum(asked) > 100
    author = incidence.authors[0]
    paper = author_profile(seed_store, author).papers[0]
    partial = author_profile(
        seed_store, author, incidence, lambda iris: {paper.iri: "not the label"} if len(iris) > 1 else {}
    )
    assert partial == author_profile(seed_store, author)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_of(PEOPLE), st.integers(0, 8))
def test_the_shown_coauthors_are_the_stores_whole_list_ordered_then_cut(generated, shown) -> None:
    """Differential, on generated corpora whose counts tie at the cut (names equal but for case and accents): the
    ``shown`` co-authors named from the incidence, and their count, are the store's whole answer ordered by most
    joint papers then name, cut to ``shown``; the profile read from the store alone cuts the same way."""
    store = built(generated)
    incidence = incidence_of(store)
    for author in incidence.authors:
        rows = store.select(bind(named_query("author_coauthors").text, author=author))
        whole = [(str(r["coauthor"]), str(r["name"]), integer(r["joint"])) for r in rows]
        expected = sorted(whole, key=lambda c: (-c[2], *reading_key(c[1], c[0])))[:shown]
        found = coauthors_from(incidence, author, shown)
        assert found is not None
        assert ([(c.iri, c.name, c.joint) for c in found[0]], found[1]) == (expected, len(whole))
        profile, alone = (author_profile(store, author, known, shown=shown) for known in (incidence, None))
        assert profile == alone and profile is not None and profile.coauthor_count == len(whole)
