"""The VoID statistics a build tallies as it writes (:mod:`bibgraph.graph.dataset.voidtally`) equal the engine's
count of the store it filled (:func:`~bibgraph.graph.dataset.void.engine_counts`) and the plain sets'
(:mod:`tests.void_oracle`)."""

from pathlib import Path
from unittest.mock import patch

import pyoxigraph as ox
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset import build, voidtally
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.void import engine_counts
from bibgraph.graph.dataset.voidtally import Distinct
from bibgraph.graph.identity.curation import FILE_NAME
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.dataset.test_dumps_roundtrip import render
from tests.void_oracle import void_counts

# Few words, so that names recur on several papers (persons merged and split by their co-authors), abstracts recur
# with other authors (one literal, two papers) or the same ones (a duplicate record), and an area's label is a name.
WORDS = ["Wei", "Zhang", "Li", "Anna", "Maria", "Models"]
NAMES = st.lists(st.sampled_from(WORDS), min_size=2, max_size=2).map(" ".join)
STUDY = "we study models of graphs and their use."
ABSTRACTS = st.sampled_from(
    [
        STUDY,
        r"we prove $\pi_\theta$ converges *bold* with Über 数据.",
        'we quote "Wei Zhang" and \\emph{models}.',
    ]
)
AREAS = st.one_of(
    st.none(),
    st.tuples(st.sampled_from(["Models", "Wei Zhang", "Graphs"]), st.one_of(st.none(), st.sampled_from(["li", "x"]))),
)
MARKED = st.tuples(NAMES, st.sampled_from(["", "", "*", "✉", "†", "*✉"])).map("".join)  # equal, corresponding, other
AUTHORS = st.one_of(  # short lists often (records of one shape), long ones sometimes (over ten: a cut list)
    st.lists(MARKED, min_size=1, max_size=2, unique_by=str.casefold),
    st.lists(MARKED, min_size=1, max_size=12, unique_by=str.casefold),
)
RECORDS = st.tuples(AREAS, AUTHORS, ABSTRACTS)


def _lists(folder: Path, records: list, copies: int, curated: tuple[str, str] | None) -> None:
    folder.mkdir()
    for number in range(copies):  # a record in two files: a duplicate record, one paper with two sources
        (folder / f"list{number}.txt").write_text(render(records[number:] or records), encoding="utf-8")
    if curated is not None:
        (folder / FILE_NAME).write_text(f"same-name: {curated[0]} = {curated[1]}\n", encoding="utf-8")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(RECORDS, min_size=1, max_size=8),
    st.integers(min_value=1, max_value=3),
    st.one_of(st.none(), st.tuples(NAMES, NAMES)),
)
@example([(("Models", None), ["Wei Zhang", "Li Anna"], STUDY)] * 2, 2, None)
@example([(None, ["Wei Zhang†"], STUDY), (None, ["Li Anna"], STUDY)], 1, None)  # one shape but for a mark
@example([(None, ["Wei Zhang*"], STUDY), (None, ["Li Anna*✉"], STUDY)], 1, None)
def test_the_tally_is_the_engines_count_of_the_filled_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, records: list, copies: int, curated: tuple[str, str] | None
) -> None:
    """Tallies made a few hashes at a time (the distinct counts' merging runs too) equal the engine's counts."""
    monkeypatch.setattr(voidtally, "KEPT_HASHES", 7)
    monkeypatch.setattr(voidtally, "BATCH_LINES", 5)
    monkeypatch.setattr(build, "CHUNK_CHARS", 300)
    folder = tmp_path / f"lists-{len(list(tmp_path.iterdir()))}"
    _lists(folder, records, copies, curated)
    store = OxigraphGraphStore.disk(tmp_path / f"store-{folder.name}")
    store, report = build_graph([folder], base=BASE, store=store, progress=False, describe=False)
    assert report.void is not None
    assert report.void == engine_counts(store.store, Iris(BASE).base) == void_counts(store, Iris(BASE))


def test_a_store_holding_data_already_is_counted_by_the_engine(tmp_path: Path) -> None:
    """Lists built into a store that holds a dump's triples: the tally would miss those, so none is made."""
    _lists(tmp_path / "lists", [(None, ["Wei Zhang"], "we study models of graphs and their use.")], 1, None)
    store = OxigraphGraphStore.memory()
    store.store.add(ox.Quad(ox.NamedNode(f"{BASE}x"), ox.NamedNode(f"{BASE}p"), ox.Literal("loaded")))
    store, report = build_graph([tmp_path / "lists"], base=BASE, store=store, progress=False, describe=False)
    assert report.void is None
    store, report = build_graph([tmp_path / "lists"], base=BASE, store=store, progress=False)
    assert report.triples == store.triple_count()


@given(
    st.lists(st.lists(st.integers(min_value=-3, max_value=40), max_size=12), max_size=6),
    st.integers(min_value=1, max_value=9),
)
def test_distinct_counts_the_values_added_in_any_batches(batches: list[list[int]], kept: int) -> None:
    with patch.object(voidtally, "KEPT_HASHES", kept):
        distinct = Distinct()
        for batch in batches:
            distinct.extend(batch)
        assert distinct.count() == len({value for batch in batches for value in batch})
