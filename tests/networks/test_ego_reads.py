"""An ego map reads what it draws: the names of the co-authors that may make its cut, the rows of its own authors.
At a million papers the first ego map of the most prolific author read 13,344 names one by one and counted every
authorship (0.8 s of its 1.5 s); its answer is the same (``test_incidence.py`` checks it against the oracle)."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks import Filters, coauthor, ego
from bibgraph.graph.networks.incidence import Incidence, Strings, incidence_of
from tests.conftest import BASE

ABSTRACT = "We study a problem. Our method improves the state of the art on three benchmarks number {}."
# Cid wrote two papers with Ann and with Bob, one with Dan, one with Eve; Fay never with Cid.
LISTS = "\n\n".join(
    [
        "X · One\nAnn A, Bob B, Cid C\n" + ABSTRACT.format(1),
        "X · One\nAnn A, Bob B, Cid C\n" + ABSTRACT.format(2),
        "X · Two\nCid C, Dan D\n" + ABSTRACT.format(3),
        "Y\nEve E, Cid C\n" + ABSTRACT.format(4),
        "Y\nFay F, Eve E\n" + ABSTRACT.format(5),
    ]
)


class Recorded(Strings):
    """Strings that note every index read."""

    def __init__(self, strings: Strings) -> None:
        super().__init__(strings.blob, strings.offsets, strings.prefix)
        self.read: list[int] = []

    def __getitem__(self, index: int) -> str:  # type: ignore[override]
        self.read.append(int(index))
        return super().__getitem__(index)

    def take(self, indices: np.ndarray) -> list[str]:
        self.read += [int(index) for index in indices]
        return super().take(indices)


@pytest.fixture(scope="module")
def incidence(tmp_path_factory) -> Incidence:
    path = tmp_path_factory.mktemp("ego") / "list.txt"
    path.write_text(LISTS, encoding="utf-8")
    store, report = build_graph([path], base=BASE, progress=False)
    assert report.problems == []
    return incidence_of(store)


def author(incidence: Incidence, key: str) -> str:
    """The IRI of the author whose key (a hash after it) is ``key``."""
    return next(iri for iri in incidence.authors if iri.rsplit("/", 1)[1].rsplit("-", 1)[0] == key)


@pytest.mark.parametrize(("top", "named"), [(1, {"ann-a", "bob-b"}), (2, {"ann-a", "bob-b"}), (3, None)])
def test_an_ego_reads_the_names_of_the_coauthors_at_or_above_its_cut_only(incidence, top, named) -> None:
    """Cid's co-authors by joint papers: Ann 2, Bob 2, Dan 1, Eve 1. With 1 or 2 drawn, only Ann's and Bob's names
    decide (the tie at 2); with 3, the tie at 1 needs Dan's and Eve's too."""
    recorded = Recorded(incidence.names)
    seen = dataclasses.replace(incidence, names=recorded)
    rings, coauthors = ego.ego_rings(seen, author(incidence, "cid-c"), 1, top)
    assert (rings, coauthors) == ego.ego_rings(incidence, author(incidence, "cid-c"), 1, top)
    assert coauthors == 4
    keys = {incidence.authors[index].rsplit("/", 1)[1].rsplit("-", 1)[0] for index in recorded.read}
    assert keys == (named if named is not None else {"ann-a", "bob-b", "dan-d", "eve-e"})


def test_ranked_orders_by_count_then_name_then_number(incidence) -> None:
    numbers = {key: incidence.author_id(author(incidence, key)) for key in ("ann-a", "bob-b", "dan-d", "eve-e")}
    counts = Counter({numbers["eve-e"]: 1, numbers["dan-d"]: 1, numbers["bob-b"]: 2, numbers["ann-a"]: 1})
    assert ego.ranked(incidence, counts, 2) == [numbers["bob-b"], numbers["ann-a"]]
    assert ego.ranked(incidence, counts, 9) == [numbers[key] for key in ("bob-b", "ann-a", "dan-d", "eve-e")]
    assert ego.ranked(incidence, counts, 0) == [] and ego.ranked(incidence, Counter(), 3) == []


@pytest.mark.parametrize(
    ("keys", "links"),
    [
        (["cid-c", "ann-a", "dan-d"], {("ann-a", "cid-c"): 2, ("cid-c", "dan-d"): 1}),
        (["fay-f", "eve-e", "cid-c", "bob-b"], {("bob-b", "cid-c"): 2, ("cid-c", "eve-e"): 1, ("eve-e", "fay-f"): 1}),
        (["fay-f"], {}),
    ],
)
def test_a_network_of_named_authors_is_made_from_their_own_rows(incidence, keys, links) -> None:
    """Without the pairs by paper (what a map of every author masks), its authors and joint papers (the oracle of
    ``test_incidence.py`` checks every other attribute)."""
    filters = Filters(authors=frozenset(author(incidence, key) for key in keys))
    own = coauthor.coauthor_network(dataclasses.replace(incidence, ap_paper=None, ap_author=None), filters)
    assert sorted(own.nodes) == sorted(author(incidence, key) for key in keys)
    key = {author(incidence, k): k for k in keys}
    assert {tuple(sorted((key[a], key[b]))): weight for a, b, weight in own.edges(data="weight")} == links
    assert own.graph["total_authors"] == len(keys)
