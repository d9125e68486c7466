"""Identical work in progress is waited for, not counted (issue 25): two tabs of one map from one client, or three
threads of one test, got 429 when the second reached a stage of the first's chain the first had not started yet.
Over generated interleavings of identical and distinct requests from one and several clients, through the real
gate and cache: identical work never gets 429, each value is made once, and distinct work stays bounded (a client
never derives more than its share at once, the server never more than its slots)."""

import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from unittest.mock import patch

from flask import Flask
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.serving.fairshare import OverShare
from bibgraph.web.maps.cache import NetworkCache, derived_key
from bibgraph.web.maps.gate import OVER_SHARE, ClientGone, DerivationGate, DerivationsBusy
from bibgraph.web.maps.valuecache import client

LIMIT = 2  # slots; a client's share is one
VARIANTS = ("page", "data", "download")  # the stages a request goes through, in the order the routes ask for them


class Stages:
    """Fake stages that take ``pause`` seconds, counting who makes what, and how many at once per client."""

    def __init__(self, pause: float) -> None:
        self.pause = pause
        self._lock = threading.Lock()
        self.made: Counter[tuple[Any, ...]] = Counter()
        self.running: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.total = self.most_total = 0

    def stage(self, key: tuple[Any, ...], value: Any) -> Any:
        who = client()
        with self._lock:
            self.made[key] += 1
            self.running[who] += 1
            self.total += 1
            self.most[who] = max(self.most[who], self.running[who])
            self.most_total = max(self.most_total, self.total)
        time.sleep(self.pause)
        with self._lock:
            self.running[who] -= 1
            self.total -= 1
        return value

    def engine(self) -> SimpleNamespace:
        return SimpleNamespace(
            network=lambda _incidence, spec: self.stage(("network", spec), f"network {spec}"),
            positions=lambda spec, _network: self.stage(("layout", spec), f"layout {spec}"),
            summary=lambda _incidence, spec, _network: self.stage(("summary", spec), f"summary {spec}"),
        )


class Cache(NetworkCache):
    """The network cache, its incidence a fake stage too (the real one reads a store)."""

    stages: Stages

    def incidence(self) -> Any:
        return self._get(derived_key("incidence"), lambda: self.stages.stage(("incidence",), "incidence"))


def request(cache: Cache, variant: str, work: int, files: Path) -> str:
    """What a route asks of the cache: the map page (network, analytics, drawing), its data, a download's body."""
    if variant == "page":
        cache.network(work)  # type: ignore[arg-type]
        cache.summary(work)  # type: ignore[arg-type]
    if variant == "download":

        def body() -> Path:  # as graphviews.download: the network, then the body in a turn of its own
            network = cache.network(work)  # type: ignore[arg-type]
            with cache.derivation():
                path = files / f"{work}.txt"
                path.write_text(cache.stages.stage(("body", work), f"body of {network}"))
                return path

        return cache.file(derived_key("body", work), body, lambda: cache.network(work)).read_text()  # type: ignore[arg-type]
    draw = lambda network, layout: {"drawn": cache.stages.stage(("view", work), layout)}  # noqa: E731
    drawn: str = cache.view(work, (), draw)["drawn"]  # type: ignore[arg-type]
    return drawn


def run(app: Flask, cache: Cache, who: str, call: Callable[[], str], outcomes: dict[int, Any], index: int) -> None:
    with app.test_request_context("/", environ_base={"REMOTE_ADDR": who}):
        try:
            outcomes[index] = call()
        except (OverShare, DerivationsBusy, ClientGone) as error:
            outcomes[index] = error
        finally:
            cache.gate.finish()  # type: ignore[union-attr]  # the request's teardown


requests = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 2), st.sampled_from(VARIANTS), st.integers(0, 30)),
    min_size=2,
    max_size=5,
)


@settings(max_examples=40, deadline=None)
@given(requests, st.sampled_from([0.002, 0.01, 0.03]), st.booleans())
def test_identical_work_is_waited_for_and_distinct_work_stays_bounded(
    asked: list[tuple[str, int, str, int]], pause: float, incidence_kept: bool
) -> None:
    stages = Stages(pause)
    app = Flask(__name__)
    cache = Cache(gate=DerivationGate(LIMIT, waiting=8, wait=30.0))
    cache.stages = stages
    if incidence_kept:  # made by a request long answered: nobody follows it
        with app.test_request_context("/"):
            cache.incidence()
            cache.gate.finish()  # type: ignore[union-attr]
    outcomes: dict[int, Any] = {}
    threads = []
    with tempfile.TemporaryDirectory() as files, patch("bibgraph.web.maps.cache.network_engine", stages.engine):
        for index, (who, work, variant, after) in enumerate(asked):
            call = partial(request, cache, variant, work, Path(files))
            thread = threading.Thread(target=run, args=(app, cache, who, call, outcomes, index), daemon=True)
            threads.append((after, thread))
        for after, thread in sorted(threads, key=lambda pair: pair[0]):
            thread.start()
            time.sleep(after / 10 * pause)  # up to three stages' time apart
        for _, thread in threads:
            thread.join(60)
            assert not thread.is_alive()
    # A download's body is a computation of its own beside the drawing of the same network (a turn of its own, as in
    # the views), so a client asking both at once asks two: only requests of one chain are never refused.
    works: dict[str, set[tuple[int, bool]]] = {}
    for who, work, variant, _ in asked:
        works.setdefault(who, set()).add((work, variant == "download"))
    for index, (who, work, variant, _) in enumerate(asked):
        outcome = outcomes[index]
        if len(works[who]) == 1:  # this client asked only for one chain: never refused
            assert isinstance(outcome, str), (who, work, variant, outcome)
        if isinstance(outcome, str):
            assert outcome == (f"body of network {work}" if variant == "download" else f"layout {work}")
        else:
            assert isinstance(outcome, OverShare), outcome  # distinct work: only ever over the share, never busy
    assert all(made == 1 for made in stages.made.values()), stages.made  # each value made once
    assert max(stages.most.values(), default=0) <= 1 and stages.most_total <= LIMIT  # distinct work bounded
    assert cache.gate.state()["running"] == 0  # type: ignore[union-attr]


def test_a_follower_whose_client_goes_stops_waiting() -> None:
    """A request waiting for another's work in progress (two tabs of one slow map) stops once its client goes."""
    stages = Stages(0.0)
    app = Flask(__name__)
    cache = Cache(gate=DerivationGate(LIMIT, waiting=8, wait=30.0))
    cache.stages = stages
    release, gone = threading.Event(), threading.Event()
    outcomes: dict[int, Any] = {}
    leader_in = threading.Event()

    def slow_network(_incidence: Any, spec: Any) -> str:
        leader_in.set()
        release.wait(30)
        return f"network {spec}"

    engine = SimpleNamespace(network=slow_network, positions=stages.engine().positions, summary=None)
    environ = {"REMOTE_ADDR": "a", "waitress.client_disconnected": gone.is_set}
    with patch("bibgraph.web.maps.cache.network_engine", lambda: engine):
        first = threading.Thread(target=run, args=(app, cache, "a", lambda: cache.network(0), outcomes, 0))  # type: ignore[arg-type]
        first.start()
        assert leader_in.wait(30)

        def follower() -> None:
            with app.test_request_context("/", environ_base=environ):
                try:
                    outcomes[1] = cache.positions(0)  # type: ignore[arg-type]
                except ClientGone as error:
                    outcomes[1] = error

        second = threading.Thread(target=follower)
        second.start()
        time.sleep(0.5)
        assert second.is_alive()  # waiting for the first's network, not refused
        gone.set()
        second.join(5)
        assert not second.is_alive() and isinstance(outcomes[1], ClientGone)
        release.set()
        first.join(30)
    assert outcomes[0] == "network 0"


def test_a_follower_that_waited_is_not_counted_as_refused() -> None:
    """Two tabs of one map: the second waits for the first's work, and /metrics counts no refusal over the share."""
    stages = Stages(0.05)
    app = Flask(__name__)
    gate = DerivationGate(LIMIT, waiting=8, wait=30.0)
    cache = Cache(gate=gate)
    cache.stages = stages
    outcomes: dict[int, Any] = {}
    with tempfile.TemporaryDirectory() as files, patch("bibgraph.web.maps.cache.network_engine", stages.engine):
        calls = [partial(request, cache, variant, 0, Path(files)) for variant in ("data", "page", "data")]
        tabs = [threading.Thread(target=run, args=(app, cache, "a", call, outcomes, n)) for n, call in enumerate(calls)]
        for tab in tabs:
            tab.start()
            time.sleep(0.03)
        for tab in tabs:
            tab.join(60)
    assert list(outcomes.values()) == ["layout 0"] * 3 and gate.refused[OVER_SHARE] == 0


def slow_layouts() -> tuple[Flask, DerivationGate, Cache, SimpleNamespace, threading.Event, threading.Event]:
    """An app, the gate, the cache and a fake engine whose layouts wait for ``release`` (``drawing`` set once one
    has begun)."""
    stages, release, drawing = Stages(0.0), threading.Event(), threading.Event()
    gate = DerivationGate(LIMIT, waiting=8, wait=30.0)
    cache = Cache(gate=gate)
    cache.stages = stages

    def positions(spec: Any, _network: Any) -> str:
        drawing.set()
        release.wait(30)
        return f"layout {spec}"

    engine = stages.engine()
    engine.positions = positions
    return Flask(__name__), gate, cache, engine, release, drawing


def test_a_sibling_of_a_running_chain_waits_for_it_though_another_client_made_their_network() -> None:
    """One client's map page and its data (the page's two requests) while the data's drawing holds the client's one
    turn, their network made by another client's request long answered: the page follows no work in progress, yet
    the same client runs the same map's work, so it waits for that chain instead of a 429 (a flaky failure of the
    generated test above: ``leader`` gave a request that followed nobody nothing to wait for)."""
    app, gate, cache, engine, release, drawing = slow_layouts()
    outcomes: dict[int, Any] = {}
    with tempfile.TemporaryDirectory() as files, patch("bibgraph.web.maps.cache.network_engine", lambda: engine):
        tabs = [
            partial(run, app, cache, "b", partial(request, cache, kind, 0, Path(files)), outcomes, n)
            for n, kind in ((1, "data"), (2, "page"))
        ]
        try:
            run(app, cache, "a", lambda: str(cache.network(0)), outcomes, 0)  # type: ignore[arg-type]
            data, page = (threading.Thread(target=tab) for tab in tabs)
            data.start()
            assert drawing.wait(30)
            page.start()
            time.sleep(0.3)
            assert page.is_alive(), outcomes.get(2)  # waiting for the data's chain, not refused
        finally:
            release.set()
        for thread in (data, page):
            thread.join(30)
    assert outcomes == {0: "network 0", 1: "layout 0", 2: "layout 0"} and gate.refused[OVER_SHARE] == 0


def test_distinct_maps_of_one_client_over_its_share_are_refused_at_once() -> None:
    """The other side of the rule above: a client whose one turn draws map 0 and who asks for map 1 meanwhile shares
    no work with it (only the incidence every map is made from, made long before): 429 at once, no thread held
    waiting."""
    app, gate, cache, engine, release, drawing = slow_layouts()
    outcomes: dict[int, Any] = {}
    with tempfile.TemporaryDirectory() as files, patch("bibgraph.web.maps.cache.network_engine", lambda: engine):
        first_map, second_map = (partial(request, cache, "data", work, Path(files)) for work in (0, 1))
        try:
            run(app, cache, "a", lambda: str(cache.incidence()), outcomes, 2)  # made by a request long answered
            first = threading.Thread(target=run, args=(app, cache, "b", first_map, outcomes, 0))
            first.start()
            assert drawing.wait(30)
            run(app, cache, "b", second_map, outcomes, 1)
        finally:
            release.set()
        first.join(30)
    assert outcomes[0] == "layout 0" and isinstance(outcomes[1], OverShare) and gate.refused[OVER_SHARE] == 1
