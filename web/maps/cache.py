"""Derived data per app (networks, layouts, drawn views, the search index), computed once: the store is read-only.

Served from a dataset (``bibgraph serve DIR``), a value the build kept is read from the dataset's
``derived/`` files instead of being derived; while a dataset is built, every value derived is kept there. Served
from an engine (``--store sparql:URL``) with the dataset that was published (``PUBLISHED``), its files are read
while its content (the manifest's digest) is what ``publish`` recorded for the version the engine's pointer names;
the cache follows the pointer (a new one after a publish).
"""

import atexit
import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Hashable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

import networkx as nx
from flask import Flask, current_app, has_app_context

from bibgraph.graph.dataset.derived import DerivedFiles, derived_key, file_name
from bibgraph.graph.dataset.directory import DERIVED, DatasetError, file_digest, identified_manifest, read_manifest
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.graph.networks.filters import Filters, drawn
from bibgraph.graph.networks.spec import COAUTHORS, TOPIC_MAP, TOPICS, NetworkSpec
from bibgraph.graph.serving.forked import ForkedOutOfMemory, ForkedStopped, ForkedTimeout, run_forked
from bibgraph.graph.serving.memory import MemoryBudget, release_free_memory
from bibgraph.graph.serving.pool import QueryTimeout
from bibgraph.graph.serving.pooled import PooledStore
from bibgraph.graph.site.roles import Roles, matches
from bibgraph.graph.site.search import FILE_NAME, SearchIndex, SearchIndexError
from bibgraph.graph.site.searchlayers import layers, open_search
from bibgraph.graph.stores.store import GraphStore
from bibgraph.web.enginedumps import engine_folder
from bibgraph.web.graphstore import get_store
from bibgraph.web.maps.gate import (
    HARD_OVER,
    ClientGone,
    DerivationCollector,
    DerivationGate,
    DerivationsBusy,
    answer_busy,
    answer_gone,
    client_gone,
)
from bibgraph.web.maps.valuecache import MAX_BYTES, ValueCache, client
from bibgraph.web.settings import memory_budget

if TYPE_CHECKING:
    from bibgraph.graph.networks.incidence import Incidence
    from bibgraph.graph.networks.paths import PathResult

T = TypeVar("T")
log = logging.getLogger("bibgraph.maps")  # the maps package's one logger (web/maps/gate.py's too)
EXTENSION = "bibgraph.networks"
GATE = "bibgraph.maps.gate"  # app.extensions: the DerivationGate
DATASET_VERSION = "BIBGRAPH_DATASET_VERSION"  # app config: the dataset version served (downloads read it), if any
DERIVED_WRITABLE = "BIBGRAPH_DERIVED_WRITABLE"  # app config (not a setting): a dataset build keeps what it derives


def _kept_only() -> Any:
    raise LookupError("a value only a dataset's build keeps: a server never derives it")


class NetworkCache(ValueCache):
    """The derived values of one store (a dataset version, an engine's version): networks, layouts, drawn views,
    a page's figures, the search index; rows come from the store once, through SPARQL."""

    follows: tuple[str | None, float] | None = None  # an engine's: the version graph derived from, when checked

    def __init__(
        self, derived: DerivedFiles | None = None, gate: DerivationGate | None = None, max_bytes: int = MAX_BYTES
    ) -> None:
        super().__init__(derived, gate, max_bytes)
        self._search: SearchIndex | None = None
        self._search_lock = threading.Lock()
        self._roles_checked: tuple[int, int, bool] = (0, 0, False)

    def sites(self, key: tuple[Hashable, ...]) -> bool:
        """The site's own values (:func:`site_value`), charged to no client's share."""
        nodes = current_app.config.get("MAX_VIEW_NODES") if has_app_context() else None
        return nodes is not None and site_value(int(nodes))(key)

    def incidence(self) -> "Incidence":
        """The whole graph's paper-author incidence (compact arrays), read in one streamed pass, in a query worker
        next to the data for an embedded store: every network is computed from it (:mod:`bibgraph.graph.networks`)."""
        from bibgraph.graph.networks.incidence import incidence_of  # numpy: not loaded by a server's start

        def read() -> "Incidence":
            store = self._store()
            return store.run(incidence_of) if isinstance(store, PooledStore) else incidence_of(store)

        return self._get(derived_key("incidence"), read)

    def kept_incidence(self) -> "Incidence | None":
        """The incidence when the dataset (served, or published into the engine) keeps it, else None: a page then
        reads from it what it would otherwise ask the store (an engine) for."""
        if self.derived is None or not (self.derived.directory / file_name(derived_key("incidence"))).is_file():
            return None
        return self.incidence()

    def kept_roles(self) -> "Roles | None":
        """The authorships' positions and the papers without a named author (:mod:`bibgraph.graph.site.roles`) the
        dataset keeps beside its incidence, when they are that incidence's (checked once); else None: the profile
        and the papers' sitemaps then ask the store."""
        incidence = self.kept_incidence()
        if incidence is None or self.derived is None:
            return None
        if not (self.derived.directory / file_name(derived_key("roles"))).is_file():
            return None
        roles: Roles = self._get(derived_key("roles"), _kept_only, stored=True, gated=False)
        checked = (id(roles), id(incidence))
        if self._roles_checked[:2] != checked:  # both pinned: the same objects while this cache lives
            self._roles_checked = (*checked, matches(roles, incidence))
        return roles if self._roles_checked[2] else None

    @staticmethod
    def _store() -> GraphStore:
        """The store for deriving networks, under their (longer) deadline."""
        return get_store().with_deadline(float(current_app.config["NETWORK_TIMEOUT"]))

    def network(self, spec: NetworkSpec) -> nx.Graph:
        """The network of ``spec``; an EGO spec whose author is unknown raises ``KeyError``. One the dataset keeps
        is read without the incidence (a first default map need not wait for it: 2 MB at 10,000 papers)."""
        kept = self.derived is not None and (self.derived.directory / file_name(derived_key("network", spec))).is_file()
        return self._get(
            derived_key("network", spec),
            lambda: network_engine().network(self.incidence(), spec),
            None if kept else self.incidence,
        )

    def topics(self) -> nx.Graph:
        return self.network(NetworkSpec(TOPICS))

    def coauthor_degrees(self) -> Counter[int]:
        """How many authors have each number of distinct co-authors (the home page's chart)."""
        degrees: Counter[int] = network_engine().coauthor_degrees(self.incidence())
        return degrees

    def positions(self, spec: NetworkSpec) -> dict[str, tuple[float, float]]:
        """The layout of the network of ``spec`` (:func:`bibgraph.graph.networks.engine.positions`)."""
        return self._get(
            derived_key("layout", spec),
            lambda: network_engine().positions(spec, self.network(spec)),
            lambda: self.network(spec),
        )

    def summary(self, spec: NetworkSpec) -> dict[str, Any]:
        """The analytics beside the co-author map of ``spec`` (:func:`bibgraph.graph.networks.engine.summary`)."""
        return self._get(
            derived_key("summary", spec),
            lambda: network_engine().summary(self.incidence(), spec, self.network(spec)),
            lambda: self.network(spec),
        )

    def forked(self, work: Callable[[], None], path: Path) -> None:
        """Run ``work``, which writes a download's body ``path`` (a large network's, ``web/maps/bodies.py``; a dump's
        gzip), in a child process in this client's turn at the gate: killed once the client goes (:class:`ClientGone`),
        once the process tree holds more than the memory budget allows a running computation
        (:meth:`~.gate.DerivationGate.over_hard`, 503), or at ``NETWORK_TIMEOUT`` (503)."""
        gate = self.gate
        with self.derivation():
            try:
                run_forked(
                    work,
                    lambda: client_gone() or (gate is not None and gate.over_hard()),
                    float(current_app.config["NETWORK_TIMEOUT"]),
                    0 if gate is None else int(HARD_OVER * gate.budget.limit),  # a bound between two looks at PSS
                )
            except ForkedOutOfMemory:
                if gate is None:
                    raise
                raise gate.stopped_for_memory() from None
            except ForkedStopped:
                if gate is not None and not client_gone() and gate.over_hard():
                    raise gate.stopped_for_memory() from None
                if gate is not None:
                    gate.stop_if_gone()  # counted, and the turn given back
                raise ClientGone("the client closed its connection: its download stopped") from None
            except ForkedTimeout as error:
                raise QueryTimeout(str(error)) from error
        if self.gate is not None:  # over the memory budget, who made most is refused first
            self.gate.charge(client(), path.stat().st_size)

    def collaboration_path(self, source: str, target: str, search: Callable[[], "PathResult"]) -> "PathResult":
        """The shortest chain of co-authors from ``source`` to ``target`` (IRIs), searched once (``search``) whoever
        asks, kept like a map; a search that gave up on its time budget is not kept (the next one may have more)."""
        key = ("path", source, target)  # never a dataset's derived value: no derived_key, no data format
        found = self.in_memory(key, search)
        if found.out_of_time:
            self.forget(key)
        return found

    def search_index(self) -> SearchIndex:
        """The search index (and the author autocomplete's names): a dataset's file, opened read-only (built
        into it while the dataset is built); served without a dataset (or from a dataset built before the index
        was kept), a temporary file built at first use."""
        index = self._made_once(wait=True)
        assert index is not None  # waited for
        return index

    def _made_once(self, wait: bool) -> SearchIndex | None:
        """The index, made by the first asker (:meth:`_make_search_index`); kept apart from the LRU (a temporary
        index is costly to build again) and from the dataset's derived files. Not ``wait``: None while another
        thread is making it."""
        if not self._search_lock.acquire(blocking=wait):
            return None
        try:
            if self._search is None:
                self._search = self._make_search_index()
            return self._search
        finally:
            self._search_lock.release()

    def _make_search_index(self) -> SearchIndex:
        if self.derived is not None and self.kept_search_index():
            kept = layers(self.derived.directory)  # the build's file, then one per add (hard links)
            for path in kept:
                expected = self.derived.checksums.get(path.name)
                if self.derived.checksums and file_digest(path) != expected:  # read on disk: checked at first use
                    raise SearchIndexError(  # (or the start's warm-up), not at each open (2 GB at 1M papers)
                        f"{path}: differs from the checksum of the manifest (damaged or changed since it was"
                        " built): restore the dataset or build it again"
                    )
            return open_search(kept)
        # only when the index is built (numpy and the incidence, which it imports)
        from bibgraph.graph.site.searchbuild import build_search_index, temporary_index

        if self.derived is not None and self.derived.writable:
            path = self.derived.directory / FILE_NAME
        else:  # no dataset, or one built before the index was kept: built once per server
            path = temporary_index()
            atexit.register(path.unlink, missing_ok=True)
        build_search_index(self._store(), path)
        return SearchIndex(path)

    def checked_search_index(self) -> SearchIndex | None:
        """The kept search index once checked against the manifest, for labels a page can also ask the store for;
        None when the dataset keeps none, or while another thread (the start's warm-up) is checking it: a page's
        first request then labels its papers from the store instead of waiting for a whole-file checksum (2.6 s at
        100k papers, 9 s at 1M). Opened and checked here when nobody has started to (no warm-up: a test client)."""
        if not self.kept_search_index():
            return None
        return self._made_once(wait=False)

    def kept_search_index(self) -> bool:
        """Whether the search index is a file the dataset (served, or published into the engine) keeps."""
        return self.derived is not None and (self.derived.directory / FILE_NAME).exists()

    def warm_search_index(self) -> None:
        """Open (and check against the manifest) a kept search index before the first search asks for it: its
        checksum reads the whole file (2 GB at a million papers). An index still to build is left to that search."""
        if self.kept_search_index():
            try:
                self.search_index()
            except SearchIndexError as error:  # told again to the first search, as a page
                log.error("%s", error)

    def page(self, name: str, make: Callable[[], T]) -> T:
        """Figures of a page that read the whole graph (the home page's charts), computed once; ones the dataset
        keeps are read without the incidence (the home page's first request waited 1.2 s for it at 100k papers)."""
        kept = (
            self.derived is not None and (self.derived.directory / file_name(derived_key("page", None, name))).is_file()
        )
        return self._get(derived_key("page", None, name), make, None if kept else self.incidence)

    def view(
        self,
        spec: NetworkSpec,
        options: tuple[Hashable, ...],
        draw: Callable[[nx.Graph, dict[str, tuple[float, float]]], dict[str, Any]],
    ) -> dict[str, Any]:
        """The drawn data of a view (:mod:`bibgraph.graph.site.mapview`) of the network of ``spec`` and its layout;
        ``options`` are all the other request parameters ``draw`` depends on. Drawn without a turn at the gate (nor
        its memory check: 0.07 s reading the process tree's PSS): tens of milliseconds for a 1,000-author map, and
        bounded by the networks and layouts made, which took theirs (two drawings each at most, by weighting)."""
        return self._get(
            derived_key("view", spec, *options),
            lambda: draw(self.network(spec), self.positions(spec)),
            lambda: self.positions(spec),
            gated=False,
        )


_SWITCHING = threading.Lock()  # one new cache when an engine's pointer moves, whoever notices it first


def networks() -> NetworkCache:
    """The app's cache; an engine's is made again once its pointer names another version (a publish)."""
    cache = current_app.extensions.get(EXTENSION)
    if cache is None or _moved(cache):
        with _SWITCHING:
            if current_app.extensions.get(EXTENSION) is cache:  # nobody made it again meanwhile
                current_app.extensions[EXTENSION] = cache_for(str(current_app.config["BIBGRAPH_STORE"]))
            cache = current_app.extensions[EXTENSION]
    return cache


def _moved(cache: NetworkCache) -> bool:
    """Whether the engine's pointer names another version than ``cache`` was derived from (asked every
    ``POINTER_TTL`` seconds: the store itself looks the pointer up no more often)."""
    if cache.follows is None:
        return False
    from bibgraph.graph.stores.remote import POINTER_TTL  # loaded by an engine's site only, as the store itself

    if time.monotonic() - cache.follows[1] < POINTER_TTL:
        return False
    derived_from = cache.follows[0]
    cache.follows = (derived_from, time.monotonic())  # one lookup per TTL: the other requests keep the cache meanwhile
    version = _engine_version()
    if version == derived_from:
        return False
    log.info("the engine's pointer moved from <%s> to <%s>: figures derived again", derived_from, version)
    return True


def _engine_version() -> str | None:
    """The version graph the engine's pointer names now (None: no version published), asked in the query worker
    (charged to the requesting client, as the page's own queries are)."""
    from bibgraph.graph.stores.remote import read_version

    version: str | None = get_store().run(read_version)
    return version


def cache_for(store: str, app: Flask | None = None) -> NetworkCache:
    """An empty cache of ``app`` (default: the current one) for the store spec ``store``, bounded by its settings
    and deriving through its gate; a dataset's reads its derived files (and keeps new ones while the dataset is
    built: ``DERIVED_WRITABLE``)."""
    app = app or current_app._get_current_object()  # type: ignore[attr-defined]
    gate: DerivationGate = app.extensions[GATE]
    max_bytes = int(app.config["MAP_CACHE_BYTES"])
    if store.startswith("sparql:"):
        from bibgraph.graph.stores.remote import read_published

        engine_version, content = get_store().run(read_published)
        published = app.config.get("PUBLISHED")
        derived = _published_files(Path(published), engine_version, content) if published else None
        # dumps and network exports are kept per version too: the published dataset's own dumps, when it is the one
        if derived is not None:
            app.config[DATASET_VERSION] = str(derived.directory.parent)
        elif engine_version is not None:
            app.config[DATASET_VERSION] = engine_folder(engine_version)
        cache = NetworkCache(derived, gate, max_bytes)
        cache.follows = (engine_version, time.monotonic())
        return cache
    if not store.startswith("dataset:"):
        return NetworkCache(None, gate, max_bytes)
    version = dataset_version(Path(store.removeprefix("dataset:")))
    return NetworkCache(_derived_files(version, bool(app.config.get(DERIVED_WRITABLE))), gate, max_bytes)


def _derived_files(version: Path, writable: bool = False, manifest: dict[str, Any] | None = None) -> DerivedFiles:
    """The derived files of a dataset ``version``; each kept file is checked against the checksum of its manifest
    (``manifest``, if read already) as it is read (it is read whole anyway)."""
    if writable:
        return DerivedFiles(version / DERIVED, writable)
    return DerivedFiles.of_version(version, (manifest or read_manifest(version))["checksums"])


def check_published(path: Path) -> None:
    """Refuse at start a ``PUBLISHED`` that is no dataset (or version) or whose search index is missing or damaged."""
    open_search(layers(dataset_version(path) / DERIVED)).close()


def _published_files(path: Path, engine_version: str | None, content: str | None) -> DerivedFiles | None:
    """The published dataset's derived files when its current version is what the engine's pointer names: the
    identity ``publish`` recorded for it (its manifest's digest) is the dataset's, whatever the names. Else None,
    the figures computed from the engine (a dataset published from elsewhere, rebuilt since, or newer)."""
    try:
        version = dataset_version(path)
        manifest, identity = identified_manifest(version)
    except DatasetError as error:
        log.warning("the published dataset cannot be read (%s): figures are computed from the engine", error)
        return None
    if content != identity:
        log.warning(
            "the published dataset %s (version %s, %s) is not what the engine holds (<%s>, %s): figures are computed"
            " from the engine, search included (give the dataset that was published last)",
            path,
            version.name,
            identity,
            engine_version,
            content or "loaded from no dataset",
        )
        return None
    return _derived_files(version, manifest=manifest)


def init_app(app: Flask) -> None:
    """The app's derivation gate (none while a dataset is built: the build derives everything it keeps), its
    503 answer, and the gate's and cache's figures in ``/metrics`` (so after the metrics are made)."""
    building = bool(app.config.get(DERIVED_WRITABLE))
    limit = 0 if building else int(app.config["MAP_DERIVATIONS"])
    budget = MemoryBudget(0 if building else memory_budget(app.config.get("MEMORY_BUDGET")))

    def shrink() -> None:
        cache = app.extensions.get(EXTENSION)
        if cache is not None:
            cache.shrink(site_value(int(app.config["MAX_VIEW_NODES"])))
        release_free_memory()

    gate = DerivationGate(
        limit,
        int(app.config["MAP_WAITING"]),
        float(app.config["MAP_WAIT"]),
        None,
        budget,
        shrink,
        lambda: release_free_memory(collect=False),
    )
    app.extensions[GATE] = gate
    app.register_error_handler(DerivationsBusy, answer_busy)
    app.register_error_handler(ClientGone, answer_gone)
    app.teardown_request(lambda _: gate.finish())  # the turn a request took, given back once it is answered

    def sizes() -> dict[str, int]:
        cache = app.extensions.get(EXTENSION)
        return cache.sizes() if cache is not None else {"evictable": 0, "pinned": 0}

    app.extensions["bibgraph-metrics"].registry.register(DerivationCollector(gate, sizes))


def site_value(max_view_nodes: int) -> Callable[[tuple[Hashable, ...]], bool]:
    """Whether a key is of a value the site's own pages show with no parameters (a page's figures, the topic maps,
    the default co-author map): kept when the cache is emptied, so that over the memory budget the site's pages
    are still served. They are bounded by the dataset (its areas), never by what clients ask."""
    default_map = NetworkSpec(COAUTHORS, drawn(Filters(), max_view_nodes)[0])

    def site(key: tuple[Hashable, ...]) -> bool:
        spec = key[1] if len(key) > 1 else None
        if key[0] == "page":
            return True
        return isinstance(spec, NetworkSpec) and (spec.kind in (TOPICS, TOPIC_MAP) or spec == default_map)

    return site


def network_engine() -> ModuleType:
    """The network engine, imported at its first use: numpy, scipy and igraph cost ~1 s, which a server's start
    does not wait for."""
    from bibgraph.graph.networks import engine

    return engine
