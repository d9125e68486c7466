"""A cheap estimate of the memory a derived value holds, so a cache of them can be bounded in bytes.

The values are networkx graphs (dicts of dicts of attribute dicts), layouts and drawn views (dicts and
lists of small tuples and dicts), analytics and the incidence (numpy arrays). The estimate walks the
value as :func:`sys.getsizeof` sees each object (containers, strings, numbers; a numpy array with its
data, once however many views share it; any other object by its ``__dict__`` or ``__slots__``), counting
an object reached twice once. A container of more than ``SAMPLE`` items is estimated from ``SAMPLE`` of
them spread over it, scaled to its length, so one estimate costs a few thousand ``getsizeof`` calls
whatever the value's size: a map's items are alike (same attributes, similar names). An object shared
by far-apart items is counted once per sampled item that reaches it first, scaled: errs on the large
side. A graph's adjacency is estimated knowing its shape (see :func:`_graph`).

Not pympler's ``asizeof``: it walks every object (25 to 150 ms for a 1,000-author map, 1.8 s for the
whole co-author network of 10,000 papers: 18,000 authors, 100,000 links) where this takes about 1 ms and
8 ms, and this runs on every insert into the cache; and pympler 1.1 fails on numpy arrays read from a
serialised copy (a dataset's incidence). On that dataset's derived values the estimate is 0.77 to 1.16 times what
loading a fresh copy of the value allocates (tracemalloc), 0.96 times asizeof for the whole network;
``tests/networks/test_memsize.py`` checks generated networks and layouts the same way.
"""

import sys
from collections.abc import Iterable
from itertools import islice
from typing import Any

import networkx as nx

SAMPLE = 64  # items of a container looked at; the rest are assumed alike
_ATOMS = (str, bytes, int, float, complex, bool, type(None))


def estimate_bytes(value: Any) -> int:
    """The estimated bytes ``value`` and everything it reaches hold (see the module docstring)."""
    return int(_size(value, set()))


def _size(value: Any, seen: set[int]) -> float:
    if id(value) in seen:
        return 0.0
    seen.add(id(value))
    if isinstance(value, _ATOMS):
        return sys.getsizeof(value)
    # numpy is not imported here (a server starts without it); while another thread is importing it, the module is
    # there without ``ndarray`` yet (seen when serve's warm-up imported it), and no array exists either way
    ndarray = getattr(sys.modules.get("numpy"), "ndarray", None)
    if ndarray is not None and isinstance(value, ndarray):
        return _array(value, seen, ndarray)
    if isinstance(value, nx.Graph):
        return _graph(value, seen)
    if isinstance(value, dict):
        return sys.getsizeof(value) + _items(value.items(), len(value), seen, 1.0)
    if isinstance(value, list | tuple | set | frozenset):
        return sys.getsizeof(value) + _items(value, len(value), seen)
    own: float = sys.getsizeof(value)
    if hasattr(value, "__dict__"):
        own += _size(vars(value), seen)
    for name in getattr(type(value), "__slots__", ()):
        own += _size(getattr(value, name, None), seen)
    return own


def _graph(graph: nx.Graph, seen: set[int]) -> float:
    """Its graph attributes, its nodes (with their attributes) and its adjacency. The adjacency's rows are keyed
    by the node objects themselves; a row's neighbours may be those objects or equal strings of their own (as the
    edges were added), so a neighbour is counted unless it is a node's own object. In an undirected graph each
    edge's attribute dict sits under both its ends: it is counted at the end of the smaller hash (either way
    once, whichever rows the sample holds)."""
    directed = graph.is_directed()
    adjacency = graph._adj
    seen.add(id(adjacency))
    nodes = set(map(id, adjacency))

    def row(item: tuple[Any, dict[Any, Any]]) -> float:
        node, edges = item
        if id(edges) in seen:
            return 0.0
        seen.add(id(edges))
        picked = _sampled(edges.items(), len(edges))
        total = 0.0
        for key, data in picked:
            total += 0.0 if id(key) in nodes else _size(key, seen)
            total += _size(data, seen) if directed or hash(node) <= hash(key) else 0.0
        return sys.getsizeof(edges) + (total * len(edges) / len(picked) if picked else 0.0)

    rows = _sampled(adjacency.items(), len(adjacency))
    per_row = sum(map(row, rows)) / len(rows) if rows else 0.0
    own = sys.getsizeof(graph) + sys.getsizeof(adjacency) + per_row * len(adjacency)
    return own + _size(graph.graph, seen) + _size(graph._node, seen)


def _array(value: Any, seen: set[int], array: type) -> float:
    """An array's header, and its data once however many views share it (a deserialised array's data is a
    buffer under one or two views: getsizeof counts the data of an array that owns it, not of a view)."""
    root = value
    while isinstance(root.base, array):
        root = root.base
    if root.base is None:  # root owns the data: getsizeof counts it
        return sys.getsizeof(value) + (_size(root, seen) if root is not value else 0)
    if id(root.base) in seen:
        return sys.getsizeof(value)
    seen.add(id(root.base))
    try:
        data = memoryview(root.base).nbytes
    except TypeError:  # a buffer that is no buffer to Python: the array's own span
        data = root.nbytes
    return sys.getsizeof(value) + data


def _sampled(items: Iterable[Any], count: int) -> list[Any]:
    """All the items, or ``SAMPLE`` of them spread evenly over the ``count``."""
    step = max(1, count // SAMPLE)  # the middle of each stretch: never always the first (often the largest)
    return list(islice(items, step // 2, None, step))[:SAMPLE]


def _items(items: Iterable[Any], count: int, seen: set[int], values: float | None = None) -> float:
    """The estimated bytes of a container's items, from a sample scaled to ``count``; ``values`` (a dict's
    items): the items are (key, value) pairs, the value counted by that share."""
    picked = _sampled(items, count)
    total = 0.0
    for item in picked:
        total += _size(item, seen) if values is None else _size(item[0], seen) + values * _size(item[1], seen)
    return total * count / len(picked) if picked else 0.0
