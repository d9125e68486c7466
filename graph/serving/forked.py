"""Large, short-lived work in a child process that exits, so its memory goes back to the operating system.

A whole-network download at 10,000 papers builds an 18,000-author networkx graph, its communities and layout, and
writes its body: ~95 MB that the web process kept after every distinct one (glibc keeps a heap's freed pages;
the map cache kept the graph), from 149 MB after the default map to 439 MB after three (bench/serving/abuse.py costly).
:func:`run_forked` runs such work in a child forked from the web process: the child sees the parent's values (the
incidence) copy-on-write, writes its result to a file (data, never a pickle) and exits; the parent keeps nothing.

The parent's thread waits for the child, and kills it (SIGKILL: its CPU is back at once, not after its stage)
when ``stop`` says so (the client has gone) or at ``deadline``. The child is forked from a multi-threaded
process: it first points every inherited descriptor (client connections, the listening socket) at /dev/null, as
the query pool's zygote does, so a connection another thread closes is closed for its client; it dies with its
parent (``PR_SET_PDEATHSIG``); it runs only ``work``, which must take no lock another thread may hold (the
network engine's pure functions; glibc resets its allocator's locks and CPython its own in a forked child). Where
there is no ``fork`` the work runs in the caller's thread.

A child given ``memory`` bytes cannot grow its data by more (``RLIMIT_DATA`` from its size at the fork: an
allocation past it fails, :class:`ForkedOutOfMemory`). The parent's own look at the process tree's memory is a poll
(at most once a second): a child allocating fast overshot it, and that look alone bounded nothing between two.
"""

import contextlib
import ctypes
import gc
import os
import resource
import select
import signal
import time
from collections.abc import Callable

from bibgraph.graph.serving.memory import c_library
from bibgraph.graph.serving.pidfd import open_pidfd
from bibgraph.graph.serving.worker import neutralise_inherited_descriptors

POLL = 0.1  # seconds between two looks at the child (ended?) and at ``stop``
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h)
MESSAGE_BYTES = 4096  # of a failing child's error message, at most


class ForkedFailed(Exception):
    """The child failed: its error's message (or how it ended)."""


class ForkedStopped(Exception):
    """``stop`` said so while the child ran: it was killed."""


class ForkedTimeout(ForkedFailed):
    """The child ran past its deadline: it was killed."""


class ForkedOutOfMemory(ForkedFailed):
    """The child's allocation failed past its ``memory`` bytes (its ``RLIMIT_DATA``)."""


OUT_OF_MEMORY = 3  # the child's exit code when an allocation failed at its limit


def run_forked(
    work: Callable[[], None], stop: Callable[[], bool] = lambda: False, deadline: float = 300.0, memory: int = 0
) -> None:
    """Run ``work`` in a child process and wait for it to end; ``stop`` is asked every :data:`POLL` seconds
    (true: the child is killed, :class:`ForkedStopped`), and the child is killed after ``deadline`` seconds
    (:class:`ForkedTimeout`). An exception in ``work`` is :class:`ForkedFailed` with its message; an allocation
    past ``memory`` bytes more than the child had at its start (0: no limit) is :class:`ForkedOutOfMemory`."""
    if not hasattr(os, "fork"):
        work()
        return
    reader, writer = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(reader)
        _child(work, writer, parent, memory)
    os.close(writer)
    try:
        code = _wait(pid, stop, time.monotonic() + deadline, deadline)
        message = _read(reader)
    finally:
        os.close(reader)
    if code == OUT_OF_MEMORY:
        raise ForkedOutOfMemory(message or "the work outgrew its memory limit")
    if code != 0:
        raise ForkedFailed(message or f"the work's process ended with status {code}")


def _wait(pid: int, stop: Callable[[], bool], ends: float, deadline: float) -> int:
    """Reap the child, its exit code (minus a signal's number); kill it first if ``stop`` says so or ``ends`` has
    passed. Between two looks it waits on the child's pidfd, which is ready the moment the child exits: a sleep of
    :data:`POLL` added up to 0.1 s to every download made in a child (a 19 ms one took 110 ms)."""
    status = 0
    exited = open_pidfd(pid)
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if stop():
                raise ForkedStopped("stopped: the work was killed")
            if time.monotonic() >= ends:
                raise ForkedTimeout(f"the work ran past its deadline ({deadline:g} s) and was killed")
            if exited is None:
                time.sleep(POLL)
            else:
                select.select([exited], [], [], POLL)
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)
        raise
    finally:
        if exited is not None:
            os.close(exited)
    return os.waitstatus_to_exitcode(status)


def _read(reader: int) -> str:
    chunks = []
    while chunk := os.read(reader, MESSAGE_BYTES):
        chunks.append(chunk)
    return b"".join(chunks)[:MESSAGE_BYTES].decode("utf-8", "replace")


def _limit_data(memory: int) -> None:
    """Let this process's data (heap and private mappings) grow by at most ``memory`` bytes from now."""
    now = 0
    with open("/proc/self/status", encoding="ascii") as status:
        lines = status.read().splitlines()
    for line in lines:
        if line.startswith("VmData:"):
            now = int(line.split()[1]) * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    wanted = now + memory
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (wanted, hard))


def _child(work: Callable[[], None], writer: int, parent: int, memory: int = 0) -> None:
    """In the child: let go of what it inherited, die with the parent, bound its memory, run ``work``, say how it
    went, exit."""
    code = 0
    try:
        neutralise_inherited_descriptors(keep=writer)
        libc = c_library()
        if libc is not None and hasattr(libc, "prctl"):
            libc.prctl(PR_SET_PDEATHSIG, ctypes.c_ulong(signal.SIGKILL))
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        gc.freeze()  # the inherited objects are not the child's to collect (their pages stay shared)
        if memory:
            _limit_data(memory)
        work()
    except BaseException as error:  # whatever it is, the parent is told and the child ends
        code = OUT_OF_MEMORY if isinstance(error, MemoryError) else 1
        said = f"the work outgrew its memory limit ({memory / 2**20:.0f} MB)" if code == OUT_OF_MEMORY else str(error)
        with contextlib.suppress(BaseException):
            os.write(writer, (said or type(error).__name__).encode("utf-8", "replace")[:MESSAGE_BYTES])
    finally:
        os._exit(code)  # no flush of what the parent buffered, no atexit of the parent's
