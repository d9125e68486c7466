"""Map derivations are bounded: at most MAP_DERIVATIONS at once, the excess refused with 503 and Retry-After
after a bounded wait, identical requests sharing one derivation; the network cache bounded by estimated bytes,
the incidence pinned (red team, issue 13)."""

import logging
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.networks.memsize import estimate_bytes
from bibgraph.web.maps.cache import DERIVED_WRITABLE, GATE, NetworkCache, derived_key
from bibgraph.web.maps.gate import QUEUE_FULL, WAITED, DerivationGate, DerivationsBusy
from tests.conftest import make_app

INCIDENCE = derived_key("incidence")


def wait_until(condition: Callable[[], bool], what: str) -> None:
    """Poll until ``condition`` holds (a state another thread reaches), failing after a generous while."""
    deadline = time.monotonic() + 60
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"never reached: {what}")
        time.sleep(0.005)


class Derivations:
    """Fake derivations that block until released, counting how many run at once."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.running = self.most = self.calls = 0
        self.started = threading.Semaphore(0)
        self.release = threading.Event()

    def of(self, value: Any) -> Callable[[], Any]:
        def derive() -> Any:
            with self._lock:
                self.calls += 1
                self.running += 1
                self.most = max(self.most, self.running)
            self.started.release()
            try:
                assert self.release.wait(60), "never released"
            finally:
                with self._lock:
                    self.running -= 1
            return value

        return derive


def in_threads(calls: list[Callable[[], Any]]) -> tuple[list[threading.Thread], list[Any]]:
    """Start each call in a thread of its own; its result (or exception) lands in the list."""
    outcomes: list[Any] = []

    def run(call: Callable[[], Any]) -> None:
        try:
            outcomes.append(call())
        except Exception as error:  # the test looks at it
            outcomes.append(error)

    threads = [threading.Thread(target=run, args=(call,), daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    return threads, outcomes


def joined(threads: list[threading.Thread]) -> None:
    for thread in threads:
        thread.join(60)
        assert not thread.is_alive()


@pytest.mark.parametrize(("limit", "requests"), [(1, 4), (2, 6), (3, 5)])
def test_distinct_derivations_never_exceed_the_limit(limit: int, requests: int) -> None:
    gate = DerivationGate(limit, waiting=0, wait=60)
    cache, fake = NetworkCache(gate=gate), Derivations()
    calls = [lambda i=i: cache._get(derived_key("network", None, i), fake.of(i)) for i in range(requests)]
    threads, outcomes = in_threads(calls)
    for _ in range(limit):
        assert fake.started.acquire(timeout=60)
    wait_until(lambda: gate.state()["waiting"] == requests - limit, "the others wait at the gate")
    assert fake.running == limit and fake.calls == limit
    fake.release.set()
    joined(threads)
    assert sorted(outcomes) == list(range(requests)) and fake.most == limit and fake.calls == requests


def test_identical_requests_share_one_derivation_and_take_no_turn() -> None:
    """Five asking for one map while it is derived: one derivation, and no refusal although one slot is
    free for it and nobody else may wait (the followers wait for the value, not at the gate)."""
    gate = DerivationGate(1, waiting=1, wait=60)
    cache, fake = NetworkCache(gate=gate), Derivations()
    key = derived_key("network", None, "same")
    threads, outcomes = in_threads([lambda: cache._get(key, fake.of("map")) for _ in range(5)])
    assert fake.started.acquire(timeout=60)
    wait_until(lambda: gate.state()["waiting"] == 0 and key in cache._making, "one derives")
    fake.release.set()
    joined(threads)
    assert outcomes == ["map"] * 5 and fake.calls == 1 and not gate.refused


def test_the_excess_is_refused_after_waiting_and_at_once_when_the_queue_is_full() -> None:
    gate = DerivationGate(1, waiting=1, wait=60)
    cache, fake = NetworkCache(gate=gate), Derivations()
    threads, outcomes = in_threads([lambda: cache._get(derived_key("network", None, 0), fake.of(0))])
    assert fake.started.acquire(timeout=60)
    waiting, waited = in_threads([lambda: cache._get(derived_key("network", None, 1), fake.of(1))])
    wait_until(lambda: gate.state()["waiting"] == 1, "one waits")
    with pytest.raises(DerivationsBusy) as full:  # a third finds the queue full: refused at once
        cache._get(derived_key("network", None, 2), fake.of(2))
    assert full.value.cause == QUEUE_FULL and full.value.retry_after == 60
    gate.wait = 0.01  # a fourth may wait only that long (the waiting one still waits its own 60 s)
    gate.waiting = 0
    gate._share.max_waiting = 0  # type: ignore[union-attr]
    with pytest.raises(DerivationsBusy) as late:
        cache._get(derived_key("network", None, 3), fake.of(3))
    assert late.value.cause == WAITED and late.value.retry_after == 1
    assert gate.refused == {QUEUE_FULL: 1, WAITED: 1}
    fake.release.set()
    joined(threads + waiting)
    assert outcomes == [0] and waited == [1] and fake.calls == 2  # the refused ones never derived
    assert cache._making == {}


def test_a_request_for_a_map_being_derived_waits_past_its_own_wait() -> None:
    """Once the map is being derived, asking for it again is waiting for the answer, not for a turn."""
    gate = DerivationGate(1, waiting=0, wait=0.01)
    cache, fake = NetworkCache(gate=gate), Derivations()
    key = derived_key("network", None, "slow")
    threads, outcomes = in_threads([lambda: cache._get(key, fake.of("slow map"))])
    assert fake.started.acquire(timeout=60)
    asked = time.monotonic()
    follower, answer = in_threads([lambda: cache._get(key, fake.of("another"))])
    wait_until(lambda: time.monotonic() > asked + 20 * gate.wait, "the follower's wait is over")
    fake.release.set()
    joined(threads + follower)
    assert outcomes == answer == ["slow map"] and fake.calls == 1 and not gate.refused


def test_a_derivation_inside_another_uses_its_slot() -> None:
    """A map's drawing derives its network inside: with one slot, that must not wait for itself."""
    gate = DerivationGate(1, waiting=0, wait=0.01)
    cache = NetworkCache(gate=gate)
    drawn = cache._get(derived_key("view", None, 1), lambda: cache._get(derived_key("network", None, 1), lambda: 7) + 1)
    assert drawn == 8 and not gate.refused and gate.state()["running"] == 0


def test_a_dataset_build_derives_with_no_limit() -> None:
    """The build's app (DERIVED_WRITABLE) must derive everything it keeps: its gate lets every derivation in."""
    app = make_app(**{DERIVED_WRITABLE: True, "MAP_DERIVATIONS": 1, "MAP_WAIT": 0.01})
    try:
        gate, fake = app.extensions[GATE], Derivations()
        cache = NetworkCache(gate=gate)
        threads, outcomes = in_threads(
            [lambda i=i: cache._get(derived_key("page", None, i), fake.of(i)) for i in range(3)]
        )
        for _ in range(3):
            assert fake.started.acquire(timeout=60)
        fake.release.set()
        joined(threads)
        assert sorted(outcomes) == [0, 1, 2] and fake.most == 3 and not gate.refused
    finally:
        app.extensions["bibgraph"].close()


@pytest.fixture(scope="module")
def one_map_app():
    """The seeds' app computing one map at a time, one more waiting."""
    application = make_app(MAP_DERIVATIONS=1, MAP_WAITING=1, MAP_WAIT=60.0)
    yield application
    application.extensions["bibgraph"].close()


def client_at(app: Any, number: int) -> Any:
    """A test client with its own address 127.0.0.NUMBER: the gate shares its slots per client."""
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = f"127.0.0.{number}"
    return client


def refusals(client: Any) -> dict[str, float]:
    text = client.get("/metrics").get_data(as_text=True)
    return {
        cause: float(count)
        for cause, count in re.findall(r'^bibgraph_map_derivations_refused_total\{cause="(\w+)"\} (\S+)$', text, re.M)
    }


def test_the_excess_map_requests_get_503_with_retry_after(one_map_app, monkeypatch, caplog) -> None:
    from bibgraph.graph.networks import engine

    client = one_map_app.test_client()
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200  # the incidence, once
    before = refusals(client)
    real, fake = engine.coauthor_network, Derivations()

    def blocked(*arguments: Any) -> Any:
        return fake.of(None)() or real(*arguments)

    monkeypatch.setattr(engine, "coauthor_network", blocked)
    running, first = in_threads([lambda: client_at(one_map_app, 2).get("/graph/coauthors?min_papers=2")])
    assert fake.started.acquire(timeout=60)
    waiting, second = in_threads([lambda: client_at(one_map_app, 3).get("/graph/coauthors.graphml?min_papers=3")])
    gate = one_map_app.extensions[GATE]
    wait_until(lambda: gate.state()["waiting"] == 1, "the second waits")
    with caplog.at_level(logging.WARNING, logger="bibgraph.maps"):
        full = client.get("/graph/coauthors?min_joint=2", headers={"Accept": "text/html"})
        path = client.get("/graph/path?from=Ziniu+Li&to=Somebody+Else")  # a path takes a turn too
    for response in (full, path):
        assert response.status_code == 503 and response.headers["Retry-After"] == "60"
    assert "too many maps waiting" in full.get_data(as_text=True)
    assert any("refused (queue full)" in r.getMessage() and "min_joint=2" in r.getMessage() for r in caplog.records)
    fake.release.set()
    joined(running + waiting)
    assert [r.status_code for r in first + second] == [200, 200]
    after = refusals(client)
    assert after["queue_full"] - before.get("queue_full", 0) == 2 and after["waited"] == before.get("waited", 0)


def test_a_map_request_that_waits_too_long_gets_503(one_map_app, monkeypatch) -> None:
    from bibgraph.graph.networks import ego

    client = one_map_app.test_client()
    client.get("/graph/coauthors.json?min_papers=1")
    before = refusals(client)
    gate, fake = one_map_app.extensions[GATE], Derivations()
    real = ego.ego_rings
    monkeypatch.setattr(ego, "ego_rings", lambda *arguments: fake.of(None)() or real(*arguments))
    author = client.get("/graph/coauthors.json?min_papers=1").get_json()["nodes"][0]["id"]
    path = "/graph/ego/" + author.split("/", 3)[3]
    running, first = in_threads([lambda: client_at(one_map_app, 2).get(f"{path}?top=3")])
    assert fake.started.acquire(timeout=60)
    monkeypatch.setattr(gate, "wait", 0.01)
    response = client.get("/graph/coauthors.gexf?min_papers=4&min_joint=2")  # not kept yet: to be derived
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert "no map could be computed within" in response.get_data(as_text=True)
    fake.release.set()
    joined(running)
    assert first[0].status_code == 200
    assert refusals(client)["waited"] - before.get("waited", 0) == 1
    assert client.get("/graph/coauthors.gexf?min_papers=4&min_joint=2").status_code == 200  # its turn came


def test_a_client_over_its_share_of_derivations_gets_429_and_others_are_served(monkeypatch) -> None:
    """Four whole-network downloads at once from one client held both slots (~78 s at 10k papers) and every other
    client's new map got 503: now a client holds at most its share (one of two slots), the excess 429."""
    from bibgraph.graph.networks import engine

    app = make_app(MAP_DERIVATIONS=2, MAP_WAITING=8, MAP_WAIT=60.0)
    try:
        assert app.test_client().get("/graph/coauthors.json?min_papers=1").status_code == 200  # the incidence
        real, fake = engine.coauthor_network, Derivations()
        monkeypatch.setattr(engine, "coauthor_network", lambda *a: fake.of(None)() or real(*a))
        greedy = client_at(app, 2)
        running, first = in_threads([lambda: greedy.get("/graph/coauthors?min_papers=2")])  # held in this process
        assert fake.started.acquire(timeout=60)
        for fresh in ("/graph/coauthors.gexf?min_papers=3", "/graph/coauthors?min_joint=3", "/graph/path?from=a&to=b"):
            # (a download's body, made here or in a child, holds a turn in this process while it runs: the same share)
            refused = greedy.get(fresh)
            assert refused.status_code == 429 and refused.headers["Retry-After"] == "5", fresh
        other, second = in_threads([lambda: client_at(app, 3).get("/graph/coauthors?min_papers=4")])
        assert fake.started.acquire(timeout=60)  # the other client's map started at once, beside the greedy one
        fake.release.set()
        joined(running + other)
        assert [r.status_code for r in first + second] == [200, 200]
        assert refusals(app.test_client())["over_share"] == 3
    finally:
        app.extensions["bibgraph"].close()


@st.composite
def insert_sequences(draw: st.DrawFn) -> tuple[int, int, list[tuple[int, int]]]:
    """A byte bound, the incidence's size (maybe above the bound), and (key, value size) inserts."""
    bound = draw(st.integers(1_000, 100_000))
    pinned = draw(st.integers(0, 300_000))
    inserts = draw(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 40_000)), max_size=50))
    return bound, pinned, inserts


@settings(max_examples=200, deadline=None)
@given(insert_sequences())
def test_the_cache_stays_under_its_byte_bound_and_keeps_the_incidence(case: tuple[int, int, list]) -> None:
    """Against a model of the policy: least recently used dropped first until under the bound; a value larger
    than the bound not kept; the incidence kept apart whatever its size and whatever comes after."""
    bound, pinned, inserts = case
    cache = NetworkCache(max_bytes=bound)
    incidence = "i" * pinned
    assert cache._get(INCIDENCE, lambda: incidence) is incidence
    model: OrderedDict[int, int] = OrderedDict()
    for key, length in inserts:
        value = ["v" * length, key]
        got = cache._get(derived_key("network", None, key), lambda value=value: value)
        if key in model:
            model.move_to_end(key)
            assert got[1] == key and got is not value  # the value kept for that key
        else:
            assert got is value
            size = estimate_bytes(value)
            if size <= bound:
                model[key] = size
                while sum(model.values()) > bound:
                    model.popitem(last=False)
        assert [k[-1] for k in cache._entries] == list(model)
        assert cache.sizes() == {"evictable": sum(model.values()), "pinned": estimate_bytes(incidence)}
        assert cache.sizes()["evictable"] <= bound
        assert cache._cached(INCIDENCE) == (True, incidence)


def test_the_metrics_say_what_the_cache_keeps(one_map_app) -> None:
    from bibgraph.web.maps.cache import EXTENSION

    client = one_map_app.test_client()
    assert client.get("/graph/coauthors.json?min_papers=1").status_code == 200
    text = client.get("/metrics").get_data(as_text=True)
    kept = dict(re.findall(r'^bibgraph_map_cache_bytes\{part="(\w+)"\} (\S+)$', text, re.M))
    sizes = one_map_app.extensions[EXTENSION].sizes()
    assert {part: int(float(value)) for part, value in kept.items()} == sizes
    assert sizes["pinned"] > 0 and 0 < sizes["evictable"] <= one_map_app.config["MAP_CACHE_BYTES"]
    assert re.search(r"^bibgraph_map_derivations_running 0\.0$", text, re.M)


def test_identical_path_requests_share_one_search_and_a_repeat_is_served_from_the_cache(monkeypatch) -> None:
    """A collaboration path was searched again for each request, and one client's second identical request, while
    the first ran, got 429 (over its share): now a path is made once per pair of ends, like a map; a search that
    gave up on its time budget is not kept."""
    from bibgraph.graph.networks import engine

    app = make_app(MAP_DERIVATIONS=2, MAP_WAITING=8, MAP_WAIT=60.0)
    try:
        real, fake = engine.collaboration_path, Derivations()
        monkeypatch.setattr(engine, "collaboration_path", lambda *a: fake.of(None)() or real(*a))
        same = client_at(app, 2)
        query = "/graph/path?from=Ke+Wang&to=Luwei+Wang"
        running, answers = in_threads([lambda: same.get(query)])
        assert fake.started.acquire(timeout=60)
        waiting, more = in_threads([lambda: same.get(query), lambda: client_at(app, 3).get(query)])
        time.sleep(0.5)  # both ask while the first searches: they wait for it, no turn of their own
        fake.release.set()
        joined(running + waiting)
        answers += more
        assert [a.status_code for a in answers] == [200, 200, 200] and fake.calls == 1
        assert len({a.get_data(as_text=True) for a in answers}) == 1 and "Luwei Wang" in answers[0].get_data(True)
        assert same.get(query).status_code == 200 and fake.calls == 1  # a repeat: from the cache
        assert refusals(app.test_client()).get("over_share", 0) == 0
        app.config["QUERY_TIMEOUT"] = 0  # the search gives up at once: its answer is not kept
        fresh = "/graph/path?from=Ke+Wang&to=Ziniu+Li"
        assert same.get(fresh).status_code == 200 and same.get(fresh).status_code == 200 and fake.calls == 3
    finally:
        app.extensions["bibgraph"].close()
