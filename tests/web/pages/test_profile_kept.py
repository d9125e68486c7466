"""An author's page served from a dataset reads its papers' positions and list lengths from the roles the build
kept (``graph/site/roles.py``): no per-paper query reaches the store (an engine took 4.3 s cold at a million papers
for ``author_paper_roles.rq``), and the page is the one the query gives."""

from urllib.parse import urlsplit

from bibgraph.graph.dataset.derived import derived_key, file_name
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.web import resources
from bibgraph.web.maps.cache import NetworkCache
from tests.conftest import make_app
from tests.storespy import record_queries

PAPER_FACTS = ("authorPosition", "listedAuthorCount", "authorship")


def _pages(seed_dataset, monkeypatch, authors: list[str]) -> tuple[list[bytes], list[str]]:  # type: ignore[no-untyped-def]
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    asked = record_queries(monkeypatch, resources)
    try:
        client = app.test_client()
        pages = []
        for author in authors:
            answer = client.get(urlsplit(author).path)
            assert answer.status_code == 200, author
            pages.append(answer.data)
        return pages, asked
    finally:
        app.extensions["bibgraph"].close()
        monkeypatch.undo()


def test_a_datasets_profile_asks_the_store_no_papers_fact_and_is_the_querys_page(seed_dataset, monkeypatch) -> None:
    assert (dataset_version(seed_dataset) / "derived" / file_name(derived_key("roles"))).is_file()  # the build's
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        with app.app_context():
            from bibgraph.web.maps.cache import networks

            incidence = networks().kept_incidence()
            assert incidence is not None and networks().kept_roles() is not None
            counts = incidence.author_ptr[1:] - incidence.author_ptr[:-1]
            authors = [incidence.authors[int(a)] for a in counts.argsort()[::-1][:6]]
    finally:
        app.extensions["bibgraph"].close()
    kept, asked = _pages(seed_dataset, monkeypatch, authors)
    assert asked and not [query for query in asked if any(fact in query for fact in PAPER_FACTS)]
    monkeypatch.setattr(NetworkCache, "kept_roles", lambda self: None)  # as a dataset built before them
    queried, asked = _pages(seed_dataset, monkeypatch, authors)
    assert [query for query in asked if "authorPosition" in query]
    assert kept == queried
