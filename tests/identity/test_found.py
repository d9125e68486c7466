"""Authorships read back by number: the written form of one, or of many in any order, equals the form its record's
row holds at its position (the rows read as tuples: the reference)."""

import random

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.identity.features import Collected
from bibgraph.graph.identity.found import Authorships, written_forms

NAMES = ["Ada Lovelace", "ADA LOVELACE", "Yi Ren", "Ö Şen", "周欣", "Bo Wu", "Zed"]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(NAMES), max_size=5).map(tuple), max_size=8),
    st.randoms(use_true_random=False),
    st.integers(1, 4),
)
def test_written_forms_equal_each_records_row_at_the_position(
    records: list[tuple[str, ...]], shuffle: random.Random, chunk: int
) -> None:
    collected = Collected()
    for number, authors in enumerate(records):
        collected.add(authors, "", "", "x", f"{number:016x}", ("f", number))
    authorships = Authorships(collected, collected.coauthors())
    count = sum(map(len, records))
    expected = []
    for number in range(count):
        record, position = authorships.mention(number)
        expected.append(records[record][position])
        assert authorships.written(number) == collected.written[record][position] == expected[-1]
    members = np.arange(count, dtype=np.int64)
    shuffle.shuffle(members)
    assert list(written_forms(authorships, members, chunk)) == [expected[m] for m in members.tolist()]
