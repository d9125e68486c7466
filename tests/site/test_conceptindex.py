"""Area and subarea pages from precomputed figures and paper order (graph/site/conceptindex.py): the same as the
whole-area queries they replace, on the seeds and on a generated corpus, and served from a dataset's kept pieces."""

import re
from pathlib import Path

import pytest

from bench.generate import write_lists
from bibgraph.graph.dataset import sitedata
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.site import conceptindex
from bibgraph.graph.site.conceptindex import concept_index
from bibgraph.graph.site.pagedata import concept_tree, paper_page
from bibgraph.graph.site.search import fold
from bibgraph.graph.sparql.queries import bind, integer, named_query
from bibgraph.web import pages
from bibgraph.web.commands.cli import main
from tests.conftest import BASE, make_app

HTML = {"Accept": "text/html"}


def by_label(store, concept: str) -> list[str]:
    """The reference order of a concept's papers: all of them fetched with their labels (the query a page ran
    before), sorted by label with case and accents aside, then as written, then by IRI."""
    rows = store.select(bind(named_query("concept_papers").text, concept=concept))
    return [paper for *_, paper in sorted((fold(str(r["label"])), str(r["label"]), str(r["paper"])) for r in rows)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("corpus")
    write_lists(directory, 1500, per_file=500, seed=7, messy=0.3)
    return directory


@pytest.fixture(scope="module")
def corpus_store(corpus: Path):
    return build_graph([corpus], progress=False)[0]


def _old(store, name: str, concept: str, suffix: str = "") -> list[dict]:
    """The answer of the whole-area query a concept page ran before (the reference)."""
    return store.select(bind(named_query(name).text, concept=concept) + suffix)


def most_first(rows: list[dict], count: str, text: str, iri: str) -> list[dict]:
    """Rows as the pages rank them: most first, then by the text with case and accents aside, as written, IRI."""
    return sorted(rows, key=lambda r: (-integer(r[count]), fold(str(r[text])), str(r[text]), str(r[iri])))


def top_authors(store, concept: str) -> list[tuple[str, int]]:
    """The reference top authors: every named author of the concept counted (the query a page ran before, without
    its cut), ranked as the pages rank them, the first ``TOP_AUTHORS``."""
    every = store.select(bind(named_query("concept_authors").text.replace("LIMIT 20", ""), concept=concept))
    ranked = most_first(every, "papers", "name", "author")
    return [(str(r["name"]), integer(r["papers"])) for r in ranked[: conceptindex.TOP_AUTHORS]]


@pytest.mark.parametrize("which", ["seeds", "corpus"])
def test_figures_and_order_equal_the_whole_area_queries(which, seed_store, request) -> None:
    store = seed_store if which == "seeds" else request.getfixturevalue("corpus_store")
    figures = {}
    for concept, order in concept_index(store):
        figures[concept.iri] = concept
        counts = _old(store, "concept_counts", concept.iri)[0]
        assert (concept.papers, concept.authors) == (integer(counts["papers"]), integer(counts["authors"]))
        assert order == by_label(store, concept.iri)
        assert [(name, n) for _, name, n in concept.top_authors] == top_authors(store, concept.iri)
        subareas = [
            (str(r["narrower"]), str(r["label"]), integer(r["papers"]))
            for r in most_first(_old(store, "concept_subareas", concept.iri), "papers", "label", "narrower")
        ]
        assert list(concept.subareas) == subareas
    assert len(figures) == len(store.select(named_query("concept_list").text)) > 0
    rows = most_first(store.select(named_query("concept_tree").text), "papers", "label", "concept")
    expected = [(str(r["concept"]), integer(r["papers"]), integer(r["authors"])) for r in rows if r["broader"] is None]
    tree = concept_tree(figures)
    assert [(area.iri, area.papers, area.authors) for area in tree] == expected
    for area in tree:
        inside = [(str(r["concept"]), integer(r["papers"])) for r in rows if str(r["broader"]) == area.iri]
        assert [(sub.iri, sub.papers) for sub in area.subareas] == inside


def test_top_authors_are_named_in_batches(corpus_store, monkeypatch) -> None:
    whole = [figures.top_authors for figures, _ in concept_index(corpus_store)]
    monkeypatch.setattr(conceptindex, "NAME_BATCH", 3)
    assert [figures.top_authors for figures, _ in concept_index(corpus_store)] == whole


def test_a_nameless_author_does_not_hide_a_named_one(tmp_path) -> None:
    """Top authors are the top named ones, as the whole-area query has them, when the most prolific authors have no
    name (data loaded from elsewhere): a nameless author is passed over, the next one named."""
    write_lists(tmp_path, 400, per_file=400, seed=11)
    store = build_graph([tmp_path], progress=False)[0]
    prolific = store.select(
        sparql_prologue() + "SELECT ?author (COUNT(?paper) AS ?n) WHERE { ?paper dcterms:creator ?author }"
        " GROUP BY ?author ORDER BY DESC(?n) ?author LIMIT 30"
    )
    for row in prolific:
        store.store.update(f"DELETE WHERE {{ <{row['author']}> <http://xmlns.com/foaf/0.1/name> ?name }}")
    for concept, _ in concept_index(store):
        top = top_authors(store, concept.iri)
        assert [(name, n) for _, name, n in concept.top_authors] == top != []


PAPER_LINK = re.compile(r'<li><a href="/(paper/[^"]+)">')


def test_a_dataset_serves_every_page_of_every_area_from_its_kept_pieces(corpus, tmp_path, monkeypatch) -> None:
    """Pieces smaller than a page, so pages straddle pieces; the dataset's pages equal the lists' pages, and
    serving them reads neither a whole area's order nor its figures from the store."""
    monkeypatch.setattr(sitedata, "ORDER_CHUNK", 7)
    root = tmp_path / "dataset"
    assert main(["build", str(corpus), "--dataset", str(root), "--base", BASE, "--quiet"]) == 0
    served = make_app(BIBGRAPH_STORE=f"dataset:{root}")
    try:
        client = served.test_client()
        areas = client.get("/areas", headers=HTML).get_data(as_text=True)
        paths = sorted(set(re.findall(r'href="/(area/[^"?#]+)"', areas)))
        assert len(paths) > 20
        monkeypatch.setattr(pages, "paper_order", None)  # a page needing the whole order would fail
        monkeypatch.setattr(sitedata, "concept_index", None)
        store = build_graph([corpus], base=BASE, progress=False)[0]
        for path in paths:
            iri = BASE + path
            order = by_label(store, iri)
            pages_count = max(1, -(-len(order) // 50))
            for number in {1, 2, pages_count, pages_count + 3}:
                html = client.get(f"/{path}?page={number}", headers=HTML).get_data(as_text=True)
                shown = min(number, pages_count)
                assert [BASE + p for p in PAPER_LINK.findall(html)] == order[(shown - 1) * 50 : shown * 50], (
                    path,
                    number,
                )
    finally:
        served.extensions["bibgraph"].close()


@pytest.mark.parametrize("which", ["seeds", "corpus"])
def test_same_subarea_papers_from_the_order_equal_the_sorting_query(which, seed_store, request) -> None:
    store = seed_store if which == "seeds" else request.getfixturevalue("corpus_store")
    figures = {concept.iri: (concept, order) for concept, order in concept_index(store)}

    def subject_papers(concept: str, count: int) -> list[str] | None:
        found, order = figures[concept]
        return None if found.subareas else order[:count]

    rows = store.select(sparql_prologue() + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle } ORDER BY ?p")
    papers = [str(r["p"]) for r in rows]
    used = 0
    for iri in papers[:: max(1, len(papers) // 60)]:
        before, after = paper_page(store, iri), paper_page(store, iri, subject_papers)
        assert before is not None and after is not None
        used += before.subject is not None and subject_papers(before.subject, 1) is not None
        assert [item.label for item in after.by_subject] == [item.label for item in before.by_subject], iri
    assert used > 0, "some papers are in a concept without subareas"


def test_papers_and_people_are_listed_with_case_and_accents_aside_on_area_and_author_pages() -> None:
    """Real lists write family names in capitals ("AHMED Ali") beside "Ahmed": listed as written, every capital
    came before every small letter ("AHMED" … "Baker" … "adams") and an accented initial after Z."""
    from bibgraph.graph.site.profile import author_profile
    from tests.networks.test_incidence import built

    firsts = ["Baker Di", "adams Bo", "Ähmed Cy", "AHMED Ali", "Ahmed Ed", "zhou Fa", "Émile Gu"]
    store = built([("Vision · Detection", [first, "Zed Co"], False) for first in firsts])
    expected = ["adams", "AHMED", "Ähmed", "Ahmed", "Baker", "Émile", "zhou"]  # by given name after the family one
    for concept, order in concept_index(store):
        labels = {str(r["paper"]): str(r["label"]) for r in _old(store, "concept_papers", concept.iri)}
        assert [labels[paper].split()[0] for paper in order] == expected, concept.label
        assert [name.split()[0] for _, name, _ in concept.top_authors] == ["Zed", *expected]  # 7 papers, then 1
    person = str(store.select('SELECT ?a WHERE { ?a <http://xmlns.com/foaf/0.1/name> "Zed Co" }')[0]["a"])
    profile = author_profile(store, person)
    assert profile is not None
    assert [paper.label.split()[0] for paper in profile.papers] == expected
    assert [coauthor.name.split()[0] for coauthor in profile.coauthors] == expected  # one joint paper each
