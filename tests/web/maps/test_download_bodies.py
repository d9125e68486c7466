"""A small network download is computed in the web process (``web/maps/bodies.py``), with the guarantees a child
gives a large one: it stops once its client has gone, at its deadline and past the hard memory limit, between its
stages (network, layout, body), keeps nothing half-made, and what it keeps stays within ``MAP_CACHE_BYTES``. Which
path a download takes is decided from the size of its network before anything is computed."""

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from bibgraph.graph.networks import engine
from bibgraph.graph.networks.filters import Filters
from bibgraph.graph.networks.spec import COAUTHORS, NetworkSpec
from bibgraph.web.downloads import NETWORK_BODIES, _directory
from bibgraph.web.maps.bodies import LINKS_PER_NODE
from bibgraph.web.maps.cache import GATE, networks
from bibgraph.web.maps.gate import GONE, MEMORY, DerivationGate
from tests.conftest import make_app

WHOLE = "/graph/coauthors.vosviewer?min_papers=2&resolution=1.5"  # 203 authors at most: within the default bound


@pytest.fixture
def app() -> Iterator[Flask]:
    application = make_app(MAP_DERIVATIONS=2, MAP_WAITING=8, MAP_WAIT=60.0)
    yield application
    application.extensions["bibgraph"].close()


def stages(monkeypatch: pytest.MonkeyPatch, after_network: Any = lambda: None) -> list[tuple[str, int]]:
    """The stages the engine runs (and the process each runs in), in order; ``after_network`` is called once the
    network is made (the client leaves, the deadline passes, the memory grows...)."""
    ran: list[tuple[str, int]] = []
    real_network, real_positions = engine.coauthor_network, engine.positions

    def network(*args: Any) -> Any:
        made = real_network(*args)
        ran.append(("network", os.getpid()))
        after_network()
        return made

    def positions(*args: Any) -> Any:
        ran.append(("layout", os.getpid()))
        return real_positions(*args)

    monkeypatch.setattr(engine, "coauthor_network", network)
    monkeypatch.setattr(engine, "positions", positions)
    return ran


def bodies(app: Flask) -> list[Path]:
    """The network bodies the app keeps (files)."""
    with app.app_context():
        folder = _directory(app) / NETWORK_BODIES
    return sorted(folder.glob("*.*")) if folder.is_dir() else []


def exported(app: Flask, filters: Filters, fmt: str = "vosviewer") -> bytes:
    with app.app_context():
        incidence = networks().incidence()
    return engine.exported(incidence, NetworkSpec(COAUTHORS, filters), fmt)[1]


def test_a_small_download_whose_client_left_stops_after_its_stage_and_keeps_no_body(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client leaves while the network is computed (here, in the web process): no layout is made after it, no
    body is written, the turn is given back and counted; for a client still there the same download is the file
    ``export-graph`` writes."""
    client = app.test_client()
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200  # the incidence, read once
    kept = bodies(app)
    gone = threading.Event()
    ran = stages(monkeypatch, gone.set)
    answer = client.get(WHOLE, environ_overrides={"waitress.client_disconnected": gone.is_set})
    assert answer.status_code == 503 and ran == [("network", os.getpid())]  # in this process, no layout after
    gate: DerivationGate = app.extensions[GATE]
    assert gate.state()["running"] == 0 and not gate.holds() and gate.refused[GONE] == 1
    assert bodies(app) == kept
    answer = client.get(WHOLE, environ_overrides={"waitress.client_disconnected": lambda: False})
    assert answer.status_code == 200 and ("layout", os.getpid()) in ran
    assert answer.data == exported(app, Filters(min_papers=2, resolution=1.5))


def test_a_small_download_past_its_deadline_stops_after_its_stage_and_keeps_no_body(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stage that ends past ``NETWORK_TIMEOUT`` is the last: 503, no layout, no body, the turn given back; the same
    download within its deadline is served."""
    client = app.test_client()
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200
    kept, timeout = bodies(app), app.config["NETWORK_TIMEOUT"]
    app.config["NETWORK_TIMEOUT"] = 2.0  # (not less: the turn and a look at the tree's memory come first, under load)
    late = threading.Event()
    ran = stages(monkeypatch, lambda: late.wait(2.5))  # the network ends 2.5 s in: past the deadline
    try:
        answer = client.get(WHOLE)
        assert answer.status_code == 503 and "deadline" in answer.get_data(as_text=True)
        assert ran == [("network", os.getpid())] and bodies(app) == kept
        gate: DerivationGate = app.extensions[GATE]
        assert gate.state()["running"] == 0 and not gate.holds()
    finally:
        app.config["NETWORK_TIMEOUT"] = timeout
    late.set()
    assert client.get(WHOLE).status_code == 200 and ran[-1] == ("layout", os.getpid())


def test_a_small_download_stops_once_the_tree_is_past_the_hard_memory_limit(
    app: Flask, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As a child is killed past HARD_OVER times the budget, a download in the web process stops at its next stage:
    503 for memory (counted), no layout, no body."""
    client = app.test_client()
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200
    kept = bodies(app)
    over = threading.Event()
    monkeypatch.setattr(DerivationGate, "over_hard", lambda self: over.is_set())
    ran = stages(monkeypatch, over.set)  # the network grew the tree past the limit
    answer = client.get(WHOLE)
    assert answer.status_code == 503 and "memory" in answer.get_data(as_text=True)
    gate: DerivationGate = app.extensions[GATE]
    assert ran == [("network", os.getpid())] and gate.refused[MEMORY] == 1 and bodies(app) == kept
    assert gate.state()["running"] == 0 and not gate.holds()


def test_what_small_downloads_keep_in_the_web_process_stays_within_the_map_cache() -> None:
    """A small download's network and layout are kept by the value cache (a download of the same filters in another
    format reuses them), within ``MAP_CACHE_BYTES`` however many distinct ones are asked."""
    bound = 256 * 1024
    with_bound = make_app(MAP_CACHE_BYTES=bound)
    try:
        client = with_bound.test_client()
        assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200
        with with_bound.app_context():
            before = networks().sizes()["evictable"]
        most = before
        for resolution in (1.5, 2.5, 3.5, 4.5, 5.5, 6.5):
            assert client.get(f"/graph/coauthors.vosviewer?resolution={resolution}").status_code == 200
            with with_bound.app_context():
                held = networks().sizes()["evictable"]
            most = max(most, held)
            assert held <= bound
        # computed here and kept: a network and its layout (a child's download leaves a file's name, ~100 bytes)
        assert most - before > 16 * 1024
    finally:
        with_bound.extensions["bibgraph"].close()


def _computed_in(app: Flask, path: str, where: Path) -> int:
    """The process the download's network was computed in (written to ``where``: a child's list is not ours)."""
    where.unlink(missing_ok=True)
    assert app.test_client().get(path).status_code == 200
    return int(where.read_text())


def test_a_download_is_computed_here_exactly_when_its_network_is_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_list: Any
) -> None:
    """The bound counts authors and author pairs: at the size of the network a download is computed in the web
    process, one author below it in a child; a paper of 60 authors (1,770 pairs) is past LINKS_PER_NODE pairs an
    author for a bound of 60 (a child), within it for a bound of 89."""
    where = tmp_path / "pid"
    real = engine.coauthor_network

    def network(*args: Any) -> Any:
        where.write_text(str(os.getpid()))
        return real(*args)

    monkeypatch.setattr(engine, "coauthor_network", network)
    names = ", ".join(f"Kim {chr(65 + i // 26)}{chr(97 + i % 26)}ra" for i in range(60))
    crowded = write_list(f"Z · Crowd\n{names}\nWe study a paper of sixty authors and what its pairs cost.\n")
    cases = [
        ({}, "min_papers=2", None),  # the seeds: the bound at the network's authors, then one below
        ({"BIBGRAPH_INPUTS": [str(crowded)]}, "resolution=1.2", 60),
    ]
    for config, query, authors in cases:
        probe = make_app(**config)
        try:
            with probe.app_context():
                spec = NetworkSpec(COAUTHORS, Filters(min_papers=2) if not config else Filters(resolution=1.2))
                nodes, links = engine.size(networks().incidence(), spec)
        finally:
            probe.extensions["bibgraph"].close()
        if authors is None:
            assert links <= LINKS_PER_NODE * (nodes - 1)  # the authors decide here
            bounds = {nodes: True, nodes - 1: False}
        else:
            assert (nodes, links) == (authors, 1770)
            bounds = {60: False, 88: False, 89: True, 10**6: True}  # 20 x 88 = 1,760 < 1,770 <= 20 x 89
        for bound, here in bounds.items():
            application = make_app(DOWNLOAD_IN_PROCESS_AUTHORS=bound, **config)
            try:
                pid = _computed_in(application, f"/graph/coauthors.gexf?{query}", where)
            finally:
                application.extensions["bibgraph"].close()
            assert (pid == os.getpid()) is here, (bound, pid)
