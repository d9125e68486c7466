"""Differential: every network the engine computes from the compact incidence equals the row path's (the oracle of
whole-network networkx graphs, ``tests/network_oracle.py``) on generated corpora and on the seeds."""

import os
import tempfile
from collections import Counter
from collections.abc import Iterable
from itertools import pairwise
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks import Filters, coauthor, ego, topic
from bibgraph.graph.networks.incidence import Incidence, Strings, incidence_of, incidence_part
from bibgraph.graph.networks.paths import collaboration_path
from bibgraph.graph.sparql.queries import integer, named_query
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests import network_oracle as oracle
from tests.conftest import BASE
from tests.network_oracle import Authorship, authorships, bipartite_graph
from tests.networks_compare import same_network

PEOPLE = ["Ann Alpha", "Bob Beta", "Cid Gamma", "Dan Delta", "Eve Epsilon", "Fay Zeta", "Gil Eta", "Hal Theta"]
SUBJECTS = ["Vision", "Vision · Detection", "Vision · Tracking", "Language · Parsing", "Language", "Robots · Arms"]
ABSTRACT = "We study problem number {} and improve the state of the art on three benchmarks."


def records_of(people: list[str]) -> st.SearchStrategy[list[tuple[str | None, list[str], bool]]]:
    """Generated records: (area line or none, authors among ``people``, whether the author line is cut)."""
    return st.lists(
        st.tuples(
            st.none() | st.sampled_from(SUBJECTS),
            st.lists(st.sampled_from(people), min_size=1, max_size=5, unique=True),
            st.booleans(),
        ),
        min_size=1,
        max_size=14,
    )


records = records_of(PEOPLE)


def corpus(
    generated: list[tuple[str | None, list[str], bool]],
) -> tuple[list[Authorship], Incidence, OxigraphGraphStore]:
    """The generated records as a paper list, built into a store: its rows, its incidence and the store."""
    store = built(generated)
    return authorships(store), incidence_of(store), store


def paper_list(generated: list[tuple[str | None, list[str], bool]], first: int = 0) -> str:
    """The generated records as a paper list's text (abstracts numbered from ``first``)."""
    blocks = []
    for number, (subject, authors, cut) in enumerate(generated, start=first):
        line = ", ".join(authors) + (" 等" if cut else "")
        blocks.append(("" if subject is None else subject + "\n") + line + "\n" + ABSTRACT.format(number))
    return "\n\n".join(blocks)


def built(generated: list[tuple[str | None, list[str], bool]]) -> OxigraphGraphStore:
    """The generated records as a paper list, built into a store."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "list.txt"
        path.write_text(paper_list(generated), encoding="utf-8")
        store, report = build_graph([path], base=BASE, progress=False)
    assert report.problems == []
    return store


def filter_sets(rows: list[Authorship]) -> list[Filters]:
    """Every area and subarea alone, and with the other filters."""
    areas = sorted({row.area for row in rows if row.area})
    subareas = sorted({row.concept for row in rows if row.concept and row.concept != row.area})
    authors = sorted({row.author for row in rows})
    found = [Filters(), Filters(min_papers=2), Filters(min_joint=2), Filters(top=0), Filters(top=3)]
    found += [Filters(authors=frozenset(authors[::2])), Filters(authors=frozenset([BASE + "author/nobody"]))]
    for area in areas:
        found += [Filters(area=area), Filters(area=area, top=2, min_joint=2)]
    for subarea in subareas:
        found += [Filters(subarea=subarea), Filters(subarea=subarea, min_papers=2, top=2)]
    if areas and subareas:
        found.append(Filters(area=areas[0], subarea=subareas[-1]))
    return found


def check_everything(rows: list[Authorship], incidence: Incidence, store: OxigraphGraphStore) -> None:
    """The engine's networks, ego rings and collaboration paths equal the oracle's."""
    for filters in filter_sets(rows):
        same_network(coauthor.coauthor_network(incidence, filters), oracle.coauthor_network(rows, filters))
        scoped = bipartite_graph(rows, filters)
        present = sorted(n for n, side in scoped.nodes(data="bipartite") if side)
        found = oracle.collaboration(scoped, present)
        assert coauthor.collaboration(incidence, filters, present) == found
        assert coauthor.joint_papers(incidence, filters, present) == {a: joint for a, (_, joint) in found.items()}
    whole = bipartite_graph(rows)
    authors = sorted(n for n, side in whole.nodes(data="bipartite") if side)
    assert set(incidence.names) == {name for _, name in whole.nodes(data="name") if name}
    for author in authors:
        for radius, top in ((1, 2), (2, 2), (1, 25)):
            assert ego.ego_rings(incidence, author, radius, top) == oracle.ego_rings(whole, author, radius, top)
    for author in authors[:6]:
        for other in authors[:3]:
            chain = collaboration_path(incidence, author, other).chain
            expected = oracle.bipartite_path(whole, author, other)
            assert len(chain) == len(expected)
            assert all(whole.has_edge(a, b) for a, b in pairwise(chain))
    with pytest.raises(KeyError):
        ego.ego_rings(incidence, BASE + "author/nobody", 1, 3)

    def same(new: nx.Graph, old: nx.Graph) -> None:
        assert list(new.nodes(data=True)) == list(old.nodes(data=True))
        assert list(new.edges(data=True)) == list(old.edges(data=True))

    same(topic.topic_network(incidence), oracle.topic_network(rows))
    for expand in (None, "all", *sorted({row.area for row in rows if row.area})):
        for strongest in (1, 3):
            same(topic.topic_map(incidence, expand, strongest), oracle.topic_map(rows, expand, strongest))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_generated_corpora_give_the_row_paths_networks(generated) -> None:
    check_everything(*corpus(generated))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.sets(st.sampled_from(PEOPLE), max_size=3))
def test_authors_without_a_name_are_left_out_as_by_the_row_path(generated, nameless) -> None:
    """The incidence is read pattern by pattern: a person whose name is missing (data loaded from elsewhere) and a
    paper left with no named author drop out exactly as from the one-query row path."""
    store = built(generated)
    for person in nameless:
        store.store.update(f'DELETE WHERE {{ ?author <http://xmlns.com/foaf/0.1/name> "{person}" }}')
    check_everything(authorships(store), incidence_of(store), store)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(1, 4))
def test_coauthor_degrees_are_the_engines_count(generated, block) -> None:
    """The home chart's degrees, multiplied out ``block`` authors at a time, equal the SPARQL count (which lists
    only authors with a co-author)."""
    store = built(generated)
    incidence = incidence_of(store)
    expected = Counter(integer(r["degree"]) for r in store.select(named_query("coauthor_degrees").text))
    expected[0] += len(incidence.authors) - sum(expected.values())
    assert coauthor.coauthor_degrees(incidence, block) == +expected


def added_to(
    first: list, second: list, again: int, nameless: Iterable[str] = (), relabelled: Iterable[str] = ()
) -> tuple[OxigraphGraphStore, Incidence, OxigraphGraphStore]:
    """The store of ``first`` (the ``nameless`` people's names deleted, the concepts labelled ``relabelled`` given a
    second label), its incidence, and the incidence part of what an add of ``first[:again]`` (seen again: only a
    source is added) and ``second`` wrote into it."""
    store = built(first)
    for person in nameless:
        store.store.update(f'DELETE WHERE {{ ?author <http://xmlns.com/foaf/0.1/name> "{person}" }}')
    for label in relabelled:
        second_label(store, label)
    before = incidence_of(store)
    added = OxigraphGraphStore.memory()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "more.txt"
        path.write_text(paper_list(first[:again]) + "\n\n" + paper_list(second, len(first)), encoding="utf-8")
        report = add_lists(store, [path], BASE, added=lambda quads: added.store.extend(incidence_part(quads)))
    assert report.problems == []
    return store, before, added


def second_label(store: OxigraphGraphStore, label: str) -> None:
    """Give the concepts labelled ``label`` a second ``skos:prefLabel`` (data loaded from elsewhere may)."""
    prefix = "PREFIX skos: <http://www.w3.org/2004/02/skos/core#>"
    store.store.update(f'{prefix} INSERT {{ ?c skos:prefLabel "{label} too" }} WHERE {{ ?c skos:prefLabel "{label}" }}')


def same_incidence(found: Incidence, expected: Incidence) -> None:
    for name, value in vars(expected).items():
        other = getattr(found, name)
        if isinstance(value, np.ndarray):
            assert np.array_equal(other, value), name
        elif isinstance(value, Strings):
            assert list(other) == list(value), name
        else:
            assert other == value, name


def test_the_seeds_give_the_row_paths_networks(seed_store) -> None:
    check_everything(authorships(seed_store), incidence_of(seed_store), seed_store)


@given(st.lists(st.text(), unique=True))
def test_strings_round_trip_and_find(texts: list[str]) -> None:
    texts = sorted(texts)
    strings = Strings.of(texts)
    assert list(strings) == texts
    for index, text in enumerate(texts):
        assert strings.find(text) == index
    assert strings.find("\x00not there") is None or "\x00not there" in texts


@given(
    st.lists(st.text(max_size=6), max_size=30),
    st.sampled_from(["", "http://b/author/", "é-", "\U0001f600"]),
    st.text(max_size=6),
)
def test_strings_hold_their_shared_prefix_once_and_read_back_and_find_as_given(
    texts: list[str], prefix: str, absent: str
) -> None:
    """Whatever the texts (sharing a prefix or not, empty, astral), each reads back and is found where it is."""
    given_texts = sorted({prefix + text for text in texts})
    strings = Strings.of(given_texts)
    assert list(strings) == given_texts
    if len(given_texts) > 1:
        assert given_texts[0].startswith(strings.prefix) and len(strings.prefix) >= len(prefix)
        assert strings.blob.nbytes == sum(len(t.encode()) - len(strings.prefix.encode()) for t in given_texts)
    for index, text in enumerate(given_texts):
        assert strings.find(text) == index
    assert strings.find(prefix + absent) == (
        given_texts.index(prefix + absent) if prefix + absent in given_texts else None
    )


@given(
    st.lists(st.text(max_size=6), max_size=30),
    st.sampled_from(["", "http://b/author/", "é-", "\U0001f600"]),
    st.sampled_from(["", "a", "ab"]),
)
def test_strings_joined_of_a_head_and_tails_hold_what_the_whole_strings_give(
    tails: list[str], head: str, shared: str
) -> None:
    """A build's IRIs held from its keys (``joined``, never made whole) are held as the IRIs themselves would be:
    the prefix every string shares (stdlib's ``commonprefix``, the oracle) once, then each rest's UTF-8 bytes."""
    tails = [shared + tail for tail in tails]
    texts = [head + tail for tail in tails]
    prefix = os.path.commonprefix(texts)  # noqa: RUF071 (character by character: what is wanted)
    rests = [text[len(prefix) :].encode("utf-8") for text in texts]
    strings = Strings.joined(head, tails)
    assert strings.prefix == prefix and list(strings) == texts
    assert strings.blob.dtype == np.uint8 and strings.blob.tobytes() == b"".join(rests)
    assert strings.offsets.dtype == np.int64
    assert strings.offsets.tolist() == np.concatenate(([0], np.cumsum([len(r) for r in rests]))).tolist()


@given(st.lists(st.text(max_size=6), max_size=20), st.sampled_from(["", "http://b/author/", "\U0001f600"]), st.data())
def test_strings_taken_at_once_are_each_read_alone(texts: list[str], prefix: str, data: st.DataObject) -> None:
    """``take`` (one gather and decode for many indices, in any order, repeated or none) reads what indexing reads."""
    strings = Strings.of(sorted({prefix + text for text in texts}))
    indices = data.draw(st.lists(st.integers(0, len(strings) - 1), max_size=30) if len(strings) else st.just([]))
    assert strings.take(np.array(indices, dtype=np.int64)) == [strings[i] for i in indices]


def test_strings_kept_before_prefixes_were_held_apart_still_read() -> None:
    """A value pickled by an older bibgraph has no ``prefix`` attribute: it reads as the whole strings."""
    old = Strings.__new__(Strings)
    old.__dict__.update(blob=np.frombuffer(b"ab", dtype=np.uint8), offsets=np.array([0, 1, 2]))
    assert list(old) == ["a", "b"] and old.find("b") == 1
