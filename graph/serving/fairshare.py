"""Who gets the next query thread: clients are served in turn, so none can starve the others.

Each call enters a :class:`FairShare` gate before it may use a worker thread and leaves it after.
At most ``threads`` calls are inside at once. A client may have at most ``per_client`` calls inside
or waiting; one more is refused at once (:class:`OverShare`, HTTP 429) rather than held. And at most
``max_waiting`` calls wait in all; one more that cannot start at once is refused (:class:`ServerBusy`).

A query's cost is unknown until it has run, and a running one cannot be paused, so clients are
told apart by how *present* they have been: a client's use is the number of its calls in the
gate (running or waiting) integrated over time, halving every ``half_life`` seconds. A client
that keeps a query in flight all the time (a loop of slow queries) has a high use; one that asks
now and then has a low one, however slow the machine. When calls wait, the next free thread
goes to the one whose client has the fewest calls running, then the lowest use, then the
earliest arrival. And the last ``threads // 4`` threads are kept for *light* clients (present
less than a quarter of the time lately), so a new client's cheap query starts at once even
while heavy clients keep every other thread busy.

An *exclusive* call runs alone: new calls wait until it is done. The pool uses it to re-run a
query that was beside a worker's death, so that if the query kills the next worker too, it is
known to be the one that does.
"""

import itertools
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

IDLE_CLIENTS_KEPT = 4096  # use records of clients with nothing in the gate, least recently seen dropped first
RETRY_AFTER = 1  # seconds a client over its share is asked to wait: one of its own calls is usually done by then
LIGHT = 0.25  # a client present less than this fraction of the recent time may use the reserved threads


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
    use: float = 0.0  # calls present x seconds, decayed, as of ``stamp``
    stamp: float = 0.0

    def use_at(self, now: float, half_life: float) -> float:
        """The decayed integral of the calls present, carried forward from ``stamp`` to ``now``."""
        kept = 0.5 ** ((now - self.stamp) / half_life)
        return self.use * kept + (self.running + self.waiting) * (1 - kept) * half_life / math.log(2)

    def settle(self, now: float, half_life: float) -> None:
        """Bring ``use`` up to ``now`` (before the number of calls present changes)."""
        self.use, self.stamp = self.use_at(now, half_life), now


@dataclass(eq=False)
class Ticket:
    """One call's place at the gate."""

    client: str
    exclusive: bool
    order: int


class FairShare:
    """The gate in front of the worker's ``threads`` threads."""

    def __init__(
        self,
        threads: int,
        per_client: int = 0,
        half_life: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        max_waiting: int = 0,
    ) -> None:
        self.threads = threads
        # 0: no cap. A waiting call holds a web thread, so many clients each with their share waiting could
        # take every thread the pages and /health need: above the cap, a call that would wait is refused.
        self.max_waiting = max_waiting
        self.clock = clock
        self.reserved = threads // 4
        self.per_client = per_client  # 0: no per-client limit
        self.half_life = half_life
        self._light_use = LIGHT * half_life / math.log(2)  # the use of a client present LIGHT of the time
        self._condition = threading.Condition()
        self._clients: OrderedDict[str, _Client] = OrderedDict()
        self._waiting: list[Ticket] = []
        self._running = 0
        self._exclusive = False
        self._arrivals = itertools.count()

    def enter(
        self, client: str, until: float, exclusive: bool = False, again: bool = False, site: bool = False
    ) -> Ticket:
        """Wait for a thread until the monotonic time ``until``; ``again``: a re-run, never refused as over share.

        ``site``: a call of the site's own pages (not a client's query text), never refused as over its client's
        share: it waits its client's turn (24 pages opened at once from one address were 16 answered 429). Nor is
        it refused for a full queue when its client has nothing in the gate: a crowd of one client's pages waiting
        cannot shut another visitor out."""
        with self._condition:
            now = self.clock()
            record = self._clients.get(client)
            if record is None:
                record = self._clients[client] = _Client(stamp=now)
            self._clients.move_to_end(client)
            present = record.running + record.waiting
            if not again and not site and self.per_client and present >= self.per_client:
                raise OverShare(
                    f"too many queries at once from one client (at most {self.per_client}); retry later", RETRY_AFTER
                )
            ticket = Ticket(client, exclusive, next(self._arrivals))
            if (
                not again
                and not (site and present == 0)
                and self.max_waiting
                and len(self._waiting) >= self.max_waiting
            ):
                self._waiting.append(ticket)
                starts_now = self._may_start(ticket)
                self._waiting.remove(ticket)
                if not starts_now:
                    raise ServerBusy(f"too many queries waiting (at most {self.max_waiting}); retry later")
            record.settle(now, self.half_life)
            record.waiting += 1
            self._waiting.append(ticket)
            try:
                while not self._may_start(ticket):
                    left = until - self.clock()
                    if left <= 0:
                        raise ServerBusy("no query thread became free before the deadline")
                    self._condition.wait(left)
            finally:
                self._waiting.remove(ticket)
                record.settle(self.clock(), self.half_life)
                record.waiting -= 1
            record.running += 1
            self._running += 1
            self._exclusive = exclusive
            self._condition.notify_all()  # the next in turn may be able to start too
            return ticket

    def leave(self, ticket: Ticket) -> None:
        """Give the thread back."""
        with self._condition:
            record = self._clients[ticket.client]
            record.settle(self.clock(), self.half_life)
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
        if self._exclusive:
            return False
        now = self.clock()
        eligible = [waiting for waiting in self._waiting if self._eligible(waiting, now)]
        return bool(eligible) and ticket is min(eligible, key=lambda waiting: self._turn(waiting, now))

    def _eligible(self, ticket: Ticket, now: float) -> bool:
        """Whether ``ticket`` could start now: exclusive ones when nothing runs, others when a thread is theirs."""
        if ticket.exclusive:
            return self._running == 0
        if any(waiting.exclusive for waiting in self._waiting):
            return False  # let the running calls finish so the exclusive one can run alone
        free = self.threads - self._running
        return free > self.reserved or (free > 0 and self._use(ticket.client, now) < self._light_use)

    def _turn(self, ticket: Ticket, now: float) -> tuple[bool, int, float, int]:
        """Sort key of waiting calls: exclusive re-runs first, then the least busy client, then arrival."""
        return (not ticket.exclusive, self._clients[ticket.client].running, self._use(ticket.client, now), ticket.order)

    def _use(self, client: str, now: float) -> float:
        return self._clients[client].use_at(now, self.half_life)

    def _forget_idle_clients(self) -> None:
        excess = len(self._clients) - IDLE_CLIENTS_KEPT
        if excess > 0:
            idle = [key for key, record in self._clients.items() if not (record.running or record.waiting)]
            for key in idle[:excess]:
                del self._clients[key]
