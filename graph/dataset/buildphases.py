"""A dataset build's phases, each in a child process that exits before the next one starts.

At a million papers the parse, identity and load left ~1.0 GB resident in the build's process (the catalogue's
and RocksDB's pages, glibc's heap) when the VoID counts began (their hash sets: +1.2 GB) and when the derive began
(the whole co-author exports: +1.5 GB): the whole build peaked at 3.1 GB. Each phase here runs in a child started
for it (:func:`in_child`): the store is filled and closed by one (:func:`load_lists`), counted and described by
another (:func:`describe`), and the derive that follows runs in a process that never held either. What a child
hands back is small (the report, the roles' arrays, the dumps' ends), pickled over a pipe from a child of this very
process; an exception in it is raised again in the parent, with its type, so a failed phase fails the build as it
did in-process, and the caller's version directory is removed (nothing half-written is published).
"""

import ctypes
import os
import pickle
import signal
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from bibgraph.graph.dataset.build import BuildReport, describe_store
from bibgraph.graph.dataset.directory import DUMPS, STORE
from bibgraph.graph.dataset.dumps import complete_streamed_dumps, streamed_ntriples, write_dataset_dumps
from bibgraph.graph.dataset.opener import fill
from bibgraph.graph.dataset.void import void_quads
from bibgraph.graph.identity import numbering
from bibgraph.graph.rdf.iris import Iris
from bibgraph.graph.serving.memory import c_library
from bibgraph.graph.stores.store import OxigraphGraphStore

T = TypeVar("T")
CHILD_MAIN = "from bibgraph.graph.dataset.buildphases import serve_child; serve_child"
PR_SET_PDEATHSIG = 1  # prctl option (linux/prctl.h): the child is killed when the build's process dies


class PhaseFailed(RuntimeError):
    """A phase's child ended without an answer (killed, out of memory) or with an error that cannot be sent back."""


def in_child(work: Callable[..., T], *args: object) -> T:
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
    with os.fdopen(reader, "rb") as answers:
        try:
            try:
                with child.stdin or open(os.devnull, "wb") as given:
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


def load_lists(version: Path, inputs: Sequence[Path], base: str, served: Path | None) -> BuildReport:
    """Parse ``inputs`` into ``version``'s store, its N-Triples dump written as the data streams, and its person
    map written, keeping the keys of ``served``'s (the version a rebuild replaces, its files checked by the caller);
    not described (:func:`describe`). The report, without its person map (written, not sent back)."""
    published = numbering.read_version(served) if served is not None else None
    store = OxigraphGraphStore.disk(version / STORE)
    with streamed_ntriples(version / DUMPS) as ntriples:
        report = fill(store, inputs, base, ntriples, numbering=published, roles=True, describe=False) or BuildReport()
    store.close()
    if report.numbering is not None:  # the person keys published: a rebuild into this dataset keeps them
        report.numbering.write(version / numbering.FILE_NAME)
    report.numbering = None
    return report


def describe(version: Path, base: str) -> tuple[int, dict[str, dict[str, int]]]:
    """Count ``version``'s filled store, load its VoID description and end its dumps with it (the Turtle dump
    written from the N-Triples one first); the triples the store then holds and the manifest's ``dumps`` entry."""
    store = OxigraphGraphStore.disk(version / STORE)
    iris = Iris(base)
    triples = describe_store(store, iris)
    dumps = complete_streamed_dumps(version / DUMPS, void_quads(store, iris))
    store.close()
    return triples, dumps


def load_dumps(version: Path, inputs: Sequence[Path], base: str) -> tuple[BuildReport, dict[str, dict[str, int]]]:
    """Load ``inputs`` (dumps among them) into ``version``'s store and write its dumps from it (what a dump holds is
    not streamed); its person map written. The report and the manifest's ``dumps`` entry."""
    store = OxigraphGraphStore.disk(version / STORE)
    report = fill(store, inputs, base) or BuildReport()
    report.triples = report.triples or store.triple_count()  # dumps alone: none counted (an add starts here)
    numbering.of_store(store).write(version / numbering.FILE_NAME)  # the persons the loaded graph publishes
    dumps = write_dataset_dumps(store, version / DUMPS, void_quads(store, Iris(base)))
    store.close()
    report.numbering = None
    return report, dumps
