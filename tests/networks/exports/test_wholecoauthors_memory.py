"""The whole co-author network's exports hold their links once: a format's writing adds a bounded number of bytes a
link over the arrays the network keeps (at a million papers, 10M links: every format's sorted copies of every link
column held ~0.7 GB over them). Measured with tracemalloc, which numpy reports its arrays to: no timing."""

import tracemalloc
from array import array

import numpy as np
import pytest

from bibgraph.graph.networks import wholetext
from bibgraph.graph.networks.exports import NETWORK_SYNTAXES
from bibgraph.graph.networks.incidence import Concept, Incidence, _arrays
from bibgraph.graph.networks.wholecoauthors import WholeCoauthors

AUTHORS, PAPERS = 2000, 4000
BYTES_A_LINK = 24  # an int64 sort key and its int64 order, and a little: the old code took ~90


def generated(seed: int = 7) -> Incidence:
    """Papers of 2 to 9 authors drawn at random: ~65,000 links."""
    pick = np.random.default_rng(seed)
    ap, pc = array("q"), array("q")
    for paper in range(PAPERS):
        for author in pick.choice(AUTHORS, int(pick.integers(2, 10)), replace=False).tolist():
            ap.extend((paper, author))
        pc.extend((paper, paper % 2))
    concepts = {Concept("c:a", "A", "c:a", "A"): 0, Concept("c:b", "B", "c:b", "B"): 1}
    return _arrays(
        {f"http://x/person/{i:05d}": i for i in range(AUTHORS)},
        [f"Author {i}" for i in range(AUTHORS)],
        {f"http://x/paper/{p:05d}": p for p in range(PAPERS)},
        pick.random(PAPERS) < 0.1,
        concepts,
        ap,
        pc,
    )


@pytest.mark.parametrize("fmt", [syntax.name for syntax in NETWORK_SYNTAXES])
def test_writing_a_format_adds_a_few_bytes_a_link_over_the_kept_arrays(fmt, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(wholetext, "ROWS", 256)  # the text of a block of rows: small beside the arrays
    whole = WholeCoauthors(generated())
    links = len(whole.first)
    assert links > 40_000
    with open(tmp_path / "export", "wb") as out:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            whole.write(fmt, out)
            peak = tracemalloc.get_traced_memory()[1] - before
        finally:
            tracemalloc.stop()
    assert peak <= BYTES_A_LINK * links + 2**20, (fmt, peak / links)
