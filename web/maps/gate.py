"""At most ``MAP_DERIVATIONS`` network derivations at once: maps, ego networks, exports and paths.

Each map computed for a request (a filter combination not yet cached, an ego network, a whole-network
export, a collaboration path) runs in the request's web thread and holds its network, layout and drawing in
this process's memory while it runs; six at once took a 10,000-paper server from 650 MB to 1.2 GB. So a
derivation first takes one of ``MAP_DERIVATIONS`` slots, handed out in turn between clients by the query
pool's own :class:`~bibgraph.graph.serving.fairshare.FairShare` (a client with many waiting goes after one
with none). One that finds ``MAP_WAITING`` others already waiting, or waits ``MAP_WAIT`` seconds without
getting a slot, is refused: HTTP 503 with ``Retry-After``, logged with its cause and counted in
``/metrics``. Identical requests share one derivation (the network cache makes a value once), so only
distinct ones take slots, and a map already kept is served without one. A request keeps the slot it took until
it is answered (its *chain*), so the map's network, analytics and drawing, derived one after the other, count once
and never queue again halfway. A request that used a value another chain is making (or made and still runs)
*follows* that chain: if it then needs a turn over its client's share, it waits for the chain it follows to end
instead of being refused (two tabs of one map: the second reaches a stage the first has not started yet), stopping
when its client goes or its wait ends; so does one that used a value a running chain of its own client used too (a
map page and its data, their network made by another client's request long answered). Distinct work of a client
over its share shares no such value (only the incidence every map is made from) and is refused. The dataset build
derives with no limit.

Per client, as the SPARQL endpoint's share (nginx's ``limit_req`` per address, Virtuoso's per-client limits): a
client may hold at most ``per_client`` derivations, running or waiting (default half the slots, at least one);
one more is refused at once with 429 and ``Retry-After`` (:data:`OVER_SHARE_RETRY`), so a client asking for four
whole-network downloads at once holds one slot, and every other client's map gets the others in turn (two such
downloads held both slots for ~78 s at 10k papers, and every other client's new map, ego network and path got 503).

Work whose client has gone stops: waitress (with ``channel_request_lookahead``) tells a request its client closed
the connection (``waitress.client_disconnected``), and every turn a derivation asks for (each stage: the network,
its layout, its drawing, an export's body) first asks that (:class:`ClientGone`); a waiter that gets its slot after
its client left gives it back at once. A stage already running ends first (seconds), nothing half-made is kept.

Memory has a budget (``MEMORY_BUDGET``): while the server's process tree holds more (PSS, read from
``/proc/*/smaps_rollup``), the map cache is emptied and a new derivation is refused with 503 and ``Retry-After``,
first to the clients whose work holds the memory: a client running no derivation while another client runs one, or
(none running) one charged less than :data:`LIGHT_USE` of the heaviest client's estimated bytes of values made
(halving every :data:`MADE_HALF_LIFE` seconds), is still let through, up to :data:`HARD_OVER` times the budget,
where every new derivation is refused (a greedy client kept the tree over a tight budget, and every other client's
maps and ego networks were refused).
"""

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from flask import Response, has_request_context, request
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from bibgraph.graph.serving.fairshare import FairShare, OverShare, ServerBusy
from bibgraph.graph.serving.memory import MemoryBudget
from bibgraph.web.errors import error_response

log = logging.getLogger("bibgraph.maps")
WAITED, QUEUE_FULL, OVER_SHARE = "waited", "queue full", "over share"  # the causes of a refusal
MEMORY, GONE = "memory", "client gone"  # over the memory budget; the client closed its connection
CAUSES = (WAITED, QUEUE_FULL, OVER_SHARE, MEMORY, GONE)
SHRINK_EVERY = 5.0  # seconds between two emptyings of the map cache while over the memory budget
POLL = 0.2  # seconds between two looks at a waiter's client (gone?) while it waits for another's work
LIGHT_USE = 0.5  # over the budget, a client charged less than this fraction of the heaviest one is let through
MADE_HALF_LIFE = 60.0  # seconds over which the bytes a client's derivations made count half as much
CHARGED_KEPT = 4096  # clients whose charge is remembered, the least charged dropped first
HARD_OVER = 1.5  # ... while the tree holds at most this many times the budget
OVER_SHARE_RETRY = 5  # seconds a client over its share is asked to wait (its own derivation is likely still running)


class DerivationsBusy(ServerBusy):
    """No derivation slot could be had: ``cause`` is :data:`WAITED` or :data:`QUEUE_FULL`."""

    def __init__(self, message: str, cause: str, retry_after: int) -> None:
        super().__init__(message)
        self.cause = cause
        self.retry_after = retry_after


class OverMapShare(OverShare):
    """This client already holds its share of derivations (429): a follower waits for its leader instead."""


@dataclass(eq=False)
class Chain:
    """The turn a request holds while it derives, from its first stage until it is answered (``done``); ``keys``:
    the values its request used or made so far (a sibling request that used one of them waits for it)."""

    client: str
    done: threading.Event = field(default_factory=threading.Event)
    keys: set[Hashable] = field(default_factory=set)


class ClientGone(Exception):
    """The client of this request closed its connection: the derivation it asked for stops."""


def client_gone() -> bool:
    """Whether the current request's client has closed its connection (waitress tells, with a lookahead)."""
    if not has_request_context():
        return False
    gone = request.environ.get("waitress.client_disconnected")
    return bool(gone is not None and gone())


class DerivationGate:
    """``limit`` derivation slots (0: no limit); at most ``waiting`` calls wait (0: no cap), ``wait`` seconds each;
    none starts while ``budget`` is exceeded (``shrink`` first frees what it can) or once its client has gone."""

    def __init__(
        self,
        limit: int,
        waiting: int = 0,
        wait: float = 10.0,
        per_client: int | None = None,
        budget: MemoryBudget | None = None,
        shrink: Callable[[], None] = lambda: None,
        trim: Callable[[], None] = lambda: None,
    ) -> None:
        self.limit, self.waiting, self.wait = limit, waiting, wait
        self.budget, self.shrink, self.trim = budget or MemoryBudget(0), shrink, trim
        self._shrunk_at = -math.inf
        self.per_client = max(1, limit // 2) if per_client is None else per_client
        self._share = FairShare(limit, max_waiting=waiting, half_life=max(1.0, wait)) if limit > 0 else None
        self._clients: Counter[str] = Counter()  # derivations each client holds or waits for (the app's own: none)
        self._held = threading.local()  # this thread's slot, while it derives
        self._chains: dict[str, set[Chain]] = {}  # the chains each client runs
        self._made: dict[str, tuple[float, float]] = {}  # bytes each client's derivations made, and when charged
        self._lock = threading.Lock()
        self.refused: Counter[str] = Counter()  # by cause

    @property
    def retry_after(self) -> int:
        """Seconds a refused client is asked to wait: as long as it could have waited here."""
        return max(1, math.ceil(self.wait))

    def holds(self) -> bool:
        """Whether this thread holds a slot (it is inside a derivation)."""
        return bool(getattr(self._held, "slot", False))

    def chain(self) -> Chain | None:
        """The chain this thread runs (its turn, held until its request is answered), if it holds one."""
        return self._held.chain if self.holds() else None

    def follow(self, chain: Chain | None) -> None:
        """This thread used a value ``chain`` makes or made: its request does the same work (see :meth:`leader`)."""
        if chain is not None and not chain.done.is_set() and chain is not self.chain():
            self._followed().append(chain)

    def use(self, key: Hashable) -> None:
        """This thread's request used (found, waited for or made) the value of ``key``, one a map is made of (not the
        incidence every map shares): a sibling request of its client that used it too is doing the same map's work
        (see :meth:`leader`)."""
        self._used().add(key)
        chain = self.chain()
        if chain is not None:
            with self._lock:
                chain.keys.add(key)

    def leader(self, client: str) -> Chain | None:
        """What a request over its share waits for instead of a 429: a chain it followed that still runs; else one
        its own client runs, if it followed a chain that ended (siblings that shared a value just made: the home
        page and the map, both from its incidence) or used a value that chain used too (a map page and its data,
        their network made by another client's request long answered); None for distinct work (another map of a
        client already deriving one: refused, no thread held waiting)."""
        followed = self._followed()
        running = next((chain for chain in followed if not chain.done.is_set()), None)
        if running is not None:
            return running
        used = self._used()
        with self._lock:
            own = self._chains.get(client, set())
            if followed:
                return next(iter(own), None)
            return next((chain for chain in own if chain.keys & used), None)

    def wait_for(self, chain: Chain) -> None:
        """Wait for ``chain`` to end, costing no turn; stop when this request's client goes (:class:`ClientGone`).
        As for a value being made, no other bound: a chain holds a turn, so its work runs (within its own
        deadlines) and ends with its request. The over-share it met is no refusal: it is not counted as one."""
        with self._lock:
            self.refused[OVER_SHARE] -= 1
        while not chain.done.wait(POLL):
            self.stop_if_gone()

    def waiting_for(self, acquire: Callable[[float], bool], until: float, started: Callable[[], bool]) -> None:
        """Wait on ``acquire`` (a lock's, its argument a timeout) for work another request does: until ``until``
        while that work has not started (``started``), then as long as it runs; stop if this client goes."""
        while not acquire(POLL):
            self.stop_if_gone()
            if not self.holds() and not started() and time.monotonic() >= until:
                raise self.refusal(until)

    def _followed(self) -> list[Chain]:
        if not hasattr(self._held, "followed"):
            self._held.followed = []
        followed: list[Chain] = self._held.followed
        return followed

    def _used(self) -> set[Hashable]:
        if not hasattr(self._held, "used"):
            self._held.used = set()
        used: set[Hashable] = self._held.used
        return used

    def finish(self) -> None:
        """The request is answered: its turn is given back, and what it followed is forgotten; if it derived
        something, the heap's free pages go back to the system (``trim``)."""
        derived = self.holds()
        self.release()
        self._held.followed = []
        self._held.used = set()
        if derived:
            self.trim()

    def acquire(self, client: str = "", until: float | None = None) -> bool:
        """Take a slot for this thread, waiting until the monotonic time ``until`` (default: ``wait`` seconds from
        now), else raise :class:`DerivationsBusy`; False when there is nothing to take (no limit, or this thread
        holds a slot already). Each call is a stage of a derivation: one whose client has gone stops here
        (:class:`ClientGone`), and a new one is refused while the memory budget is exceeded."""
        self.stop_if_gone()
        if self.holds():
            return False
        self._check_memory(client)
        if self._share is None:
            return False
        until = time.monotonic() + self.wait if until is None else until
        self._count(client)
        try:
            self._held.ticket = self._share.enter(client, until)
        except ServerBusy as busy:
            self._uncount(client)
            raise self.refusal(until) from busy
        except BaseException:
            self._uncount(client)
            raise
        self._held.client = client
        self._held.chain = Chain(client, keys=set(self._used()))
        with self._lock:
            self._chains.setdefault(client, set()).add(self._held.chain)
        self._held.slot = True
        self.stop_if_gone()  # its client left while it waited: the slot goes to the next in turn
        return True

    def stop_if_gone(self) -> None:
        if client_gone():
            with self._lock:
                self.refused[GONE] += 1
            self.release()
            raise ClientGone("the client closed its connection: its map computation stopped")

    def _check_memory(self, client: str) -> None:
        """Refuse a new derivation while the process tree's PSS is over the budget, once the cache is emptied (at
        most every :data:`SHRINK_EVERY` seconds: a flood of refused requests must not each collect the heap),
        unless ``client`` is light (:data:`LIGHT_USE`) and the tree within :data:`HARD_OVER` times the budget."""
        if not self.budget.over():
            return
        with self._lock:
            shrink = time.monotonic() - self._shrunk_at >= SHRINK_EVERY
            if shrink:
                self._shrunk_at = time.monotonic()
        if shrink:
            self.shrink()
        if not shrink or self.budget.over(fresh=True):
            if self._light(client) and self.budget.pss() <= HARD_OVER * self.budget.limit:
                return
            raise self._refused_for_memory(
                f"the server holds more memory than its budget ({self.budget.limit / 2**20:.0f} MB);"
                " no new map is computed until it falls"
            )

    def over_hard(self) -> bool:
        """Whether the process tree holds more than :data:`HARD_OVER` times the budget: a running child (a download's
        body) is then stopped, since nothing else bounds it (at a million papers one whole network took 5.9 GB)."""
        return bool(self.budget.limit) and self.budget.pss() > HARD_OVER * self.budget.limit

    def stopped_for_memory(self) -> DerivationsBusy:
        """What a derivation stopped by :meth:`over_hard` answers (503, counted as refused for memory)."""
        return self._refused_for_memory(
            f"the work outgrew the server's memory budget ({self.budget.limit / 2**20:.0f} MB) and was stopped"
        )

    def _refused_for_memory(self, why: str) -> DerivationsBusy:
        """A refusal for memory (503 with a retry hint), counted."""
        with self._lock:
            self.refused[MEMORY] += 1
        return DerivationsBusy(f"{why}: retry in {math.ceil(SHRINK_EVERY)} s", MEMORY, math.ceil(SHRINK_EVERY))

    def charge(self, client: str, size: int) -> None:
        """``client``'s derivation made a value of ``size`` estimated bytes (see :meth:`_light`); the app's own
        work ("", the start's warm-up) is no client's."""
        if not client:
            return
        with self._lock:
            self._made[client] = self._charged(client) + size, time.monotonic()
            if len(self._made) > CHARGED_KEPT:
                del self._made[min(self._made, key=self._charged)]

    def _charged(self, client: str) -> float:
        """The bytes ``client``'s derivations made, each halving every :data:`MADE_HALF_LIFE` s (under the lock)."""
        made, stamp = self._made.get(client, (0.0, 0.0))
        return made * 0.5 ** ((time.monotonic() - stamp) / MADE_HALF_LIFE)

    def _light(self, client: str) -> bool:
        """Whether ``client``'s work holds little memory: it runs no derivation while another client does (what a
        derivation holds grows while it runs), or, none running, its derivations made much less than the heaviest
        client's (:data:`LIGHT_USE`)."""
        with self._lock:
            if self._chains.get(client):
                return False
            if any(other and other != client for other in self._chains):
                return True
            heaviest = max((self._charged(other) for other in self._made), default=0.0)
            return self._charged(client) < LIGHT_USE * heaviest

    def release(self) -> None:
        """Give back this thread's slot, if it holds one."""
        if self._share is not None and self.holds():
            self._held.slot = False
            with self._lock:
                self._chains[self._held.client].discard(self._held.chain)
                if not self._chains[self._held.client]:
                    del self._chains[self._held.client]
            self._held.chain.done.set()
            self._share.leave(self._held.ticket)
            self._uncount(self._held.client)

    def _count(self, client: str) -> None:
        """Count one more derivation of ``client``, or refuse it (429) past its share; the app's own ("") never."""
        with self._lock:
            if client and self.per_client and self._clients[client] >= self.per_client:
                self.refused[OVER_SHARE] += 1
                raise OverMapShare(
                    f"this client already has {self.per_client} map computation(s) running or waiting (maps, ego"
                    f" networks, paths, downloads not computed yet); retry in {OVER_SHARE_RETRY} s",
                    OVER_SHARE_RETRY,
                )
            self._clients[client] += 1

    def _uncount(self, client: str) -> None:
        with self._lock:
            self._clients[client] -= 1
            if self._clients[client] <= 0:
                del self._clients[client]

    @contextmanager
    def slot(self, client: str = "", until: float | None = None, keep: bool = False) -> Iterator[None]:
        """Hold a slot while the ``with`` block derives (this thread's own, if it holds one already); ``keep``:
        hold it on after the block, until :meth:`release` (a request keeps its turn until it is answered, so a
        page that derives its map, then the map's analytics and drawing, never queues twice)."""
        taken = self.acquire(client, until)
        try:
            yield
        finally:
            if taken and not keep:
                self.release()

    def refusal(self, until: float) -> DerivationsBusy:
        """The refusal of a call that waited until ``until`` (or found the queue full), counted by its cause."""
        cause = WAITED if time.monotonic() >= until else QUEUE_FULL
        with self._lock:
            self.refused[cause] += 1
        if cause == WAITED:
            message = f"no map could be computed within {self.wait:g} s: {self.limit} are being computed"
        else:
            message = f"too many maps waiting to be computed (at most {self.waiting})"
        return DerivationsBusy(f"{message}; retry in {self.retry_after} s", cause, self.retry_after)

    def state(self) -> dict[str, int]:
        """Slots in use and calls waiting (0 with no limit)."""
        return self._share.state() if self._share is not None else {"running": 0, "waiting": 0, "clients": 0}


class DerivationCollector(Collector):
    """The gate's figures and the size of what the network cache keeps, read at each scrape."""

    def __init__(self, gate: DerivationGate, sizes: Callable[[], dict[str, int]]) -> None:
        self.gate, self.sizes = gate, sizes

    def collect(self) -> Iterator[Metric]:
        refused = CounterMetricFamily(
            "bibgraph_map_derivations_refused",
            "map derivations refused (503; over share: 429) or stopped (client gone), by cause",
            labels=["cause"],
        )
        for cause in CAUSES:
            refused.add_metric([cause.replace(" ", "_")], self.gate.refused[cause])
        yield refused
        state = self.gate.state()
        yield GaugeMetricFamily("bibgraph_map_derivations_running", "map derivations running", state["running"])
        yield GaugeMetricFamily("bibgraph_map_derivations_waiting", "map derivations waiting", state["waiting"])
        kept = GaugeMetricFamily(
            "bibgraph_map_cache_bytes", "estimated bytes of derived data kept in memory", labels=["part"]
        )
        for part, size in self.sizes().items():
            kept.add_metric([part], size)
        yield kept
        budget = self.gate.budget
        yield GaugeMetricFamily(
            "bibgraph_memory_pss_bytes", "PSS of the server's process tree (/proc smaps_rollup)", budget.pss()
        )
        yield GaugeMetricFamily("bibgraph_memory_budget_bytes", "MEMORY_BUDGET (0: none)", budget.limit)


def answer_busy(error: DerivationsBusy) -> Response:
    """A refused derivation: 503 with ``Retry-After``, logged with its cause (counted by the gate)."""
    log.warning(
        "map derivation refused (%s) for %s: %s %s",
        error.cause,
        request.remote_addr,
        request.method,
        request.full_path.rstrip("?"),
    )
    return error_response(str(error), 503, error.retry_after)


def answer_gone(error: ClientGone) -> Response:
    """A derivation stopped because its client left: logged; the answer goes nowhere."""
    log.info("map derivation stopped, its client left: %s %s", request.method, request.full_path.rstrip("?"))
    return error_response(str(error), 503, 1)
