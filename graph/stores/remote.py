"""A remote SPARQL 1.1 server (Virtuoso, QLever, GraphDB, Fuseki...) as a :class:`GraphStore`.

bibgraph then stays the front end (pages, networks, the guarded endpoint) of a store that has
outgrown one machine. Queries are sent with the SPARQL 1.1 Protocol (POST, form-encoded).

A ``default-graph-uri`` ``G`` that ``bibgraph publish`` wrote is read through its pointer (``<G> pub:current
<V>`` in the graph :func:`pointer_graph` names): queries go to the version graph ``V``, looked up again every
:data:`POINTER_TTL` seconds, so a publish switches readers between two whole versions.
"""

import logging
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar, cast

import pyoxigraph as ox
from rdflib import Graph

from bibgraph.graph.rdf.formats import RdfSyntax, rdf_syntax, result_syntax
from bibgraph.graph.rdf.ntriples import iri, is_iri
from bibgraph.graph.rdf.vocab import PREFIXES, prefixed_graph
from bibgraph.graph.sparql.guard import check_query
from bibgraph.graph.stores.atomic import write_atomically
from bibgraph.graph.stores.store import EngineStore, QueryError, Row, XmlCarriageReturns, rows

log = logging.getLogger("bibgraph.remote")
T = TypeVar("T")
# Virtuoso writes SPARQL XML results several times faster than JSON (measured at 10k papers on
# 4,000 rows of two IRIs: 0.27 s against 1.94 s; never slower for literals): solutions are asked
# for in XML, and in JSON again only when the XML cannot be read (XML 1.0 cannot carry U+0000,
# which bibgraph's own graphs never hold but an engine's other data may).
XML_RESULTS = "application/sparql-results+xml"
JSON_RESULTS = "application/sparql-results+json"
PUBLISH_NS = "https://w3id.org/bibgraph/publish#"
CURRENT = PUBLISH_NS + "current"  # <G> pub:current <V> in G's pointer graph: the version graph readers of G read
# <V> pub:content "sha256:..." in G's pointer graph: the identity of the dataset version V was loaded from (the digest
# of its manifest, which holds the checksum of each of its files); a site reads that dataset's files only if it is it
CONTENT = PUBLISH_NS + "content"
# <G> pub:current pub:default-graph: readers of G read the engine's default graph itself, a dataset's store served
# in place (``oxigraph serve-read-only`` on a copy of it, no load: at 1M papers a load into a version graph took 34
# minutes and 16 GB); its pointer graph is a named graph of that store, so the default graph holds the data alone
IN_PLACE = PUBLISH_NS + "default-graph"
POINTER_TTL = 2.0  # seconds a pointer lookup is trusted (a publish keeps the version before for longer)
# Seconds a bulk read's query (a dump's, a streamed read's: the incidence, an index's texts) may stay silent: Virtuoso
# sends an answer once it has made all of it (over 60 s for a dump's rdf:type at 100k papers on a loaded machine: the
# dump failed; an incidence query too: the maps answered 503); the caller's deadline (NETWORK_TIMEOUT) bounds it
DUMP_SILENCE = 3600.0


def pointer_graph(graph: str) -> str:
    """The graph where ``bibgraph publish`` says which version of ``graph`` readers read (beside it, never in it:
    a reader of ``graph`` before any version exists must not see the pointer's own triples)."""
    return graph + ("" if graph.endswith(("/", "#", ":")) else "/") + "publish-pointer"


def _check_syntax(query: str) -> None:
    """Parse with Oxigraph first: clients get the same SPARQL 1.1 errors, with positions, on every backend.

    Preparing a query on an empty store parses it; SELECT and CONSTRUCT are only evaluated when
    iterated, and ASK over no data ends at once.
    """
    try:
        ox.Store().query(query)
    except SyntaxError as error:
        raise QueryError(str(error)) from error
    except RuntimeError as error:  # e.g. an unknown function: refused here as on the embedded stores
        raise QueryError(f"the query cannot run: {error}") from error


def _boolean(value: bool) -> ox.QueryBoolean:
    document = b'{"head":{},"boolean":' + (b"true" if value else b"false") + b"}"
    parsed = ox.parse_query_results(document, format=ox.QueryResultsFormat.JSON)
    assert isinstance(parsed, ox.QueryBoolean)  # the document holds a boolean
    return parsed


class RemoteGraphStore(EngineStore):
    """Sends every query to ``endpoint``; read-only from bibgraph's side.

    ``endpoint`` may carry protocol parameters, as in ``http://host/sparql?default-graph-uri=G``
    (Virtuoso otherwise queries the union of all its graphs, system graphs included).
    """

    kind = "sparql"

    def __init__(self, endpoint: str, timeout: float = 60.0) -> None:
        if not endpoint.startswith(("http://", "https://")):
            raise ValueError(f"remote store needs an http(s) SPARQL endpoint URL, not {endpoint!r}")
        url = urllib.parse.urlsplit(endpoint)
        self.endpoint = urllib.parse.urlunsplit(url._replace(query=""))
        # Protocol parameters in the URL (e.g. ``default-graph-uri``) go with every query.
        self.parameters = urllib.parse.parse_qsl(url.query)
        self.timeout = timeout
        # when resolved, the parameters, the version graph (None: the graph itself) and that version's content
        self._resolved: tuple[float, list[tuple[str, str]], str | None, str | None] | None = None

    def version(self) -> str | None:
        """The version graph a publish's pointer names, which queries read now (looked up again every
        :data:`POINTER_TTL` seconds); None when they read the graph itself (no version published) or no one graph."""
        return self.published()[0]

    def published(self) -> tuple[str | None, str | None]:
        """:meth:`version` and, from the same lookup, the content identity ``publish`` recorded for it (the
        dataset version's manifest digest: :func:`~bibgraph.graph.dataset.directory.identified_manifest`); None when the
        version was loaded from a dump or a store outside a dataset, or by an earlier bibgraph."""
        self._parameters()
        return (self._resolved[2], self._resolved[3]) if self._resolved is not None else (None, None)

    def _parameters(self) -> list[tuple[str, str]]:
        """The protocol parameters, a publish's pointer graph replaced by the version it names (if any)."""
        graphs = [value for name, value in self.parameters if name == "default-graph-uri"]
        if len(graphs) != 1:
            return self.parameters
        now = time.monotonic()
        if self._resolved is None or now - self._resolved[0] > POINTER_TTL:
            pointer = iri(graphs[0]) if is_iri(graphs[0]) else None
            others = [(name, value) for name, value in self.parameters if name != "default-graph-uri"]
            contents: dict[str, set[str]] = {}  # each version graph the pointer names: the contents recorded for it
            if pointer is not None:
                where, current, recorded_as = iri(pointer_graph(graphs[0])), iri(CURRENT), iri(CONTENT)
                pattern = f"{pointer} {current} ?v OPTIONAL {{ ?v {recorded_as} ?c }}"
                query = f"SELECT ?v ?c WHERE {{ GRAPH {where} {{ {pattern} }} }}"
                with self._request(query, XML_RESULTS, others) as response:
                    solutions = ox.parse_query_results(response.read(), format=ox.QueryResultsFormat.XML)
                assert isinstance(solutions, ox.QuerySolutions)  # a SELECT's answer
                for row in solutions:
                    if isinstance(row["v"], ox.NamedNode):
                        content = row["c"]
                        found = contents.setdefault(row["v"].value, set())
                        found |= {content.value} if isinstance(content, ox.Literal) else set()
            # Two while a publish switches (the new one inserted first): the latest, as version names sort by time.
            # None: the graph itself (loaded another way, or an earlier bibgraph; the first publish still loading).
            version = max(contents) if contents else None
            recorded = contents.get(version, set()) if version else set()
            content = next(iter(recorded)) if len(recorded) == 1 else None  # two: neither is trusted
            graph = [] if version == IN_PLACE else [("default-graph-uri", version or graphs[0])]
            self._resolved = (now, [*graph, *others], version, content)
        return self._resolved[1]

    def _request(
        self, query: str, accept: str, parameters: list[tuple[str, str]] | None = None, timeout: float | None = None
    ) -> BinaryIO:
        """The engine's open answer (read it, then close it); a 4xx is the client's :class:`QueryError`. ``timeout``:
        seconds the engine may stay silent (default: the store's)."""
        parameters = self._parameters() if parameters is None else parameters
        data = urllib.parse.urlencode([("query", query), *parameters]).encode()
        request = urllib.request.Request(
            self.endpoint,
            data=data,
            headers={"Accept": accept, "Content-Type": "application/x-www-form-urlencoded"},
        )
        try:
            return cast(BinaryIO, urllib.request.urlopen(request, timeout=timeout or self.timeout))
        except urllib.error.HTTPError as error:
            message = error.read().decode("utf-8", "replace").strip()
            if 400 <= error.code < 500:
                raise QueryError(message or str(error)) from error
            # the engine's text (its codes, the query as it rewrote it) is for the operator's log, not the client
            log.error("remote SPARQL store answered %d: %s", error.code, message[:2000])
            raise OSError(f"the remote SPARQL store answered {error.code}") from error

    def _post(self, query: str, accept: str, silence: float | None = None) -> tuple[bytes, str]:
        with self._request(query, accept, timeout=silence) as response:
            return response.read(), response.headers.get_content_type()  # type: ignore[attr-defined]

    def _solutions(
        self, query: str, read: Callable[[ox.QuerySolutions | ox.QueryBoolean], T], silence: float | None = None
    ) -> T:
        """``read`` of the engine's answer to a SELECT or ASK query: XML results, JSON if the XML is unreadable
        (the parser stops at the bad character while ``read`` consumes the solutions, so ``read`` starts again).
        ``silence``: seconds the engine may stay silent (default: the store's timeout)."""
        body, _ = self._post(query, XML_RESULTS, silence)
        try:
            return read(ox.parse_query_results(body, format=ox.QueryResultsFormat.XML))
        except SyntaxError:
            body, _ = self._post(query, JSON_RESULTS, silence)
            return read(ox.parse_query_results(body, format=ox.QueryResultsFormat.JSON))

    def iter_select(self, query: str) -> Iterator[Row]:
        """A streamed read (the incidence, an index's texts) is a bulk read, as a dump is: the engine may stay
        silent up to :data:`DUMP_SILENCE` (the caller's deadline bounds it), not the store's timeout for a page's
        query. The rows are kept as TSV bytes and made one at a time, never held whole as Python objects."""

        def read(solutions: ox.QuerySolutions | ox.QueryBoolean) -> bytes:
            if not isinstance(solutions, ox.QuerySolutions):
                raise QueryError("expected a SELECT query")
            written = solutions.serialize(format=ox.QueryResultsFormat.TSV)
            assert written is not None  # no output file given: the bytes are returned
            return written

        body = self._solutions(query, read, DUMP_SILENCE)
        solutions = ox.parse_query_results(body, format=ox.QueryResultsFormat.TSV)
        assert isinstance(solutions, ox.QuerySolutions)  # a TSV document holds solutions
        yield from rows(solutions)

    def select(self, query: str) -> list[Row]:
        def read(solutions: ox.QuerySolutions | ox.QueryBoolean) -> list[Row]:
            if not isinstance(solutions, ox.QuerySolutions):
                raise QueryError("expected a SELECT query")
            return list(rows(solutions))

        return self._solutions(query, read)

    def write_answer(self, query: str, results: str, graphs: str, out: BinaryIO) -> tuple[str, str]:
        """Fetch XML (or JSON) results or N-Triples, re-serialised here by pyoxigraph in the syntax asked for.

        Servers differ in their CSV, TSV and Turtle (Virtuoso's CSV quotes everything and ends
        lines with LF); re-serialising gives clients the same bytes whatever the backend.
        """
        checked = check_query(query)
        _check_syntax(checked.text)
        if checked.returns_graph:
            syntax = rdf_syntax(graphs)
            body, _ = self._post(query, "application/n-triples")
            triples = ox.parse(body, format=ox.RdfFormat.N_TRIPLES)
            prefixes = None if syntax.name == "nt" else PREFIXES
            ox.serialize(triples, output=out, format=syntax.oxigraph, prefixes=prefixes)
            return "graph", syntax.media_type
        result_format = result_syntax(results)

        def read(parsed: ox.QuerySolutions | ox.QueryBoolean) -> tuple[str, bytes]:
            if checked.form == "ask" and isinstance(parsed, ox.QuerySolutions):
                parsed = _boolean(any(True for _ in parsed))  # Virtuoso answers ASK as a one-column SELECT
            written = parsed.serialize(format=result_format.oxigraph)
            assert written is not None  # no output file given: the bytes are returned
            return "ask" if isinstance(parsed, ox.QueryBoolean) else "select", written

        form, written = self._solutions(query, read)
        out.write(written)  # whole, once read: nothing half-written when the XML turns out unreadable
        return form, result_format.media_type

    def construct(self, query: str) -> Graph:
        body, media_type = self._post(query, "application/n-triples, text/turtle;q=0.9")
        graph = prefixed_graph()
        graph.parse(data=body, format="nt" if media_type == "application/n-triples" else "turtle")
        return graph

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        """Streamed: one CONSTRUCT a predicate, each answer parsed as it arrives and written at once into one
        document, so this process holds a read buffer, never the graph (the rdflib graph of a CONSTRUCT of
        everything it built before held the whole dump in memory). Paging by ``ORDER BY ... OFFSET`` is not an
        option: Virtuoso refuses to sort past ``MaxSortedTopRows`` (10,000 by default). Each predicate's
        triples are counted first and checked after: an engine that cuts answers short (Virtuoso's
        ``ResultSetMaxRows``) fails the dump, which is written atomically, so no partial file is kept."""
        parameters = self._parameters()  # one version for every query, even if a publish switches meanwhile
        counts = "SELECT ?p (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?p ORDER BY ?p"
        with self._request(counts, XML_RESULTS, parameters, DUMP_SILENCE) as response:
            solutions = ox.parse_query_results(response.read(), format=ox.QueryResultsFormat.XML)
        assert isinstance(solutions, ox.QuerySolutions)  # a SELECT's answer
        predicates = [(row["p"], str(row["n"].value)) for row in solutions]
        if not all(count.isascii() and count.isdigit() for _, count in predicates):
            raise OSError("the remote store counted a predicate's triples with something other than digits")

        def triples() -> Iterator[ox.Triple]:
            for predicate, count in predicates:
                expected = int(count)
                if not isinstance(predicate, ox.NamedNode):
                    raise OSError(f"the remote store named a predicate that is not an IRI: {predicate}")
                query = f"CONSTRUCT {{ ?s {iri(predicate.value)} ?o }} WHERE {{ ?s {iri(predicate.value)} ?o }}"
                written = 0
                with self._request(query, "application/n-triples", parameters, DUMP_SILENCE) as response:
                    for quad in ox.parse(response, format=ox.RdfFormat.N_TRIPLES):
                        written += 1
                        yield quad.triple
                if written != expected:
                    raise OSError(
                        f"the remote store gave {written} of the {expected} triples of {predicate} for a dump:"
                        " raise its answer row limit (Virtuoso: ResultSetMaxRows)"
                    )

        _serialize(triples(), out, syntax)


def _serialize(triples: Iterator[ox.Triple], out: BinaryIO, syntax: RdfSyntax) -> None:
    prefixes = None if syntax.name == "nt" else PREFIXES
    target = cast(BinaryIO, XmlCarriageReturns(out)) if syntax.oxigraph == ox.RdfFormat.RDF_XML else out
    ox.serialize(triples, output=target, format=syntax.oxigraph, prefixes=prefixes)


def from_ntriples(read: Callable[[], BinaryIO], path: Path, syntax: str) -> int:
    """Write at ``path`` (atomically) the dump in ``syntax`` of the N-Triples dump ``read`` opens (an engine's,
    :meth:`RemoteGraphStore.dump`, or the published dataset's), streamed: the engine is read once for every syntax
    (at 100k papers each of its dumps took 250-300 s, a reserialisation takes seconds)."""

    def write(out: BinaryIO) -> None:
        with read() as source:
            triples = (quad.triple for quad in ox.parse(source, format=ox.RdfFormat.N_TRIPLES))
            _serialize(triples, out, rdf_syntax(syntax))

    return write_atomically(path, write)


def write_engine_dump(endpoint: str, path: Path, syntax: str) -> int:
    """Write at ``path`` (atomically) the dump in ``syntax`` of what the engine at ``endpoint`` holds
    (:meth:`RemoteGraphStore.dump`), in the process that calls it (a download's own child)."""
    store = RemoteGraphStore(endpoint)
    return write_atomically(path, lambda out: store.dump(out, rdf_syntax(syntax)))


def pinned_endpoint(url: str, version: str | None) -> str:
    """The endpoint ``url`` reading the version graph ``version`` itself (not the pointer that names it now), so a
    publish during a dump does not mix two versions; :data:`IN_PLACE`: the engine's default graph."""
    if version is None:
        return url
    parts = urllib.parse.urlsplit(url)
    kept = [(name, value) for name, value in urllib.parse.parse_qsl(parts.query) if name != "default-graph-uri"]
    query = urllib.parse.urlencode(([] if version == IN_PLACE else [("default-graph-uri", version)]) + kept)
    return urllib.parse.urlunsplit(parts._replace(query=query))


def read_version(store: object) -> str | None:
    """The version graph ``store`` reads (:meth:`RemoteGraphStore.version`; None for any other store): run in the
    query worker, which holds the store, by the web process that keys what it derived by it."""
    return store.version() if isinstance(store, RemoteGraphStore) else None


def read_published(store: object) -> tuple[str | None, str | None]:
    """The version graph ``store`` reads and the content recorded for it (:meth:`RemoteGraphStore.published`)."""
    return store.published() if isinstance(store, RemoteGraphStore) else (None, None)
