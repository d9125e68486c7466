"""Who gets the next query thread: clients are served in turn, so none can starve the others.

Each call enters a :class:`FairShare` gate before it may use a worker thread and leaves it after.
At most ``threads`` calls are inside at once. When more wait, the next free thread goes to the
waiting call whose client has the fewest calls running, then the least recent use (thread-seconds,
halving every ``half_life`` seconds), then the earliest arrival: a client who has been hammering
with slow queries waits behind one who has not. A client may have at most ``per_client`` calls
inside or waiting; one more is refused at once (:class:`OverShare`, HTTP 429) rather than held.

An *exclusive* call runs alone: new calls wait until it is done. The pool uses it to re-run a
query that was beside a worker's death, so that if the query kills the next worker too, it is
known to be the one that does.
"""

import itertools
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

IDLE_CLIENTS_KEPT = 4096  # usage records of clients with nothing running, least recently seen dropped first
RETRY_AFTER = 1  # seconds a client over its share is asked to wait: one of its own calls is usually done by then


class ServerBusy(Exception):
    """No query thread became free before the deadline."""


class OverShare(Exception):
    """The client already has its share of calls in progress; ``retry_after`` seconds is a fair wait."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


@dataclass
class _Client:
    running: int = 0
    waiting: int = 0
    usage: float = 0.0  # thread-seconds, decayed to ``stamp``
    stamp: float = 0.0

    def decayed(self, now: float, half_life: float) -> float:
        return self.usage * 0.5 ** ((now - self.stamp) / half_life)


@dataclass(eq=False)
class Ticket:
    """One call's place at the gate; ``started`` is set once it holds a thread."""

    client: str
    exclusive: bool
    order: int
    started: float = field(default=0.0)


class FairShare:
    """The gate in front of the worker's ``threads`` threads."""

    def __init__(self, threads: int, per_client: int = 0, half_life: float = 10.0) -> None:
        self.threads = threads
        self.per_client = per_client  # 0: no per-client limit
        self.half_life = half_life
        self._condition = threading.Condition()
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        self._waiting: list[Ticket] = []
        self._running = 0
        self._exclusive = False
        self._arrivals = itertools.count()

    def enter(self, client: str, until: float, exclusive: bool = False, again: bool = False) -> Ticket:
        """Wait for a thread until the monotonic time ``until``; ``again``: a re-run, never refused as over share."""
        with self._condition:
            record = self._clients.get(client)
            if record is None:
                record = self._clients[client] = _Client(stamp=time.monotonic())
            self._clients.move_to_end(client)
            if not again and self.per_client and record.running + record.waiting >= self.per_client:
                raise OverShare(
                    f"too many queries at once from one client (at most {self.per_client}); retry later",
                    RETRY_AFTER,
                )
            ticket = Ticket(client, exclusive, next(self._arrivals))
            self._waiting.append(ticket)
            record.waiting += 1
            try:
                while not self._may_start(ticket):
                    left = until - time.monotonic()
                    if left <= 0:
                        raise ServerBusy("no query thread became free before the deadline")
                    self._condition.wait(left)
            finally:
                self._waiting.remove(ticket)
                record.waiting -= 1
            record.running += 1
            self._running += 1
            self._exclusive = exclusive
            ticket.started = time.monotonic()
            self._condition.notify_all()  # the next in turn may be able to start too
            return ticket

    def leave(self, ticket: Ticket) -> None:
        """Give the thread back and charge its client for the time it held it."""
        with self._condition:
            now = time.monotonic()
            record = self._clients[ticket.client]
            record.usage = record.decayed(now, self.half_life) + (now - ticket.started)
            record.stamp = now
            record.running -= 1
            self._running -= 1
            if ticket.exclusive:
                self._exclusive = False
            self._forget_idle_clients()
            self._condition.notify_all()

    def state(self) -> dict[str, int]:
        with self._condition:
            return {"running": self._running, "waiting": len(self._waiting), "clients": len(self._clients)}

    def _may_start(self, ticket: Ticket) -> bool:
        if self._exclusive or self._running >= self.threads:
            return False
        if ticket.exclusive and self._running:
            return False
        return ticket is min(self._waiting, key=self._turn)

    def _turn(self, ticket: Ticket) -> tuple[bool, int, float, int]:
        """Sort key of waiting calls: exclusive re-runs first, then the least busy client, then arrival."""
        record = self._clients[ticket.client]
        return (not ticket.exclusive, record.running, record.decayed(time.monotonic(), self.half_life), ticket.order)

    def _forget_idle_clients(self) -> None:
        excess = len(self._clients) - IDLE_CLIENTS_KEPT
        if excess > 0:
            idle = [key for key, record in self._clients.items() if not (record.running or record.waiting)]
            for key in idle[:excess]:
                del self._clients[key]
