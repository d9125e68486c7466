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

When a worker *dies* (a query overflowed the engine's stack, ran out of ``memory_limit``, or the
worker was killed from outside), nobody knows which query did it, so every query that was on it
is run again. One that sees a second death is a suspect and is run *alone* (the exclusive turn
of :class:`~.fairshare.FairShare`; not after the first death, which may be a kill from outside,
so that innocent queries need not wait for slow ones to end). One that kills a worker while alone
is the culprit: it is refused (:class:`QueryCrashed`) and its text kept in a bounded poison set, so it is
refused at once next time; the others are answered.

Threads are handed out by :class:`~.fairshare.FairShare`, in turn between clients, so one client
cannot take every thread. If the zygote itself dies, a new one is forked from the web process.
That fork is from a multi-threaded process, so the new zygote only keeps what it needs: it runs no
code of the other threads' (only the zygote loop, which takes no lock they could have held; glibc
resets its allocator's locks in a forked child) and points every descriptor it inherited (client
connections, the listening socket) at ``/dev/null``, so it holds no connection open.

The store never changes while it is served, so answers are cached by query text (a bounded LRU
of the serialised replies); ``fresh=True`` evaluates again. A remote store is not cached.
"""

import contextlib
import gc
import hashlib
import io
import logging
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

from ..stores.store import Answer, GraphStore, QueryError
from .fairshare import FairShare, OverShare, ServerBusy
from .memory import release_free_memory
from .sandbox import try_isolate_network

log = logging.getLogger("bibgraph.pool")
Opener = Callable[[], GraphStore]
CACHEABLE = frozenset({"ask", "answer"})  # dump_file writes a file: always run it
# Oxigraph recurses as deep as the query nests; the guard's depth limit leaves it a margin of 7
# or more on these stacks (it overflows the default 8 MiB at 2,615 BINDs): see graph/serving/guard.py.
WORKER_STACK_BYTES = 64 * 1024 * 1024


class QueryTimeout(Exception):
    """The query ran past the deadline and the worker running it was killed."""


class ResultTooLarge(Exception):
    """The serialised answer is larger than the configured limit."""


class WorkerFailed(Exception):
    """The worker could not answer (it could not be started, or a store call failed in it)."""


class QueryCrashed(Exception):
    """The query killed the worker even when run alone: it is refused, now and next time."""


__all__ = ["OverShare", "QueryCrashed", "QueryPool", "QueryTimeout", "ResultTooLarge", "ServerBusy", "WorkerFailed"]
POISON_KEPT = 1024  # texts of queries known to kill the worker, least recently seen dropped first
SUSPECT_AFTER = 2  # worker deaths a query sees before it is run alone (one can be bad luck: a kill from outside)
WORKER_START_SECONDS = 120.0  # longest a new worker may take to open the store before it counts as failed
READY = b"ready"
DIED, REPLACED = "died", "replaced"  # how a worker generation ended: by itself, or killed by us at a deadline


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
        self.hits = self.misses = 0  # for /metrics

    def get(self, key: Any) -> Reply | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
                self.hits += 1
            else:
                self.misses += 1
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
    spool_directory = os.path.join(spool_root, str(os.getpid()))  # removed with the worker if it is killed
    os.mkdir(spool_directory)
    arguments = (store, max_result_bytes, spool_directory)
    threading.stack_size(WORKER_STACK_BYTES)
    threads = [threading.Thread(target=_serve, args=(c, *arguments)) for c in connections]
    for thread in threads:
        thread.start()
    connections[0].send_bytes(READY)  # the pool waits for this before it hands out the worker's threads
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
        client_calls: int = 0,
        isolate: bool = False,
    ) -> None:
        """``isolate``: the zygote and workers lose every network (:mod:`bibgraph.graph.sandbox`);
        ``sandbox_error`` says why that failed (None when it did not, or was not asked)."""
        self.deadline = deadline
        self.threads = threads
        self.cache = AnswerCache(cache_bytes) if cache_bytes > 0 else None
        self.gate = FairShare(threads, per_client=client_calls, half_life=max(1.0, deadline))
        self._idle: queue.SimpleQueue[_Slot] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._generation = 0
        self._ended: OrderedDict[int, str] = OrderedDict()  # how recent generations ended: DIED or REPLACED
        self._poison: OrderedDict[bytes, None] = OrderedDict()
        self.worker_pid = 0
        self.restarts = {"worker": 0, "zygote": 0}
        self._zygote_args = (opener, threads, max_result_bytes, memory_limit)
        self._isolate = isolate
        self.sandbox_error: str | None = None
        self.spool_root = tempfile.mkdtemp(prefix="bibgraph-answers-")
        self._start_zygote()
        with self._lock:
            self._start_worker()

    def _start_zygote(self) -> None:
        """Fork the zygote from this process (at start, and when the previous one died)."""
        control, zygote_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the zygote
            control.close()
            _neutralise_inherited_descriptors(keep=zygote_end.fileno())
            release_free_memory()  # what the web process had freed before the fork, once rather than in each worker
            gc.freeze()  # a worker's collections leave the inherited objects (and their shared pages) alone
            try:
                # every zygote, the first and any that replaces a dead one, loses the network before it forks
                refused = try_isolate_network() if self._isolate else None
                zygote_end.sendall(READY + (refused or "").encode() + b"\n")
                _zygote_loop(zygote_end, *self._zygote_args, self.spool_root)
            finally:  # the web process closed the pool or died (even by SIGKILL): leave no answer files
                shutil.rmtree(self.spool_root, ignore_errors=True)
                os._exit(0)
        zygote_end.close()
        self._control = control
        self._zygote = pid
        control.settimeout(WORKER_START_SECONDS)  # a zygote that does not answer in time is replaced
        try:
            control.recv(len(READY), socket.MSG_WAITALL)  # it holds nothing of ours from here on
            self.sandbox_error = _read_line(control) or None  # why it could not lose the network, if it could not
        except OSError:
            self.sandbox_error = "the query process did not start" if self._isolate else None

    def _zygote_alive(self) -> bool:
        try:
            return os.waitpid(self._zygote, os.WNOHANG) == (0, 0)  # reaps it if it is dead
        except ChildProcessError:
            return False

    def _start_worker(self) -> None:
        """Fork a new worker from the zygote, or from a new zygote if it is gone (the caller holds the lock)."""
        self._worker_missing = True  # until it is ready: then the next call tries again
        for _ in range(2):
            try:
                self._control.sendall(b"s")
                message, fds, _, _ = socket.recv_fds(self._control, 64, self.threads)
            except OSError:
                message, fds = b"", []
            if message and len(fds) == self.threads:
                break
            for fd in fds:
                os.close(fd)
            self._replace_zygote()
        else:
            raise WorkerFailed("the query worker could not be started")
        self._generation += 1
        self.worker_pid = int(message.decode())
        connections = [Connection(fd) for fd in fds]
        try:
            ready = connections[0].poll(WORKER_START_SECONDS) and connections[0].recv_bytes() == READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            for connection in connections:
                connection.close()
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.worker_pid, signal.SIGKILL)
            raise WorkerFailed("the query worker could not open the store")
        for connection in connections:
            self._idle.put(_Slot(self._generation, connection))
        self._worker_missing = False

    def _replace_zygote(self) -> None:
        """Stop what is left of the zygote and fork a new one (the caller holds the lock)."""
        with contextlib.suppress(ProcessLookupError):  # killed first: closing would make it remove the answer files
            os.kill(self._zygote, signal.SIGKILL)
        self._control.close()
        self._zygote_alive()  # reaps it
        self._start_zygote()
        self.restarts["zygote"] += 1
        log.error("the query zygote was gone: a new one was forked")

    def _restart(self, generation: int, reason: str) -> str:
        """Kill the worker ``generation`` and start another (unless already done); say how it ended."""
        with self._lock:
            if generation == self._generation and not self._closed:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.worker_pid, signal.SIGKILL)
                shutil.rmtree(os.path.join(self.spool_root, str(self.worker_pid)), ignore_errors=True)
                self._ended[generation] = reason
                cause = (
                    "it died (a crash, its memory limit or a kill)"
                    if reason == DIED
                    else "a query ran past its deadline"
                )
                log.warning("query worker %d replaced: %s", self.worker_pid, cause)
                while len(self._ended) > 64:
                    self._ended.popitem(last=False)
                self.restarts["worker"] += 1
                self._start_worker()
            return self._ended.get(generation, REPLACED)

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

    def call(
        self, method: str, *args: Any, deadline: float | None = None, fresh: bool = False, client: str = ""
    ) -> Any:
        """Run ``store.method(*args)`` in the worker for ``client``; raise at the deadline (the worker is replaced)."""
        key = (method, args) if self.cache is not None and method in CACHEABLE else None
        cached = None if key is None or fresh else self.cache.get(key)  # type: ignore[union-attr]
        spooled = None
        if cached is not None:
            header, body = cached
            status, value = pickle.loads(header)
        else:
            header, body, status, value, spooled = self._run(
                pickle.dumps((method, args)), self.deadline if deadline is None else deadline, client
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

    def _run(self, payload: bytes, limit: float, client: str) -> tuple[bytes, bytes, str, Any, BinaryIO | None]:
        """Run the call until it is answered, times out, or is found to kill workers.

        Returns the reply's header and body, its decoded status and value, and a spooled answer's file, opened.
        """
        ends = time.monotonic() + limit
        fingerprint = hashlib.sha256(payload).digest()
        deaths, again = 0, False
        while time.monotonic() < ends:
            if fingerprint in self._poison:
                self._poison.move_to_end(fingerprint)
                log.warning("refused a query that crashed the engine when run alone (%s)", fingerprint.hex()[:12])
                raise QueryCrashed("this query made the query engine crash, even when run alone; it is refused")
            alone = deaths >= SUSPECT_AFTER
            ticket = self.gate.enter(client, ends, exclusive=alone, again=again)
            try:
                outcome = self._attempt(payload, ends, limit)
            finally:
                self.gate.leave(ticket)
            if outcome == DIED and alone:  # it is the culprit
                self._poison[fingerprint] = None
                while len(self._poison) > POISON_KEPT:
                    self._poison.popitem(last=False)
                continue
            if isinstance(outcome, str):
                deaths, again = deaths + (outcome == DIED), True
                continue
            return outcome
        raise QueryTimeout(f"the query ran past the {limit:g} s deadline (its worker was replaced meanwhile)")

    def _attempt(
        self, payload: bytes, ends: float, limit: float
    ) -> tuple[bytes, bytes, str, Any, BinaryIO | None] | str:
        """One try on the current worker: its reply, or how the worker it ran on ended (DIED or REPLACED)."""
        if self._worker_missing:  # the last start failed: try again
            with self._lock:
                if self._worker_missing and not self._closed:
                    self._start_worker()
        slot = self._take(ends, limit)
        try:
            slot.connection.send_bytes(payload)
            if not slot.connection.poll(max(0.0, ends - time.monotonic())):
                self._restart(slot.generation, REPLACED)
                slot.connection.close()
                raise QueryTimeout(f"the query ran past the {limit:g} s deadline and was stopped")
            header = slot.connection.recv_bytes()
            body = slot.connection.recv_bytes()
        except (EOFError, OSError):
            slot.connection.close()
            return self._restart(slot.generation, DIED)
        self._give_back(slot)
        status, value = pickle.loads(header)
        path = value[2] if status == "answer" else None
        if path is None:
            return header, body, status, value, None
        with self._lock:  # a worker's files go when it is killed, and that happens under the lock
            try:
                spooled = open(path, "rb")  # noqa: SIM115 - handed over to the caller, who streams it
            except FileNotFoundError:
                return REPLACED
            os.unlink(path)  # the open file stays readable; nothing is left behind
        return header, body, status, value, spooled

    def health(self) -> dict[str, Any]:
        """The pool's state; a dead zygote or worker is replaced first (``ok`` says whether that worked)."""
        with self._lock:
            generation = self._generation
            zygote = self._zygote_alive()
            worker = _alive(self.worker_pid)
            if not zygote and not self._closed:
                self._replace_zygote()
        if not worker and not self._closed:
            with contextlib.suppress(WorkerFailed):
                self._restart(generation, DIED)
        with self._lock:
            ok = not self._closed and self._zygote_alive() and _alive(self.worker_pid)
        return {
            "ok": ok,
            "zygote_was_alive": zygote,
            "worker_was_alive": worker,
            "restarts": dict(self.restarts),
            "threads": self.threads,
            **self.gate.state(),
            "poisoned_queries": len(self._poison),
        }

    def stats(self) -> dict[str, int]:
        """Figures for monitoring, read without side effects (unlike :meth:`health`, which repairs)."""
        return {
            "worker_restarts": self.restarts["worker"],
            "zygote_restarts": self.restarts["zygote"],
            "cache_hits": self.cache.hits if self.cache else 0,
            "cache_misses": self.cache.misses if self.cache else 0,
            "poisoned_queries": len(self._poison),
            **self.gate.state(),
        }

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


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _neutralise_inherited_descriptors(keep: int) -> None:
    """Point every inherited descriptor but stdio and ``keep`` at /dev/null (numbers stay taken, so no reuse)."""
    null = os.open(os.devnull, os.O_RDWR)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in (keep, null):
            with contextlib.suppress(OSError):
                os.dup2(null, fd)
    os.close(null)
