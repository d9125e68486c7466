"""Red team: a query past its deadline takes every query beside it down with it.

At the deadline the pool kills the whole worker; the queries running on its other threads are run
again on the next worker with only the time they have *left*. So a client that keeps one query
running into the deadline (``CLIENT_QUERIES=2`` lets it stagger two) makes every other client's query
that needs more than about ``QUERY_TIMEOUT / 2`` fail with 503, however cheap it is, and with k
addresses, more than ``QUERY_TIMEOUT / 2k``: one bad client does not cost only itself.

Fixed by giving a call killed beside a runaway a whole deadline again (once per call).
"""

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
