"""Derived values made once, whoever asks (single flight per key), kept in an LRU bounded by estimated bytes.

A request that asks for a value another request is making waits for it and costs no turn at the gate; one that
used a value made by another request's chain still running *follows* that chain (:mod:`.gate`): should
it then need a turn of its own over its client's share, it waits for that chain to end and looks again, instead
of a 429 (two tabs of one map, the second reaching a stage the first has not started yet). Every wait stops when
the waiter's client goes; a wait for work nobody has started yet also when its deadline (``MAP_WAIT``) passes.
"""

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from flask import has_request_context, request

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key
from bibgraph.graph.networks.memsize import estimate_bytes
from bibgraph.web.maps.gate import Chain, DerivationGate, OverMapShare

T = TypeVar("T")
MAX_BYTES = 128 * 1024 * 1024  # the MAP_CACHE_BYTES default, for a cache made outside an app
PINNED = frozenset({derived_key("incidence"), derived_key("roles")})
MADE_BY_KEPT = 256  # keys remembered with the chain that made them, past which ended chains are forgotten

# Marks a request the app makes of itself (the start's warm-up): its derivations are the app's own, charged to no
# client's share (the warm-up's test client says 127.0.0.1, and held the share of every local visitor: their first
# map answered 429). A WSGI environ key with a dot never comes from an HTTP header.
OWN_REQUEST = "bibgraph.own_request"


@dataclass(eq=False)
class _Making:
    """A value being made: ``lock`` is held by the request making it, ``running`` set once it derives (it has a
    slot, or none was needed; ``chain`` its maker's), so a request asking for the same value waits for it."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    running: threading.Event = field(default_factory=threading.Event)
    chain: Chain | None = None


class ValueCache:
    """An LRU of derived values bounded by their estimated size in bytes (``max_bytes``). The :data:`PINNED`
    values (the incidence every map is made from) are kept apart, outside the bound: their size grows with the
    dataset, not with the requests, and a map needs them. A value larger than the whole bound is returned but not
    kept. Each value is derived through ``gate`` (at most ``MAP_DERIVATIONS`` at once; none: no limit), or read
    from ``derived`` (a dataset's kept values), where each value made is kept while the dataset is built."""

    def __init__(
        self, derived: DerivedFiles | None = None, gate: DerivationGate | None = None, max_bytes: int = MAX_BYTES
    ) -> None:
        self.derived = derived
        self.gate = gate
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Hashable, ...], tuple[Any, int]] = OrderedDict()  # value, bytes
        self._bytes = 0  # of the entries
        self._pinned: dict[tuple[Hashable, ...], tuple[Any, int]] = {}  # never evicted
        self._making: dict[tuple[Hashable, ...], _Making] = {}
        self._made_by: dict[tuple[Hashable, ...], Chain] = {}  # the chain that made a value, while it may run

    def _cached(self, key: tuple[Hashable, ...]) -> tuple[bool, Any]:
        with self._lock:
            if key in self._pinned:
                return True, self._pinned[key][0]
            if key in self._entries:
                self._entries.move_to_end(key)
                return True, self._entries[key][0]
            return False, None

    def _get(
        self,
        key: tuple[Hashable, ...],
        make: Callable[[], T],
        needs: Callable[[], object] | None = None,
        stored: bool = True,
        gated: bool = True,
    ) -> T:
        """The cached value, made once even when several requests ask at the same time.

        ``needs`` gets the values ``make`` is made from first, outside any turn of this key's own, so that a
        request whose work another is already doing follows it there. A request waits at most the gate's ``wait``
        for the value to start being derived (by it, or by another request asking for the same value), then it is
        refused (:class:`DerivationsBusy`); once derived, it waits for it however long it takes, while its client
        is there. A ``make`` that fails leaves nothing behind: the next request tries again. ``stored``: a value
        a dataset may keep in its derived files. ``gated``: made in a turn at the gate (not: a value cheap next
        to what it ``needs``, which took theirs, such as a drawing of a network and its layout).
        """
        until = time.monotonic() + (self.gate.wait if self.gate else 0.0)
        while True:
            found, value = self._cached(key)
            if found:
                self._used(key, self._made_by.get(key))
                return value
            if needs is not None:
                needs()
            try:
                return self._make_once(key, make, until, self.derived if stored else None, gated)
            except OverMapShare:
                leader = self.gate.leader(client()) if self.gate else None
                if leader is None:
                    raise
                assert self.gate is not None
                self.gate.wait_for(leader)  # the same work, in progress: look again once it is done
                until = time.monotonic() + self.gate.wait  # a turn of its own, if it needs one, as a new request

    def _make_once(
        self,
        key: tuple[Hashable, ...],
        make: Callable[[], T],
        until: float,
        derived: DerivedFiles | None,
        gated: bool = True,
    ) -> T:
        with self._lock:
            making = self._making.setdefault(key, _Making())
        try:
            self._wait_for(making, until)
            try:
                found, value = self._cached(key)
                if found:
                    self._used(key, making.chain)
                    return value
                found, value = derived.load(key) if derived else (False, None)
                if not found:
                    with self.derivation(until, self.sites(key)) if gated else nullcontext():
                        making.chain = self.gate.chain() if self.gate else None
                        making.running.set()
                        value = make()
                    if derived:
                        derived.save(key, value)
                self._keep(key, value, making.chain)
                self._used(key)
            finally:
                making.lock.release()
        finally:
            with self._lock:
                if self._making.get(key) is making:
                    self._making.pop(key, None)
        return value

    def _used(self, key: tuple[Hashable, ...], made_by: Chain | None = None) -> None:
        """Tell the gate this request used ``key``'s value: it follows ``made_by`` (the chain that made it, if that
        still runs), and the value is one of its map's unless every map shares it (:data:`PINNED`)."""
        if self.gate is None:
            return
        self.gate.follow(made_by)
        if key not in PINNED:
            self.gate.use(key)

    def _wait_for(self, making: _Making, until: float) -> None:
        """Take ``making``'s lock: until ``until`` while nobody derives its value, then as long as that takes.
        A thread inside a derivation (its slot held) waits without a bound: whoever holds the lock either
        derives or is refused within its own wait, and a refusal here would fail a map already being drawn."""
        if self.gate is None:
            making.lock.acquire()
            return
        self.gate.waiting_for(lambda timeout: making.lock.acquire(timeout=timeout), until, making.running.is_set)

    def _keep(self, key: tuple[Hashable, ...], value: Any, chain: Chain | None = None) -> None:
        """Keep ``value`` (its size estimated outside the lock), evicting the least recently used past the bound;
        remember the chain that made it while that chain runs (who uses it meanwhile follows that chain)."""
        size = estimate_bytes(value)
        if chain is not None and self.gate is not None:
            self.gate.charge(chain.client, size)  # over the memory budget, who made most is refused first
        with self._lock:
            if chain is not None:
                if len(self._made_by) >= MADE_BY_KEPT:
                    self._made_by = {k: c for k, c in self._made_by.items() if not c.done.is_set()}
                self._made_by[key] = chain
            if key in PINNED:
                self._pinned[key] = (value, size)
                return
            if size > self.max_bytes:
                return
            previous = self._entries.pop(key, None)
            self._bytes += size - (previous[1] if previous else 0)
            self._entries[key] = (value, size)
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def file(self, key: tuple[Hashable, ...], make: Callable[[], Path], needs: Callable[[], object]) -> Path:
        """A file made once whoever asks at the same time (an export's body), after what it ``needs``; made again
        if it is gone (the files kept are bounded apart)."""
        path = self._get(key, make, needs, stored=False)
        if not path.exists():
            self.forget(key)
            path = self._get(key, make, needs, stored=False)
        return path

    def derivation(self, until: float | None = None, site: bool = False) -> AbstractContextManager[None]:
        """A turn at the gate (waiting until the monotonic time ``until``, default the gate's wait) for deriving a
        value, or for work on a map that is not kept (an export's body, a path): ``with`` it. ``site``: a value of
        the site's own pages, charged to no client's share (as the app's own)."""
        who = "" if site else client()
        return self.gate.slot(who, until, keep=has_request_context()) if self.gate else nullcontext()

    def sites(self, key: tuple[Hashable, ...]) -> bool:
        """Whether ``key`` is of a value the site's own pages show with no parameters: bounded by the dataset,
        never by what clients ask, so charged to no client's share (one client opening the home page, the topic
        map and the co-author map at once is no greedy client). None here; the network cache names them."""
        return False

    def shrink(self, keep: Callable[[tuple[Hashable, ...]], bool] = lambda _: False) -> None:
        """Drop every evictable value but those ``keep`` names (the server is over its memory budget)."""
        with self._lock:
            for key in [key for key in self._entries if not keep(key)]:
                self._bytes -= self._entries.pop(key)[1]

    def in_memory(self, key: tuple[Hashable, ...], make: Callable[[], T]) -> T:
        """A value made once whoever asks, kept here only: never in a dataset's derived files (a path)."""
        return self._get(key, make, stored=False)

    def forget(self, key: tuple[Hashable, ...]) -> None:
        """Drop the value of ``key``, if kept (one not worth keeping: the next request makes it again)."""
        with self._lock:
            self._bytes -= self._entries.pop(key, (None, 0))[1]

    def sizes(self) -> dict[str, int]:
        """Estimated bytes kept: the evictable entries and the pinned ones."""
        with self._lock:
            return {"evictable": self._bytes, "pinned": sum(size for _, size in self._pinned.values())}


def client() -> str:
    """Who asks: the request's client address (turns between clients at the gate), or the app itself."""
    if not has_request_context() or request.environ.get(OWN_REQUEST):
        return ""
    return request.remote_addr or ""
