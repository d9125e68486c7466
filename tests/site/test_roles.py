"""The authorships' positions and lists' lengths a build keeps beside the incidence (``graph/site/roles.py``): a
profile read from them equals the profile read through ``author_paper_roles.rq``, and the papers' sitemap chunks
read from them (with the papers the incidence leaves out) are every paper in IRI order."""

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import RDFS, XSD

from bibgraph.graph.dataset.derived import DATA_FORMATS
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.rdf.vocab import BG
from bibgraph.graph.site import crawl, profile
from bibgraph.graph.site.crawl import PAGE_CLASSES, kept_resources
from bibgraph.graph.site.roles import Roles, authorships, matches, merged_window, roles_of
from bibgraph.graph.stores.store import GraphStore
from tests.networks.test_incidence import SUBJECTS, built

PAPER = PAGE_CLASSES["papers"]
# names listed twice on one paper (two persons of one name), equal but for case or accents, cut lists, no area
PEOPLE = ["Ann Alpha", "ann alpha", "Ánn Alpha", "Bob Beta", "Cid Gamma", "Dan Delta"]
records = st.lists(
    st.tuples(
        st.none() | st.sampled_from(SUBJECTS),
        st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=6),  # not unique: a name listed twice
        st.booleans(),
    ),
    min_size=1,
    max_size=12,
)


def labels_of(store: GraphStore) -> dict[str, str]:
    rows = store.select(f"SELECT ?p ?l WHERE {{ ?p a <{PAPER}> ; <{RDFS.label}> ?l }}")
    return {str(row["p"]): str(row["l"]) for row in rows}


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_a_profile_from_the_kept_roles_is_the_profile_through_the_query(generated) -> None:
    """Differential on generated corpora: every author's profile with positions and list lengths from the kept
    roles equals the profile read through ``author_paper_roles.rq`` and the store's alone; the kept path asks the
    store nothing about any paper."""
    store = built(generated)
    incidence = incidence_of(store)
    roles = roles_of(store, incidence)
    assert roles is not None and matches(roles, incidence)
    labels = labels_of(store)

    def titles(iris: list[str]) -> dict[str, str]:
        return {iri: labels[iri] for iri in iris if iri in labels}

    asked: list[str] = []
    real = store.select
    store.select = lambda query: asked.append(query) or real(query)  # type: ignore[method-assign]
    for author in incidence.authors:
        kept = profile.papers_from(store, incidence, author, titles, roles)
        assert not [query for query in asked if "authorship" in query or "listedAuthorCount" in query]
        assert kept is not None
        queried = profile.papers_from(store, incidence, author, titles)
        assert sorted(kept, key=profile._page_order) == sorted(queried or [], key=profile._page_order), author
        whole = profile.author_profile(store, author, incidence, titles, roles=roles)
        assert whole == profile.author_profile(store, author), author
        asked.clear()
    counted = [len(authorships(roles, incidence, a)) for a in range(len(incidence.authors))]
    positions = store.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ ?s <{BG.authorPosition}> ?p }}")
    assert sum(counted) == len(roles.positions) == int(positions[0]["n"])


def test_every_seed_authors_profile_from_the_kept_roles_is_the_stores(seed_store) -> None:
    """The seeds (long lists, cut lists, papers of two subjects): every author's profile equal both ways."""
    incidence = incidence_of(seed_store)
    roles = roles_of(seed_store, incidence)
    assert roles is not None and len(roles.others) == 0
    labels = labels_of(seed_store)
    roles_seen: set[str] = set()
    for author in incidence.authors:
        found = profile.author_profile(
            seed_store, author, incidence, lambda iris: {i: labels[i] for i in iris}, roles=roles
        )
        assert found is not None and found == profile.author_profile(seed_store, author), author
        roles_seen |= {paper.role for paper in found.papers}
    assert roles_seen == {"sole", "first", "last", "middle"}


def test_roles_of_another_incidence_are_not_used(seed_store) -> None:
    """Roles are read only with the incidence they were made from (an add's extended incidence has none)."""
    incidence = incidence_of(seed_store)
    roles = roles_of(seed_store, incidence)
    assert roles is not None
    other = incidence_of(seed_store)
    other.author_papers = other.author_papers.copy()
    other.author_papers[[0, -1]] = other.author_papers[[-1, 0]]
    assert matches(roles, incidence) and not matches(roles, other)


def test_roles_round_trip_through_their_file(seed_store) -> None:
    incidence = incidence_of(seed_store)
    roles = roles_of(seed_store, incidence)
    _, write, read = DATA_FORMATS["roles"]
    again = read(write(roles))
    assert isinstance(again, Roles) and matches(again, incidence)
    for name in ("repeats", "positions", "listed"):
        assert np.array_equal(getattr(again, name), getattr(roles, name))
    assert list(again.others) == list(roles.others)
    with np.load(io.BytesIO(write(roles)), allow_pickle=False) as arrays:  # data only
        assert all(arrays[name].dtype != object for name in arrays.files)


@settings(max_examples=200, deadline=None)
@given(st.sets(st.text("abcé", max_size=4)), st.data())
def test_a_merged_window_is_a_slice_of_the_sorted_union(items, data) -> None:
    chosen = sorted(items)
    second = sorted(data.draw(st.sets(st.sampled_from(chosen))) if chosen else [])
    first = sorted(set(chosen) - set(second))
    start = data.draw(st.integers(0, len(chosen) + 1))
    stop = data.draw(st.integers(start, len(chosen) + 2))
    assert merged_window(first, second, start, stop) == chosen[start:stop]


@pytest.mark.parametrize("limit", [1, 2, 5, 1000])
def test_the_papers_chunks_from_the_kept_roles_are_every_paper_once_in_order(monkeypatch, limit) -> None:
    """A store holding papers without a named author (so the incidence lacks them): the chunks, read from the
    incidence and the roles, are every paper of the store once, in IRI order."""
    store = built([("Vision", ["Ann Alpha", "Bob Beta"], False), (None, ["Cid Gamma"], True)])
    for name in ("http://bibgraph.test/paper/0", "http://bibgraph.test/paper/z", "http://bibgraph.test/paper/b"):
        store.store.add(_typed(name))
    incidence = incidence_of(store)
    roles = roles_of(store, incidence)
    assert roles is not None and len(roles.others) == 3
    rows = store.select(f"SELECT ?p WHERE {{ ?p a <{PAPER}> }}")
    every = sorted(str(row["p"]) for row in rows)
    monkeypatch.setattr(crawl, "SITEMAP_LIMIT", limit)
    chunks = [kept_resources(incidence, "papers", c, len(every), roles) for c in range(-(-len(every) // limit))]
    assert [iri for chunk in chunks for iri in chunk or []] == every
    assert kept_resources(incidence, "papers", 0, len(every)) is None  # the incidence alone lacks three


def _typed(iri: str):  # type: ignore[no-untyped-def]
    import pyoxigraph as ox

    rdf_type = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    return ox.Quad(ox.NamedNode(iri), rdf_type, ox.NamedNode(PAPER))


def test_a_store_the_roles_cannot_say_keeps_none() -> None:
    """A paper with two list lengths (the query answers a row per pair of them), or an authorship the incidence does
    not pair: no roles are kept, and the pages ask the store."""
    import pyoxigraph as ox

    integer = ox.NamedNode(str(XSD.integer))
    store = built([("Vision", ["Ann Alpha", "Bob Beta"], False)])
    incidence = incidence_of(store)
    assert roles_of(store, incidence) is not None
    store.store.add(
        ox.Quad(
            ox.NamedNode(incidence.papers[0]),
            ox.NamedNode(str(BG.listedAuthorCount)),
            ox.Literal("7", datatype=integer),
        )
    )
    assert roles_of(store, incidence) is None
    store = built([("Vision", ["Ann Alpha"], False), (None, ["Bob Beta"], False)])
    incidence = incidence_of(store)
    stray = ox.NamedNode(incidence.papers[0] + "#authorship-9")
    store.store.add(ox.Quad(ox.NamedNode(incidence.papers[1]), ox.NamedNode(str(BG.authorship)), stray))
    store.store.add(ox.Quad(stray, ox.NamedNode("http://www.w3.org/ns/prov#agent"), ox.NamedNode(incidence.authors[0])))
    store.store.add(ox.Quad(stray, ox.NamedNode(str(BG.authorPosition)), ox.Literal("9", datatype=integer)))
    paper_count = len(incidence.papers)
    assert paper_count == 2 and roles_of(store, incidence) is None
