"""Derived data kept in a dataset: one file per cache key, written at build time, read when first asked for.

The views derive networks, layouts, drawn views and the home page's charts from
the store; each is a value under a key (what, the spec it is derived from, options). A build computes
the default ones and keeps them here, so a server opened on the dataset reads a file instead of
deriving (lazily: nothing is loaded before a request needs it, and a value is read once per process).

A dataset is data, never code: every value is kept in a format whose reading runs nothing. The incidence as numpy
arrays (``.npz``, read with ``allow_pickle=False``); a network, a layout and a map's summary as JSON (a network as
its graph, node and edge attributes, in order); a page's figures, orders and drawn views as JSON whose tuples and
records are tagged (:func:`page_json`): a record is one of :data:`RECORDS`, made again from its fields, never a
type a file names. The suffix is part of a file's name (:func:`file_name`), so a file an older bibgraph kept in
another format is never read: its value is derived again. A file whose SHA-256 differs from the manifest's (when
the caller gives the manifest's checksums) is refused on read: :class:`DamagedFile`.
"""

import dataclasses
import hashlib
import io
import json
import re
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import networkx as nx
import orjson

from bibgraph.graph.dataset.directory import DERIVED
from bibgraph.graph.site.conceptindex import ConceptFigures
from bibgraph.graph.site.pagedata import TreeArea
from bibgraph.graph.site.roles import of_npz, to_npz
from bibgraph.graph.stores.atomic import link_file, write_atomically, write_bytes_atomically

# The records a page value may hold besides JSON's own values, by name: each is written as its fields.
RECORDS: dict[str, type] = {record.__name__: record for record in (ConceptFigures, TreeArea)}
LONG_DIGITS = re.compile(rb"[0-9]{19}")  # see _loads
TYPE, TUPLE = "@type", "@tuple"  # the tags of a record and of a tuple (a value's own dict keys never start with @)


class DamagedFile(RuntimeError):
    """A derived file whose checksum is not the manifest's."""


def _loads(data: bytes) -> Any:
    """``json.loads(data)``, 2 to 10 times faster (a first map reads its network at its request) through orjson;
    by ``json`` what orjson refuses (``NaN``, ``Infinity``, which ``json.dumps`` writes) or reads otherwise (an
    integer past 64 bits becomes a float: a text with 19 digits in a row, which no float ``repr`` holds)."""
    if LONG_DIGITS.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data)


def _graph_json(network: nx.Graph) -> bytes:
    """``{"graph": ..., "nodes": [[node, data], ...], "edges": [[a, b, data], ...]}`` as ``json.dumps`` writes it,
    item by item into UTF-8 bytes: the whole document as lists, its text and its bytes added 736 MB to the whole
    co-author network (532 MB) at 100,000 papers."""
    out = io.BytesIO()

    def text(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False, default=sorted).encode("utf-8")

    def items(rows: Any) -> None:
        for index, row in enumerate(rows):
            out.write(b", " + text(row) if index else text(row))

    out.write(b'{"graph": ' + text(network.graph) + b', "nodes": [')
    items([node, data] for node, data in network.nodes(data=True))
    out.write(b'], "edges": [')
    items([a, b, data] for a, b, data in network.edges(data=True))
    out.write(b"]}")
    return out.getvalue()


def _json_graph(data: bytes) -> nx.Graph:
    document = _loads(data)
    network = nx.Graph(**document["graph"])
    network.add_nodes_from((node, attributes) for node, attributes in document["nodes"])
    network.add_edges_from((a, b, attributes) for a, b, attributes in document["edges"])
    return network


def _incidence_npz(incidence: Any) -> bytes:
    out = io.BytesIO()
    _write_incidence_npz(incidence, out)
    return out.getvalue()


def _write_incidence_npz(incidence: Any, out: BinaryIO) -> None:
    """The incidence's ``.npz`` written into ``out`` (:meth:`DerivedFiles.save`: the file itself, not a copy in
    memory first; at a million papers the incidence is ~200 MB, and a build saves it at its load's peak)."""
    import numpy as np

    from bibgraph.graph.networks.incidence import to_arrays

    arrays: dict[str, Any] = to_arrays(incidence)
    np.savez(out, allow_pickle=False, **arrays)


def _npz_incidence(data: bytes) -> Any:
    import numpy as np

    from bibgraph.graph.networks.incidence import of_arrays

    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        return of_arrays({name: arrays[name] for name in arrays.files})


def _roles_npz(roles: Any) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.savez(out, allow_pickle=False, **to_npz(roles))
    return out.getvalue()


def _npz_roles(data: bytes) -> Any:
    import numpy as np

    with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
        return of_npz({name: arrays[name] for name in arrays.files})


def _layout_json(positions: dict[str, tuple[float, float]]) -> bytes:
    return json.dumps({node: list(xy) for node, xy in positions.items()}, ensure_ascii=False).encode("utf-8")


def _json_layout(data: bytes) -> dict[str, tuple[float, float]]:
    return {node: (x, y) for node, (x, y) in _loads(data).items()}


def _summary_json(summary: dict[str, Any]) -> bytes:
    return json.dumps(summary, ensure_ascii=False).encode("utf-8")


def _json_summary(data: bytes) -> dict[str, Any]:
    return {
        name: [tuple(row) for row in value] if isinstance(value, list) else value
        for name, value in _loads(data).items()
    }


def _tagged(value: Any) -> Any:
    """``value`` as JSON values: a tuple as ``{"@tuple": [...]}``, a record of :data:`RECORDS` as its fields and
    ``"@type"``; any other type (a set, a ``Counter``, a ``str`` subclass) is refused, so what is read back equals
    what was kept."""
    kind = type(value)
    if value is None or kind in (str, int, float, bool):
        return value
    if kind is list:
        if all(type(item) is str for item in value):  # a paper order's piece: 2 million calls a million papers
            return value
        return [_tagged(item) for item in value]
    if kind is tuple:
        return {TUPLE: [_tagged(item) for item in value]}
    if kind is dict:
        if not all(type(name) is str and not name.startswith("@") for name in value):
            raise TypeError("a kept page value's dict keys must be strings not starting with @")
        return {name: _tagged(item) for name, item in value.items()}
    if RECORDS.get(kind.__name__) is kind:
        fields = {f.name: _tagged(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {TYPE: kind.__name__, **fields}
    raise TypeError(f"a kept page value holds a {kind.__name__}: not data this module can keep")


def _untagged(document: dict[str, Any]) -> Any:
    if TUPLE in document:
        return tuple(document[TUPLE])
    if TYPE in document:
        fields = dict(document)
        record = RECORDS.get(fields.pop(TYPE))
        if record is None:
            raise ValueError(f"a kept page value names an unknown record {document[TYPE]!r}")
        return record(**fields)
    return document


def page_json(value: Any) -> bytes:
    """A page's value (figures, an order, a drawn view) as JSON (:func:`_tagged`)."""
    return json.dumps(_tagged(value), ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def json_page(data: bytes) -> Any:
    """The value :func:`page_json` wrote: only JSON's values, tuples and :data:`RECORDS` are made."""
    return json.loads(data, object_hook=_untagged)


# Every kind of derived value (the first part of a key), as data: suffix, writer, reader.
DATA_FORMATS: dict[str, tuple[str, Callable[[Any], bytes], Callable[[bytes], Any]]] = {
    "incidence": (".npz", _incidence_npz, _npz_incidence),
    "roles": (".npz", _roles_npz, _npz_roles),  # authorships' positions, lists' lengths (graph/site/roles.py)
    "network": (".json", _graph_json, _json_graph),
    "layout": (".json", _layout_json, _json_layout),
    "summary": (".json", _summary_json, _json_summary),
    "page": (".json", page_json, json_page),
    "view": (".json", page_json, json_page),
    # a whole network's export, the bytes a download sends (its file is named with the format's own suffix)
    "export": (".bin", bytes, bytes),
}

# The kinds written straight into their file (the same bytes as their writer's above, never held whole in memory).
STREAMED: dict[str, Callable[[Any, BinaryIO], None]] = {"incidence": _write_incidence_npz}


def _format(key: tuple[Hashable, ...]) -> tuple[str, Callable[[Any], bytes], Callable[[bytes], Any]]:
    if str(key[0]) not in DATA_FORMATS:
        raise TypeError(f"no data format for derived values of kind {key[0]!r}")
    return DATA_FORMATS[str(key[0])]


def canonical(value: Any) -> Any:
    """``value`` as JSON-able data that is the same in every process (sets sorted, dataclasses by field)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return {"@type": type(value).__name__, **fields}
    if isinstance(value, frozenset | set):
        return sorted((canonical(item) for item in value), key=lambda item: json.dumps(item, sort_keys=True))
    if isinstance(value, tuple | list):
        return [canonical(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"no canonical form for a derived-data key part of type {type(value).__name__}")


def derived_key(what: str, spec: Any = None, *options: Hashable) -> tuple[Hashable, ...]:
    """The one way a key of derived data is made: what is derived, the spec it is derived from (a network's), and
    every other option that shapes it (e.g. the edge weighting of a drawing)."""
    return (what, spec, *options)


def file_name(key: tuple[Hashable, ...]) -> str:
    """The file holding the value of ``key``: a hash of its canonical form."""
    text = json.dumps(canonical(key), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32] + _format(key)[0]


class DerivedFiles:
    """The derived values of one dataset version, in ``directory`` (read-only unless ``writable``)."""

    def __init__(self, directory: Path, writable: bool = False, checksums: dict[str, str] | None = None) -> None:
        self.directory = directory
        self.writable = writable
        self.checksums = checksums or {}  # SHA-256 by file name, from the version's manifest
        self.sync = True  # each file fsynced as it is saved

    @classmethod
    def unpublished(cls, version: Path) -> "DerivedFiles":
        """The derived files of a version being built (writable), saved without an fsync each: the whole version
        is fsynced before it is published (``directory._sync_tree``), and a failed one is removed (an fsync per
        file cost ~2,000 fsyncs, 4 s of an add's 34 at a million papers)."""
        files = cls(version / DERIVED, writable=True)
        files.sync = False
        return files

    @classmethod
    def of_version(cls, version: Path, checksums: dict[str, str]) -> "DerivedFiles":
        """The derived files of the published dataset ``version`` (read-only), each checked as it is read against
        ``checksums``, its manifest's (by path in the version: ``derived/NAME``)."""
        prefix = f"{DERIVED}/"
        return cls(
            version / DERIVED, False, {n.removeprefix(prefix): d for n, d in checksums.items() if n.startswith(prefix)}
        )

    def load(self, key: tuple[Hashable, ...]) -> tuple[bool, Any]:
        """(True, value) when the dataset holds the value of ``key``, else (False, None); :class:`DamagedFile` when
        the file's checksum is not the manifest's."""
        name = file_name(key)
        try:
            data = (self.directory / name).read_bytes()
        except FileNotFoundError:
            return False, None
        expected = self.checksums.get(name)
        if expected is not None and hashlib.sha256(data).hexdigest() != expected:
            raise DamagedFile(f"{self.directory / name} is damaged: its checksum is not the manifest's")
        return True, _format(key)[2](data)

    def save(self, key: tuple[Hashable, ...], value: Any) -> None:
        """Keep ``value`` (atomically) when this is a dataset being built; otherwise nothing."""
        if not self.writable:
            return
        path = self.directory / file_name(key)
        streamed = STREAMED.get(str(key[0]))
        if streamed is not None:
            write_atomically(path, lambda out: streamed(value, out), self.sync)
        else:
            write_bytes_atomically(path, _format(key)[1](value), self.sync)

    def link(self, previous: "DerivedFiles", key: tuple[Hashable, ...]) -> None:
        """Keep ``previous``'s value of ``key`` as this one's: a hard link to its file, never copied or read (a value
        is never written in place, :meth:`save` replaces the file); ``FileNotFoundError`` when it has none."""
        if self.writable:
            link_file(previous.directory / file_name(key), self.directory / file_name(key))


T = TypeVar("T")


def keeper(files: DerivedFiles) -> Callable[[tuple[Any, ...], Callable[[], T]], T]:
    """``kept(key, make)``: the value ``files`` keep under ``key``, else ``make()``'s, kept there."""

    def kept(key: tuple[Any, ...], make: Callable[[], T]) -> T:
        found, value = files.load(key)
        if not found:
            value = make()
            files.save(key, value)
        return value

    return kept
