"""Derived data per app (networks, layouts, drawn views, the search index), computed once: the store is read-only."""

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, TypeVar

import networkx as nx
from flask import current_app

from bibgraph.graph.layout import layout
from bibgraph.graph.names import normalise
from bibgraph.graph.networks import (
    Authorship,
    Filters,
    authorships,
    bipartite_graph,
    coauthor_network,
    topic_network,
)
from bibgraph.graph.pages import search_documents
from bibgraph.graph.search import SearchIndex

from .graphstore import get_store

T = TypeVar("T")
EXTENSION = "bibgraph.networks"
CACHE_ENTRIES = 64


class NetworkCache:
    """A small LRU of derived networks; rows come from the store once, through SPARQL."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: OrderedDict[Any, Any] = OrderedDict()
        self._making: dict[Any, threading.Lock] = {}

    def _cached(self, key: Any) -> tuple[bool, Any]:
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return True, self._entries[key]
            return False, None

    def _get(self, key: Any, make: Callable[[], T]) -> T:
        """The cached value, made once even when several requests ask at the same time."""
        found, value = self._cached(key)
        if found:
            return value  # type: ignore[no-any-return]
        with self._lock:
            making = self._making.setdefault(key, threading.Lock())
        with making:
            found, value = self._cached(key)
            if found:
                return value  # type: ignore[no-any-return]
            value = make()
            with self._lock:
                self._entries[key] = value
                self._making.pop(key, None)
                while len(self._entries) > CACHE_ENTRIES:
                    self._entries.popitem(last=False)
        return value

    def rows(self) -> list[Authorship]:
        deadline = float(current_app.config["NETWORK_TIMEOUT"])
        return self._get("rows", lambda: authorships(get_store().with_deadline(deadline)))

    def bipartite(self) -> nx.Graph:
        return self._get("bipartite", lambda: bipartite_graph(self.rows()))

    def coauthors(self, filters: Filters) -> nx.Graph:
        return self._get(
            ("coauthors", filters), lambda: coauthor_network(self.rows(), filters, self.bipartite_for(filters))
        )

    def topics(self) -> nx.Graph:
        return self._get("topics", lambda: topic_network(self.rows()))

    def bipartite_for(self, filters: Filters) -> nx.Graph:
        """The paper-author graph under a view's area and subarea filters."""
        if not (filters.area or filters.subarea):
            return self.bipartite()
        scope = Filters(area=filters.area, subarea=filters.subarea)
        return self._get(("bipartite", scope), lambda: bipartite_graph(self.rows(), scope))

    def author_names(self) -> list[tuple[str, str]]:
        """(normalised, as shown) name of every author, sorted: what the name autocomplete searches."""
        return self._get(
            "author names",
            lambda: sorted({(normalise(name), name) for _, name in self.bipartite().nodes(data="name") if name}),
        )

    def positions(
        self, key: Any, network: nx.Graph, radii: dict[str, float] | None = None
    ) -> dict[str, tuple[float, float]]:
        return self._get(("layout", key), lambda: layout(network, radii))

    def search_index(self) -> SearchIndex:
        deadline = float(current_app.config["NETWORK_TIMEOUT"])
        return self._get("search", lambda: SearchIndex(search_documents(get_store().with_deadline(deadline))))

    def view(self, key: Any, make: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The drawn data of a view (pyvis output), kept with the network it was made from."""
        return self._get(("view", key), make)


def networks() -> NetworkCache:
    cache = current_app.extensions.get(EXTENSION)
    if cache is None:
        cache = current_app.extensions.setdefault(EXTENSION, NetworkCache())
    return cache  # type: ignore[no-any-return]
