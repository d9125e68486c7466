"""An author's page served from a dataset reads its papers' positions and list lengths from the roles the build
kept (``graph/site/roles.py``), and so does one served from a version an add made (the roles it updated): no
per-paper query reaches the store (an engine took 4.3 s cold at a million papers for ``author_paper_roles.rq``),
and the page is the one the query gives. The papers' sitemap of an added version is read from them too."""

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bibgraph.graph.dataset.derived import derived_key, file_name
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.web import operations, resources
from bibgraph.web.commands import versionwrite
from bibgraph.web.maps.cache import NetworkCache
from tests.conftest import SEED_FILES, make_app
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


@pytest.fixture
def added_dataset(dataset: Path, tmp_path: Path) -> Path:
    """A dataset of the first seed list with the others added (one add: a new version), and a paper whose author
    line is kept whole (no named author: in no incidence, listed from the roles' other papers)."""
    unsplit = tmp_path / "unsplit.txt"
    unsplit.write_text("Ann Lee Bo Chen Cy Diaz Dan Wu Eve Fox\nA paper whose author line has no separator.\n")
    versionwrite.add_to_dataset(dataset, [*SEED_FILES[1:], unsplit])
    return dataset


@pytest.mark.parametrize("made", ["seed_dataset", "added_dataset"])
def test_a_datasets_profile_asks_the_store_no_papers_fact_and_is_the_querys_page(made, request, monkeypatch) -> None:
    seed_dataset = request.getfixturevalue(made)
    assert (dataset_version(seed_dataset) / "derived" / file_name(derived_key("roles"))).is_file()  # kept
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


def test_an_added_versions_papers_sitemap_asks_the_store_nothing(added_dataset, monkeypatch) -> None:
    """Every chunk of the papers' sitemap of an added version is read from its incidence and roles: the store is
    never asked to list papers (at a million papers the last chunk's OFFSET walked them all: 0.62 s)."""
    from bibgraph.graph.site import crawl

    monkeypatch.setattr(crawl, "SITEMAP_LIMIT", 7)
    monkeypatch.setattr(operations, "SITEMAP_LIMIT", 7)
    asked: list[str] = []
    real = operations.resources

    def resources_asked(store, kind, chunk):  # type: ignore[no-untyped-def]
        asked.append(kind)
        return real(store, kind, chunk)

    monkeypatch.setattr(operations, "resources", resources_asked)
    app = make_app(BIBGRAPH_STORE=f"dataset:{added_dataset}")
    try:
        client = app.test_client()
        with app.app_context():
            rows = operations.get_store().select(f"SELECT ?p WHERE {{ ?p a <{operations.PAGE_CLASSES['papers']}> }}")
            every = {str(row["p"]) for row in rows}
        listed: list[str] = []
        for number in range(1, -(-len(every) // 7) + 1):
            answer = client.get(f"/sitemap-papers-{number}.xml")
            assert answer.status_code == 200
            listed += [line.split("</loc>")[0] for line in answer.text.split("<loc>")[1:]]
        assert every and sorted(listed) == sorted(every) and "papers" not in asked
        with app.app_context():
            incidence = operations.networks().kept_incidence()
            assert incidence is not None and len(incidence.papers) < len(every)  # the incidence alone lacks one
    finally:
        app.extensions["bibgraph"].close()
