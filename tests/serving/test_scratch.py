"""Scratch directories: removed at exit, and a killed process's removed by the next process that makes one."""

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from bibgraph.graph.serving.scratch import LOCK, remove_abandoned, scratch_directory

MAKE = textwrap.dedent(
    """
    import os, sys, time
    from bibgraph.graph.serving.scratch import scratch_directory
    path = scratch_directory("bibgraph-probe-")
    if len(sys.argv) > 1:  # fork a child that keeps the lock after the parent is gone
        if os.fork() == 0:
            print(path, os.getpid(), flush=True); time.sleep(60); os._exit(0)
        os._exit(0)
    print(path, os.getpid(), flush=True)
    sys.stdin.readline()
    """
)


def _start(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], Path, int]:
    process = subprocess.Popen(
        [sys.executable, "-c", MAKE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    assert process.stdout is not None
    path, pid = process.stdout.readline().split()
    return process, Path(path), int(pid)


def test_removed_at_a_normal_exit(tmp_path: Path) -> None:
    process, path, _ = _start(tmp_path)
    assert path.is_dir() and path.parent == tmp_path
    process.communicate("\n", timeout=30)
    assert not path.exists()


def test_a_killed_process_directory_is_removed_by_the_next_and_a_live_one_kept(tmp_path: Path) -> None:
    killed, abandoned, _ = _start(tmp_path)
    alive, in_use, _ = _start(tmp_path)
    killed.send_signal(signal.SIGKILL)
    killed.wait(timeout=30)
    assert abandoned.is_dir()  # no exit handler ran
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == [str(abandoned)]
    assert not abandoned.exists() and in_use.is_dir()
    alive.communicate("\n", timeout=30)
    assert not in_use.exists()


def test_a_forked_child_keeps_the_directory_alive(tmp_path: Path) -> None:
    parent, path, child = _start(tmp_path, "fork")
    parent.wait(timeout=30)  # the parent exited (os._exit: no handler) and its child still runs
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == []
    assert path.is_dir()
    os.kill(child, signal.SIGKILL)


def test_a_directory_without_lock_is_never_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """It may be a live server's from an older bibgraph that made no lock (both run during an upgrade)."""
    fresh = tmp_path / "bibgraph-probe-fresh"
    old = tmp_path / "bibgraph-probe-old"
    fresh.mkdir()
    old.mkdir()
    os.utime(old, (time.time() - 30 * 86400, time.time() - 30 * 86400))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made = Path(scratch_directory("bibgraph-probe-"))
    assert made.is_dir() and fresh.is_dir() and old.is_dir()
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == []  # this process holds its own


def _abandoned_directory(tmp_path: Path, name: str) -> Path:
    """What a killed server leaves: a directory with a lock file nobody holds."""
    path = tmp_path / name
    path.mkdir()
    (path / LOCK).touch()
    (path / "answer").write_bytes(b"spooled")
    return path


def test_another_users_directory_is_never_emptied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """/tmp is shared: a local user's own ``bibgraph-…`` directory (made to look abandoned) stays whole."""
    theirs = _abandoned_directory(tmp_path, "bibgraph-probe-theirs")
    monkeypatch.setattr(os, "geteuid", lambda: theirs.stat().st_uid + 1)  # the server runs as someone else
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == []
    assert (theirs / "answer").read_bytes() == b"spooled"
    monkeypatch.undo()
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == [str(theirs)]  # its owner's server cleans it


@pytest.mark.parametrize("kind", ["symlink", "fifo"])
def test_a_lock_that_is_not_a_regular_file_is_not_opened_through(tmp_path: Path, kind: str) -> None:
    """A lock file replaced by a symlink (to any path the server may open) or a FIFO is not this module's."""
    path = _abandoned_directory(tmp_path, f"bibgraph-probe-{kind}")
    (path / LOCK).unlink()
    if kind == "symlink":
        target = tmp_path / "elsewhere"
        target.write_bytes(b"someone else's file")
        (path / LOCK).symlink_to(target)
    else:
        os.mkfifo(path / LOCK)
    assert remove_abandoned(str(tmp_path), "bibgraph-probe-") == []
    assert (path / "answer").read_bytes() == b"spooled"
