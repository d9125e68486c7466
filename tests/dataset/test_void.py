"""The VoID statistics a build counts from its lines, and those an add updates from what it adds, equal the
engine's counts over the whole graph (:mod:`tests.void_oracle`)."""

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import void
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.void import DistinctTerms, VoidTally, recorded_counts, void_lines, void_quads
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
def test_a_build_states_the_statistics_the_engine_counts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, generated: list, copies: int
) -> None:
    """Generated lists (records repeated across files, so the same papers, authors and areas recur), the
    distinct counts spilled to their temporary files after every few digests: the stated figures are the
    engine's."""
    monkeypatch.setattr(void, "SPILL_BYTES", 16 * 8)
    monkeypatch.setattr(void, "RECENT", 4)
    monkeypatch.setattr(void, "BATCH_LINES", 5)  # runs of a subject cut across batches, too
    folder = tmp_path / f"lists-{len(list(tmp_path.iterdir()))}"
    folder.mkdir()
    for number in range(copies):
        (folder / f"list{number}.txt").write_text(render(generated[number:] or generated), encoding="utf-8")
    iris = Iris(SITE)
    store, _ = build_graph([folder], base=SITE, progress=False)
    stated, counted = _stated_and_counted(store, iris)
    assert stated == counted
    assert stated.subjects > 0 and stated.objects > 0 and stated.entities > 0


def test_a_disk_build_of_the_seeds_states_the_engines_statistics(tmp_path: Path) -> None:
    iris = Iris(SITE)
    store, _ = build_graph(
        [seed_directory()], base=SITE, store=OxigraphGraphStore.disk(tmp_path / "store"), progress=False
    )
    stated, counted = _stated_and_counted(store, iris)
    assert stated == counted


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(max_size=6), max_size=200), st.integers(min_value=1, max_value=6))
def test_distinct_terms_are_counted_exactly_whatever_spills(terms: list[str], spill_digests: int) -> None:
    """Any texts (empty, astral, repeated) are counted once each, through the buffers, the memory of recent
    digests and the spilled files alike; the files are gone once closed."""
    terms = [term.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for term in terms]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(void, "SPILL_BYTES", 16 * spill_digests)
        patch.setattr(void, "RECENT", 3)
        counter = DistinctTerms()
        try:
            for start in range(0, len(terms), 7):  # batches of a few terms, so the recent ones are forgotten often
                counter.update(terms[start : start + 7])
            spilled = counter.directory
            assert counter.count() == len(set(terms))
        finally:
            counter.close()
    assert spilled is None or not spilled.exists()
    if len(set(terms)) > spill_digests + 3:  # more distinct digests than the buffers and the recent ones hold
        assert spilled is not None


def test_a_failed_build_leaves_no_temporary_files(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Path] = []
    original = tempfile.mkdtemp

    def mkdtemp(**options: str) -> str:
        made.append(Path(original(**options)))
        return str(made[-1])

    monkeypatch.setattr(void, "SPILL_BYTES", 16)
    monkeypatch.setattr(void, "BATCH_LINES", 10)
    monkeypatch.setattr(void.tempfile, "mkdtemp", mkdtemp)

    def lines() -> Iterator[str]:
        for number in range(50):
            yield f"<{SITE}s{number}> <{TYPE.value}> <{SITE}C{number}> .\n"
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), VoidTally(SITE) as tally:
        for _ in tally.lines(lines()):
            pass
    assert len(made) == 3  # subjects, objects and entities each spilled
    assert not any(path.exists() for path in made)


def test_a_dataset_build_spills_into_its_version_and_keeps_nothing_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The counts' temporary files go inside the version being built (so a killed build's are removed with it)
    and are gone before the checksums are taken: the version holds only what its manifest lists."""
    from bibgraph.graph.dataset.directory import verify
    from bibgraph.web.commands.versionwrite import build_dataset

    made: list[Path] = []
    original = tempfile.mkdtemp

    def mkdtemp(**options: str) -> str:
        made.append(Path(original(**options)))
        return str(made[-1])

    monkeypatch.setattr(void, "SPILL_BYTES", 16 * 64)
    monkeypatch.setattr(void.tempfile, "mkdtemp", mkdtemp)
    monkeypatch.setattr("bibgraph.web.commands.versionwrite.derive", lambda version, base, previous=None: None)
    version, _ = build_dataset([seed_directory()], tmp_path / "dataset", SITE)
    assert len(made) == 3  # subjects, objects, entities: each inside the version being built (a temporary)
    assert all(tmp_path in path.parents and path.parent.name.startswith(f".{version.name}.") for path in made)
    assert not any(path.exists() for path in made)
    assert not list(version.glob("bibgraph-void-*")) and verify(version) == []


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(' ."\\<>a\u3000\u2028\u00a0'), max_size=12), min_size=1, max_size=30))
def test_the_tally_splits_every_line_as_its_three_terms(texts: list[str]) -> None:
    """Literals holding spaces, " .", U+3000, U+2028 or U+00A0 are one object each: the batch's one split
    (a regular expression over the joined lines) counts what splitting each line alone counts."""
    from bibgraph.graph.rdf.ntriples import literal

    lines = [f"<{SITE}s{n % 3}> <{SITE}p{n % 2}> {literal(text)} .\n" for n, text in enumerate(texts)]
    with VoidTally(SITE) as tally:
        chunks = list(tally.chunks(lines))
        counts = tally.counts()
    assert b"".join(chunks) == "".join(lines).encode("utf-8")
    split = [line[:-3].split(" ", 2) for line in lines]
    assert counts.triples == len(lines)
    assert counts.subjects == len({s for s, _, _ in split})
    assert counts.objects == len({o for _, _, o in split})
    assert counts.properties == {p[1:-1]: sum(1 for _, q, _ in split if q == p) for _, p, _ in split}


def test_a_line_that_is_not_one_statement_is_refused() -> None:
    with VoidTally(SITE) as tally, pytest.raises(ValueError, match="not one N-Triples statement"):
        list(tally.chunks([f"<{SITE}s> <{SITE}p> <{SITE}o> .\n", "<broken>\n"]))
