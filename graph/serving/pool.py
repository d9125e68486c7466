"""Queries run in a worker process, so a runaway query can really be stopped.

A pyoxigraph query cannot be interrupted from Python, and a thread cannot be killed; a process
can. At start-up a single-threaded *zygote* process is forked; it holds the store (an in-memory
store shared copy-on-write, an on-disk one opened read-only by the worker) and forks the query
worker. The worker answers on several threads at once (pyoxigraph releases the GIL while it
evaluates), all sharing one store and one cache, so memory does not grow with the concurrency.

At a query's deadline the worker is killed (SIGKILL: its CPU goes back to idle) and a fresh one
forked. Queries that were running beside the runaway one are read-only, so they are simply sent
again to the new worker, with a whole deadline again (once): other clients are served normally.
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

The store never changes while it is served, so the replies of calls the caller marks ``cache=True``
are kept (a bounded LRU of the pickled replies, by function and arguments); ``fresh=True`` evaluates
again. A remote store is not cached. What runs in the processes is :mod:`.worker`.
"""

import atexit
import contextlib
import hashlib
import logging
import math
import os
import pickle
import queue
import shutil
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, BinaryIO

from bibgraph.graph.serving.cache import AnswerCache
from bibgraph.graph.serving.fairshare import FairShare, OverShare, ServerBusy
from bibgraph.graph.serving.pidfd import Process
from bibgraph.graph.serving.scratch import scratch_directory
from bibgraph.graph.serving.worker import (
    READY,
    Call,
    Opener,
    Raised,
    Reply,
    ResultTooLarge,
    Returned,
    Serialised,
    WorkerFailed,
    read_line,
    zygote,
)
from bibgraph.graph.stores.store import Answer, QueryError

log = logging.getLogger("bibgraph.pool")


class QueryTimeout(Exception):
    """The query ran past the deadline and the worker running it was killed."""


class ClientLeft(Exception):
    """The client that asked closed its connection while its query ran alone: the worker was replaced."""


class QueryCrashed(Exception):
    """The query killed the worker even when run alone: it is refused, now and next time."""


__all__ = [
    "Opener",
    "OverShare",
    "QueryCrashed",
    "QueryError",
    "QueryPool",
    "QueryTimeout",
    "ResultTooLarge",
    "ServerBusy",
    "WorkerFailed",
]
POISON_KEPT = 1024  # texts of queries known to kill the worker, least recently seen dropped first
GONE_POLL = 0.25  # seconds between two looks, while a query runs, at whether its client is still there
SUSPECT_AFTER = 2  # worker deaths a query sees before it is run alone (one can be bad luck: a kill from outside)
WORKER_START_SECONDS = 120.0  # longest a new worker may take to open the store before it counts as failed
CACHED_SPOOLS = 1024 * 1024  # spooled answers up to this size are read back into the cache (within its own limit)


class _Ended(Exception):
    """The worker the call ran on ended before answering: ``died`` by itself, or else replaced by us."""

    def __init__(self, died: bool) -> None:
        super().__init__("died" if died else "replaced")
        self.died = died


@dataclass
class _Received:
    """A reply as it came (``raw``, what the cache keeps), read, and a spooled answer's file, opened."""

    raw: bytes
    reply: Reply
    spooled: BinaryIO | None


@dataclass
class _Slot:
    """One connection to one thread of the worker started as ``generation``."""

    generation: int
    connection: Connection


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
        max_waiting: int = 0,
    ) -> None:
        """``isolate``: the zygote and workers lose every network (:mod:`bibgraph.graph.serving.sandbox`);
        ``sandbox_error`` says why that failed (None when it did not, or was not asked)."""
        self.deadline = deadline
        self.threads = threads
        self.cache = AnswerCache(cache_bytes) if cache_bytes > 0 else None
        self.gate = FairShare(threads, per_client=client_calls, half_life=max(1.0, deadline), max_waiting=max_waiting)
        self._idle: queue.SimpleQueue[_Slot] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._generation = 0
        self._ended: OrderedDict[int, bool] = OrderedDict()  # how recent generations ended: died (or replaced)
        self._poison: OrderedDict[bytes, None] = OrderedDict()
        self.worker_pid = 0
        self._worker = Process(None)
        self.restarts = {"worker": 0, "zygote": 0, "client_left": 0}  # client_left: of the worker restarts
        self._zygote_args = (opener, threads, max_result_bytes, memory_limit)
        self._isolate = isolate
        self.sandbox_error: str | None = None
        self.spool_root = scratch_directory("bibgraph-answers-")
        self._zygote_process = Process(None)
        self._start_zygote()
        atexit.register(self.close)
        with self._lock:
            self._start_worker()

    def _start_zygote(self) -> None:
        """Fork the zygote from this process (at start, and when the previous one died)."""
        control, zygote_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the zygote
            control.close()
            zygote(zygote_end, *self._zygote_args, spool_root=self.spool_root, isolate=self._isolate)
        zygote_end.close()
        self._control = control
        self._zygote = pid
        self._zygote_process.close()
        self._zygote_process = Process(pid)  # our child: its number is ours until we reap it, so this is it
        control.settimeout(WORKER_START_SECONDS)  # a zygote that does not answer in time is replaced
        try:
            control.recv(len(READY), socket.MSG_WAITALL)  # it holds nothing of ours from here on
            self.sandbox_error = read_line(control) or None  # why it could not lose the network, if it could not
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
        self._worker.close()
        self._worker = Process(self.worker_pid)  # it waits for our READY below, so the number is still its own
        connections = [Connection(fd) for fd in fds]
        try:
            ready = connections[0].poll(WORKER_START_SECONDS) and connections[0].recv_bytes() == READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            for connection in connections:
                connection.close()
            self._worker.kill()
            raise WorkerFailed("the query worker could not open the store")
        for connection in connections:
            self._idle.put(_Slot(self._generation, connection))
        self._worker_missing = False

    def _replace_zygote(self) -> None:
        """Stop what is left of the zygote and fork a new one (the caller holds the lock)."""
        self._zygote_process.kill()  # killed first: closing would make it remove the answer files
        self._control.close()
        with contextlib.suppress(ChildProcessError):  # already reaped
            os.waitpid(self._zygote, 0)  # reaps it: killed, it is gone at once (WNOHANG could leave a zombie)
        self._start_zygote()
        self.restarts["zygote"] += 1
        log.error("the query zygote was gone: a new one was forked")

    def _restart(self, generation: int, died: bool) -> bool:
        """Kill the worker ``generation`` and start another (unless already done); whether it had died."""
        with self._lock:
            if generation == self._generation and not self._closed:
                self._worker.kill()
                shutil.rmtree(os.path.join(self.spool_root, str(self.worker_pid)), ignore_errors=True)
                self._ended[generation] = died
                cause = "it died (a crash, its memory limit or a kill)" if died else "a query ran past its deadline"
                log.warning("query worker %d replaced: %s", self.worker_pid, cause)
                while len(self._ended) > 64:
                    self._ended.popitem(last=False)
                self.restarts["worker"] += 1
                self._start_worker()
            return self._ended.get(generation, False)

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
        self,
        function: Callable[..., Any],
        *args: Any,
        cache: bool = False,
        deadline: float | None = None,
        fresh: bool = False,
        client: str = "",
        gone: Callable[[], bool] | None = None,
        site: bool = False,
    ) -> Any:
        """``function(store, *args)`` in the worker for ``client``; raise at the deadline (the worker is replaced).
        ``gone``: whether the client has closed its connection (see :meth:`_attempt`); ``site``: the site's own
        call, in its client's turn but never refused over its share (:meth:`.FairShare.enter`).

        ``function`` is a module-level function (sent by reference); ``cache``: its reply may be kept and
        reused (the store does not change while served), unless ``fresh``. A :class:`.worker.Serialised`
        answer comes back as an :class:`Answer`.
        """
        kept = self.cache if cache else None
        key = (function, args)
        raw = kept.get(key) if kept is not None and not fresh else None
        if raw is not None:
            received = _Received(raw, pickle.loads(raw), None)
        else:
            payload = pickle.dumps(Call(function, args), protocol=pickle.HIGHEST_PROTOCOL)
            received = self._run(payload, self.deadline if deadline is None else deadline, client, gone, site)
            if kept is not None and (cacheable := _cacheable(received, kept.capacity // 8)) is not None:
                kept.put(key, cacheable)
        reply = received.reply
        if isinstance(reply, Raised):
            raise reply.error
        if isinstance(reply, Returned):
            return reply.value
        return Answer(reply.form, reply.body, reply.media_type, received.spooled)

    def _run(
        self, payload: bytes, limit: float, client: str, gone: Callable[[], bool] | None, site: bool = False
    ) -> "_Received":
        """Run the call until it is answered, times out, or is found to kill workers; the pickled reply."""
        ends = time.monotonic() + limit
        fingerprint = hashlib.sha256(payload).digest()
        deaths, again, renewed = 0, False, False
        while time.monotonic() < ends:
            if fingerprint in self._poison:
                self._poison.move_to_end(fingerprint)
                log.warning("refused a query that crashed the engine when run alone (%s)", fingerprint.hex()[:12])
                raise QueryCrashed("this query made the query engine crash, even when run alone; it is refused")
            alone = deaths >= SUSPECT_AFTER
            ticket = self.gate.enter(client, ends, exclusive=alone, again=again, site=site)
            try:
                return self._attempt(payload, ends, limit, gone)
            except _Ended as ended:
                if ended.died and alone:  # it is the culprit
                    self._poison[fingerprint] = None
                    while len(self._poison) > POISON_KEPT:
                        self._poison.popitem(last=False)
                    continue
                deaths, again = deaths + ended.died, True
                if not ended.died and not renewed:
                    # killed beside another query's runaway, not by its own: a whole deadline again (once), so
                    # a client that keeps running into the deadline cannot make everyone else's queries fail
                    ends, renewed = time.monotonic() + limit, True
            finally:
                self.gate.leave(ticket)
        raise QueryTimeout(f"the query ran past the {limit:g} s deadline (its worker was replaced meanwhile)")

    def _attempt(self, payload: bytes, ends: float, limit: float, gone: Callable[[], bool] | None) -> "_Received":
        """One try on the current worker: its reply; :class:`_Ended` if the worker ended first. A query whose
        client has gone (``gone``) is stopped as at its deadline once it runs alone (a worker is killed to stop a
        query: the others on it would be run again; while they run, it goes on), and :class:`ClientLeft` raised."""
        if self._worker_missing:  # the last start failed: try again
            with self._lock:
                if self._worker_missing and not self._closed:
                    self._start_worker()
        slot = self._take(ends, limit)
        try:
            slot.connection.send_bytes(payload)
            while not slot.connection.poll(max(0.0, min(ends - time.monotonic(), GONE_POLL if gone else math.inf))):
                if time.monotonic() >= ends:
                    self._restart(slot.generation, died=False)
                    slot.connection.close()
                    raise QueryTimeout(f"the query ran past the {limit:g} s deadline and was stopped")
                if gone is not None and gone() and self.gate.state()["running"] == 1:
                    self._restart(slot.generation, died=False)
                    slot.connection.close()
                    self.restarts["client_left"] += 1
                    raise ClientLeft("the client closed its connection: its query was stopped")
            reply = slot.connection.recv_bytes()
        except (EOFError, OSError):
            slot.connection.close()
            raise _Ended(self._restart(slot.generation, died=True)) from None
        self._give_back(slot)
        received = _Received(reply, pickle.loads(reply), None)
        path = received.reply.path if isinstance(received.reply, Serialised) else None
        if path is None:
            return received
        with self._lock:  # a worker's files go when it is killed, and that happens under the lock
            try:
                received.spooled = open(path, "rb")  # noqa: SIM115 - handed over to the caller, who streams it
            except FileNotFoundError:
                raise _Ended(died=False) from None
            os.unlink(path)  # the open file stays readable; nothing is left behind
        return received

    def health(self) -> dict[str, Any]:
        """The pool's state; a dead zygote or worker is replaced first (``ok`` says whether that worked)."""
        with self._lock:
            generation = self._generation
            zygote = self._zygote_alive()
            worker = self._worker.alive()
            if not zygote and not self._closed:
                self._replace_zygote()
        if not worker and not self._closed:
            with contextlib.suppress(WorkerFailed):
                self._restart(generation, died=True)
        with self._lock:
            ok = not self._closed and self._zygote_alive() and self._worker.alive()
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
            "client_left_stops": self.restarts["client_left"],
            "cache_hits": self.cache.hits if self.cache else 0,
            "cache_misses": self.cache.misses if self.cache else 0,
            "poisoned_queries": len(self._poison),
            **self.gate.state(),
        }

    def close(self) -> None:
        """Stop the worker and the zygote (once: a second call does nothing)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._worker.kill()
        atexit.unregister(self.close)  # and the pool can be collected: a version switch closes the old one
        while True:
            try:
                self._idle.get_nowait().connection.close()
            except queue.Empty:
                break
        self._control.close()
        self._zygote_process.kill()
        with contextlib.suppress(ChildProcessError):  # already reaped (by ``_zygote_alive``)
            os.waitpid(self._zygote, 0)
        self._worker.close()
        self._zygote_process.close()
        shutil.rmtree(self.spool_root, ignore_errors=True)


def _cacheable(received: _Received, largest: int) -> bytes | None:
    """The reply as the cache keeps it, or None: never an error; a spooled answer up to ``CACHED_SPOOLS``
    (and ``largest``) bytes read back from its file (left at its start, for the caller to stream)."""
    reply = received.reply
    if isinstance(reply, Raised):
        return None
    if received.spooled is None or not isinstance(reply, Serialised):
        return received.raw
    if os.fstat(received.spooled.fileno()).st_size > min(CACHED_SPOOLS, largest):
        return None
    body = received.spooled.read()
    received.spooled.seek(0)
    return pickle.dumps(Serialised(reply.form, reply.media_type, body, None), protocol=pickle.HIGHEST_PROTOCOL)
