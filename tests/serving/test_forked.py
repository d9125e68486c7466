"""Work run in a child that exits: its memory is not the parent's, it stops when asked or at its deadline, its
failure is told, and it keeps no connection of the parent's open."""

import os
import signal
import socket
import threading
import time
from pathlib import Path

import pytest

from bibgraph.graph.serving import forked
from bibgraph.graph.serving.forked import ForkedFailed, ForkedStopped, ForkedTimeout, run_forked


def rss() -> int:
    """This process's resident bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def gone(pid: int) -> bool:
    return not Path(f"/proc/{pid}").exists()


def test_the_child_writes_its_result_and_its_memory_goes_with_it(tmp_path: Path) -> None:
    out = tmp_path / "out"
    before = rss()

    def work() -> None:
        held = bytearray(256 * 2**20)  # touched: 256 MB resident in the child
        held[::4096] = b"x" * len(range(0, len(held), 4096))
        out.write_text(f"{len(held)} {os.getpid()}")

    run_forked(work)
    size, pid = map(int, out.read_text().split())
    assert size == 256 * 2**20 and pid != os.getpid() and gone(pid)
    assert rss() - before < 32 * 2**20


def test_a_failing_child_tells_its_error() -> None:
    def work() -> None:
        raise ValueError("no such author: <x>")

    with pytest.raises(ForkedFailed, match="no such author: <x>"):
        run_forked(work)


def test_a_child_killed_from_outside_is_a_failure() -> None:
    with pytest.raises(ForkedFailed, match="status -9"):
        run_forked(lambda: os.kill(os.getpid(), signal.SIGKILL))


def test_the_parent_is_woken_by_the_childs_exit_not_by_a_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that ends is reaped at once: the parent waits on its pidfd, and never sleeps a poll's interval
    (which added up to 0.1 s to every download made in a child)."""
    slept: list[float] = []
    monkeypatch.setattr(forked.time, "sleep", slept.append)  # the parent's sleeps, recorded, not slept
    for _ in range(5):
        run_forked(lambda: threading.Event().wait(0.05))  # still running at the parent's first look
    assert slept == []


def test_stop_kills_the_child_at_once(tmp_path: Path) -> None:
    started, pid_file = time.monotonic(), tmp_path / "pid"

    def work() -> None:
        pid_file.write_text(str(os.getpid()))
        while True:  # busy until killed
            pass

    with pytest.raises(ForkedStopped):
        run_forked(work, stop=pid_file.exists)
    assert time.monotonic() - started < 5 and gone(int(pid_file.read_text()))


def test_the_deadline_kills_the_child(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"

    def work() -> None:
        pid_file.write_text(str(os.getpid()))
        time.sleep(60)

    started = time.monotonic()
    with pytest.raises(ForkedTimeout):
        run_forked(work, deadline=0.5)
    assert time.monotonic() - started < 5 and gone(int(pid_file.read_text()))


def test_a_connection_the_parent_closes_is_closed_while_the_child_runs(tmp_path: Path) -> None:
    """The child is forked with the parent's client connections: it must not hold them open (a client would wait
    for the end of a response until a download computed for someone else ends)."""
    ours, theirs = socket.socketpair()
    ran = tmp_path / "ran"

    def work() -> None:
        ran.touch()
        time.sleep(3)

    child = threading.Thread(target=run_forked, args=(work,))
    child.start()
    try:
        while not ran.exists():
            time.sleep(0.01)
        ours.close()
        theirs.settimeout(2.0)
        assert theirs.recv(1) == b""  # the end of the connection, with the child still running
    finally:
        theirs.close()
        child.join()


def test_a_child_cannot_grow_past_its_memory_between_two_looks(tmp_path: Path) -> None:
    """The parent looks at the tree's memory at most once a second: a child allocating fast overshot any bound in
    between. Given ``memory``, the child's allocation past it fails at once (its ``RLIMIT_DATA``), whoever looks."""
    from bibgraph.graph.serving.forked import ForkedOutOfMemory

    out = tmp_path / "out"

    def work(size: int) -> None:
        held = bytearray(size)  # reserved: counted by RLIMIT_DATA whether touched or not
        out.write_text(str(len(held)))

    began = time.monotonic()
    with pytest.raises(ForkedOutOfMemory, match="64 MB"):
        run_forked(lambda: work(512 * 2**20), memory=64 * 2**20)
    assert time.monotonic() - began < 10 and not out.exists()
    run_forked(lambda: work(16 * 2**20), memory=64 * 2**20)  # within it: done
    assert out.read_text() == str(16 * 2**20)
    run_forked(lambda: work(512 * 2**20))  # no limit given: none
    assert out.read_text() == str(512 * 2**20)
