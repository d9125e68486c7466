"""Derived data per app (networks, layouts, drawn views, the search index), computed once: the store is read-only.

Served from a dataset (``bibgraph serve DIR``), a value the build kept is read from the dataset's
``derived/`` files instead of being derived; while a dataset is built, every value derived is kept there.
"""

import atexit
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import networkx as nx
from flask import current_app

from bibgraph.graph import analytics
from bibgraph.graph.datadir import DERIVED
from bibgraph.graph.dataset import dataset_version
from bibgraph.graph.derived import DerivedFiles
from bibgraph.graph.networks import Filters
from bibgraph.graph.pushdown import (
    coauthor_network_from,
    collaboration_from,
    ego_rings_from,
    pushes_down,
    topic_map_from,
    topic_network_from,
)
from bibgraph.graph.search import FILE_NAME, SearchIndex
from bibgraph.graph.serving.pooled import PooledStore
from bibgraph.graph.stores.store import GraphStore

from .graphstore import get_store
from .pyvis_views import author_radius, topic_radii

if TYPE_CHECKING:
    from bibgraph.graph.incidence import Incidence

T = TypeVar("T")
EXTENSION = "bibgraph.networks"
CACHE_ENTRIES = 64
DERIVED_WRITABLE = "BIBGRAPH_DERIVED_WRITABLE"  # app config (not a setting): a dataset build keeps what it derives
COAUTHORS, TOPICS, TOPIC_MAP, EGO = "coauthors", "topics", "topic map", "ego"
RELATED_PER_TOPIC = 3  # strongest "related" edges kept per topic on the topic map


@dataclass(frozen=True)
class NetworkSpec:
    """Everything that shapes a derived network. The network, its layout, its drawn views and its
    analytics are all cached under keys made from the whole spec (:func:`derived_key`), and each is
    made from the network of that same spec, so no two filter sets can ever share a layout."""

    kind: str  # COAUTHORS, TOPICS (the whole topic network), TOPIC_MAP (as drawn) or EGO
    filters: Filters = field(default_factory=Filters)  # COAUTHORS: the co-author filters
    expand: str | None = None  # TOPIC_MAP: the area IRI whose subareas are drawn, or "all"
    ego: tuple[str, int, int] | None = None  # EGO: (the author's IRI, radius 1 or 2, top K co-authors)


def derived_key(what: str, spec: NetworkSpec | None = None, *options: Hashable) -> tuple[Hashable, ...]:
    """The one way a cache key is made: what is derived, the spec it is derived from, and every
    other option that shapes it (e.g. the edge weighting of a drawing)."""
    return (what, spec, *options)


PINNED = frozenset({derived_key("incidence")})


class NetworkCache:
    """A small LRU of derived networks; rows come from the store once, through SPARQL."""

    def __init__(self, derived: DerivedFiles | None = None) -> None:
        self.derived = derived  # the dataset's kept values, if served from (or building) a dataset
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
        self._pinned: dict[tuple[Hashable, ...], Any] = {}  # never evicted: what every other value is made from
        self._making: dict[tuple[Hashable, ...], threading.Lock] = {}
        self._search: SearchIndex | None = None
        self._search_lock = threading.Lock()

    def _cached(self, key: tuple[Hashable, ...]) -> tuple[bool, Any]:
        with self._lock:
            if key in self._pinned:
                return True, self._pinned[key]
            if key in self._entries:
                self._entries.move_to_end(key)
                return True, self._entries[key]
            return False, None

    def _get(self, key: tuple[Hashable, ...], make: Callable[[], T]) -> T:
        """The cached value, made once even when several requests ask at the same time.

        A ``make`` that fails leaves nothing behind: the next request tries again.
        """
        found, value = self._cached(key)
        if found:
            return value
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        try:
            with making:
                found, value = self._cached(key)
                if found:
                    return value
                found, value = self.derived.load(key) if self.derived else (False, None)
                if not found:
                    value = make()
                    if self.derived:
                        self.derived.save(key, value)
                with self._lock:
                    if key in PINNED:
                        self._pinned[key] = value
                    else:
                        self._entries[key] = value
                    while len(self._entries) > CACHE_ENTRIES:
                        self._entries.popitem(last=False)
        finally:
            with self._lock:
                if self._making.get(key) is making:
                    self._making.pop(key, None)
        return value

    def incidence(self) -> "Incidence":
        """The whole graph's paper-author incidence (compact arrays), read in the worker in one streamed pass:
        every co-author, ego and topic network of an embedded store is computed from it, never from a
        networkx graph of the whole network."""
        from bibgraph.graph.incidence import incidence_of  # here, not at the top: numpy and scipy cost ~1 s at start

        return self._get(derived_key("incidence"), lambda: _engine(self._store()).run(incidence_of))

    @staticmethod
    def _store() -> GraphStore:
        """The store for deriving networks, under their (longer) deadline."""
        return get_store().with_deadline(float(current_app.config["NETWORK_TIMEOUT"]))

    @staticmethod
    def _pushed() -> bool:
        """Whether the engine aggregates (a remote store) instead of this process going over every row."""
        return pushes_down(get_store())

    def author_name(self, author: str) -> str | None:
        """The name of the author ``author`` (an IRI), or None when no paper has them."""
        incidence = self.incidence()
        found = incidence.author_id(author)
        return None if found is None else incidence.names[found]

    def network(self, spec: NetworkSpec) -> nx.Graph:
        """The network of ``spec``; an EGO spec whose author is unknown raises ``KeyError``."""
        return self._get(derived_key("network", spec), lambda: self._derive(spec))

    def _derive(self, spec: NetworkSpec) -> nx.Graph:
        if spec.kind == COAUTHORS and self._pushed():
            return coauthor_network_from(self._store(), spec.filters, push_down=True)
        if spec.kind == COAUTHORS:
            return self.incidence().coauthor_network(spec.filters)
        if spec.kind == TOPICS and self._pushed():
            return topic_network_from(self._store(), push_down=True)
        if spec.kind == TOPICS:
            return self.incidence().topic_network()
        if spec.kind == TOPIC_MAP and self._pushed():
            return topic_map_from(self._store(), spec.expand, RELATED_PER_TOPIC, push_down=True)
        if spec.kind == TOPIC_MAP:
            return self.incidence().topic_map(spec.expand, RELATED_PER_TOPIC)
        if spec.kind == EGO and spec.ego is not None:
            centre, radius, top = spec.ego
            if self._pushed():
                rings, coauthors = ego_rings_from(self._store(), centre, radius, top)
            else:
                rings, coauthors = self.incidence().ego_rings(centre, radius, top)
            members = frozenset(node for ring in rings for node in ring)
            network = self.coauthors(Filters(authors=members)).copy()  # a copy: the cached one may serve others
            network.nodes[centre]["ego"] = True
            network.graph.update(rings=rings, coauthors=coauthors)
            return network
        raise ValueError(f"unknown network kind {spec.kind!r}")

    def coauthors(self, filters: Filters) -> nx.Graph:
        return self.network(NetworkSpec(COAUTHORS, filters))

    def topics(self) -> nx.Graph:
        return self.network(NetworkSpec(TOPICS))

    def positions(self, spec: NetworkSpec) -> dict[str, tuple[float, float]]:
        """Server-side layout of the network of ``spec``, its nodes' discs (as drawn) apart; an ego
        network in rings around its author. One layout per spec: the map and its VOSviewer download agree."""

        def make() -> dict[str, tuple[float, float]]:
            from bibgraph.graph.layout import concentric, layout  # here, not at the top: igraph and scipy load slowly

            network = self.network(spec)
            if spec.kind in (TOPICS, TOPIC_MAP):
                radii = topic_radii(network)
            else:
                radii = {node: author_radius(papers) for node, papers in network.nodes(data="papers", default=1)}
            if spec.kind == EGO:
                return concentric(network.graph["rings"], radii)
            return layout(network, radii)

        return self._get(derived_key("layout", spec), make)

    def summary(self, spec: NetworkSpec) -> dict[str, Any]:
        """The analytics beside a co-author map: components, communities and brokers of the drawn map;
        co-authors and joint papers of its strongest authors over the whole filtered network, as profiles count."""

        def make() -> dict[str, Any]:
            network = self.network(spec)
            stats = analytics.summary(network)
            if self._pushed():
                counts = collaboration_from(self._store(), spec.filters, list(network))
            else:
                counts = self.incidence().collaboration(spec.filters, list(network))
            name = network.nodes
            strongest = sorted(network, key=lambda n: (-counts[n][1], str(name[n].get("name", n))))[:10]
            stats["strongest"] = [(n, name[n]["name"], *counts[n]) for n in strongest]
            stats["drawn_authors"] = network.number_of_nodes()
            return stats

        return self._get(derived_key("summary", spec), make)

    def search_index(self) -> SearchIndex:
        """The search index (and the author autocomplete's names): a dataset's file, opened read-only (built
        into it while the dataset is built); served without a dataset (or from a dataset built before the index
        was kept), a temporary file built at first use."""

        def make() -> SearchIndex:
            from bibgraph.graph.searchbuild import build_search_index, temporary_index  # only when the index is built

            kept = self.derived is not None and (self.derived.directory / FILE_NAME).exists()
            if self.derived is not None and (kept or self.derived.writable):
                path = self.derived.directory / FILE_NAME
                if not kept:
                    build_search_index(self._store(), path)
            else:  # no dataset, or one built before the index was kept: built once per server
                path = temporary_index()
                atexit.register(path.unlink, missing_ok=True)
                build_search_index(self._store(), path)
            return SearchIndex(path)

        # kept apart from the LRU (a temporary index is costly to build again) and from the pickled values
        with self._search_lock:
            if self._search is None:
                self._search = make()
            return self._search

    def page(self, name: str, make: Callable[[], T]) -> T:
        """Figures of a page that read the whole graph (the home page's charts), computed once."""
        return self._get(derived_key("page", None, name), make)

    def view(
        self,
        spec: NetworkSpec,
        options: tuple[Hashable, ...],
        draw: Callable[[nx.Graph, dict[str, tuple[float, float]]], dict[str, Any]],
    ) -> dict[str, Any]:
        """The drawn data of a view (pyvis output) of the network of ``spec`` and its layout;
        ``options`` are all the other request parameters ``draw`` depends on."""
        return self._get(derived_key("view", spec, *options), lambda: draw(self.network(spec), self.positions(spec)))


def networks() -> NetworkCache:
    cache = current_app.extensions.get(EXTENSION)
    if cache is None:
        writable = bool(current_app.config.get(DERIVED_WRITABLE))
        cache = current_app.extensions.setdefault(
            EXTENSION, cache_for(str(current_app.config["BIBGRAPH_STORE"]), writable)
        )
    return cache


def cache_for(store: str, writable: bool = False) -> NetworkCache:
    """An empty cache for the store spec ``store``; a dataset's reads its derived files (and keeps new ones if
    ``writable``: while the dataset is built)."""
    if not store.startswith("dataset:"):
        return NetworkCache()
    version = dataset_version(Path(store.removeprefix("dataset:")))
    return NetworkCache(DerivedFiles(version / DERIVED, writable))


def _engine(store: GraphStore) -> PooledStore:
    """The embedded store's query workers, which compute a value next to the data (a remote store pushes down)."""
    if not isinstance(store, PooledStore):
        raise TypeError(f"{type(store).__name__} runs no functions next to its data")
    return store
