"""The home page and a concept's page served from a dataset read the figures the build kept without the whole
graph's incidence: at 100k papers the home page's first request since the server started waited 1.2 s for it
(0.5 s before the one-engine redesign, issue 24), though nothing on the page is computed from it."""

from pathlib import Path

import pytest

from bibgraph.graph.dataset.derived import derived_key, file_name
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.graph.dataset.sitedata import CONCEPT_FIGURES, HOME
from bibgraph.web.maps.cache import NetworkCache
from tests.conftest import make_app


@pytest.mark.parametrize("path", ["/", "/areas", "/area/deep-learning"])
def test_a_page_of_kept_figures_reads_no_incidence(seed_dataset: Path, monkeypatch, path: str) -> None:  # type: ignore[no-untyped-def]
    derived = dataset_version(seed_dataset) / "derived"
    for name in (HOME, CONCEPT_FIGURES):
        assert (derived / file_name(derived_key("page", None, name))).is_file()  # the build kept them
    read: list[str] = []
    whole = NetworkCache.incidence
    monkeypatch.setattr(NetworkCache, "incidence", lambda self: read.append(path) or whole(self))
    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}")
    try:
        answer = app.test_client().get(path)
    finally:
        app.extensions["bibgraph"].close()
    assert answer.status_code == 200
    assert read == []
