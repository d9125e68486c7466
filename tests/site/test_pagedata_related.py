"""A paper page's "More in <subject>": papers by co-authors of its authors first, ranked by how many of them wrote
each (computed here in Python from the store's creators), then the subject's other papers."""

from collections import defaultdict

from bench.generate import write_lists
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.site.pagedata import RELATED, paper_page


def test_more_in_the_subject_ranks_papers_by_coauthors_of_the_authors(tmp_path) -> None:
    write_lists(tmp_path, 300, per_file=300, seed=11)
    seed_store = build_graph([tmp_path], progress=False)[0]
    rows = seed_store.store.query(
        sparql_prologue()
        + "SELECT ?p ?a ?s ?l WHERE { ?p dcterms:creator ?a ; rdfs:label ?l . OPTIONAL { ?p dcterms:subject ?s } }"
    )
    creators: dict[str, set[str]] = defaultdict(set)
    subject: dict[str, str | None] = {}
    label: dict[str, str] = {}
    for row in rows:
        creators[row["p"].value].add(row["a"].value)
        subject[row["p"].value] = row["s"].value if row["s"] else None
        label[row["p"].value] = row["l"].value
    coauthors: dict[str, set[str]] = defaultdict(set)
    for authors in creators.values():
        for author in authors:
            coauthors[author] |= authors - {author}
    checked = 0
    for paper, authors in sorted(creators.items())[:60]:
        if subject[paper] is None:
            continue
        near = set().union(*(coauthors[a] for a in authors)) - authors
        close = {
            other: len(creators[other] & near)
            for other in creators
            if other != paper
            and subject[other] == subject[paper]
            and creators[other] & near
            and not creators[other] & authors
        }
        expected = sorted(close, key=lambda o: (-close[o], label[o].lower(), label[o], o))[:RELATED]
        page = paper_page(seed_store, paper)
        assert page is not None
        got = [(item.iri, item.detail) for item in page.by_subject[: len(expected)]]
        assert got == [(o, close[o]) for o in expected], paper
        assert len(page.by_subject) <= RELATED and all(i.iri != paper for i in page.by_subject)
        checked += bool(expected)
    assert checked > 0
