"""Work in a child process that exits, so the memory it used goes back to the system before the caller goes on.

A dataset build runs its costly phases this way (:mod:`~bibgraph.graph.dataset.buildphases`, the whole co-author
exports of :mod:`~bibgraph.graph.dataset.sitedata`): at a million papers each left its peak's pages to the next in
one process (3.1 GB). The value handed back is pickled over a pipe from a child of this very process; an exception
in it is raised again in the parent, with its type, so a failed phase fails the build as it did in-process, and the
caller's version directory is removed (nothing half-written is published).
"""

import ctypes
import os
import pickle
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable
from typing import Protocol, TypeVar

from bibgraph.graph.serving.memory import c_library

T = TypeVar("T")
CHILD_MAIN = "from bibgraph.graph.serving.childprocess import serve_child; serve_child"
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): the child is killed when the build's process dies
CHILDREN_FROM_BYTES = 32 * 2**20
"""Paper lists of this many bytes or more have a build's phases run in children (:func:`phase_runner`). Below it
(the seeds: 64 KB; 10,000 papers: 11 MB, peak ~0.6 GB) the three interpreters' starts (~2.4 CPU-s each) cost more
than the memory they give back; at a million papers (1.1 GB of lists) they keep each phase's peak to itself."""


class PhaseFailed(RuntimeError):
    """A phase's child ended without an answer (killed, out of memory) or with an error that cannot be sent back."""


class PhaseRunner(Protocol):
    """:func:`in_child` or :func:`in_process`: ``work(*args)``'s value, wherever it ran."""

    def __call__(self, work: Callable[..., T], /, *args: object) -> T: ...


def in_process(work: Callable[..., T], /, *args: object) -> T:
    """``work(*args)`` here: :func:`in_child`'s stand-in for inputs too small to need a process of their own."""
    return work(*args)


def phase_runner(input_bytes: int) -> PhaseRunner:
    """:func:`in_child` for inputs of :data:`CHILDREN_FROM_BYTES` or more, else :func:`in_process`."""
    return in_child if input_bytes >= CHILDREN_FROM_BYTES else in_process


def in_child(work: Callable[..., T], /, *args: object) -> T:
    """``work(*args)`` run in a child process started for it; its value, or its exception raised here. The child's
    memory goes back to the system when it exits; the parent waits for it (and kills it if the wait is interrupted,
    Ctrl-C). The child is a new interpreter, not a fork: a process that has opened a RocksDB store keeps its
    background threads, and a child forked from it hung in its first store call; nor is it multiprocessing's
    ``spawn``, which runs the caller's main script again. ``work`` and ``args`` are pickled: a module's function
    and plain values."""
    reader, writer = os.pipe()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", f"{CHILD_MAIN}({writer})"], stdin=subprocess.PIPE, pass_fds=(writer,)
        )
    finally:
        os.close(writer)
    given = child.stdin
    assert given is not None  # stdin=PIPE
    with open(reader, "rb") as answers:  # the pipe's read end, closed with the block
        try:
            try:
                with given:
                    given.write(pickle.dumps((work, args), protocol=pickle.HIGHEST_PROTOCOL))
            except BrokenPipeError:  # the child died before it read its work: told by its status below
                pass
            answer = answers.read()
            child.wait()
        except BaseException:  # Ctrl-C: the child killed, not left running into a version being removed
            child.kill()
            child.wait()
            raise
    if child.returncode != 0 or not answer:
        raise PhaseFailed(f"a build phase's process ended without finishing (exit status {child.returncode})")
    done, value = pickle.loads(answer)
    if not done:
        raise value
    return value


def serve_child(answers: int) -> None:
    """The child (:func:`in_child`): reads its work from stdin, runs it, writes its value or exception, pickled,
    to the descriptor ``answers``. It is killed if the build's process dies."""
    library = c_library()
    if library is not None:
        library.prctl(ctypes.c_int(PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL))
    work, args = pickle.loads(sys.stdin.buffer.read())
    try:
        answer = pickle.dumps((True, work(*args)), protocol=pickle.HIGHEST_PROTOCOL)
    except BaseException as error:
        error.add_note("in the build phase's child process:\n" + "".join(traceback.format_exception(error)))
        try:
            answer = pickle.dumps((False, error))
            pickle.loads(answer)  # an exception that cannot be made again is sent as its message
        except Exception:
            answer = pickle.dumps((False, PhaseFailed(f"{type(error).__name__}: {error}")))
    with os.fdopen(answers, "wb") as out:
        out.write(answer)
