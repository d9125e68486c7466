"""The query pool keeps serving whatever happens to its processes, and shares its threads fairly.

Unit tests of :mod:`bibgraph.graph.serving.pool` and :mod:`bibgraph.graph.serving.fairshare`, no HTTP server.
"""

import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bibgraph.graph.serving.fairshare import FairShare, OverShare, ServerBusy
from bibgraph.graph.serving.pool import QueryCrashed, QueryPool, ResultTooLarge, WorkerFailed
from bibgraph.graph.serving.worker import serialise
from bibgraph.graph.stores.store import GraphStore, QueryError
from tests.procfs import ended, proc_text, process_numbered, task_ids

# Oxigraph's parser recurses once per group: this overflows even the worker thread's 64 MiB stack (about
# 17,000 groups fit), and the worker dies. The guard refuses such queries long before; the pool is tested alone.
CRASHER = "SELECT * WHERE " + "{" * 100_000 + "}" * 100_000
MEDIUM = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f FILTER(?c != ?f) }"  # about a second on the seeds


@pytest.fixture
def pool(seed_store) -> Iterator[QueryPool]:
    pool = QueryPool(lambda: seed_store, threads=2, deadline=60.0)
    yield pool
    pool.close()


def wait_until(condition: Callable[[], bool], timeout: float = 30.0) -> None:
    """Poll ``condition`` (a state another thread or process reaches) until it holds."""
    ends = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < ends, "the condition never held"
        time.sleep(0.01)


def in_thread(function: Callable[[], object]) -> tuple[threading.Thread, dict[str, object]]:
    outcome: dict[str, object] = {}

    def run() -> None:
        try:
            outcome["value"] = function()
        except Exception as error:  # handed to the test thread
            outcome["error"] = error

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def children(pid: int) -> list[int]:
    """The child processes of ``pid`` (forked by any of its threads)."""
    found = []
    for task in task_ids(pid):
        found += [int(child) for child in (proc_text(f"/proc/{pid}/task/{task}/children") or "").split()]
    return found


def test_a_query_that_kills_the_worker_is_refused_and_the_query_beside_it_answered(pool, seed_store) -> None:
    expected = seed_store.select(MEDIUM)
    thread, outcome = in_thread(lambda: pool.call(GraphStore.select, MEDIUM))
    wait_until(lambda: pool.gate.state()["running"] == 1)
    with pytest.raises(QueryCrashed):
        pool.call(GraphStore.select, CRASHER)
    thread.join(timeout=120)
    assert outcome == {"value": expected}
    deaths = pool.restarts["worker"]
    assert deaths >= 2  # beside the medium query, then at least once alone
    with pytest.raises(QueryCrashed):  # remembered: refused without costing another worker
        pool.call(GraphStore.select, CRASHER)
    assert pool.restarts["worker"] == deaths
    assert pool.call(GraphStore.triple_count) > 0


def test_a_worker_killed_from_outside_costs_no_query(pool, seed_store) -> None:
    expected = seed_store.select(MEDIUM)
    thread, outcome = in_thread(lambda: pool.call(GraphStore.select, MEDIUM))
    wait_until(lambda: pool.gate.state()["running"] == 1)
    os.kill(pool.worker_pid, signal.SIGKILL)
    thread.join(timeout=120)
    assert outcome == {"value": expected}  # run again alone: it does not kill the worker, so it is innocent
    os.kill(pool.worker_pid, signal.SIGKILL)  # an idle worker this time
    wait_until(lambda: ended(pool.worker_pid))
    assert pool.call(GraphStore.triple_count) > 0
    assert pool.health()["poisoned_queries"] == 0


def test_a_dead_zygote_is_forked_again_and_the_next_worker_comes_from_it(pool) -> None:
    zygote = pool._zygote
    os.kill(zygote, signal.SIGKILL)
    os.kill(pool.worker_pid, signal.SIGKILL)
    assert pool.call(GraphStore.triple_count) > 0
    assert pool.restarts["zygote"] == 1
    assert pool._zygote != zygote and pool._zygote in children(os.getpid())
    assert pool.worker_pid in children(pool._zygote)


def test_health_reports_and_repairs_the_pool(pool) -> None:
    assert pool.health()["ok"] is True
    os.kill(pool._zygote, signal.SIGKILL)
    wait_until(lambda: ended(pool._zygote))
    state = pool.health()
    assert state["zygote_was_alive"] is False and state["ok"] is True and state["restarts"]["zygote"] == 1
    old = pool.worker_pid
    os.kill(old, signal.SIGKILL)
    wait_until(lambda: not os.path.exists(f"/proc/{old}"))  # reaped by the zygote
    state = pool.health()
    assert state["worker_was_alive"] is False and state["ok"] is True and pool.worker_pid != old
    pool.close()
    assert pool.health()["ok"] is False


def test_a_zygote_forked_from_the_web_process_holds_none_of_its_connections(pool) -> None:
    """The web process has client connections open when it forks a new zygote: they must not stay open there."""
    listening = socket.create_server(("127.0.0.1", 0))
    try:
        os.kill(pool._zygote, signal.SIGKILL)
        wait_until(lambda: ended(pool._zygote))
        assert pool.health()["restarts"]["zygote"] == 1
        inode = f"socket:[{os.fstat(listening.fileno()).st_ino}]"
        held = {os.readlink(f"/proc/{pool._zygote}/fd/{fd}") for fd in os.listdir(f"/proc/{pool._zygote}/fd")}
        assert inode not in held
    finally:
        listening.close()


def test_a_client_over_its_share_is_refused_at_once_and_others_are_not() -> None:
    gate = FairShare(threads=4, per_client=2)
    far = time.monotonic() + 60
    first, second = gate.enter("a", far), gate.enter("a", far)
    with pytest.raises(OverShare) as refused:
        gate.enter("a", far)
    assert refused.value.retry_after >= 1
    again = gate.enter("a", far, again=True)  # a re-run after a worker death is never refused
    other = gate.enter("b", far)
    for ticket in (first, second, again, other):
        gate.leave(ticket)
    assert gate.state() == {"running": 0, "waiting": 0, "clients": 2}


def test_past_the_waiting_cap_a_call_that_would_wait_is_refused_at_once() -> None:
    """Waiting calls hold web threads: many clients, each within its share, must not take them all."""
    gate = FairShare(threads=1, per_client=2, max_waiting=1)
    far = time.monotonic() + 60
    holder = gate.enter("a", far)
    waiter = threading.Thread(target=lambda: gate.leave(gate.enter("b", far)))
    waiter.start()
    wait_until(lambda: gate.state()["waiting"] == 1)
    with pytest.raises(ServerBusy):
        gate.enter("c", far)  # would wait beside "b": refused, not held
    gate.leave(holder)
    waiter.join()
    gate.leave(gate.enter("c", far))  # nothing waits now: served
    assert gate.state() == {"running": 0, "waiting": 0, "clients": 3}


def test_the_next_free_thread_goes_to_the_client_that_used_the_least() -> None:
    gate = FairShare(threads=1, per_client=3)
    far = time.monotonic() + 60
    started: list[str] = []
    holder = gate.enter("heavy", far)

    def take(client: str) -> None:
        ticket = gate.enter(client, far)
        started.append(client)
        gate.leave(ticket)

    waiters = [threading.Thread(target=take, args=("heavy",))]
    waiters[0].start()
    wait_until(lambda: gate.state()["waiting"] == 1)
    waiters.append(threading.Thread(target=take, args=("light",)))
    waiters[1].start()
    wait_until(lambda: gate.state()["waiting"] == 2)
    gate.leave(holder)  # "heavy" has used the thread; "light" arrived later but goes first
    for waiter in waiters:
        waiter.join(timeout=10)
    assert started == ["light", "heavy"]


def test_a_thread_is_kept_for_light_clients_while_heavy_ones_keep_the_others_busy() -> None:
    now = [0.0]
    gate = FairShare(threads=4, half_life=10.0, clock=lambda: now[0])
    heavy = [gate.enter(f"heavy-{n}", now[0]) for n in range(3)]
    now[0] = 30.0  # each has had a query in the gate all along
    with pytest.raises(ServerBusy):  # the last free thread is not theirs
        gate.enter("heavy-0", now[0])
    light = gate.enter("light", now[0])
    gate.leave(light)
    gate.leave(heavy[0])
    assert gate.enter("heavy-0", now[0]) is not None  # a thread beyond the reserved one: anyone's


def test_an_exclusive_call_runs_alone_and_goes_before_the_others() -> None:
    gate = FairShare(threads=3)
    far = time.monotonic() + 60
    running = gate.enter("a", far)
    started: list[tuple[str, int]] = []

    def take(client: str, exclusive: bool) -> None:
        ticket = gate.enter(client, far, exclusive=exclusive)
        started.append((client, gate.state()["running"]))
        gate.leave(ticket)

    suspect = threading.Thread(target=take, args=("suspect", True))
    suspect.start()
    wait_until(lambda: gate.state()["waiting"] == 1)
    later = threading.Thread(target=take, args=("later", False))
    later.start()
    wait_until(lambda: gate.state()["waiting"] == 2)
    assert started == []  # a thread is free, but the exclusive call waits for the running one, and so do later ones
    gate.leave(running)
    suspect.join(timeout=10)
    later.join(timeout=10)
    assert started == [("suspect", 1), ("later", 1)]  # each ran alone


@settings(max_examples=200, deadline=None)
@given(
    threads=st.integers(1, 4),
    per_client=st.integers(0, 3),
    steps=st.lists(st.tuples(st.sampled_from("abc"), st.booleans(), st.booleans()), max_size=40),
)
def test_the_gate_never_exceeds_its_threads_or_a_clients_share(
    threads: int, per_client: int, steps: list[tuple[str, bool, bool]]
) -> None:
    """Any sequence of calls entering (without waiting) and leaving keeps the gate's promises."""
    gate = FairShare(threads, per_client)
    inside: list = []
    for client, exclusive, leave in steps:
        if leave and inside:
            gate.leave(inside.pop(0))
            continue
        try:
            inside.append(gate.enter(client, time.monotonic(), exclusive=exclusive))
        except (OverShare, ServerBusy):
            continue
        assert len(inside) <= threads
        assert not per_client or sum(t.client == client for t in inside) <= per_client
        assert not any(t.exclusive for t in inside) or len(inside) == 1
        assert gate.state()["running"] == len(inside)


def test_a_query_over_the_worker_memory_limit_is_refused_and_the_pool_goes_on(seed_store) -> None:
    """The worker dies when an allocation fails under ``memory_limit``: the same path as any crash."""
    with open("/proc/self/status") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize:"))
    pool = QueryPool(lambda: seed_store, threads=2, deadline=120.0, memory_limit=size + 300 * 1024 * 1024)
    hungry = "SELECT (STRLEN(GROUP_CONCAT(CONCAT(STR(?c), STR(?f)))) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f }"
    try:
        with pytest.raises(QueryCrashed):
            pool.call(GraphStore.select, hungry)
        assert pool.call(GraphStore.triple_count) > 0
    finally:
        pool.close()


def worker_pid(store: object) -> int:
    """Run in the worker: which process answered."""
    return os.getpid()


def fail(store: object, error: Exception) -> None:
    """Run in the worker: raise ``error`` there."""
    raise error


def test_a_call_runs_a_function_in_the_worker_and_a_cacheable_reply_is_reused_unless_fresh(seed_store) -> None:
    pool = QueryPool(lambda: seed_store, threads=1, cache_bytes=1024 * 1024)
    try:
        check_the_cache(pool)
    finally:
        pool.close()


def check_the_cache(pool: QueryPool) -> None:
    first = pool.call(worker_pid, cache=True)
    assert first == pool.worker_pid != os.getpid()
    os.kill(first, signal.SIGKILL)
    wait_until(lambda: ended(first))
    assert pool.call(worker_pid, cache=True) == first  # answered from the cache: no worker involved
    assert pool.call(worker_pid) == pool.call(worker_pid, cache=True, fresh=True) != first  # run again


@pytest.mark.parametrize(
    ("raised", "expected"),
    [(QueryError("bad query"), QueryError), (ValueError("a bug"), WorkerFailed), (OSError("gone"), WorkerFailed)],
)
def test_an_exception_in_the_worker_is_raised_in_the_caller_and_the_worker_goes_on(pool, raised, expected) -> None:
    worker = pool.worker_pid
    with pytest.raises(expected, match=str(raised)):
        pool.call(fail, raised)
    assert pool.call(worker_pid) == worker


def test_an_answer_over_the_size_limit_is_refused_and_a_smaller_one_served(seed_store) -> None:
    pool = QueryPool(lambda: seed_store, threads=1, max_result_bytes=1000)
    try:
        with pytest.raises(ResultTooLarge):
            pool.call(serialise, "SELECT * WHERE { ?s ?p ?o }", "tsv", "nt")
        answer = pool.call(serialise, "SELECT * WHERE { ?s ?p ?o } LIMIT 1", "tsv", "nt")
        assert (answer.form, answer.media_type) == ("select", "text/tab-separated-values")
        assert answer.read() == seed_store.answer("SELECT * WHERE { ?s ?p ?o } LIMIT 1", "tsv", "nt").body
    finally:
        pool.close()


def test_a_serving_process_limits_its_heaps() -> None:
    """``limit_arenas`` caps glibc's heaps: eight threads allocating at once open at most two (glibc's own count,
    from ``malloc_stats``), where by default they open more."""
    import ctypes
    import os
    import sys

    script = """
import ctypes, sys, threading
from bibgraph.graph.serving.memory import limit_arenas
if sys.argv[1] == "limited":
    assert limit_arenas()
go = threading.Barrier(8)
def work():
    go.wait()
    kept = [bytearray(100_000) for _ in range(20)]
    go.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
[t.start() for t in threads]
[t.join() for t in threads]
ctypes.CDLL(None).malloc_stats()
"""
    if not hasattr(ctypes.CDLL(None), "malloc_stats"):
        pytest.fail("not glibc: bibgraph's memory figures are measured on glibc")
    environment = {name: value for name, value in os.environ.items() if name != "MALLOC_ARENA_MAX"}
    heaps = {}
    for mode in ("limited", "default"):
        done = subprocess.run(
            [sys.executable, "-c", script, mode], capture_output=True, text=True, env=environment, timeout=60
        )
        assert done.returncode == 0, done.stderr
        heaps[mode] = done.stderr.count("Arena ")
    assert heaps["limited"] <= 2 < heaps["default"]


def test_a_number_given_to_another_process_is_never_signalled(seed_store) -> None:
    """The zygote reaps a dead worker at once, so its number is free for the next process made; the pool once
    took that process for its worker (alive: not replaced) and killed it when closed (at exit, every pool ever
    made was closed again: a test run killed processes it did not own)."""
    pool = QueryPool(lambda: seed_store, threads=1, deadline=60.0)
    others = []
    try:
        for check in ("health", "close"):
            for _ in range(5):  # until our process gets the killed worker's number (another may take it first)
                worker = pool.worker_pid
                os.kill(worker, signal.SIGKILL)
                wait_until(lambda: not os.path.exists(f"/proc/{worker}"))  # noqa: B023 - used at once
                if (other := process_numbered(worker)) is not None:
                    break
                pool.health()  # a new worker to kill: this number is held by a process not ours
            else:
                pytest.fail("five killed workers' numbers were each taken by another process first")
            others.append(other)
            if check == "health":
                assert pool.health()["worker_was_alive"] is False
                assert pool.worker_pid != worker and pool.call(GraphStore.triple_count) > 0
            else:
                pool.close()
                pool.close()  # twice, as an explicit close and then the one at exit
        assert [other.poll() for other in others] == [None, None], "a process that had only a number was killed"
    finally:
        pool.close()
        for other in others:
            other.kill()
            other.wait()
