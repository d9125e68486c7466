"""A paper page's papers by co-authors of its authors, read from the incidence a dataset keeps, are the rows of
``related_by_coauthors.rq`` on generated graphs: shared and unshared subjects, areas and subareas, a paper of two
subjects, labels equal but for case, papers without a label or a subject, labels from a search index's titles."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bench.generate import write_lists
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.networks.incidence import incidence_of
from bibgraph.graph.site.closepapers import close_papers, ranked_from_store
from bibgraph.graph.site.pagedata import RELATED, paper_page
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.graph.stores.store import OxigraphGraphStore

EX = "http://example.org/"
DCT, RDFS, SKOS = (
    "http://purl.org/dc/terms/",
    "http://www.w3.org/2000/01/rdf-schema#",
    "http://www.w3.org/2004/02/skos/core#",
)
LABELS = ["alpha", "Alpha", "ALPHA", "Beta", "beta", "Ωmega", "ωmega", "gamma delta"]
CONCEPTS = {"a0": None, "a1": None, "s0": "a0", "s1": "a0", "s2": "a1"}  # concept: its area (None: an area)

papers = st.lists(
    st.tuples(
        st.sets(st.integers(0, 6), min_size=1, max_size=3),  # authors
        st.sets(st.sampled_from(sorted(CONCEPTS)), max_size=2),  # subjects
        st.none() | st.sampled_from(LABELS),
    ),
    min_size=1,
    max_size=16,
)


def graph(drawn: list[tuple[set[int], set[str], str | None]]) -> OxigraphGraphStore:
    lines = [f'<{EX}author/{a}> <http://xmlns.com/foaf/0.1/name> "A{a}" .' for a in range(10)]
    for concept, area in CONCEPTS.items():
        lines.append(f'<{EX}c/{concept}> <{SKOS}prefLabel> "{concept.upper()}" .')
        lines += [f"<{EX}c/{concept}> <{SKOS}broader> <{EX}c/{area}> ."] if area else []
    for number, (authors, subjects, label) in enumerate(drawn):
        paper = f"<{EX}paper/{number:02d}>"
        lines += [f"{paper} <{DCT}creator> <{EX}author/{a}> ." for a in authors]
        lines += [f"{paper} <{DCT}subject> <{EX}c/{s}> ." for s in subjects]
        lines += [f'{paper} <{RDFS}label> "{label}" .'] if label else []
    store = OxigraphGraphStore.memory()
    store.load_ntriples(line + "\n" for line in lines)
    return store


@settings(max_examples=60, deadline=None)
@given(papers, st.integers(1, RELATED), st.sampled_from(["store", "titles", "some titles"]))
def test_the_papers_by_coauthors_from_the_incidence_are_the_querys(drawn, limit, labels) -> None:
    store = graph(drawn)
    incidence = incidence_of(store)
    held = {
        str(r["paper"]): str(r["label"])
        for r in store.select(f"SELECT ?paper ?label {{ ?paper <{RDFS}label> ?label }}")
    }

    def titles(iris: list[str]) -> dict[str, str]:
        return {i: held[i] for i in iris[: len(iris) // 2 if labels == "some titles" else None] if i in held}

    for number in range(len(drawn)):
        paper = f"{EX}paper/{number:02d}"
        rows = store.select(bind(named_query("related_by_coauthors").text, paper=paper))
        expected = [(str(r["other"]), str(r["label"]), integer(r["close"])) for r in rows][:limit]
        found = close_papers(store, paper, limit, incidence, None if labels == "store" else titles)
        assert found == expected, paper
        assert close_papers(store, paper, limit) == expected  # no incidence: the store, a pattern at a time
        candidates = {other for _, iris in ranked_from_store(store, paper) for other in iris}
        capped = list(ranked_from_store(store, paper, most=2))  # two co-authors counted: at most two a paper
        assert all(count <= 2 and set(iris) <= candidates for count, iris in capped)


def test_a_paper_the_incidence_does_not_hold_is_answered_by_the_store() -> None:
    store = graph([({0}, {"s0"}, "alpha"), ({1}, {"s0"}, "beta"), ({0, 1}, set(), "gamma delta")])
    incidence = incidence_of(store)
    store.load_ntriples(
        [f"<{EX}paper/99> <{DCT}creator> <{EX}author/0> .\n", f"<{EX}paper/99> <{DCT}subject> <{EX}c/s0> .\n"]
    )
    assert incidence.papers.find(f"{EX}paper/99") is None
    assert close_papers(store, f"{EX}paper/99", RELATED, incidence) == [(f"{EX}paper/01", "beta", 1)]


def test_every_papers_page_from_the_incidence_is_the_page_from_the_store(tmp_path) -> None:
    """Through :func:`paper_page`, with and without the incidence (and a search index's titles), on a corpus."""
    write_lists(tmp_path, 300, per_file=300, seed=11)
    seed_store = build_graph([tmp_path], progress=False)[0]
    incidence = incidence_of(seed_store)
    labels = {str(r["paper"]): str(r["label"]) for r in seed_store.select(bind(named_query("paper_labels").text))}
    listed = 0
    for paper in incidence.papers:
        page = paper_page(seed_store, paper)
        assert page is not None
        assert paper_page(seed_store, paper, incidence=incidence) == page, paper
        assert paper_page(seed_store, paper, incidence=incidence, titles=lambda i: {p: labels[p] for p in i}) == page
        listed += any(isinstance(item.detail, int) for item in page.by_subject)
    assert listed > 20, listed
