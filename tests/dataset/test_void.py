"""The VoID statistics a build has the engine count, and those an add updates from what it adds, equal the
plain counts over every triple (:mod:`tests.void_oracle`)."""

from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import build, void
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.void import engine_counts, recorded_counts, void_lines, void_quads
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore
from bibgraph.seeds import seed_directory
from tests.conftest import BASE as SITE
from tests.dataset.test_dumps_roundtrip import _record, render
from tests.void_oracle import void_counts

BASE = "http://example.org/"
TYPE = ox.NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
# Few terms, so that added triples often share subjects, objects, classes and properties with earlier ones.
NODES = [ox.NamedNode(f"{BASE}n{i}") for i in range(6)] + [ox.NamedNode(f"http://other.org/m{i}") for i in range(3)]
CLASSES = [ox.NamedNode(f"http://example.org/vocab#C{i}") for i in range(3)]
PROPERTIES = [TYPE, *(ox.NamedNode(f"http://example.org/vocab#p{i}") for i in range(3))]
VALUES = [
    *NODES,
    *CLASSES,
    ox.Literal("a"),
    ox.Literal("1", datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer")),
]


@st.composite
def quads(draw: st.DrawFn) -> ox.Quad:
    predicate = draw(st.sampled_from(PROPERTIES))
    value = draw(st.sampled_from(CLASSES if predicate == TYPE else VALUES))
    return ox.Quad(draw(st.sampled_from(NODES)), predicate, value)


@settings(max_examples=200, deadline=None)
@given(st.lists(quads(), max_size=25), st.lists(st.lists(quads(), max_size=15), max_size=4))
def test_updated_statistics_equal_counted_ones(built: list[ox.Quad], batches: list[list[ox.Quad]]) -> None:
    iris = Iris(BASE)
    store = OxigraphGraphStore.memory()
    store.store.extend(built)
    counts = void_counts(store, iris)
    store.load_ntriples(void_lines(counts, iris))
    counts = recorded_counts(void_quads(store, iris), iris)  # as an add finds them: read back from the store
    for quad in void_quads(store, iris):
        store.store.remove(quad)
    for batch in batches:  # as add_lists writes: each triple once, only those the store does not hold
        fresh = [quad for quad in dict.fromkeys(batch) if quad not in store.store]
        counts.observe(store.store, fresh, BASE)
        store.store.extend(fresh)
    assert counts == void_counts(store, iris)


def _stated_and_counted(store: OxigraphGraphStore, iris: Iris) -> tuple[void.VoidCounts, void.VoidCounts]:
    """What the build's VoID description states, and the engine's counts over the data (the description set aside)."""
    described = void_quads(store, iris)
    stated = recorded_counts(described, iris)
    for quad in described:
        store.store.remove(quad)
    return stated, void_counts(store, iris)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_record, min_size=1, max_size=6), st.integers(min_value=1, max_value=3))
def test_a_build_states_the_statistics_counted_over_its_triples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: list, copies: int
) -> None:
    """Generated lists (records repeated across files, so the same papers, authors and areas recur, and duplicate
    records add sources to one paper), cut into chunks of a few lines: the stated figures are the plain counts over
    the store's triples, and the report counts the data and its description."""
    monkeypatch.setattr(build, "CHUNK_CHARS", 300)
    folder = tmp_path / f"lists-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for number in range(copies):
        (folder / f"list{number}.txt").write_text(render(generated[number:] or generated), encoding="utf-8")
    iris = Iris(SITE)
    disk = OxigraphGraphStore.disk(tmp_path / f"store-{folder.name}")
    store, report = build_graph([folder], base=SITE, store=disk, progress=False)
    assert report.triples == store.triple_count()
    stated, counted = _stated_and_counted(store, iris)
    assert stated == counted
    assert stated.subjects > 0 and stated.objects > 0 and stated.entities > 0


def test_an_in_memory_build_of_the_seeds_states_the_plain_statistics() -> None:
    iris = Iris(SITE)
    store, report = build_graph([seed_directory()], base=SITE, progress=False)
    assert report.triples == store.triple_count()
    stated, counted = _stated_and_counted(store, iris)
    assert stated == counted


BLANKS = [ox.BlankNode(f"b{i}") for i in range(2)]
TEXTS = st.text(alphabet=st.sampled_from(' ."\\<>a\u3000\u2028\u00a0\U0001f600'), max_size=8)


@st.composite
def any_quads(draw: st.DrawFn) -> ox.Quad:
    """Named and blank subjects, the base's and others', classes that are literals too, literals that differ only
    in language or datatype."""
    subject = draw(st.sampled_from([*NODES, *BLANKS]))
    predicate = draw(st.sampled_from(PROPERTIES))
    text = draw(TEXTS)
    value = draw(
        st.one_of(
            st.sampled_from([*NODES, *BLANKS, *CLASSES]),
            st.just(ox.Literal(text)),
            st.just(ox.Literal(text, language="en")),
            st.just(ox.Literal(text, datatype=ox.NamedNode("http://example.org/vocab#d"))),
        )
    )
    return ox.Quad(subject, predicate, value)


@settings(max_examples=100, deadline=None)
@given(st.lists(any_quads(), max_size=40))
def test_the_engine_counts_what_plain_sets_count(quads: list[ox.Quad]) -> None:
    store = OxigraphGraphStore.memory()
    store.store.extend(quads)
    assert engine_counts(store.store, BASE) == void_counts(store, Iris(BASE))
