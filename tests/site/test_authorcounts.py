"""Differential: the papers of some authors per concept and per area, counted from the incidence's arrays, are what
the store's queries count (``author_concept_counts.rq``, ``search_authors.rq``), on generated lists: papers with no
area, under an area itself or a subarea, seen again under another area, unknown authors."""

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.ingest.names import person_key
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.authorcounts import area_counts, concept_counts
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.networks.test_incidence import PEOPLE, SUBJECTS, built, paper_list, records_of

AUTHORS = st.lists(st.sampled_from([*PEOPLE, "Nobody Here"]), unique=True)


def store_of(first: list, again: list) -> OxigraphGraphStore:
    """``first`` built, then some of its records added again each under another area (a paper under two)."""
    store = built(first)
    seen_again = [(subject, authors, cut) for subject, (_, authors, cut) in zip(again, first, strict=False)]
    if seen_again:
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "again.txt"
            path.write_text(paper_list(seen_again), encoding="utf-8")
            assert add_lists(store, [path], BASE).problems == []
    return store


def iris(authors: list[str]) -> list[str]:
    return sorted(f"{BASE}author/{key}" for key in {person_key(name) for name in authors})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_of(PEOPLE), st.lists(st.none() | st.sampled_from(SUBJECTS), max_size=5), AUTHORS)
def test_papers_per_concept_are_the_stores_count(first: list, again: list, authors: list[str]) -> None:
    """An area through its subareas, a paper under two subareas of an area once; an unknown author has none."""
    store, wanted = store_of(first, again), iris(authors)
    expected: dict[str, dict[str, int]] = {}
    if wanted:
        for row in store.select(bind(named_query("author_concept_counts").text, author=wanted)):
            expected.setdefault(str(row["concept"]), {})[str(row["author"])] = integer(row["papers"])
    assert concept_counts(incidence_of(store), wanted) == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records_of(PEOPLE), st.lists(st.none() | st.sampled_from(SUBJECTS), max_size=5), AUTHORS)
def test_papers_per_area_are_the_stores_count(first: list, again: list, authors: list[str]) -> None:
    """Each area once per paper, the papers with no area under None, as the search index shows beside an author."""
    store, wanted = store_of(first, again), iris(authors)
    expected = set()
    if wanted:
        for row in store.select(bind(named_query("search_authors").text, author=wanted)):
            label = None if row["areaLabel"] is None else str(row["areaLabel"])
            expected.add((str(row["author"]), label, integer(row["papers"])))
    found = area_counts(incidence_of(store), wanted)
    assert len(found) == len(expected) and set(found) == expected
