"""Red team: a query past its deadline takes every query beside it down with it.

At the deadline the pool kills the whole worker; the queries running on its other threads are run
again on the next worker with only the time they have *left*. So a client that keeps one query
running into the deadline (``CLIENT_QUERIES=2`` lets it stagger two) makes every other client's query
that needs more than about ``QUERY_TIMEOUT / 2`` fail with 503, however cheap it is, and with k
addresses, more than ``QUERY_TIMEOUT / 2k``: one bad client does not cost only itself.

Fixed by giving a call killed beside a runaway a whole deadline again (once per call).
"""

import threading
import time
from collections.abc import Iterator

import pytest

from bibgraph.graph.serving.pool import QueryPool
from tests.serving.test_pool import in_thread, wait_until


def nap(_store: object, seconds: float) -> float:
    """A call that takes ``seconds`` and no CPU (so the machine's load cannot decide the outcome)."""
    time.sleep(seconds)
    return seconds


@pytest.fixture
def pool(seed_store) -> Iterator[QueryPool]:
    pool = QueryPool(lambda: seed_store, threads=4, deadline=4.0)
    yield pool
    pool.close()


def test_a_call_well_within_its_deadline_is_answered_beside_a_runaway(pool) -> None:
    runaway, _ = in_thread(lambda: pool.call(nap, 60.0, client="attacker"))
    wait_until(lambda: pool.gate.state()["running"] == 1)
    time.sleep(2.0)  # the victim starts half-way to the runaway's deadline
    victim, outcome = in_thread(lambda: pool.call(nap, 3.0, client="victim"))  # 3 s of its 4 s
    victim.join()
    runaway.join()
    assert outcome.get("value") == 3.0, outcome


def test_the_site_own_calls_wait_their_clients_turn_and_are_never_refused_over_its_share() -> None:
    """Pages opened at once from one address (tabs, a household behind one NAT): their queries were held to the
    client's SPARQL share, and 16 of 24 pages answered 429. A site call waits its client's turn instead; a full queue
    of one client's pages refuses none of another client's first call; a client's own SPARQL stays capped."""
    from bibgraph.graph.serving.fairshare import FairShare, OverShare, ServerBusy

    gate = FairShare(threads=1, per_client=1, max_waiting=2)
    far = time.monotonic() + 60
    holder = gate.enter("crowd", far, site=True)
    started: list[str] = []

    def page(client: str) -> None:
        ticket = gate.enter(client, far, site=True)
        started.append(client)
        gate.leave(ticket)

    crowd = [threading.Thread(target=page, args=("crowd",)) for _ in range(2)]
    for thread in crowd:
        thread.start()
    wait_until(lambda: gate.state()["waiting"] == 2)  # over its share of 1, and the queue full: waiting, not refused
    with pytest.raises(OverShare):
        gate.enter("crowd", far)  # its own SPARQL: capped as ever
    with pytest.raises(ServerBusy):
        gate.enter("other", far)  # another client's SPARQL past the queue: refused as ever
    visitor = threading.Thread(target=page, args=("visitor",))
    visitor.start()  # a page of a client with nothing in the gate: waits too
    wait_until(lambda: gate.state()["waiting"] == 3)
    gate.leave(holder)
    for thread in [*crowd, visitor]:
        thread.join()
    assert started[0] == "visitor" and sorted(started) == ["crowd", "crowd", "visitor"]  # in turn: fewest first


def test_many_pages_at_once_from_one_address_are_all_answered(seed_dataset) -> None:  # type: ignore[no-untyped-def]
    import re
    from collections import Counter

    from tests.conftest import make_app

    app = make_app(BIBGRAPH_STORE=f"dataset:{seed_dataset}", CLIENT_QUERIES=1, QUERY_THREADS=1)
    try:
        client = app.test_client()
        links: list[str] = []
        for area in re.findall(r'href="(/area/[^"?#]+)"', client.get("/areas").get_data(as_text=True))[:4]:
            links += re.findall(r'href="(/(?:author|paper)/[^"?#]+)"', client.get(area).get_data(as_text=True))
        links = sorted(set(links))[:16]
        assert len(links) == 16
        statuses: Counter[int] = Counter()

        def get(path: str) -> None:
            answer = app.test_client().get(
                path, headers={"Accept": "text/html"}, environ_base={"REMOTE_ADDR": "10.9.9.9"}
            )
            statuses[answer.status_code] += 1

        threads = [threading.Thread(target=get, args=(path,)) for path in links]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert statuses == Counter({200: 16})
    finally:
        app.extensions["bibgraph"].close()
