"""Where the graph lives: one small interface, several backends.

``memory`` (default) and ``disk`` are Oxigraph stores, wrapped by oxrdflib so that the same data
is also an rdflib ``Graph``; ``sparql:URL`` fronts a remote SPARQL 1.1 server (see
:mod:`bibgraph.graph.stores.remote`). Everything else in bibgraph (pages, networks, downloads, the
endpoint) reads the graph only through :class:`GraphStore`, so all backends agree.
"""

import io
import os
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, cast

import pyoxigraph as ox
from rdflib import Graph
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID

from bibgraph.graph.rdf.formats import RdfSyntax, rdf_syntax, result_syntax
from bibgraph.graph.rdf.vocab import PREFIXES, prefixed_graph

Value = str | int | float | bool | None
Row = dict[str, Value]
_XSD = "http://www.w3.org/2001/XMLSchema#"
_INTEGER_TYPES = {f"{_XSD}{t}" for t in ("integer", "int", "long", "short", "nonNegativeInteger", "positiveInteger")}
_FLOAT_TYPES = {f"{_XSD}{t}" for t in ("decimal", "double", "float")}


@dataclass(frozen=True)
class Answer:
    """A query's answer already serialised: the endpoint streams these bytes as they are."""

    form: str  # "select", "ask" or "graph" (CONSTRUCT/DESCRIBE)
    body: bytes
    media_type: str
    spooled: BinaryIO | None = None  # a large answer: an (unlinked) temporary file holds it instead of ``body``

    @property
    def size(self) -> int:
        return os.fstat(self.spooled.fileno()).st_size if self.spooled else len(self.body)

    def open(self) -> BinaryIO:
        """The answer as a file, read once."""
        return self.spooled or io.BytesIO(self.body)

    def read(self) -> bytes:
        with self.open() as answer:
            return answer.read()


class QueryError(ValueError):
    """The query is malformed or cannot run; the message is the parser's, fit to show a user."""


def python_value(term: ox.NamedNode | ox.BlankNode | ox.Literal | None) -> Value:
    """An Oxigraph term as the Python value pages and networks want."""
    if term is None:
        return None
    if isinstance(term, ox.Literal):
        datatype = term.datatype.value
        if datatype in _INTEGER_TYPES:
            return int(term.value)
        if datatype in _FLOAT_TYPES:
            return float(term.value)
        if datatype == f"{_XSD}boolean":
            return term.value in ("true", "1")
    return term.value


def rows(solutions: ox.QuerySolutions) -> Iterator[Row]:
    """Solutions as rows, values converted by :func:`python_value` (the one place terms become values)."""
    names = [variable.value for variable in solutions.variables]
    for solution in solutions:
        yield {name: python_value(solution[name]) for name in names}


class GraphStore(ABC):
    """What bibgraph reads from a store: SPARQL in, rows or serialised answers out."""

    kind: str

    def select(self, query: str) -> list[Row]:
        """Rows of a SELECT query, values converted by :func:`python_value`."""
        return list(self.iter_select(query))

    def iter_select(self, query: str) -> Iterator[Row]:
        """The same rows one at a time, read from the serialised answer: a large answer is never held
        whole as Python objects (which would also leave the heap fragmented for good)."""
        answer = self.answer(query, "tsv", "nt")
        if answer.form != "select":
            raise QueryError("expected a SELECT query")
        with answer.open() as body:
            solutions = ox.parse_query_results(body, format=ox.QueryResultsFormat.TSV)
            assert isinstance(solutions, ox.QuerySolutions)  # a TSV document holds solutions
            yield from rows(solutions)

    @abstractmethod
    def answer(self, query: str, results: str, graphs: str) -> Answer:
        """Run any read query; its answer in the syntax named ``results`` (SELECT/ASK) or ``graphs``."""

    @abstractmethod
    def construct(self, query: str) -> Graph:
        """A CONSTRUCT or DESCRIBE answer as an rdflib graph (for pages and RDF alternates)."""

    @abstractmethod
    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        """The whole graph; the same data loaded the same way gives the same bytes."""

    def triple_count(self) -> int:
        found = self.select("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")[0]["n"]
        return int(found or 0)

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release files or connections; a no-op for the in-memory store."""


class EngineStore(GraphStore):
    """A store that runs queries itself, in this process, writing answers to a stream (the pool's worker
    writes them to its spool)."""

    @abstractmethod
    def write_answer(self, query: str, results: str, graphs: str, out: BinaryIO) -> tuple[str, str]:
        """Run any read query, write it to ``out`` in the syntax named ``results`` (SELECT/ASK) or
        ``graphs``, and return the query form and the media type written."""

    def answer(self, query: str, results: str, graphs: str) -> Answer:
        out = io.BytesIO()
        form, media_type = self.write_answer(query, results, graphs, out)
        return Answer(form, out.getvalue(), media_type)


class OxigraphGraphStore(EngineStore):
    """An embedded Oxigraph store, in memory or on disk, also usable as an rdflib ``Graph``."""

    def __init__(self, store: ox.Store, kind: str) -> None:
        self.store = store
        self.kind = kind

    @classmethod
    def memory(cls) -> "OxigraphGraphStore":
        return cls(ox.Store(), "memory")

    @classmethod
    def disk(cls, path: Path, read_only: bool = False) -> "OxigraphGraphStore":
        store = ox.Store.read_only(str(path)) if read_only else ox.Store(str(path))
        return cls(store, "disk")

    def rdflib_graph(self) -> Graph:
        """The same data through rdflib's API (oxrdflib), for code and tests written against rdflib."""
        from oxrdflib import OxigraphStore  # here: it loads rdflib's SPARQL engine (~0.3 s), which serving never uses

        return prefixed_graph(store=OxigraphStore(store=self.store), identifier=DATASET_DEFAULT_GRAPH_ID)

    def load_ntriples(self, lines: Iterable[str], batch_lines: int = 20_000) -> None:
        """Load N-Triples text in batches, parsed in Rust.

        Small batches keep the peak low (at 10k records: 247 MB with 20k-line batches, 364 MB
        with 200k), and the single-threaded ``load`` keeps the store's order, hence the dump's
        bytes, the same run after run.
        """
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= batch_lines:
                self._load("".join(batch))
                batch.clear()
        if batch:
            self._load("".join(batch))

    def _load(self, text: str) -> None:
        self.store.load(text.encode("utf-8"), format=ox.RdfFormat.N_TRIPLES, to_graph=ox.DefaultGraph())

    def _query(self, query: str) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        try:
            return self.store.query(query)
        except SyntaxError as error:
            raise QueryError(str(error)) from error
        except RuntimeError as error:  # the engine refused to prepare it (e.g. an unknown function): the query's fault
            raise QueryError(f"the query cannot run: {error}") from error

    def iter_select(self, query: str) -> Iterator[Row]:
        solutions = self._query(query)
        if not isinstance(solutions, ox.QuerySolutions):
            raise QueryError("expected a SELECT query")
        yield from rows(solutions)

    def write_answer(self, query: str, results: str, graphs: str, out: BinaryIO) -> tuple[str, str]:
        result = self._query(query)
        if isinstance(result, ox.QueryTriples):
            graph_syntax = rdf_syntax(graphs)
            target = cast(BinaryIO, XmlCarriageReturns(out)) if graph_syntax.oxigraph == ox.RdfFormat.RDF_XML else out
            result.serialize(output=target, format=graph_syntax.oxigraph)
            return "graph", graph_syntax.media_type
        form = "ask" if isinstance(result, ox.QueryBoolean) else "select"
        result_format = result_syntax(results)
        result.serialize(output=out, format=result_format.oxigraph)
        return form, result_format.media_type

    def construct(self, query: str) -> Graph:
        result = self._query(query)
        if not isinstance(result, ox.QueryTriples):
            raise QueryError("expected a CONSTRUCT or DESCRIBE query")
        graph = prefixed_graph()
        graph.parse(data=result.serialize(format=ox.RdfFormat.N_TRIPLES), format="nt")
        return graph

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        """In store order, which depends only on the data and the order it was loaded in.

        The builder loads in a canonical order, so the same input gives the same bytes; sorting
        here instead (SPARQL ``ORDER BY`` or in Python) costs 5-8x the dump itself.
        """
        prefixes = None if syntax.name == "nt" else PREFIXES
        target = cast(BinaryIO, XmlCarriageReturns(out)) if syntax.oxigraph == ox.RdfFormat.RDF_XML else out
        self.store.dump(target, format=syntax.oxigraph, from_graph=ox.DefaultGraph(), prefixes=prefixes)

    def triple_count(self) -> int:
        return len(self.store)

    def close(self) -> None:
        if self.kind == "disk":
            self.store.flush()

    def compact(self) -> None:
        """Compact a disk store's tables into its last level, once a build has filled it: the bulk loads left
        about 20 level-0 files a column family at a million papers, which the first write to the store (an add)
        sent to compaction, ~550 MB of new table files and ~7 CPU-s whatever it added."""
        if self.kind == "disk":
            self.store.optimize()


class XmlCarriageReturns:
    """A writer (the engine only calls ``write`` and ``flush``, hence the casts to BinaryIO).

    Oxigraph's RDF/XML writer leaves a carriage return in a literal raw, and XML parsers read a
    raw one as a line feed: this writes it as ``&#13;``. Oxigraph ends its own lines with ``\n``
    only, so every ``\r`` it writes is literal text."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out

    def write(self, data: bytes) -> int:
        self.out.write(bytes(data).replace(b"\r", b"&#13;"))
        return len(data)

    def flush(self) -> None:
        self.out.flush()
