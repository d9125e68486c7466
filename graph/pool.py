"""Queries run in worker processes, so a runaway query can really be stopped.

A pyoxigraph query cannot be interrupted from Python, and a thread cannot be killed; a process
can. At start-up a single-threaded *zygote* process is forked; it holds the store (the
in-memory store is shared copy-on-write, an on-disk one is opened read-only by each worker)
and forks a worker whenever the pool asks. The pool sends each query to an idle worker and
waits until the deadline; a worker that misses it is killed (SIGKILL: its CPU goes back to
idle) and replaced, while the other workers keep serving. Forking from the zygote, never from
the (multi-threaded) web process, keeps forks free of locks held by other threads.
"""

import contextlib
import os
import pickle
import queue
import resource
import signal
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from .store import GraphStore, QueryError

Opener = Callable[[], GraphStore]


class QueryTimeout(Exception):
    """The query ran past the deadline and its worker was killed."""


class ServerBusy(Exception):
    """No worker became free before the deadline."""


class ResultTooLarge(Exception):
    """The serialised answer is larger than the configured limit."""


class WorkerFailed(Exception):
    """The worker died while answering (for example it ran out of its memory limit)."""


@dataclass
class _Worker:
    pid: int
    connection: Connection


def _private_dirty_bytes() -> int:
    """Memory this process has written itself (shared copy-on-write pages it has not touched excluded)."""
    with open("/proc/self/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Private_Dirty:"):
                return int(line.split()[1]) * 1024
    return 0


def _worker_loop(connection: Connection, opener: Opener, max_result_bytes: int, recycle_bytes: int | None) -> None:
    store = opener()
    while True:
        try:
            method, args = connection.recv()
        except (EOFError, OSError):
            return
        try:
            result = getattr(store, method)(*args)
            size = len(getattr(result, "body", b""))
            reply = ("too-large", size) if size > max_result_bytes else ("ok", result)
        except QueryError as error:
            reply = ("query-error", str(error))
        except Exception as error:  # reported to the caller, never kills the worker
            reply = ("error", f"{type(error).__name__}: {error}")
        # A worker whose own memory grew past the limit answers, then retires. (pyoxigraph's in-memory
        # store writes to its pages while reading, so workers slowly copy the shared store.)
        retiring = recycle_bytes is not None and _private_dirty_bytes() > recycle_bytes
        connection.send((*reply, retiring))
        if retiring:
            return


def _zygote_loop(
    control: socket.socket, opener: Opener, max_result_bytes: int, memory_limit: int | None, recycle_bytes: int | None
) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # workers are reaped automatically
    while True:
        try:
            request = control.recv(1)
        except OSError:
            return
        if not request:
            return
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the worker
            control.close()
            theirs.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            if memory_limit:
                resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
            try:
                _worker_loop(Connection(ours.detach()), opener, max_result_bytes, recycle_bytes)
            finally:
                os._exit(0)
        socket.send_fds(control, [str(pid).encode()], [theirs.fileno()])
        ours.close()
        theirs.close()


class QueryPool:
    """A fixed number of worker processes answering :class:`GraphStore` calls under a deadline."""

    def __init__(
        self,
        opener: Opener,
        workers: int = 2,
        deadline: float = 10.0,
        max_result_bytes: int = 256 * 1024 * 1024,
        memory_limit: int | None = None,
        recycle_bytes: int | None = None,
    ) -> None:
        self.deadline = deadline
        self.size = workers
        # Last in, first out: the most recently used worker is the warmest (its pages are already copied).
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._lock = threading.Lock()
        self._closed = False
        control, zygote_end = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # the zygote
            control.close()
            try:
                _zygote_loop(zygote_end, opener, max_result_bytes, memory_limit, recycle_bytes)
            finally:
                os._exit(0)
        zygote_end.close()
        self._control = control
        self._zygote = pid
        for _ in range(workers):
            self._idle.put(self._spawn())

    def _spawn(self) -> _Worker:
        with self._lock:
            self._control.sendall(b"s")
            message, fds, _, _ = socket.recv_fds(self._control, 64, 1)
        return _Worker(int(message.decode()), Connection(fds[0]))

    def _replace(self, worker: _Worker) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(worker.pid, signal.SIGKILL)
        worker.connection.close()
        if not self._closed:
            self._idle.put(self._spawn())

    def call(self, method: str, *args: Any, deadline: float | None = None) -> Any:
        """Run ``store.method(*args)`` in a worker; raise at the deadline (the worker is then killed)."""
        limit = self.deadline if deadline is None else deadline
        started = time.monotonic()
        try:
            worker = self._idle.get(timeout=limit)
        except queue.Empty:
            raise ServerBusy(f"no query worker became free within {limit:g} s") from None
        try:
            payload = pickle.dumps((method, args))
        except Exception:
            self._idle.put(worker)
            raise
        try:
            worker.connection.send_bytes(payload)
            remaining = max(0.0, limit - (time.monotonic() - started))
            if not worker.connection.poll(remaining):
                self._replace(worker)
                raise QueryTimeout(f"the query ran past the {limit:g} s deadline and was stopped")
            status, value, retiring = worker.connection.recv()
        except (EOFError, OSError) as error:
            self._replace(worker)
            raise WorkerFailed("the query worker died (out of memory?)") from error
        if retiring:
            self._replace(worker)
        else:
            self._idle.put(worker)
        if status == "ok":
            return value
        if status == "query-error":
            raise QueryError(value)
        if status == "too-large":
            raise ResultTooLarge(f"the answer is {value} bytes, over the limit; add a LIMIT")
        raise WorkerFailed(value)

    def close(self) -> None:
        """Stop every worker and the zygote."""
        self._closed = True
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            worker.connection.close()
            with contextlib.suppress(ProcessLookupError):
                os.kill(worker.pid, signal.SIGKILL)
        self._control.close()
        try:
            os.kill(self._zygote, signal.SIGKILL)
            os.waitpid(self._zygote, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
