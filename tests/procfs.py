"""Reading another process's ``/proc`` files while it may be exiting.

A process can exit between the ``open`` and the ``read`` of one of its files: the open succeeds and the read
fails with ESRCH (:class:`ProcessLookupError`), not ENOENT. Every test that watches a process die reads through
here, so that race means "gone", never an error.
"""

import os
import subprocess

import pytest


def proc_text(path: str) -> str | None:
    """The text of ``/proc`` file ``path``, or None once its process is gone."""
    try:
        with open(path) as file:
            return file.read()
    except (FileNotFoundError, ProcessLookupError):
        return None


def task_ids(pid: int) -> list[str]:
    """The threads of ``pid`` (none once it is gone)."""
    try:
        return os.listdir(f"/proc/{pid}/task")
    except (FileNotFoundError, ProcessLookupError):
        return []


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command's name (state first), or None once it is gone."""
    stat = proc_text(f"/proc/{pid}/stat")
    return None if stat is None else stat.rsplit(")", 1)[1].split()


def started(pid: int) -> str | None:
    """When process ``pid`` started (``/proc``'s start time, clock ticks since boot), or None once it is gone: with
    its number, what tells a process from a later one given the same number (numbers are reused), unless both
    started within one clock tick (10 ms)."""
    fields = _stat_fields(pid)
    return None if fields is None else fields[19]


def ended(pid: int, born: str | None = None) -> bool:
    """Whether process ``pid`` is gone or a zombie (dead, not yet reaped by its parent); given the start time it was
    ``born`` at, a process holding its number since is another one, so it too has ended (a suite run forks thousands
    of processes, so a killed worker's number may be taken again while a test still watches it)."""
    fields = _stat_fields(pid)
    return fields is None or fields[0] == "Z" or (born is not None and fields[19] != born)


def process_numbered(pid: int) -> "subprocess.Popen[bytes] | None":
    """A process that the kernel gave number ``pid`` (free again: its last holder was reaped), made by setting
    ``ns_last_pid`` just below it: what happens by itself once the numbers wrap (``pid_max`` is 32768 here).
    None when a process not ours took the number first and still holds it (a busy machine forks between our
    write and our fork): the caller starts again with another number."""
    for _ in range(50):
        try:
            with open("/proc/sys/kernel/ns_last_pid", "w") as last:
                last.write(str(pid - 1))
        except PermissionError:
            pytest.skip("setting ns_last_pid needs root (CI runs as root)")
        process = subprocess.Popen(["sleep", "120"])
        if process.pid == pid:
            return process
        process.kill()
        process.wait()
        if os.path.exists(f"/proc/{pid}"):
            return None
    raise AssertionError(f"number {pid} stayed free but our forks never got it")
