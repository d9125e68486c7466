"""``Incidence.papers_of``: the one slicing of many authors' papers (a profile, close papers, authors' counts)."""

from collections import defaultdict

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.incidence import incidence_of
from tests.networks.test_incidence import built, records


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.data())
def test_the_papers_of_authors_are_each_authors_creator_rows_in_turn(generated, data) -> None:
    store = built(generated)
    incidence = incidence_of(store)
    written = defaultdict(set)
    for row in store.select("SELECT ?p ?a WHERE { ?p <http://purl.org/dc/terms/creator> ?a }"):
        written[str(row["a"])].add(str(row["p"]))
    count = len(incidence.authors)
    chosen = data.draw(st.lists(st.integers(0, count - 1), max_size=6))  # repeated authors too
    found = [incidence.papers[int(p)] for p in incidence.papers_of(np.array(chosen, dtype=np.int64))]
    expected = [paper for a in chosen for paper in sorted(written[incidence.authors[a]])]
    assert found == expected
