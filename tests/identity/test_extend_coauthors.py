"""The shared names' persons an add ranks (graph/identity/extend.py): their papers and co-authors' names read from
the dataset's incidence (graph/dataset/add.py, ``incidence_coauthors``) are the store's, and an add given them
decides every authorship as one that asks the store."""

from pathlib import Path

from hypothesis import HealthCheck, example, given, settings

from bibgraph.graph.dataset.add import add_lists, incidence_coauthors
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.identity.extend import holder_coauthors
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.identity.test_extend import CANNOT, RARE, papers, persons, write

NAMES = CANNOT + RARE[:2]
# "Wei Wang" twice on a paper: two persons of one shared name, each with papers and co-authors.
SHARED = [(["Wei Wang", "Ann Lee", "Wei Wang"], ["graph", "parsing"]), (["Wei Wang", "Yang Liu"], ["speech", "robot"])]
HOLDERS = "SELECT DISTINCT ?holder WHERE { ?name bg:nameOf ?holder }"
PERSONS = "SELECT ?person WHERE { ?person a foaf:Person }"


def people(store: OxigraphGraphStore, query: str) -> list[str]:
    return sorted(str(next(iter(row.values()))) for row in store.select(sparql_prologue() + query))


def test_a_shared_names_persons_figures_from_the_incidence(tmp_path: Path) -> None:
    store, _ = build_graph([write(tmp_path / "a.txt", SHARED, "a")], base=BASE, progress=False)
    held = people(store, HOLDERS)
    figures = incidence_coauthors(incidence_of(store))(held)
    assert len(held) == 2 and sorted(papers for papers, _ in figures.values()) == [1, 2]
    assert figures == holder_coauthors(store, held)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=papers(NAMES))
@example(first=SHARED)
def test_the_incidence_gives_the_stores_figures(tmp_path: Path, first: list) -> None:
    store, _ = build_graph([write(tmp_path / "a.txt", first, "a")], base=BASE, progress=False)
    everyone = people(store, HOLDERS) + people(store, PERSONS)
    assert incidence_coauthors(incidence_of(store))(everyone) == holder_coauthors(store, everyone)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=papers(NAMES), second=papers(NAMES))
@example(first=SHARED, second=[(["Wei Wang", "Yang Liu", "Cora Moss"], ["market", "poetry"])])
def test_an_add_given_the_incidence_decides_as_one_asking_the_store(tmp_path: Path, first: list, second: list) -> None:
    found = []
    for from_incidence in (False, True):
        store, _ = build_graph([write(tmp_path / "a.txt", first, "a")], base=BASE, progress=False)
        coauthors = incidence_coauthors(incidence_of(store)) if from_incidence else None
        add_lists(store, [write(tmp_path / "b.txt", second, "b")], BASE, coauthors=coauthors)
        found.append(persons(store))
    assert found[0] == found[1]
