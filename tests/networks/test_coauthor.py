"""The co-author links counted by array passes (:func:`joint_links`) are the pair-by-pair loop's, exactly: the same
links in the same order, the same joint-paper counts, the same fractional sums to the last bit, the same cut flags."""

from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks import coauthor
from bibgraph.graph.networks.coauthor import joint_links

# papers: (whole list's size beyond the kept authors, cut?, kept authors); authors are small ints, so links repeat
papers = st.lists(
    st.tuples(st.integers(0, 3), st.booleans(), st.sets(st.integers(0, 12), max_size=7)),
    max_size=25,
)


def looped(rows: list[tuple[int, int]], sizes: np.ndarray, truncated: np.ndarray) -> list[tuple]:
    """The loop the array passes replaced: every pair of each paper's kept authors, summed paper by paper."""
    edges: dict[tuple[int, int], list] = {}
    by_paper: dict[int, list[int]] = {}
    for paper, author in rows:
        by_paper.setdefault(paper, []).append(author)
    for paper, authors in by_paper.items():
        if len(authors) < 2:
            continue
        size = int(sizes[paper])
        share, cut = 2.0 / (size * (size - 1)), bool(truncated[paper])
        for a, b in combinations(authors, 2):
            edge = edges.setdefault((a, b), [0, 0.0, False])
            edge[0] += 1
            edge[1] += share
            edge[2] = edge[2] or cut
    return [(a, b, *edge) for (a, b), edge in sorted(edges.items())]


@settings(max_examples=150, deadline=None)
@given(papers, st.sampled_from([1, 2, 5, 1 << 20]))
def test_the_array_passes_count_the_links_as_the_loop(generated, chunk) -> None:
    """``chunk``: pairs made at a time (a paper's pairs are never split; 1: a run a paper)."""
    rows = [(paper, author) for paper, (_, _, authors) in enumerate(generated) for author in sorted(authors)]
    sizes = np.array([len(authors) + extra for extra, _, authors in generated], dtype=np.int64)
    truncated = np.array([cut for _, cut, _ in generated], dtype=bool)
    papers_of = np.array([paper for paper, _ in rows], dtype=np.int64)
    authors_of = np.array([author for _, author in rows], dtype=np.int32)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(coauthor, "PAIR_CHUNK", chunk)
        found = joint_links(papers_of, authors_of, sizes, truncated)
    links = list(zip(*(column.tolist() for column in found), strict=True))
    assert links == looped(rows, sizes, truncated)  # floats compared exactly: the same sums in the same order
    kinds = (int, int, int, float, bool)
    assert all(type(value) is kind for link in links for value, kind in zip(link, kinds, strict=True))
