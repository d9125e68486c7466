"""The authors bench.serving.latency asks pages of, read from the incidence a dataset keeps (no GROUP BY over every
creator, which takes over 600 s at a million papers): the two most prolific and a typical one."""

import statistics
from pathlib import Path

import pyoxigraph as ox

from bench.servers import kept_authors, kept_top_authors
from bibgraph.graph.dataset.opener import dataset_version

PAPERS_PER_AUTHOR = """SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a } GROUP BY ?a"""


def test_the_kept_authors_are_the_store_s_most_prolific_and_one_at_the_median(seed_dataset: Path) -> None:
    version = dataset_version(seed_dataset)
    store = ox.Store.read_only(str(version / "store"))
    counts = {row["a"].value: int(row["n"].value) for row in store.query(PAPERS_PER_AUTHOR)}
    top, typical = kept_authors(version)
    assert [int(n) for _, n in top] == sorted(counts.values(), reverse=True)[:2]
    assert all(counts[iri] == int(n) for iri, n in top)
    assert counts[typical[0]] == int(typical[1]) == statistics.median_low(counts.values())
    assert kept_top_authors(version) == top


def test_a_dataset_that_keeps_no_incidence_gives_no_authors(tmp_path: Path) -> None:
    version = tmp_path / "v"
    (version / "derived").mkdir(parents=True)
    assert kept_authors(version) == ([], [])
