"""Differential: the concept index an add updates (figures and paper orders) equals the index of the whole new
store computed from scratch, on generated lists (new papers, new areas and subareas, records seen again under
another area, papers without authors, people named only by the add)."""

import tempfile
from pathlib import Path
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.dataset.add import add_lists
from bibgraph.graph.networks.incidence import incidence_of, incidence_part
from bibgraph.graph.rdf.vocab import BG
from bibgraph.graph.site import conceptindex
from bibgraph.graph.site.conceptindex import ConceptFigures, concept_index
from bibgraph.graph.site.conceptupdate import updated_index
from bibgraph.graph.sparql.queries import bind, named_query
from bibgraph.graph.stores.store import OxigraphGraphStore
from tests.conftest import BASE
from tests.networks.test_incidence import PEOPLE, SUBJECTS, built, paper_list, records_of

# First authors in every case and with accents, so that papers' places follow the folded order (reading_key):
# a merge by labels as written would put "ägir Alpha …" after "Hal Theta …" and "ANN Beta …" before "Ann Alpha …".
MIXED = [*PEOPLE, "ägir Alpha", "ANN Beta", "Éve Eta", "zoë Zeta"]
records = records_of(MIXED)

# A list of names with no separator: kept whole (``bg:authorListUnsplit``), a paper with no ``dcterms:creator``.
UNSPLIT = "Ann Alpha Bob Beta Cid Gamma Dan Delta"
subjects = st.lists(st.none() | st.sampled_from([*SUBJECTS, "Robots", "Theory · Graphs"]), max_size=6)


def index(store: OxigraphGraphStore) -> tuple[dict[str, ConceptFigures], dict[str, list[str]]]:
    figures, orders = {}, {}
    for concept, order in concept_index(store):
        figures[concept.iri], orders[concept.iri] = concept, order
    return figures, orders


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records,
    records,
    subjects,
    st.integers(0, 2),
    st.sets(st.sampled_from(PEOPLE), max_size=2),
    st.integers(1, 4),
    st.integers(1, 3),
    st.sampled_from(["none", "some", "all"]),
)
def test_an_updated_concept_index_equals_the_index_computed_again(
    first, second, again, unsplit, nameless, chunk, top, titled
) -> None:
    """``again`` lists records of the first list again, each under another area (or none); ``unsplit`` papers have
    an author line with no separator; the ``nameless`` people lost their names in the first store (data loaded
    from elsewhere), so the add names them; orders are kept in pieces of ``chunk``, top authors cut at ``top``;
    the labels of ``titled`` previous papers are kept apart (a search index's titles): the placement reads those
    there, and asks the store for no label when every one is."""
    store = built(first)
    for person in nameless:
        store.store.update(f'DELETE WHERE {{ ?author <http://xmlns.com/foaf/0.1/name> "{person}" }}')
    with mock.patch.object(conceptindex, "TOP_AUTHORS", top):
        previous, orders = index(store)
        papers = sorted({paper for order in orders.values() for paper in order})
        rows = store.select(bind(named_query("paper_labels").text, paper=papers)) if papers else []
        labels = {str(row["paper"]): str(row["label"]) for row in rows}
        kept = {"none": {}, "some": dict(list(labels.items())[::2]), "all": labels}[titled]
        seen_again = [(subject, authors, cut) for subject, (_, authors, cut) in zip(again, first, strict=False)]
        text = paper_list(seen_again) + "\n\n" + paper_list(second, len(first))
        for number in range(unsplit):
            area = SUBJECTS[number % len(SUBJECTS)]
            text += f"\n\n{area}\n{UNSPLIT}\nWe study unsplit problem {number} and improve the state of the art."
        added = OxigraphGraphStore.memory()
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "more.txt"
            path.write_text(text, encoding="utf-8")
            report = add_lists(store, [path], BASE, added=lambda quads: added.store.extend(incidence_part(quads)))
        assert report.problems == []

        def piece(iri: str, number: int) -> list[str]:
            return orders[iri][number * chunk : (number + 1) * chunk]

        probes: list[str] = []
        select = store.select

        def counted(query: str) -> list:
            probes.extend([query] if "SELECT ?paper ?label WHERE" in query and "authorList" not in query else [])
            return select(query)

        with mock.patch.object(store, "select", counted):
            updates = list(
                updated_index(
                    previous,
                    piece,
                    chunk,
                    added,
                    store,
                    incidence_of(store),
                    lambda iris: {i: kept[i] for i in iris if i in kept},
                )
            )
        assert titled != "all" or probes == []
        expected, expected_orders = index(store)
    assert [update.figures.iri for update in updates] == list(expected)
    assert {update.figures.iri: update.figures for update in updates} == expected
    for update in updates:
        iri = update.figures.iri
        assert update.kept <= max(1, -(-len(orders.get(iri, [])) // chunk))
        assert orders.get(iri, [])[: update.kept * chunk] + update.tail == expected_orders[iri]
    assert bool(store.store.query(f"ASK {{ ?paper <{BG.authorListUnsplit}> true }}")) == bool(unsplit)
