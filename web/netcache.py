"""Derived data per app (networks, layouts, drawn views, the search index), computed once: the store is read-only."""

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import networkx as nx
from flask import current_app

from bibgraph.graph import analytics
from bibgraph.graph.analytics import path_graph
from bibgraph.graph.layout import layout
from bibgraph.graph.networks import (
    Authorship,
    Filters,
    authorships,
    bipartite_graph,
    coauthor_network,
    topic_network,
)
from bibgraph.graph.pages import author_facts, search_documents
from bibgraph.graph.search import SearchIndex

from .graphstore import get_store

T = TypeVar("T")
EXTENSION = "bibgraph.networks"
CACHE_ENTRIES = 64
COAUTHORS, TOPICS, PATH = "coauthors", "topics", "path"


@dataclass(frozen=True)
class NetworkSpec:
    """Everything that shapes a derived network. The network, its layout, its drawn views and its
    analytics are all cached under keys made from the whole spec (:func:`derived_key`), and each is
    made from the network of that same spec, so no two filter sets can ever share a layout."""

    kind: str  # COAUTHORS, TOPICS or PATH
    filters: Filters = field(default_factory=Filters)  # co-author filters (ego networks: ``authors``)
    path: tuple[str, ...] = ()  # PATH: the chain of authors, in order


def derived_key(what: str, spec: NetworkSpec | None = None, *options: Hashable) -> tuple[Hashable, ...]:
    """The one way a cache key is made: what is derived, the spec it is derived from, and every
    other option that shapes it (e.g. the edge weighting of a drawing)."""
    return (what, spec, *options)


class NetworkCache:
    """A small LRU of derived networks; rows come from the store once, through SPARQL."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[tuple[Hashable, ...], Any] = OrderedDict()
        self._making: dict[tuple[Hashable, ...], threading.Lock] = {}

    def _cached(self, key: tuple[Hashable, ...]) -> tuple[bool, Any]:
        with self._lock:
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
            return value  # type: ignore[no-any-return]
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        try:
            with making:
                found, value = self._cached(key)
                if found:
                    return value  # type: ignore[no-any-return]
                value = make()
                with self._lock:
                    self._entries[key] = value
                    while len(self._entries) > CACHE_ENTRIES:
                        self._entries.popitem(last=False)
        finally:
            with self._lock:
                if self._making.get(key) is making:
                    self._making.pop(key, None)
        return value

    def rows(self) -> list[Authorship]:
        deadline = float(current_app.config["NETWORK_TIMEOUT"])
        return self._get(derived_key("rows"), lambda: authorships(get_store().with_deadline(deadline)))

    def bipartite(self) -> nx.Graph:
        return self._get(derived_key("bipartite"), lambda: bipartite_graph(self.rows()))

    def network(self, spec: NetworkSpec) -> nx.Graph:
        return self._get(derived_key("network", spec), lambda: self._derive(spec))

    def _derive(self, spec: NetworkSpec) -> nx.Graph:
        if spec.kind == COAUTHORS:
            return coauthor_network(self.rows(), spec.filters)
        if spec.kind == TOPICS:
            return topic_network(self.rows())
        if spec.kind == PATH:
            if not spec.path:
                return nx.Graph()
            return path_graph(self.coauthors(Filters(authors=frozenset(spec.path))), list(spec.path))
        raise ValueError(f"unknown network kind {spec.kind!r}")

    def coauthors(self, filters: Filters) -> nx.Graph:
        return self.network(NetworkSpec(COAUTHORS, filters))

    def topics(self) -> nx.Graph:
        return self.network(NetworkSpec(TOPICS))

    def positions(self, spec: NetworkSpec) -> dict[str, tuple[float, float]]:
        """Server-side layout of the network of ``spec``."""
        return self._get(derived_key("layout", spec), lambda: layout(self.network(spec)))

    def summary(self, spec: NetworkSpec) -> dict[str, Any]:
        """The analytics shown beside a co-author view."""
        return self._get(derived_key("summary", spec), lambda: analytics.summary(self.network(spec)))

    def search_index(self) -> SearchIndex:
        deadline = float(current_app.config["NETWORK_TIMEOUT"])
        store = get_store().with_deadline(deadline)
        return self._get(derived_key("search"), lambda: SearchIndex(search_documents(store), author_facts(store)))

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
        cache = current_app.extensions.setdefault(EXTENSION, NetworkCache())
    return cache  # type: ignore[no-any-return]
