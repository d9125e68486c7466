"""A paper's and an author's page do not wait for the search index's checksum: while another thread (the start's
warm-up) checks the index, a page labels its papers from the store, and it is the page the checked index gives.
At 100k papers a paper's first request after the start waited 2.6 s for it (0.45 s before the one-engine
redesign, issue 24); at a million papers the checksum reads 2 GB."""

import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from bibgraph.web.maps.cache import networks
from tests.conftest import make_app

CHECKING_AT_MOST = 120.0  # seconds the stand-in check holds the index when no page answers first (the old code)


def _subjects(seed_dataset: Path) -> dict[str, str]:
    """A paper with papers by its co-authors (labels from the index) and its most prolific author."""
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        with app.app_context():
            incidence = networks().kept_incidence()
            assert incidence is not None
            counts = incidence.author_ptr[1:] - incidence.author_ptr[:-1]
            author = int(counts.argmax())
            papers = incidence.author_papers[incidence.author_ptr[author] : incidence.author_ptr[author + 1]]
            return {"paper": incidence.papers[int(papers[0])], "author": incidence.authors[author]}
    finally:
        app.extensions["bibgraph"].close()


def _page(seed_dataset: Path, iri: str, checking: bool) -> tuple[bytes, bool]:
    """The page of ``iri`` from a new server's cache; ``checking``: a thread holds the index's check meanwhile.
    Also whether the page answered while that check still ran."""
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    answered = threading.Event()
    outlasted = threading.Event()
    try:
        with app.app_context():
            cache = networks()
            assert cache.kept_search_index()

        def check() -> None:
            with cache._search_lock:  # as warm_search_index holds it while the whole file is hashed
                held.set()
                if answered.wait(CHECKING_AT_MOST):
                    outlasted.set()

        held = threading.Event()
        checker = threading.Thread(target=check, daemon=True)
        if checking:
            checker.start()
            assert held.wait(30)
        answer = app.test_client().get(urlsplit(iri).path)
        answered.set()
        if checking:
            checker.join()
        assert answer.status_code == 200
        return answer.data, outlasted.is_set()
    finally:
        app.extensions["bibgraph"].close()


@pytest.mark.parametrize("kind", ["paper", "author"])
def test_a_page_answers_while_the_search_index_is_checked_and_is_the_same_page(seed_dataset: Path, kind: str) -> None:
    iri = _subjects(seed_dataset)[kind]
    checked, _ = _page(seed_dataset, iri, checking=False)
    meanwhile, before_the_check_ended = _page(seed_dataset, iri, checking=True)
    assert before_the_check_ended
    assert meanwhile == checked
