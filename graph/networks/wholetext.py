"""Text columns: the whole co-author network's export lines filled a block of rows at a time by numpy's string
functions, from its arrays.

A line of a format is a template whose holes are columns (an author's quoted IRI, a link's weight): each column is
turned to text once a block (numbers by numpy, each distinct fractional weight or area list by Python's own ``str``,
``quoteattr``, ``escape`` or ``json.dumps``, so the bytes are those of the writers of :mod:`.exports`), and the
block's lines are joined by ``np.strings.add``, ~10 ns a row a piece in fixed-width bytes: a line a Python
``str.format`` of Python values cost ~2 us, 900,000 links three times over at 100,000 papers.

Fixed-width bytes (numpy's ``S``) pad each value with NULs to the longest of its column and drop trailing NULs,
so they hold a network only when none of its strings holds a NUL byte and none is longer than :data:`WIDE_FROM`
bytes (a block's arrays are then a few MB); any other network is filled in numpy's variable-width ``StringDType``
(the same functions, ~6 times slower).
"""

import json
from collections.abc import Callable, Iterator, Sequence
from string import Formatter
from typing import Any, BinaryIO, Protocol
from xml.sax.saxutils import escape, quoteattr

import numpy as np
from numpy.dtypes import StringDType

from bibgraph.graph.networks.exports import gexf_head, graphml_head
from bibgraph.graph.networks.incidence import Incidence, Strings, ranges

WIDE_FROM = 1024  # bytes: a longer string (or one holding a NUL) makes every column of its network variable-width
NUMBERS = 1 << 16  # integers below this (or below the network's authors) are gathered from their texts
ROWS = 1 << 11  # rows filled at a time: a block's columns and lines are ~1 MB (at 16,384 the 10k child's peak rose)

Quote = Callable[[str], str]
XML_ATTRIBUTE: tuple[Quote, bytes] = (quoteattr, b'&<>"\n\r\t')  # a quoting and the bytes it may change
XML_TEXT: tuple[Quote, bytes] = (escape, b"&<>")
JSON: tuple[Quote, bytes] = (lambda text: json.dumps(text, ensure_ascii=False), b'"\\' + bytes(range(32)))


def _plain_quote(quote: Quote) -> tuple[str, str]:
    """What ``quote`` puts around a string it leaves otherwise as it is."""
    before, _, after = quote("x").partition("x")
    return before, after


class Columns:
    """The texts of a network's rows: fixed-width bytes (``wide`` false) or variable-width strings."""

    def __init__(self, wide: bool) -> None:
        self.wide = wide
        self._numbers = self.table([])  # the text of 0, 1, 2, ...: a gather, not a conversion a value (~120 ns)

    @classmethod
    def of(cls, strings: Sequence[Strings], texts: Sequence[str]) -> "Columns":
        """The columns for a network of ``strings`` (its IRIs, its names) and ``texts`` (its lists of areas):
        fixed-width when none holds a NUL byte nor is longer than :data:`WIDE_FROM` bytes."""
        longest = [len(s.prefix.encode()) + int(np.diff(s.offsets).max(initial=0)) for s in strings]
        longest += [len(text.encode()) for text in texts]
        nul = any("\0" in s.prefix or bool((s.blob == 0).any()) for s in strings) or any("\0" in t for t in texts)
        return cls(nul or max(longest, default=0) > WIDE_FROM)

    def literal(self, text: str) -> str | bytes:
        return text if self.wide else text.encode("utf-8")

    def table(self, texts: Sequence[str]) -> np.ndarray:
        """``texts`` as a column."""
        if self.wide:
            return np.array(texts, dtype=StringDType())
        return np.array([text.encode("utf-8") for text in texts], dtype=np.bytes_)

    def numbers(self, count: int) -> None:
        """Hold the text of the integers 0 to ``count`` - 1 (an author's number, a paper count) for :meth:`ints`."""
        self._numbers = self._converted(np.arange(max(count, NUMBERS)))

    def ints(self, values: np.ndarray) -> np.ndarray:
        """Integers as ``str`` writes them: those held by :meth:`numbers` gathered, others converted."""
        if len(values) and values.min() >= 0 and values.max() < len(self._numbers):
            return self._numbers[values]
        return self._converted(values)

    def _converted(self, values: np.ndarray) -> np.ndarray:
        if self.wide:
            return values.astype(StringDType())
        longest = max(len(str(int(values.min()))), len(str(int(values.max())))) if len(values) else 1
        return values.astype(f"S{longest}")  # as wide as the longest: the lines' padding is work

    def floats(self, values: np.ndarray) -> np.ndarray:
        """Floats as ``str`` (and ``json``) writes them: each distinct value by Python."""
        distinct, inverse = np.unique(values, return_inverse=True)
        return self.table([str(value) for value in distinct.tolist()])[inverse]

    def flags(self, values: np.ndarray, false: str, true: str) -> np.ndarray:
        """Truth values as ``false`` and ``true``."""
        return self.table([false, true])[values.astype(np.intp)]

    def strings(self, strings: Strings, indices: np.ndarray, quoting: tuple[Quote, bytes]) -> np.ndarray:
        """The strings at ``indices``, each as ``quoting``'s function writes it. Fixed-width: the bytes gathered
        from the buffer at once, the quotes put around them; a string holding a byte the quoting may change
        (``&``, a quote mark) is quoted by the function itself."""
        quote, special = quoting
        if self.wide:
            return self.table([quote(text) for text in strings.take(indices)])
        starts, ends = strings.offsets[indices], strings.offsets[indices + 1]
        lengths = ends - starts
        width = max(int(lengths.max(initial=0)), 1)
        owner, gathered = np.repeat(np.arange(len(indices)), lengths), strings.blob[ranges(starts, lengths)]
        grid = np.zeros((len(indices), width), dtype=np.uint8)
        grid[owner, ranges(np.zeros_like(starts), lengths)] = gathered
        marked = np.bincount(owner[np.isin(gathered, np.frombuffer(special, dtype=np.uint8))], minlength=len(indices))
        if any(byte in special for byte in strings.prefix.encode()):
            marked[:] = 1
        before, after = _plain_quote(quote)
        texts = np.strings.add(
            np.strings.add((before + strings.prefix).encode(), grid.view(f"S{width}")[:, 0]), after.encode()
        )
        rows = np.flatnonzero(marked)
        if not len(rows):
            return texts
        quoted = [quote(text).encode() for text in strings.take(indices[rows])]
        texts = texts.astype(f"S{max(texts.itemsize, *map(len, quoted))}")
        texts[rows] = quoted
        return texts

    def fill(self, template: str, *values: np.ndarray) -> bytes:
        """The rows' lines, one after another: ``template`` (``str.format``'s syntax, ``{}`` holes) filled with
        each row's text of each column of ``values``."""
        holes = iter(values)
        pieces: list[Any] = []
        for text, hole, _, _ in Formatter().parse(template):
            pieces += [self.literal(text)] if hole is None else [self.literal(text), next(holes)]
        while len(pieces) > 1:  # joined two by two: each byte copied log2(pieces) times, not once a piece after it
            pieces = [
                np.strings.add(*pieces[i : i + 2]) if i + 1 < len(pieces) else pieces[i]
                for i in range(0, len(pieces), 2)
            ]
        rows = pieces[0]
        assert isinstance(rows, np.ndarray)
        if self.wide:
            return "".join(rows.tolist()).encode("utf-8")
        return b"".join(rows.tolist())  # each line without its padding


class Whole(Protocol):
    """What the writers read of a whole network (:class:`.wholecoauthors.WholeCoauthors`): authors (incidence
    numbers) in rank order with their figures, links in networkx's order with their values."""

    inc: Incidence
    columns: Columns
    chosen: np.ndarray
    counts: np.ndarray
    cut_author: np.ndarray
    community: np.ndarray
    area_combo: np.ndarray
    rank: np.ndarray
    first: np.ndarray
    second: np.ndarray
    weight: np.ndarray
    fractional: np.ndarray
    cut: np.ndarray

    def iris(self, quoting: tuple[Quote, bytes]) -> np.ndarray: ...
    def areas(self, quoting: tuple[Quote, bytes]) -> np.ndarray: ...
    def vosviewer_figures(self, weight: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...


NODE_KEYS = (
    ("name", "string"),
    ("papers", "long"),
    ("areas", "string"),
    ("truncated", "boolean"),
    ("community", "long"),
)
EDGE_KEYS = (("weight", "long"), ("fractional", "double"), ("lower_bound", "boolean"))


def blocks(count: int) -> Iterator[slice]:
    """``count`` rows' slices, :data:`ROWS` at a time."""
    return (slice(start, min(start + ROWS, count)) for start in range(0, count, ROWS))


def write_graphml(whole: Whole, out: BinaryIO) -> None:
    """GraphML as :func:`.exports.write_graphml` writes the network."""
    columns, chosen = whole.columns, whole.chosen
    scopes = (("node", NODE_KEYS if len(chosen) else ()), ("edge", EDGE_KEYS if len(whole.first) else ()))
    numbered = [(name, kind, scope) for scope, named in scopes for name, kind in named]
    keys = {key: f"d{number}" for number, key in enumerate(numbered)}
    out.write(graphml_head(keys).encode("utf-8"))
    data = {(name, scope): f"      <data key={quoteattr(key)}>{{}}</data>\n" for (name, _, scope), key in keys.items()}
    iri, areas = whole.iris(XML_ATTRIBUTE), whole.areas(XML_TEXT)
    node = "    <node id={}>\n" + "".join(data[(name, "node")] for name, _ in scopes[0][1]) + "    </node>\n"
    for rows in blocks(len(chosen)):
        a = chosen[rows]
        names, counts = columns.strings(whole.inc.names, a, XML_TEXT), columns.ints(whole.counts[a])
        truncated, community = columns.flags(whole.cut_author[a], "False", "True"), columns.ints(whole.community[a])
        out.write(columns.fill(node, iri[a], names, counts, areas[whole.area_combo[a]], truncated, community))
    edge = "    <edge source={} target={}>\n" + "".join(data[(name, "edge")] for name, _ in scopes[1][1])
    edge += "    </edge>\n"
    for rows in blocks(len(whole.first)):
        ends = iri[whole.first[rows]], iri[whole.second[rows]]
        values = columns.ints(whole.weight[rows]), columns.floats(whole.fractional[rows])
        out.write(columns.fill(edge, *ends, *values, columns.flags(whole.cut[rows], "False", "True")))
    out.write(b"  </graph>\n</graphml>\n")


def write_gexf(whole: Whole, out: BinaryIO) -> None:
    """GEXF as :func:`.exports.write_gexf` writes the network: a node's label its IRI, a link's weight the
    element's own field, the other values attributes (numbers and truth values unquoted)."""
    columns, chosen = whole.columns, whole.chosen
    attributes = [("node", name, kind) for name, kind in NODE_KEYS if len(chosen)]
    attributes += [("edge", name, kind) for name, kind in EDGE_KEYS if len(whole.first) and name != "weight"]
    ids = {(scope, name): (str(number), kind) for number, (scope, name, kind) in enumerate(attributes)}
    out.write(gexf_head(ids).encode("utf-8"))

    def values(scope: str, quoted: tuple[str, ...] = ()) -> str:
        """The attribute values of a ``scope``'s element: strings (``quoted``) are quoted by their column."""
        rows = ""
        for (of, name), (number, _) in ids.items():
            if of == scope:
                value = "{}" if name in quoted else '"{}"'
                rows += f"          <attvalue for={quoteattr(number)} value={value} />\n"
        return f"        <attvalues>\n{rows}        </attvalues>\n" if rows else ""

    iri, areas = whole.iris(XML_ATTRIBUTE), whole.areas(XML_ATTRIBUTE)
    out.write(b"    <nodes>\n")
    node = "      <node id={} label={}>\n" + values("node", ("name", "areas")) + "      </node>\n"
    for rows in blocks(len(chosen)):
        a = chosen[rows]
        names, counts = columns.strings(whole.inc.names, a, XML_ATTRIBUTE), columns.ints(whole.counts[a])
        truncated, community = columns.flags(whole.cut_author[a], "false", "true"), columns.ints(whole.community[a])
        out.write(columns.fill(node, iri[a], iri[a], names, counts, areas[whole.area_combo[a]], truncated, community))
    out.write(b"    </nodes>\n    <edges>\n")
    edge = '      <edge source={} target={} id="{}" weight="{}">\n' + values("edge") + "      </edge>\n"
    for rows in blocks(len(whole.first)):
        ends = iri[whole.first[rows]], iri[whole.second[rows]]
        number, weight = columns.ints(np.arange(rows.start, rows.stop)), columns.ints(whole.weight[rows])
        fractional, cut = columns.floats(whole.fractional[rows]), columns.flags(whole.cut[rows], "false", "true")
        out.write(columns.fill(edge, *ends, number, weight, fractional, cut))
    out.write(b"    </edges>\n  </graph>\n</gexf>\n")


def _json_list(out: BinaryIO, name: str, blocks: Iterator[bytes]) -> None:
    """A JSON list as :mod:`.exports` writes it, one item a line: ``blocks`` of lines ``,\\n {...}``."""
    out.write(f"{json.dumps(name)}: [".encode())
    first = True
    for block in blocks:
        out.write(block[1:] if first else block)  # the first item has no comma before it
        first = False
    out.write(b"\n]")


def write_node_link(whole: Whole, out: BinaryIO) -> None:
    """node-link JSON as :func:`.exports.write_node_link` writes the network."""
    columns, chosen, inc = whole.columns, whole.chosen, whole.inc
    iri, areas = whole.iris(JSON), whole.areas(JSON)
    node = ',\n {{"name": {}, "papers": {}, "areas": {}, "truncated": {}, "community": {}, "id": {}}}'
    link = ',\n {{"weight": {}, "fractional": {}, "lower_bound": {}, "source": {}, "target": {}}}'

    def nodes() -> Iterator[bytes]:
        for rows in blocks(len(chosen)):
            a = chosen[rows]
            names, counts = columns.strings(inc.names, a, JSON), columns.ints(whole.counts[a])
            truncated, community = columns.flags(whole.cut_author[a], "false", "true"), columns.ints(whole.community[a])
            yield columns.fill(node, names, counts, areas[whole.area_combo[a]], truncated, community, iri[a])

    def links() -> Iterator[bytes]:
        for rows in blocks(len(whole.first)):
            values = columns.ints(whole.weight[rows]), columns.floats(whole.fractional[rows])
            cut = columns.flags(whole.cut[rows], "false", "true")
            yield columns.fill(link, *values, cut, iri[whole.first[rows]], iri[whole.second[rows]])

    out.write(b'{"directed": false, "multigraph": false, "graph": {}, ')
    _json_list(out, "nodes", nodes())
    out.write(b", ")
    _json_list(out, "links", links())
    out.write(b"}\n")


def write_vosviewer(whole: Whole, out: BinaryIO, weight: str) -> None:
    """The VOSviewer map as :func:`.exports.write_vosviewer` writes it, without coordinates: items in IRI order,
    links by their ends' ids."""
    columns, inc = whole.columns, whole.inc
    number, degree, total, link_order = whole.vosviewer_figures(weight)
    strengths = {"weight": whole.weight, "fractional": whole.fractional}[weight]
    shown = columns.ints if weight == "weight" else columns.floats
    authors = np.flatnonzero(whole.rank >= 0)
    item = ',\n {{"id": {}, "label": {}, "url": {}, "cluster": {}, "weights": {{"Documents": {}, "Links": {}, '
    item += '"Total link strength": {}}}}}'
    unnamed = np.diff(inc.names.offsets) + len(inc.names.prefix) == 0

    def items() -> Iterator[bytes]:
        for rows in blocks(len(authors)):
            a = authors[rows]
            iri = columns.strings(inc.authors, a, JSON)
            label = np.where(unnamed[a], iri, columns.strings(inc.names, a, JSON))
            if weight == "weight":
                strength = columns.ints(total[a].astype(np.int64))
            else:  # a sum over no links is Python's 0, an int
                strength = np.where(degree[a] == 0, columns.table(["0"]), columns.floats(total[a]))
            figures = columns.ints(whole.counts[a]), columns.ints(degree[a]), strength
            cluster = columns.ints(whole.community[a] + 1)
            yield columns.fill(item, columns.ints(number[a]), label, iri, cluster, *figures)

    def links() -> Iterator[bytes]:
        link = ',\n {{"source_id": {}, "target_id": {}, "strength": {}}}'
        for rows in blocks(len(link_order)):
            at = link_order[rows]
            ends = columns.ints(number[whole.first[at]]), columns.ints(number[whole.second[at]])
            yield columns.fill(link, *ends, shown(strengths[at]))

    out.write(b'{"network": {')
    _json_list(out, "items", items())
    out.write(b", ")
    _json_list(out, "links", links())
    out.write(b"}}\n")
