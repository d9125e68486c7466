"""Serving a dataset directory: the version served, and switching to a new one without dropping requests.

``bibgraph add`` (or a new build) switches the dataset's ``current`` pointer. The app looks at the
pointer at most once a second (a ``readlink``, on the request path); when it names another version, a
thread opens that version's store in a new query pool and then swaps it in, with the version's derived
data, in one step. Requests keep being answered by the old pool meanwhile, and those that already hold
it finish on it: it is closed only after ``NETWORK_TIMEOUT`` (the longest any call may run).
"""

import importlib
import os
import threading
import time
from pathlib import Path

from flask import Flask

from bibgraph.graph.datadir import POINTER, is_dataset
from bibgraph.graph.dataset import dataset_version, prepare

from . import graphstore, netcache

ROOT, VERSION = "BIBGRAPH_DATASET_ROOT", "BIBGRAPH_DATASET_VERSION"  # app config (not settings)
CHECK_SECONDS = 1.0
# What requests import on first use, so that ``serve`` starts fast (tests/test_startup.py). A switch forks the new
# pool's zygote from this process while requests run; a module another thread is importing at that moment would
# keep its import lock held for ever in the forked child (a query worker then hangs on that import: seen once in
# CI, the switch never completed). Importing them in the switching thread first waits for any such import to
# finish and leaves none to start.
# The views' share (numpy, scipy, pyvis: ~0.8 s) is loaded by ``serve``'s warm-up once it listens (web/server.py).
VIEW_IMPORTS = ("bibgraph.graph.networks.engine", "pyvis.network", "pyvis.node", "pyvis.edge")
FIRST_USE_IMPORTS = (
    *VIEW_IMPORTS,
    "bibgraph.graph.names",
    "bibgraph.graph.searchbuild",
    "bibgraph.graph.build",
    "rdflib.plugins.sparql.parser",
    "oxrdflib",
    "bibgraph.graph.stores.remote",
)


def init_app(app: Flask) -> None:
    """Pin the version of a ``dataset:DIR`` store (before the store is opened) and watch ``DIR``'s pointer."""
    spec = str(app.config["BIBGRAPH_STORE"])
    if not spec.startswith("dataset:"):
        return
    given = Path(spec.removeprefix("dataset:"))
    version = dataset_version(given)
    app.config["BIBGRAPH_STORE"], app.config[VERSION] = f"dataset:{version}", str(version)
    if is_dataset(given):
        app.config[ROOT] = str(given)
        watcher = Watcher(app, given, version.name)
        app.before_request(watcher.check)


class Watcher:
    """Switches the app to the version the dataset's pointer names, when it changes."""

    def __init__(self, app: Flask, root: Path, served: str) -> None:
        self.app, self.root, self.served = app, root, served
        self._next = 0.0
        self._lock = threading.Lock()  # one switch at a time

    def check(self) -> None:
        now = time.monotonic()
        if now < self._next or self._lock.locked():
            return
        self._next = now + CHECK_SECONDS
        try:
            name = os.readlink(self.root / POINTER)
        except OSError:
            return
        if name != self.served:
            threading.Thread(target=self.switch, args=(name,), daemon=True).start()

    def switch(self, name: str) -> None:
        """Open version ``name`` in a new pool, swap it in, and retire the old pool later."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            app = self.app
            for module in FIRST_USE_IMPORTS:
                importlib.import_module(module)
            version = dataset_version(self.root / name)
            opener, summary = prepare([], f"dataset:{version}", str(app.config["BIBGRAPH_BASE"]))
            pool = graphstore.start_pool(app, opener, "dataset")
            old: graphstore.PooledStore = app.extensions[graphstore.EXTENSION]
            cache = netcache.cache_for(f"dataset:{version}", app)
            app.config.update({"BIBGRAPH_STORE": f"dataset:{version}", VERSION: str(version)})
            app.extensions[netcache.EXTENSION] = cache
            graphstore.install(app, pool, "dataset", summary)
            self.served = name
            app.logger.info("now serving dataset version %s", version)
            retire = threading.Timer(float(app.config["NETWORK_TIMEOUT"]), old.pool.close)
            retire.daemon = True
            retire.start()
        except Exception:  # a version that cannot be opened: keep serving the one we have
            app.logger.exception("cannot switch to dataset version %s", name)
            self.served = name  # not tried again until the pointer changes once more
        finally:
            self._lock.release()
