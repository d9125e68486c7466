"""Private scratch directories of a server process that never outlive it for long.

A server writes answers being spooled and dump downloads into temporary directories. Removing
them at exit is not enough for a service: a process killed by the OOM killer or ``SIGKILL`` runs no
exit handler, and every such restart would leave its directory behind. So each directory holds a
lock file locked (``flock``) for as long as any process of the server keeps it open — forked query
workers inherit the lock — and whoever makes a new scratch directory first removes the ones whose
lock nobody holds any more. A lock (rather than a recorded process id) is right across process id
reuse and across containers sharing ``/tmp``. A directory without a lock file is never removed: it
may belong to a running process of a bibgraph from before this module (seen during a rolling upgrade).

``/tmp`` is shared with every local user: only directories this user owns are candidates, and the
lock file is opened without following a symlink and only when it is a regular file, so another user's
``bibgraph-…`` directory never makes the server empty it, nor open a path (a FIFO, a device) of their choosing.
"""

import atexit
import fcntl
import os
import shutil
import stat
import tempfile

LOCK = ".in-use"
_held: list[int] = []  # lock descriptors kept open for the life of the process


def scratch_directory(prefix: str) -> str:
    """A new directory ``<tmp>/<prefix>…``, locked by this process and removed at its exit; abandoned
    ones with the same prefix (their processes are gone) are removed first."""
    root = tempfile.gettempdir()
    remove_abandoned(root, prefix)
    path = tempfile.mkdtemp(prefix=prefix, dir=root)
    making = os.path.join(path, LOCK + ".new")
    descriptor = os.open(making, os.O_CREAT | os.O_RDWR, 0o600)
    fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    os.rename(making, os.path.join(path, LOCK))  # the lock file appears locked: no one can take it for abandoned
    _held.append(descriptor)
    atexit.register(_remove_if_owner, path, os.getpid())
    return path


def remove_abandoned(root: str, prefix: str) -> list[str]:
    """Remove the directories ``root/prefix*`` no live process holds; the paths removed."""
    removed: list[str] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        if not entry.name.startswith(prefix) or not entry.is_dir(follow_symlinks=False):
            continue
        if _ours(entry) and _abandoned(entry.path):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(entry.path)
    return removed


def _ours(entry: os.DirEntry[str]) -> bool:
    """Whether this user owns the directory (not a symlink to one): another local user's is never touched."""
    try:
        return entry.stat(follow_symlinks=False).st_uid == os.geteuid()
    except OSError:
        return False


def _abandoned(path: str) -> bool:
    try:
        # not through a symlink, and without waiting (a FIFO would block a plain open)
        descriptor = os.open(os.path.join(path, LOCK), os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # no lock file: being made, or made by a bibgraph that does not lock (it may still run)
        return False
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            return False  # not a lock file this module made
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False  # a live process holds it
    finally:
        os.close(descriptor)  # releases the lock just taken, if it was
    return True


def _remove_if_owner(path: str, owner: int) -> None:
    """The exit handler: only the process that made the directory removes it (forked children inherit handlers)."""
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)
