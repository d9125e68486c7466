"""Differential: the incidence an add merges into the previous one's arrays equals the store's read again."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.networks.incidencemerge import merged
from tests.networks.test_incidence import PEOPLE, added_to, records, same_incidence

taken = [0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, records, st.integers(0, 3), st.sets(st.sampled_from(PEOPLE), max_size=2))
def test_a_merged_incidence_equals_the_incidence_read_again(first, second, again, nameless) -> None:
    """New papers and authors between the previous ones, records seen again, people named only by the add (the
    ``nameless`` lost their names in the first store), papers whose authors are all nameless (left out)."""
    store, before, added = added_to(first, second, again, nameless)
    found = merged(before, added, store)
    if found is not None:
        taken[0] += 1
        same_incidence(found, incidence_of(store))


def test_most_generated_adds_are_merged() -> None:
    """The cases merged (not left to the rows) are most of them: the test above tests something."""
    taken[0] = 0
    test_a_merged_incidence_equals_the_incidence_read_again()
    assert taken[0] >= 30
