"""The query processes: a zygote that forks workers, and the worker that runs calls on its threads.

The web process sends a worker a pickled :class:`Call` (a module-level function, picklable by
reference, and its arguments) on a socket; the worker runs ``function(store, *args)`` and sends back
one pickled :data:`Reply`: :class:`Returned` (the value), :class:`Serialised` (an answer the store
wrote, in memory or in a spool file) or :class:`Raised` (an exception the caller re-raises).
"""

import contextlib
import gc
import io
import os
import pickle
import resource
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, BinaryIO, NoReturn, cast

from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.serving.sandbox import try_isolate_network
from bibgraph.graph.stores.store import EngineStore, QueryError

Opener = Callable[[], EngineStore]
# Oxigraph recurses as deep as the query nests; the guard's depth limit leaves it a margin of 7
# or more on these stacks (it overflows the default 8 MiB at 2,615 BINDs): see graph/sparql/guard.py.
WORKER_STACK_BYTES = 64 * 1024 * 1024
READY = b"ready"
TRIM_AFTER = 4 * 1024 * 1024  # a reply this large leaves free heap worth giving back
# A larger answer goes through a temporary file, never through the worker's socket. A reply must fit in the
# socket's buffer (212,992 bytes by default on Linux) to be sent in one write: a larger one is handed over in
# rounds, each waiting until the other process is scheduled again; on a loaded 2-core machine 1 MB took 5 ms
# that way (10 ms at p90) where 100 KB took 0.13 ms, and a 224 KB answer cost 7.5 ms more than the engine took.
SPOOL_AFTER = 64 * 1024
SITE_RESULT_BYTES = 1 << 30  # the site's own queries: a bound on a bug, not on a client (see serialise_site)
WRITE_BUFFER = 1024 * 1024  # the engine writes 8 KiB at a time: a spool file gets them in fewer, larger writes


class ResultTooLarge(Exception):
    """The serialised answer is larger than the configured limit."""


class WorkerFailed(Exception):
    """The worker could not answer (it could not be started, or a store call failed in it)."""


@dataclass(frozen=True)
class Call:
    """``function(store, *args)``, to run in the worker (the function is pickled by reference)."""

    function: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass(frozen=True)
class Returned:
    value: Any


@dataclass(frozen=True)
class Serialised:
    """An answer the store wrote: ``body`` in memory, or ``path`` (a spool file) when large."""

    form: str
    media_type: str
    body: bytes
    path: str | None


@dataclass(frozen=True)
class Raised:
    error: Exception


Reply = Returned | Serialised | Raised


@dataclass(frozen=True)
class _Limits:
    """What a worker process knows of its pool: set once per worker, read by :func:`serialise`."""

    max_result_bytes: int
    spool_directory: str


_limits = _Limits(0, "")


class _TooLarge(Exception):
    """Raised inside the store's serialiser to stop it."""

    def __init__(self, limit: int) -> None:
        super().__init__(limit)
        self.limit = limit


class _Spool(io.RawIOBase):
    """Where the worker writes an answer: memory first, a temporary file past ``SPOOL_AFTER`` bytes.

    Writing stops (so does the store's serialiser) as soon as ``limit`` bytes are passed.
    """

    def __init__(self, directory: str, limit: int) -> None:
        self.directory, self.limit, self.size = directory, limit, 0
        self.memory = io.BytesIO()
        self.file: BinaryIO | None = None
        self.path = ""

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge(self.limit)
        if self.file is None and self.size > SPOOL_AFTER:
            descriptor, self.path = tempfile.mkstemp(prefix="answer-", dir=self.directory)
            self.file = os.fdopen(descriptor, "wb", buffering=WRITE_BUFFER)
            self.file.write(self.memory.getbuffer())
            self.memory = io.BytesIO()
        (self.file or self.memory).write(data)
        return len(data)

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
            os.unlink(self.path)

    def finish(self) -> tuple[bytes, str | None]:
        """The answer's bytes, or ``b""`` and the path of the file that holds them."""
        if self.file is None:
            return self.memory.getvalue(), None
        self.file.close()
        return b"", self.path


def serialise(store: EngineStore, query: str, results: str, graphs: str) -> Serialised:
    """Run a client's query in the worker and write its answer (``results`` or ``graphs`` syntax) to a spool,
    up to the clients' ``MAX_RESULT_BYTES``."""
    return _serialised(store, query, results, graphs, _limits.max_result_bytes)


def serialise_site(store: EngineStore, query: str, results: str, graphs: str) -> Serialised:
    """As :func:`serialise`, for the site's own queries (pages, sitemaps, VoID, networks): a limit meant for
    clients' SPARQL turned the site's pages into 500s (``MAX_RESULT_BYTES=2000``: paper pages, the sitemap, VoID).
    Their answers are bounded by the queries themselves (each is written with its LIMIT); :data:`SITE_RESULT_BYTES`
    only stops a bug."""
    return _serialised(store, query, results, graphs, max(_limits.max_result_bytes, SITE_RESULT_BYTES))


def _serialised(store: EngineStore, query: str, results: str, graphs: str, limit: int) -> Serialised:
    spool = _Spool(_limits.spool_directory, limit)
    try:
        form, media_type = store.write_answer(query, results, graphs, cast(BinaryIO, spool))  # it only writes
    except BaseException:
        spool.discard()
        raise
    body, path = spool.finish()
    return Serialised(form, media_type, body, path)


def _run(store: EngineStore, payload: bytes) -> bytes:
    """Run one pickled :class:`Call`; the pickled reply. A failing call never kills the worker."""
    call: Call = pickle.loads(payload)
    reply: Reply
    try:
        value = call.function(store, *call.args)
        reply = value if isinstance(value, Serialised) else Returned(value)
    except _TooLarge as too_large:
        reply = Raised(ResultTooLarge(f"the answer is over the {too_large.limit:,}-byte limit; add a LIMIT"))
    except QueryError as error:
        reply = Raised(QueryError(str(error)))
    except Exception as error:
        reply = Raised(WorkerFailed(f"{type(error).__name__}: {error}"))
    return pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)


def _serve(connection: Connection, store: EngineStore) -> None:
    """One worker thread: answer calls on ``connection`` until the pool closes it."""
    while True:
        try:
            payload = connection.recv_bytes()
        except (EOFError, OSError):
            return
        reply = _run(store, payload)
        connection.send_bytes(reply)
        if len(reply) > TRIM_AFTER:
            del reply
            release_free_memory()


def _worker(connections: list[Connection], opener: Opener, max_result_bytes: int, spool_root: str) -> None:
    global _limits
    store = opener()
    spool_directory = os.path.join(spool_root, str(os.getpid()))  # removed with the worker if it is killed
    os.mkdir(spool_directory)
    _limits = _Limits(max_result_bytes, spool_directory)
    threading.stack_size(WORKER_STACK_BYTES)
    threads = [threading.Thread(target=_serve, args=(c, store)) for c in connections]
    for thread in threads:
        thread.start()
    connections[0].send_bytes(READY)  # the pool waits for this before it hands out the worker's threads
    for thread in threads:
        thread.join()


def zygote(
    control: socket.socket,
    opener: Opener,
    threads: int,
    max_result_bytes: int,
    memory_limit: int | None,
    spool_root: str,
    isolate: bool,
) -> NoReturn:
    """The zygote, just forked from the web process: let go of what it inherited, lose the network
    (``isolate``), say so on ``control``, then fork workers until the pool goes."""
    neutralise_inherited_descriptors(keep=control.fileno())
    release_free_memory()  # what the web process had freed before the fork, once rather than in each worker
    gc.freeze()  # a worker's collections leave the inherited objects (and their shared pages) alone
    try:
        # every zygote, the first and any that replaces a dead one, loses the network before it forks
        refused = try_isolate_network() if isolate else None
        control.sendall(READY + (refused or "").encode() + b"\n")
        _zygote_loop(control, opener, threads, max_result_bytes, memory_limit, spool_root)
    finally:  # the web process closed the pool or died (even by SIGKILL): leave no answer files
        shutil.rmtree(spool_root, ignore_errors=True)
        os._exit(0)


def _zygote_loop(
    control: socket.socket,
    opener: Opener,
    threads: int,
    max_result_bytes: int,
    memory_limit: int | None,
    spool_root: str,
) -> None:
    """Fork a worker (with ``threads`` socket pairs) each time the pool asks; send it the pid and sockets."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped automatically
    while True:
        try:
            request = control.recv(1)
        except OSError:
            return
        if not request:
            return
        pairs = [socket.socketpair() for _ in range(threads)]
        pid = os.fork()
        if pid == 0:  # the worker
            control.close()
            for _, theirs in pairs:
                theirs.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            if memory_limit:
                resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
            try:
                _worker([Connection(ours.detach()) for ours, _ in pairs], opener, max_result_bytes, spool_root)
            finally:
                os._exit(0)
        socket.send_fds(control, [str(pid).encode()], [theirs.fileno() for _, theirs in pairs])
        for ours, theirs in pairs:
            ours.close()
            theirs.close()


def read_line(connection: socket.socket) -> str:
    line = b""
    while not line.endswith(b"\n"):
        chunk = connection.recv(1)
        if not chunk:
            break
        line += chunk
    return line.decode().strip()


def neutralise_inherited_descriptors(keep: int) -> None:
    """Point every inherited descriptor but stdio and ``keep`` at /dev/null (numbers stay taken, so no reuse)."""
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in (keep, null):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    os.close(null)
