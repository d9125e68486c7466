"""Serving a dataset directory: the version served, and switching to a new one without dropping requests.

``bibgraph add`` (or a new build) switches the dataset's ``current`` pointer. The app looks at the pointer at most once
a second (a ``readlink``, on the request path, and in ``serve`` a thread of its own: :func:`watch`); when it names
another version, a thread opens that version's store in a new query pool and then swaps it in, with the version's
derived data, in one step. Requests keep being answered by the old pool meanwhile, and those that already hold it finish
on it: it is closed once it has had no call in flight for :data:`IDLE_BEFORE_RETIRING` seconds (at most
``NETWORK_TIMEOUT``, the longest any call may run).

A version that cannot be switched to (a damaged file, a pointer leaving ``DIR``, another base IRI) is refused:
the app keeps serving the version it has, logs why, and says so on ``/health`` (``dataset.refused``) and
``/metrics`` (``bibgraph_dataset_switch_failures``, ``bibgraph_dataset_version_refused``) until a later switch
succeeds. A switch that fails once the pointer names another version (newer adds overtook it, and removed it while it
was opened) is no refusal: the next look switches to the newest. While it serves a version, the app holds a reader
lease on it (:mod:`bibgraph.graph.dataset.directory`), so an add never removes it.
"""

import importlib
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flask import Flask

from bibgraph.graph.dataset.directory import POINTER, Lease, is_dataset, pointed
from bibgraph.graph.dataset.opener import dataset_version, prepare
from bibgraph.web import graphstore
from bibgraph.web.errors import WORKER_FAILED
from bibgraph.web.maps import cache

ROOT, VERSION = "BIBGRAPH_DATASET_ROOT", "BIBGRAPH_DATASET_VERSION"  # app config (not settings)
EXTENSION = "bibgraph-versions"  # app.extensions: the :class:`Switches` of a served dataset
WATCHER = "bibgraph-version-watcher"  # app.extensions: the :class:`Watcher` of a served dataset directory
CHECK_SECONDS = 1.0
# What requests import on first use, so that ``serve`` starts fast (tests/web/commands/test_startup.py). A switch forks
# the new pool's zygote from this process while requests run; a module another thread is importing at that moment would
# keep its import lock held for ever in the forked child (a query worker then hangs on that import: seen once in
# CI, the switch never completed). Importing them in the switching thread first waits for any such import to
# finish and leaves none to start.
# The views' share (numpy, scipy, igraph) is loaded by ``serve``'s warm-up once it listens (web/server.py). Not the
# build's modules (``bibgraph.graph.dataset.build``, sklearn, nameparser: 800 modules): no request of a served dataset
# imports them, and they were 1.3 of the first switch's 2.0 CPU-s at a million papers, paid while the add's version
# waited.
VIEW_IMPORTS = ("bibgraph.graph.networks.engine",)
FIRST_USE_IMPORTS = (
    *VIEW_IMPORTS,
    "bibgraph.graph.site.searchbuild",
    "rdflib.plugins.sparql.parser",
    "oxrdflib",
    "bibgraph.graph.stores.remote",
)


def init_app(app: Flask) -> None:
    """Pin the version of a ``dataset:DIR`` store (before the store is opened) and watch ``DIR``'s pointer."""
    spec = str(app.config["BIBGRAPH_STORE"])
    if not spec.startswith("dataset:"):
        return
    given = Path(spec.removeprefix("dataset:")).absolute()
    version = dataset_version(given)
    app.config["BIBGRAPH_STORE"], app.config[VERSION] = f"dataset:{version}", str(version)
    # a server leases the version it reads; a build's own app (deriving the data of a version) needs none
    lease = None if app.config.get(cache.DERIVED_WRITABLE) else Lease(version)
    app.extensions[EXTENSION] = Switches(version.name, lease)
    app.extensions.setdefault(WORKER_FAILED, []).append(lambda message: note_damaged_store(app, message))
    if is_dataset(given):
        app.config[ROOT] = str(given)
        watcher = Watcher(app, given, version.name)
        app.extensions[WATCHER] = watcher
        app.before_request(watcher.check)


def watch(app: Flask) -> threading.Thread | None:
    """Look at the pointer of the dataset directory ``app`` serves every :data:`CHECK_SECONDS` in a thread, not only
    when a request comes (``serve`` calls it; None: no dataset directory). An add publishes its version before it
    returns (at a million papers it removed the oldest version and exited 8 s after its pointer moved); an idle server
    began to switch only at the first request after, and answered it and those of the next 2 to 12 s from the version
    before."""
    watcher: Watcher | None = app.extensions.get(WATCHER)
    if watcher is None:
        return None
    thread = threading.Thread(target=watcher.watch, name="bibgraph-version-watcher", daemon=True)
    thread.start()
    return thread


@dataclass
class Switches:
    """What ``/health`` and ``/metrics`` say of a served dataset: the version served, and the last one refused."""

    served: str
    lease: Lease | None = None  # the reader lease on the version served (kept from removal by an add)
    succeeded: int = 0
    failed: int = 0
    refused: dict[str, Any] | None = None  # {"version", "reason", "at"} of the last failed switch
    damaged: dict[str, str] = field(default_factory=dict)  # files of the served version refused when first read

    def state(self) -> dict[str, Any]:
        return {
            "version": self.served,
            "switches": self.succeeded,
            "failed_switches": self.failed,
            "refused": self.refused,
            "damaged_files": dict(self.damaged),
        }


_CORRUPTION = re.compile(r"Corruption: (.*?) in (\S+\.sst)\b")  # RocksDB's words on a table file it cannot read


def note_damaged_store(app: Flask, message: str) -> None:
    """A store file RocksDB found damaged as it read it (``message``: a failed query's): named on ``/health``'s
    ``dataset.damaged_files`` and counted on ``/metrics``, as a damaged dump is (it was a log line only, while
    ``/health`` said all was well); ``bibgraph check DIR`` names it as well."""
    switches: Switches | None = app.extensions.get(EXTENSION)
    found = _CORRUPTION.search(message)
    if switches is None or found is None:
        return
    path = Path(found[2])
    version = Path(str(app.config.get(VERSION, "")))
    name = str(path.relative_to(version)) if path.is_relative_to(version) else str(path)
    switches.damaged[name] = found[1]


class Watcher:
    """Switches the app to the version the dataset's pointer names, when it changes."""

    def __init__(self, app: Flask, root: Path, served: str) -> None:
        self.app, self.root, self.served = app, root, served
        self._next = 0.0
        self._lock = threading.Lock()  # one switch at a time
        self._tick = threading.Lock()  # one look at the pointer at a time (two requests at once started two switches)
        self._unreadable: str | None = None  # why the pointer cannot be read, while it cannot (reported once)
        self._stopped = threading.Event()

    def watch(self) -> None:
        """:meth:`check` every :data:`CHECK_SECONDS` until :meth:`stop`."""
        while not self._stopped.wait(CHECK_SECONDS):
            try:
                self.check()
            except Exception:  # e.g. no thread to start: said, and looked at again next time
                self.app.logger.exception("cannot look at the dataset's pointer")

    def stop(self) -> None:
        self._stopped.set()

    def check(self) -> None:
        with self._tick:
            now = time.monotonic()
            if now < self._next or self._lock.locked():
                return
            self._next = now + CHECK_SECONDS
            self._look()

    def _look(self) -> None:
        """Read the pointer: report it unreadable (once), or start a switch to the version it names."""
        try:
            name = os.readlink(self.root / POINTER)
        except OSError as error:  # removed, or replaced by a file or directory: said once, the version kept
            reason = f"{self.root / POINTER}: cannot read the pointer: {error.strerror or error}"
            if reason != self._unreadable:
                self._unreadable = reason
                self._refuse(POINTER, reason)
            return
        if self._unreadable is not None:  # readable again
            self._unreadable = None
            switches: Switches = self.app.extensions[EXTENSION]
            if switches.refused is not None and switches.refused["version"] == POINTER:
                switches.refused = None
        if name != self.served:
            threading.Thread(target=self.switch, args=(name,), daemon=True).start()

    def switch(self, name: str) -> None:
        """Open version ``name`` in a new pool, swap it in, and retire the old pool later."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            self._switch(name)
        except Exception as error:  # a version that cannot be opened: keep serving the one we have
            if self._overtaken(name):  # the pointer moved on while it was opened (an add removed it meanwhile)
                self.app.logger.info("dataset version %s overtaken while it was opened: %s", name, error)
                return  # no failure: the next check switches to the version the pointer names now
            self._refuse(name, str(error))
            self.served = name  # not tried again until the pointer changes once more
        finally:
            self._lock.release()

    def _overtaken(self, name: str) -> bool:
        """Whether the pointer names a version other than ``name`` now (a newer add's): a switch to ``name`` that
        failed meanwhile is no refusal of a version anyone still publishes (it showed as one on ``/health``)."""
        try:
            return os.readlink(self.root / POINTER) != name
        except OSError:
            return False  # unreadable: the next check says so

    def _refuse(self, name: str, reason: str) -> None:
        """Log and report (``/health``, ``/metrics``) a version not switched to, and why."""
        switches: Switches = self.app.extensions[EXTENSION]
        self.app.logger.error(
            "cannot switch to dataset version %s, still serving %s: %s", name, switches.served, reason
        )
        switches.failed += 1
        switches.refused = {"version": name, "reason": reason, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ")}

    def _switch(self, name: str) -> None:
        app = self.app
        for module in FIRST_USE_IMPORTS:
            importlib.import_module(module)
        if pointed(self.root) != name:  # a pointer leaving DIR is refused here (DatasetError)
            return  # a newer add came meanwhile: not a failure; the next check switches to the version it names
        version = dataset_version(self.root / name)
        lease = Lease(version)  # taken before the checks: an add cannot remove it from now on
        try:
            opener, summary = prepare([], f"dataset:{version}", str(app.config["BIBGRAPH_BASE"]))
            pool = graphstore.start_pool(app, opener, "dataset")
        except BaseException:
            lease.release()
            raise
        old: graphstore.PooledStore = app.extensions[graphstore.EXTENSION]
        networks = cache.cache_for(f"dataset:{version}", app)
        app.config.update({"BIBGRAPH_STORE": f"dataset:{version}", VERSION: str(version)})
        app.extensions[cache.EXTENSION] = networks
        graphstore.install(app, pool, "dataset", summary)
        switches: Switches = app.extensions[EXTENSION]
        retired_lease, switches.lease = switches.lease, lease
        switches.served, switches.refused, switches.damaged = name, None, {}
        switches.succeeded += 1
        self.served = name
        app.logger.info("now serving dataset version %s", version)

        def retire() -> None:
            _wait_until_idle(old, float(app.config["NETWORK_TIMEOUT"]))
            old.pool.close()
            if retired_lease is not None:
                retired_lease.release()  # from now on an add may remove that version

        threading.Thread(target=retire, name="bibgraph-retire", daemon=True).start()


IDLE_BEFORE_RETIRING = 5.0  # seconds the old pool must have had no call in flight before it is closed


def _wait_until_idle(old: graphstore.PooledStore, longest: float) -> None:
    """Until the old pool has had no call running or waiting for :data:`IDLE_BEFORE_RETIRING` seconds (a request that
    still holds it makes its next call within that), or at most ``longest`` (the longest any call may run). Closing
    it only after ``NETWORK_TIMEOUT`` (300 s) held every version of a burst of adds on disk that long."""
    ends = time.monotonic() + longest
    idle_since = time.monotonic()
    while time.monotonic() < ends:
        state = old.pool.stats()
        if state["running"] or state["waiting"]:
            idle_since = time.monotonic()
        elif time.monotonic() - idle_since >= IDLE_BEFORE_RETIRING:
            return
        time.sleep(0.5)
