"""Differential: the incidence an add merges into the previous one's arrays equals the store's read again."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.incidencemerge import merged
from tests.networks.test_incidence import PEOPLE, added_to, records, same_incidence, second_label

LABELS = ["Vision", "Detection", "Language", "Parsing"]  # of SUBJECTS' areas and subareas


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records,
    records,
    st.integers(0, 3),
    st.sets(st.sampled_from(PEOPLE), max_size=2),
    st.sets(st.sampled_from(LABELS), max_size=2),
    st.sets(st.sampled_from(LABELS), max_size=1),
)
def test_a_merged_incidence_equals_the_incidence_read_again(first, second, again, nameless, before, after) -> None:
    """New papers and authors between the previous ones, records seen again, people named only by the add (the
    ``nameless`` lost their names in the first store), papers whose authors are all nameless (left out), concepts
    with two labels (an entry each: given in the first store, or to a concept the add brings)."""
    store, previous, added = added_to(first, second, again, nameless, before)
    known = {concept.label for concept in previous.concepts} | {concept.area_label for concept in previous.concepts}
    for label in after - known:  # a concept new to the incidence: its entries are read as the merge finds them
        second_label(store, label)
    same_incidence(merged(previous, added, store), incidence_of(store))


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(LABELS))
def test_a_concept_relabelled_after_the_previous_incidence_is_left_to_a_whole_read(label) -> None:
    """No add relabels a concept; if its entries changed anyway, the merge says so (None) rather than keep the old
    ones for its earlier papers: the caller reads the whole store."""
    first = [("Vision · Detection", ["Ann Alpha"], False), ("Language · Parsing", ["Bob Beta"], False)]
    store, previous, added = added_to(first, [("Vision · Detection", ["Cid Gamma"], False)], 0)
    second_label(store, label)
    assert merged(previous, added, store) is None
