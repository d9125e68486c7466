"""Cut a process off from every network, so a query engine that federates cannot reach anything.

The query guard (:mod:`bibgraph.graph.sparql.guard`) refuses SERVICE; this is the second layer, so a
future guard bug is harmless: the zygote calls :func:`isolate_network` before it forks any query
worker, and from then on it and its workers live in a fresh network namespace that has only a
loopback interface, left down: ``connect()`` to any address fails with "Network is unreachable".
Unix-domain socket pairs that already exist (how the web process talks to the zygote and the
workers) are not tied to a network and keep working.

An unprivileged process first enters a new user namespace (where it may create the network one)
and maps its own uid and gid there, so the files it creates keep their owner. Python 3.11 has no
``os.unshare``, hence ctypes (one libc call; no package does only this).
"""

import ctypes
import os

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000


def _unshare(flags: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(flags) != 0:
        number = ctypes.get_errno()
        raise OSError(number, os.strerror(number))


def _write(path: str, text: str) -> None:
    with open(path, "w") as file:
        file.write(text)


def isolate_network() -> None:
    """Move this (single-threaded) process into a new, empty network namespace; OSError if the
    kernel or the container does not allow it."""
    if os.geteuid() == 0:
        _unshare(CLONE_NEWNET)
        return
    uid, gid = os.geteuid(), os.getegid()
    _unshare(CLONE_NEWUSER | CLONE_NEWNET)
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def try_isolate_network() -> str | None:
    """:func:`isolate_network`, returning why it failed (None when the process is isolated)."""
    try:
        isolate_network()
    except OSError as error:
        return f"cannot enter a network namespace: {error.strerror or error}"
    return None
