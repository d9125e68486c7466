"""The incidence a build makes from its own pass (``graph/networks/incidencebuild.py``) is the one read back from its
store (``incidence_of``, the oracle): the same arrays, array for array, of the same types."""

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import Incidence, incidence_of, to_arrays
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.networks.test_incidence import SUBJECTS, paper_list
from tests.site.test_rolesbuild import records

subjects = st.none() | st.sampled_from(SUBJECTS)


def same_incidence(one: Incidence, other: Incidence) -> bool:
    first, second = to_arrays(one), to_arrays(other)
    return first.keys() == second.keys() and all(
        first[name].dtype == second[name].dtype and np.array_equal(first[name], second[name]) for name in first
    )


def built_with_incidence(generated: list, again: list) -> tuple[OxigraphGraphStore, Incidence | None]:
    """The records built, the first ``len(again)`` listed twice (one paper, two sources) under the subjects
    ``again``; the store and the incidence the build made."""
    repeated = [(subject, authors, cut) for subject, (_, authors, cut) in zip(again, generated, strict=False)]
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "list.txt"
        path.write_text(paper_list(generated) + ("\n\n" + paper_list(repeated) if repeated else ""), encoding="utf-8")
        made: list[Incidence] = []
        store, report = build_graph([path], base=BASE, progress=False, incidence=made.append)
    assert report.problems == [] and len(made) == 1
    return store, made[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.lists(subjects, max_size=4))
def test_the_incidence_of_the_builds_pass_is_the_one_read_from_its_store(generated, again) -> None:
    """Differential on generated corpora (names listed twice, cut lists, papers without an area or without a named
    author, records seen twice under another subject or none): the build's arrays are the store's."""
    store, incidence = built_with_incidence(generated, again)
    assert incidence is not None and same_incidence(incidence, incidence_of(store))


def test_the_seeds_incidence_from_the_build_is_the_stores() -> None:
    """The seeds (long lists, cut lists, papers of two subjects, shared names): equal, and not empty."""
    made: list[Incidence] = []
    store, report = build_graph([], base=BASE, progress=False, roles=True, incidence=made.append)
    [incidence] = made
    assert same_incidence(incidence, incidence_of(store))
    assert len(incidence.papers) == report.papers and incidence.truncated.any()
    assert 0 < len(incidence.concepts) <= report.concepts
