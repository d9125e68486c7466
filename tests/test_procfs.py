"""The tests' ``/proc`` reader treats a process that exits mid-read as gone (CI once failed on that race)."""

import subprocess
import sys
import time

import pytest

from tests import procfs


def _exited_after_open() -> tuple[int, object]:
    """A child's ``stat`` file opened while it lived, then the child ended and reaped."""
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    opened = open(f"/proc/{child.pid}/stat")  # noqa: SIM115 - read after the child is gone
    child.communicate(b"")
    return child.pid, opened


def test_a_file_opened_before_its_process_ended_fails_to_read_with_esrch() -> None:
    _, opened = _exited_after_open()
    with opened, pytest.raises(ProcessLookupError):
        opened.read()  # the premise: not FileNotFoundError, so ``suppress(FileNotFoundError)`` missed it


def test_proc_text_is_none_when_the_process_ends_between_open_and_read(monkeypatch) -> None:
    pid, opened = _exited_after_open()
    monkeypatch.setattr(procfs, "open", lambda path: opened, raising=False)
    assert procfs.proc_text(f"/proc/{pid}/stat") is None


def test_proc_text_and_task_ids_of_a_living_and_of_a_gone_process() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        assert (procfs.proc_text(f"/proc/{child.pid}/stat") or "").startswith(f"{child.pid} (")
        assert procfs.task_ids(child.pid)
    finally:
        child.communicate(b"")
    assert procfs.proc_text(f"/proc/{child.pid}/stat") is None
    assert procfs.task_ids(child.pid) == []


def test_a_process_given_the_number_of_one_that_ended_is_not_taken_for_it() -> None:
    """Numbers are reused: a killed process's number held by a new process reads as that process running, unless
    the start time tells them apart."""
    for _ in range(5):  # until our second process gets the first's number (another may take it first)
        first = subprocess.Popen(["sleep", "120"])
        born = procfs.started(first.pid)
        assert born is not None and not procfs.ended(first.pid, born)
        first.kill()
        first.wait()
        time.sleep(0.05)  # start times count clock ticks (10 ms): two processes started in one tick look alike
        if (second := procfs.process_numbered(first.pid)) is not None:
            break
    else:
        pytest.fail("five numbers were each taken by another process first")
    try:
        assert not procfs.ended(first.pid)  # by its number alone, it looks alive
        assert procfs.ended(first.pid, born)  # but it is another process
    finally:
        second.kill()
        second.wait()


def test_a_number_held_by_a_process_not_ours_is_given_up_at_once() -> None:
    """A busy machine's process may take the number first and keep it: the caller is told (None) and starts again
    with another number, where fifty more forks would each have failed (CI: 'another process kept taking number')."""
    holder = subprocess.Popen(["sleep", "120"])
    try:
        assert procfs.process_numbered(holder.pid) is None
        assert holder.poll() is None
    finally:
        holder.kill()
        holder.wait()
