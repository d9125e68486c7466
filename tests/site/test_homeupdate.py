"""Differential: the home figures an add updates (summary, papers by listed authors, authors by co-authors, from
the kept raw counts) equal those of the whole new store computed from scratch, on generated lists (new papers and
people, records seen again under another area, papers without authors, people named only by the add)."""

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.dataset.sitedata import home_figures
from bibgraph.graph.networks.coauthor import coauthor_degrees
from bibgraph.graph.networks.incidence import incidence_of, incidence_part
from bibgraph.graph.site.homeupdate import Written, updated_home
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.networks.test_incidence import PEOPLE, SUBJECTS, built, paper_list
from tests.site.test_conceptupdate import UNSPLIT, index, records, subjects


def figures_of(store: OxigraphGraphStore) -> dict:
    return home_figures(store, coauthor_degrees(incidence_of(store)), index(store)[0])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, records, subjects, st.integers(0, 2), st.sets(st.sampled_from(PEOPLE), max_size=2))
def test_updated_home_figures_equal_the_figures_computed_again(first, second, again, unsplit, nameless) -> None:
    """``again`` lists records of the first list again, each under another area (or none); ``unsplit`` papers have
    an author line with no separator; the ``nameless`` people lost their names in the first store (persons with no
    paper in the incidence: the degree chart's zero), so the add names them."""
    store = built(first)
    for person in nameless:
        store.store.update(f'DELETE WHERE {{ ?author <http://xmlns.com/foaf/0.1/name> "{person}" }}')
    before, previous = incidence_of(store), figures_of(store)
    seen_again = [(subject, authors, cut) for subject, (_, authors, cut) in zip(again, first, strict=False)]
    text = paper_list(seen_again) + "\n\n" + paper_list(second, len(first))
    for number in range(unsplit):
        area = SUBJECTS[number % len(SUBJECTS)]
        text += f"\n\n{area}\n{UNSPLIT}\nWe study unsplit problem {number} and improve the state of the art."
    added, written = OxigraphGraphStore.memory(), Written()

    def keep(quads: list) -> None:
        added.store.extend(incidence_part(quads))
        written.observe(quads)

    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "more.txt"
        path.write_text(text, encoding="utf-8")
        report = add_lists(store, [path], BASE, added=keep)
    assert report.problems == []
    expected = figures_of(store)
    assert updated_home(previous, written, before, incidence_of(store), added.store, index(store)[0]) == expected


def test_a_version_keeping_no_raw_counts_is_derived_in_full() -> None:
    store = built([(None, ["Ann Alpha", "Bob Beta"], False)])
    previous = {key: value for key, value in figures_of(store).items() if key != "counts"}
    incidence = incidence_of(store)
    assert updated_home(previous, Written(), incidence, incidence, [], {}) is None
