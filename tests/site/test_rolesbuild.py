"""The roles a build makes from its own pass (``graph/site/rolesbuild.py``) are those read back from its store
(``roles_of``, the oracle): the same arrays, the same papers without a named author, the same checksum."""

import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.roles import Roles, matches, roles_of
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.networks.test_incidence import SUBJECTS, paper_list

# names listed twice on one paper (two persons of one name), equal but for case or accents
PEOPLE = ["Ann Alpha", "ann alpha", "Ánn Alpha", "Bob Beta", "Cid Gamma", "Dan Delta"]
UNSPLIT = "Ann Lee Bo Chen Cy Diaz Dan Wu Eve Fox"  # no separators: kept whole, no person (docs/input.md)
records = st.lists(
    st.tuples(
        st.none() | st.sampled_from(SUBJECTS),  # no area, an area, a subarea
        st.lists(st.sampled_from(PEOPLE), min_size=1, max_size=6) | st.just([UNSPLIT]),  # not unique; no author
        st.booleans(),  # cut (等)
    ),
    min_size=1,
    max_size=12,
)


def same_roles(one: Roles, other: Roles) -> bool:
    arrays = ("repeats", "positions", "listed")
    return (
        all(np.array_equal(getattr(one, name), getattr(other, name)) for name in arrays)
        and all(getattr(one, name).dtype == getattr(other, name).dtype for name in arrays)
        and list(one.others) == list(other.others)
        and one.fingerprint == other.fingerprint
    )


def built_with_roles(generated: list, again: int = 0) -> tuple[OxigraphGraphStore, Roles | None]:
    """The records (the first ``again`` listed twice: one paper, two sources) built, and the roles the build made."""
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "list.txt"
        text = paper_list(generated) + ("\n\n" + paper_list(generated[:again]) if again else "")
        path.write_text(text, encoding="utf-8")
        store, report = build_graph([path], base=BASE, progress=False, roles=True)
    assert report.problems == []
    return store, report.roles


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.integers(0, 3))
def test_the_roles_of_the_builds_pass_are_the_roles_read_from_its_store(generated, again) -> None:
    """Differential on generated corpora (names listed twice, cut lists, papers without an area or without a named
    author, records seen twice): the build's arrays equal the store's, and match the incidence read from it."""
    store, roles = built_with_roles(generated, again)
    incidence = incidence_of(store)
    oracle = roles_of(store, incidence)
    assert roles is not None and oracle is not None
    assert matches(roles, incidence) and same_roles(roles, oracle)


def test_the_seeds_roles_from_the_build_are_the_stores() -> None:
    """The seeds (long lists, cut lists, papers of two subjects, shared names): equal both ways."""
    store, report = build_graph([], base=BASE, progress=False, roles=True)
    incidence = incidence_of(store)
    oracle = roles_of(store, incidence)
    assert report.roles is not None and oracle is not None and same_roles(report.roles, oracle)
    assert len(report.roles.positions) == report.authorships  # every authorship of the seeds has a position


def test_a_build_asked_for_no_roles_makes_none() -> None:
    assert build_graph([], base=BASE, progress=False)[1].roles is None
