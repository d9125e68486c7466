"""Queries run in a worker process, so a runaway query can really be stopped.

A pyoxigraph query cannot be interrupted from Python, and a thread cannot be killed; a process
can. At start-up a single-threaded *zygote* process is forked; it holds the store (an in-memory
store shared copy-on-write, an on-disk one opened read-only by the worker) and forks the query
worker. The worker answers on several threads at once (pyoxigraph releases the GIL while it
evaluates), all sharing one store and one cache, so memory does not grow with the concurrency.

At a query's deadline the worker is killed (SIGKILL: its CPU goes back to idle) and a fresh one
forked. Queries that were running beside the runaway one are read-only, so they are simply sent
again to the new worker with the time they have left: other clients are served normally.
Forking from the zygote, never from the (multi-threaded) web process, keeps forks free of locks
held by other threads.

The store never changes while it is served, so answers are cached by query text (a bounded LRU
of the serialised replies); ``fresh=True`` evaluates again. A remote store is not cached.
"""

import contextlib
import io
import os
import pickle
import queue
import resource
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, BinaryIO

from .memory import release_free_memory
from .sandbox import try_isolate_network
from .store import Answer, GraphStore, QueryError

Opener = Callable[[], GraphStore]
CACHEABLE = frozenset({"ask", "answer"})  # dump_file writes a file: always run it
# Oxigraph recurses as deep as the query nests; the guard's depth limit leaves it a margin of 7
# or more on these stacks (it overflows the default 8 MiB at 2,615 BINDs): see graph/guard.py.
WORKER_STACK_BYTES = 64 * 1024 * 1024


class QueryTimeout(Exception):
    """The query ran past the deadline and the worker running it was killed."""


class ServerBusy(Exception):
    """No query thread became free before the deadline."""


class ResultTooLarge(Exception):
    """The serialised answer is larger than the configured limit."""


class WorkerFailed(Exception):
    """The worker died while answering (for example it ran out of its memory limit)."""


Reply = tuple[bytes, bytes]  # the pickled (status, value) and a serialised answer's bytes (else empty)


@dataclass
class _Slot:
    """One connection to one thread of the worker started as ``generation``."""

    generation: int
    connection: Connection


class AnswerCache:
    """Serialised replies by call, least recently used dropped first, bounded in bytes."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[Any, Reply] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: Any) -> Reply | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Any, value: Reply) -> None:
        """Keep ``value`` unless it would take over an eighth of the cache (one big answer must not flush it)."""
        if _size(value) > self.capacity // 8:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            self._size += _size(value) - (_size(previous) if previous is not None else 0)
            self._entries[key] = value
            while self._size > self.capacity:
                _, dropped = self._entries.popitem(last=False)
                self._size -= _size(dropped)


def _size(reply: Reply) -> int:
    return len(reply[0]) + len(reply[1])


TRIM_AFTER = 4 * 1024 * 1024  # a reply this large leaves free heap worth giving back
SPOOL_AFTER = 1024 * 1024  # a larger answer goes through a temporary file, never through either process's memory


class _TooLarge(Exception):
    """Raised inside the store's serialiser to stop it."""


class _Spool(io.RawIOBase):
    """Where the worker writes an answer: memory first, a temporary file past ``SPOOL_AFTER`` bytes.

    Writing stops (so does the store's serialiser) as soon as ``limit`` bytes are passed.
    """

    def __init__(self, directory: str, limit: int) -> None:
        self.directory, self.limit, self.size = directory, limit, 0
        self.memory: io.BytesIO | None = io.BytesIO()
        self.file: BinaryIO | None = None
        self.path: str | None = None

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        self.size += len(data)
        if self.size > self.limit:
            raise _TooLarge(self.size)
        if self.memory is not None and self.size > SPOOL_AFTER:
            descriptor, self.path = tempfile.mkstemp(prefix="answer-", dir=self.directory)
            self.file = os.fdopen(descriptor, "wb")
            self.file.write(self.memory.getbuffer())
            self.memory = None
        (self.file or self.memory).write(data)  # type: ignore[union-attr]
        return len(data)

    def discard(self) -> None:
        if self.file is not None:
            self.file.close()
            os.unlink(self.path)  # type: ignore[arg-type]

    def finish(self) -> tuple[bytes, str | None]:
        """The answer's bytes, or ``b""`` and the path of the file that holds them."""
        if self.file is None:
            return self.memory.getvalue(), None  # type: ignore[union-attr]
        self.file.close()
        return b"", self.path


def _answer(store: GraphStore, payload: bytes, max_result_bytes: int, spool_directory: str) -> tuple[Reply, int]:
    """Run one call; a serialised answer travels as raw bytes beside its header (or as a file), never pickled.

    Also returns the answer's size, spooled or not.
    """
    method, args = pickle.loads(payload)
    body, size = b"", 0
    try:
        if method == "answer":
            spool = _Spool(spool_directory, max_result_bytes)
            try:
                form, media_type = store.write_answer(*args, spool)
            except BaseException:
                spool.discard()
                raise
            body, path = spool.finish()
            size = spool.size
            status: tuple[str, Any] = ("answer", (form, media_type, path))
        else:
            status = ("ok", getattr(store, method)(*args))
    except _TooLarge:
        status = ("too-large", max_result_bytes)
    except QueryError as error:
        status = ("query-error", str(error))
    except Exception as error:  # reported to the caller, never kills the worker
        status = ("error", f"{type(error).__name__}: {error}")
    header = pickle.dumps(status, protocol=pickle.HIGHEST_PROTOCOL)
    return (header, body), max(size, len(header))


def _serve(connection: Connection, store: GraphStore, max_result_bytes: int, spool_directory: str) -> None:
    """One worker thread: answer calls on ``connection`` until the pool closes it."""
    while True:
        try:
            payload = connection.recv_bytes()
        except (EOFError, OSError):
            return
        (header, body), size = _answer(store, payload, max_result_bytes, spool_directory)
        connection.send_bytes(header)
        connection.send_bytes(body)
        if size > TRIM_AFTER:
            del header, body
            release_free_memory()


def _worker(connections: list[Connection], opener: Opener, max_result_bytes: int, spool_root: str) -> None:
    store = opener()
    release_free_memory()  # what the web process had freed before the fork
    spool_directory = os.path.join(spool_root, str(os.getpid()))  # removed with the worker if it is killed
    os.mkdir(spool_directory)
    arguments = (store, max_result_bytes, spool_directory)
    threading.stack_size(WORKER_STACK_BYTES)
    threads = [threading.Thread(target=_serve, args=(c, *arguments)) for c in connections]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _zygote_loop(
    control: socket.socket,
    opener: Opener,
    threads: int,
    max_result_bytes: int,
    memory_limit: int | None,
    spool_root: str,
) -> None:
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


def _read_line(connection: socket.socket) -> str:
    line = b""
    while not line.endswith(b"\n"):
        chunk = connection.recv(1)
        if not chunk:
            break
        line += chunk
    return line.decode().strip()


class QueryPool:
    """A worker process answering :class:`GraphStore` calls on ``threads`` threads, under a deadline."""

    def __init__(
        self,
        opener: Opener,
        threads: int = 4,
        deadline: float = 10.0,
        max_result_bytes: int = 256 * 1024 * 1024,
        memory_limit: int | None = None,
        cache_bytes: int = 0,
        isolate: bool = False,
    ) -> None:
        """``isolate``: the zygote and workers lose every network (:mod:`bibgraph.graph.sandbox`);
        ``sandbox_error`` says why that failed (None when it did not, or was not asked)."""
        self.deadline = deadline
        self.threads = threads
        self.cache = AnswerCache(cache_bytes) if cache_bytes > 0 else None
        self._idle: queue.SimpleQueue[_Slot] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._generation = 0
        self.worker_pid = 0
        self.spool_root = tempfile.mkdtemp(prefix="bibgraph-answers-")
        control, zygote_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the zygote
            control.close()
            try:
                refused = try_isolate_network() if isolate else None
                zygote_end.sendall((refused or "").encode() + b"\n")
                _zygote_loop(zygote_end, opener, threads, max_result_bytes, memory_limit, self.spool_root)
            finally:  # the web process closed the pool or died (even by SIGKILL): leave no answer files
                shutil.rmtree(self.spool_root, ignore_errors=True)
                os._exit(0)
        zygote_end.close()
        self.sandbox_error = _read_line(control) or None
        self._control = control
        self._zygote = pid
        with self._lock:
            self._start_worker()

    def _start_worker(self) -> None:
        """Fork a new worker from the zygote (the caller holds the lock)."""
        self._control.sendall(b"s")
        message, fds, _, _ = socket.recv_fds(self._control, 64, self.threads)
        self._generation += 1
        self.worker_pid = int(message.decode())
        for fd in fds:
            self._idle.put(_Slot(self._generation, Connection(fd)))

    def _restart(self, generation: int) -> bool:
        """Kill the worker ``generation`` and start another; False if that was already done (by another call)."""
        with self._lock:
            if generation != self._generation or self._closed:
                return False
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker_pid, signal.SIGKILL)
            shutil.rmtree(os.path.join(self.spool_root, str(self.worker_pid)), ignore_errors=True)
            self._start_worker()
            return True

    def _take(self, ends: float, limit: float) -> _Slot:
        while True:
            try:
                slot = self._idle.get(timeout=max(0.0, ends - time.monotonic()))
            except queue.Empty:
                raise ServerBusy(f"no query thread became free within {limit:g} s") from None
            if slot.generation == self._generation:
                return slot
            slot.connection.close()  # left over from a killed worker

    def _give_back(self, slot: _Slot) -> None:
        if slot.generation == self._generation and not self._closed:
            self._idle.put(slot)
        else:
            slot.connection.close()

    def call(self, method: str, *args: Any, deadline: float | None = None, fresh: bool = False) -> Any:
        """Run ``store.method(*args)`` in the worker; raise at the deadline (the worker is then replaced)."""
        key = (method, args) if self.cache is not None and method in CACHEABLE else None
        cached = None if key is None or fresh else self.cache.get(key)  # type: ignore[union-attr]
        spooled = None
        if cached is not None:
            header, body = cached
            status, value = pickle.loads(header)
        else:
            header, body, status, value, spooled = self._run(
                pickle.dumps((method, args)), self.deadline if deadline is None else deadline
            )
            if key is not None and status in ("ok", "answer") and spooled is None:
                self.cache.put(key, (header, body))  # type: ignore[union-attr]
        if status == "answer":
            form, media_type, _ = value
            return Answer(form, body, media_type, spooled)
        if status == "ok":
            return value
        if status == "query-error":
            raise QueryError(value)
        if status == "too-large":
            raise ResultTooLarge(f"the answer is over the {value:,}-byte limit; add a LIMIT")
        raise WorkerFailed(value)

    def _run(self, payload: bytes, limit: float) -> tuple[bytes, bytes, str, Any, BinaryIO | None]:
        """The reply's header and body, its decoded status and value, and a spooled answer's file, opened."""
        ends = time.monotonic() + limit
        while time.monotonic() < ends:
            slot = self._take(ends, limit)
            try:
                slot.connection.send_bytes(payload)
                if not slot.connection.poll(max(0.0, ends - time.monotonic())):
                    self._restart(slot.generation)
                    slot.connection.close()
                    raise QueryTimeout(f"the query ran past the {limit:g} s deadline and was stopped")
                header = slot.connection.recv_bytes()
                body = slot.connection.recv_bytes()
            except (EOFError, OSError) as error:
                slot.connection.close()
                if self._restart(slot.generation):
                    raise WorkerFailed("the query worker died (out of memory?)") from error
                continue  # the worker was replaced because of another query: run this one again
            self._give_back(slot)
            status, value = pickle.loads(header)
            path = value[2] if status == "answer" else None
            if path is None:
                return header, body, status, value, None
            with self._lock:  # a worker's files go when it is killed, and that happens under the lock
                try:
                    spooled = open(path, "rb")  # noqa: SIM115 - handed over to the caller, who streams it
                except FileNotFoundError:
                    continue
                os.unlink(path)  # the open file stays readable; nothing is left behind
            return header, body, status, value, spooled
        raise QueryTimeout(f"the query ran past the {limit:g} s deadline (its worker was replaced meanwhile)")

    def close(self) -> None:
        """Stop the worker and the zygote."""
        with self._lock:
            self._closed = True
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker_pid, signal.SIGKILL)
        while True:
            try:
                self._idle.get_nowait().connection.close()
            except queue.Empty:
                break
        self._control.close()
        try:
            os.kill(self._zygote, signal.SIGKILL)
            os.waitpid(self._zygote, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        shutil.rmtree(self.spool_root, ignore_errors=True)
