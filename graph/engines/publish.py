"""Publishing a graph into an external SPARQL engine like a database migration.

A graph that outgrows one machine is served by an engine built for it (Virtuoso, QLever, the Oxigraph
server), with bibgraph as its front end (``serve --store sparql:URL?default-graph-uri=G``). Beside ``G``, a
*pointer graph* names the version graph readers of ``G`` read (``<G> pub:current <V>``). Each publish streams its
source into a fresh version graph ``V`` in batches of N-Triples (SPARQL 1.1 Graph Store Protocol, one request
a batch, so memory stays bounded), checks the engine's count of ``V``, and only then switches the pointer: a
reader sees the old version or the new one, never an empty or partial graph (a ``MOVE`` is neither atomic
nor cheap in Virtuoso: readers saw 289,710 of 446,776 triples during one). The version before stays as
``pub:previous`` (a reader that resolved it a moment ago still finds it) and is dropped by the next publish.
An interrupted publish leaves the pointer untouched; the next one (or ``--clean``) drops what it left.

Published from a dataset, the version graph's content is recorded beside the pointer (``<V> pub:content
"sha256:..."``: the digest of the dataset version's manifest, which holds the checksum of every file, the store's
included, checked before anything is sent): a site given the dataset (``--published``) reads its derived files
only when that identity is the one the engine holds, never on a name alone.
"""

import contextlib
import json
import queue
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from pathlib import Path
from typing import TypeVar

import pyoxigraph as ox

from bibgraph.graph.dataset import directory
from bibgraph.graph.dataset.opener import COMPLETE_MARKER, DUMP_SUFFIXES, is_dump
from bibgraph.graph.engines.client import (
    PASSWORD_ENV,
    Credentials,
    Deadline,
    EngineError,
    Session,
    checked_url,
    escaped,
    whole_number,
)
from bibgraph.graph.rdf.ntriples import iri, literal
from bibgraph.graph.stores.remote import CONTENT, CURRENT, PUBLISH_NS, pointer_graph
from bibgraph.graph.stores.store import OxigraphGraphStore

DEFAULT_BATCH = 100_000  # triples per request: ~15 MB of N-Triples, a few seconds of work for the engine
DEFAULT_TIMEOUT = 6 * 3600.0  # seconds for a whole publish
PREVIOUS, STAGING, DROPPING = PUBLISH_NS + "previous", PUBLISH_NS + "staging", PUBLISH_NS + "dropping"
__all__ = ["PASSWORD_ENV", "PublishError", "Target", "clean", "publish", "resolve_source"]
T = TypeVar("T")


class PublishError(Exception):
    """Publishing stopped; the message says how far it got and what to do."""


@dataclass(frozen=True)
class Target:
    """Where to publish: the Graph Store endpoint, the pointer graph, the query and update endpoints, the login.

    No URL holds credentials (a password in one is refused), so each can be printed. ``bulk``: the Oxigraph server's
    ``/store``, whose loads go through its bulk loader (``no_transaction``): a transaction's write-ahead log is kept
    until the server restarts (5.4 GB for 5.9M triples: a 1M-paper publish would need ~44 GB of disk)."""

    url: str
    graph: str
    sparql: str
    update: str
    credentials: Credentials | None = None
    bulk: bool = False

    @classmethod
    def parse(
        cls,
        url: str,
        graph: str,
        sparql: str | None = None,
        user: str | None = None,
        password: str | None = None,
        update: str | None = None,
        insecure_http: bool = False,
    ) -> "Target":
        """A target from ``url``; the query and update endpoints default to the engine's usual ones beside it
        (Virtuoso: ``/sparql`` and ``/sparql-auth``; the Oxigraph server: ``/query`` and ``/update``)."""
        parts = urllib.parse.urlsplit(url)
        user = user or (urllib.parse.unquote(parts.username) if parts.username and parts.password is None else None)
        credentials = Credentials(user, password or "") if user is not None else None
        checked_url(url, "--to", credentials, insecure_http)
        assert parts.hostname is not None  # checked_url refuses a URL without a host
        netloc = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        netloc += f":{parts.port}" if parts.port else ""
        beside = {"/sparql-graph-crud-auth": ("/sparql", "/sparql-auth"), "/store": ("/query", "/update")}
        query_path, update_path = beside.get(parts.path.rstrip("/"), ("/sparql", "/sparql"))
        sparql = sparql or urllib.parse.urlunsplit((parts.scheme, netloc, query_path, "", ""))
        update = update or urllib.parse.urlunsplit((parts.scheme, netloc, update_path, "", ""))
        checked_url(sparql, "--sparql", credentials, insecure_http)
        checked_url(update, "--update", credentials, insecure_http)
        url = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        return cls(url, graph, sparql, update, credentials, bulk=parts.path.rstrip("/") == "/store")


@dataclass(frozen=True)
class PublishReport:
    sent: int  # triples sent
    batches: int
    remote: int  # triples in the new version graph, counted by the engine
    version: str  # the version graph readers now read
    seconds: float
    dropped: tuple[str, ...] = ()  # graphs removed: an older version, leftovers of interrupted publishes

    def summary(self) -> str:
        rate = self.sent / self.seconds if self.seconds else 0.0
        return (
            f"published {self.sent} triples in {self.batches} batches in {self.seconds:.1f} s ({rate:,.0f} triples/s);"
            f" readers now read <{self.version}> ({self.remote} triples)"
            + (f"; dropped {', '.join(f'<{g}>' for g in self.dropped)}" if self.dropped else "")
        )


def resolve_source(source: Path) -> Path:
    """The dump or store that ``source`` names: itself, the store of a dataset version, or of the version a
    dataset root's ``current`` pointer names."""
    if is_dump(source):
        return source
    if directory.is_dataset(source):
        try:
            source = directory.current_version(source)
        except directory.DatasetError as error:
            raise PublishError(str(error)) from error
    if source.is_dir() and (source / COMPLETE_MARKER).is_file():
        return source
    if source.is_dir() and (source / directory.STORE / COMPLETE_MARKER).is_file():  # a dataset version
        return source / directory.STORE
    raise PublishError(
        f"{source}: not a dump ({', '.join(sorted(DUMP_SUFFIXES))}), a dataset, nor a complete bibgraph store"
    )


def source_triples(source: Path) -> Iterator[ox.Triple]:
    """The triples of ``source`` (see :func:`resolve_source`), streamed."""
    source = resolve_source(source)
    if is_dump(source):
        syntax = DUMP_SUFFIXES[source.suffix.lower()]
        try:
            for quad in ox.parse(path=str(source), format=syntax.oxigraph):
                yield quad.triple
        except SyntaxError as error:
            raise PublishError(f"{source}: cannot read this dump: {error}") from error
        return
    store = OxigraphGraphStore.disk(source, read_only=True)
    for quad in store.store.quads_for_pattern(None, None, None, ox.DefaultGraph()):
        yield quad.triple


def batches(triples: Iterable[ox.Triple], size: int) -> Iterator[bytes]:
    """N-Triples documents of at most ``size`` triples each.

    Blank nodes are refused: their labels are local to one request, so a blank node whose triples
    fell in two batches would become two nodes in the engine (bibgraph's own graphs have none).
    """
    iterator = iter(triples)
    while chunk := list(islice(iterator, size)):
        for triple in chunk:
            if isinstance(triple.subject, ox.BlankNode) or isinstance(triple.object, ox.BlankNode):
                raise PublishError(f"blank node in {triple}: batches cannot keep blank nodes apart; skolemise them")
        body = ox.serialize(chunk, format=ox.RdfFormat.N_TRIPLES)
        assert body is not None  # no output file given: the bytes are returned
        yield body


def prefetched(items: Iterable[T]) -> Generator[T, None, None]:
    """``items`` made in a thread one ahead of the consumer: the next batch is read from the store and written as
    N-Triples while the engine loads this one. At 1M papers each took about 2 CPU-s a batch; one after the other,
    a publish ran at the sum of the two. An error reaches the consumer in the item's place; a consumer that stops
    (the engine refused, Ctrl-C) closes this and the thread stops at its next item."""
    ready: queue.Queue[tuple[bool, object]] = queue.Queue(maxsize=1)
    stopped = threading.Event()

    def put(entry: tuple[bool, object]) -> bool:
        while not stopped.is_set():
            with contextlib.suppress(queue.Full):
                ready.put(entry, timeout=0.1)
                return True
        return False

    def make() -> None:
        try:
            for item in items:
                if not put((True, item)):
                    return
        except BaseException as error:  # told to the consumer, which raises it
            put((False, error))
            return
        put((False, None))

    thread = threading.Thread(target=make, name="bibgraph-publish-prefetch", daemon=True)
    thread.start()
    try:
        while True:
            more, value = ready.get()
            if not more:
                if isinstance(value, BaseException):
                    raise value
                return
            yield value  # type: ignore[misc]  # an item of ``items``
    finally:
        stopped.set()


def _iri(value: str) -> str:
    """``value`` as an IRI in SPARQL text (:func:`~bibgraph.graph.rdf.ntriples.iri`, pyoxigraph's check: the one way
    an IRI enters a query or update text); one that is no IRI is refused."""
    try:
        return iri(value)
    except ValueError as error:
        raise PublishError(f"not an IRI: {value!r}") from error


class Engine:
    """The requests a publish makes: Graph Store loads and drops, counts, the pointer read and switched."""

    def __init__(self, target: Target, session: Session) -> None:
        self.target = target
        self.session = session

    def graph_url(self, graph: str) -> str:
        separator = "&" if "?" in self.target.url else "?"
        return f"{self.target.url}{separator}{urllib.parse.urlencode({'graph': graph})}"

    def load(self, graph: str, body: bytes) -> None:
        headers = {"Content-Type": "application/n-triples"}
        url = self.graph_url(graph) + ("&no_transaction" if self.target.bulk else "")  # a batch sent again is no harm
        self.session.request("POST", url, self.target.url, body, headers)

    def drop(self, graph: str) -> None:
        try:
            self.session.request("DELETE", self.graph_url(graph), self.target.url)
        except EngineError as error:
            if " answered 404" not in str(error):  # no such graph: nothing to drop
                raise

    def select(self, query: str) -> list[dict[str, str]]:
        """The rows of a SELECT (values as text), read strictly: a malformed answer is one clear error."""
        body = urllib.parse.urlencode({"query": query}).encode()
        headers = {"Accept": "application/sparql-results+json", "Content-Type": "application/x-www-form-urlencoded"}
        answer = self.session.request("POST", self.target.sparql, self.target.sparql, body, headers)

        def refuse(constant: str) -> None:
            raise ValueError(f"{constant} is not JSON")

        try:
            bindings = json.loads(answer, parse_constant=refuse)["results"]["bindings"]
            return [{name: term["value"] for name, term in row.items()} for row in bindings]
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise EngineError(f"{self.target.sparql} gave no SPARQL JSON results: {escaped(str(error))}") from error

    def count(self, graph: str) -> int:
        rows = self.select(f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH {_iri(graph)} {{ ?s ?p ?o }} }}")
        return whole_number(rows[0].get("n") if rows else "0", f"count of <{graph}>")

    def pointers(self) -> dict[str, list[str]]:
        """The pointer graph: for each of current, previous, staging, dropping, the version graphs it names."""
        g, where = _iri(self.target.graph), _iri(pointer_graph(self.target.graph))
        found: dict[str, list[str]] = {CURRENT: [], PREVIOUS: [], STAGING: [], DROPPING: []}
        for row in self.select(f"SELECT ?p ?v WHERE {{ GRAPH {where} {{ {g} ?p ?v }} }}"):
            if row.get("p") in found and "v" in row:
                found[row["p"]].append(row["v"])
        return found

    def update(self, text: str) -> None:
        body = urllib.parse.urlencode({"update": text}).encode()
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        self.session.request("POST", self.target.update, self.target.update, body, headers)

    def record(self, version: str, content: str) -> None:
        """``<version> pub:content "content"`` in the pointer graph (what the version was loaded from)."""
        where = _iri(pointer_graph(self.target.graph))
        self.update(f"INSERT DATA {{ GRAPH {where} {{ {_iri(version)} {_iri(CONTENT)} {literal(content)} }} }}")

    def forget(self, version: str) -> None:
        """The pointer graph's statements about a version graph that was dropped."""
        where, subject = _iri(pointer_graph(self.target.graph)), _iri(version)
        pattern = f"GRAPH {where} {{ {subject} ?p ?o }}"
        self.update(f"DELETE {{ {pattern} }} WHERE {{ {pattern} }}")

    def mark(self, insert: Iterable[tuple[str, str]] = (), delete: Iterable[tuple[str, str]] = ()) -> None:
        """Pointer triples ``<G> predicate <version>`` inserted and deleted, one update request."""
        g, where = _iri(self.target.graph), _iri(pointer_graph(self.target.graph))
        parts = [f"DELETE DATA {{ GRAPH {where} {{ {g} {_iri(p)} {_iri(v)} }} }}" for p, v in delete]
        parts += [f"INSERT DATA {{ GRAPH {where} {{ {g} {_iri(p)} {_iri(v)} }} }}" for p, v in insert]
        if parts:
            self.update(" ;\n".join(parts))


def version_graph(graph: str, label: str) -> str:
    """A new version graph's IRI beside ``graph``: sortable by time (readers take the latest ``current``)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    joint = "" if graph.endswith(("/", "#", ":")) else "/"
    return f"{graph}{joint}version-{stamp}" + (f"-{label}" if label else "")


def dataset_content(store: Path) -> str | None:
    """The content identity of the dataset version whose store is ``store`` (None for a store outside a dataset),
    once every file of the store is checked against the manifest that identity is the digest of (RocksDB's
    diagnostic logs aside): what is sent is what the identity names."""
    version = store.parent
    if store.name != directory.STORE or not (version / directory.MANIFEST).is_file():
        return None
    try:
        manifest, content = directory.identified_manifest(version)
        recorded: dict[str, str] = manifest.get("checksums", {})
        listed = {name for name in recorded if name.startswith(f"{directory.STORE}/")}
        present = {
            path.relative_to(version).as_posix()
            for path in store.rglob("*")
            if path.is_file() and not path.name.startswith("LOG")
        }
        if present - listed:
            raise directory.DatasetDamaged(f"{version / sorted(present - listed)[0]}: not in the manifest: refused")
        for name in sorted(listed):
            directory.check_file(version, name, recorded)
    except directory.DatasetError as error:
        raise PublishError(f"{error}; nothing was sent") from error
    return content


def _drop_marked(engine: Engine, marked: dict[str, list[str]], progress: Callable[[str], None]) -> list[str]:
    """Drop the leftovers of interrupted publishes (staging) and graphs left to drop; their marks after them."""
    dropped = []
    for predicate in (STAGING, DROPPING):
        for graph in marked[predicate]:
            if graph in marked[CURRENT]:
                continue  # never the graph readers read
            progress(f"dropping <{graph}> (left by an earlier publish)")
            engine.drop(graph)
            engine.forget(graph)
            engine.mark(delete=[(predicate, graph)])
            dropped.append(graph)
    return dropped


def _engine(target: Target, timeout: float) -> Engine:
    """The engine with the login negotiated by probes without a body (the Graph Store and the update endpoint)."""
    session = Session(target.credentials, Deadline(timeout))
    engine = Engine(target, session)
    for url in (target.url, target.update):
        session.login(url)
    return engine


def publish(
    source: Path,
    target: Target,
    batch: int = DEFAULT_BATCH,
    progress: Callable[[str], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
) -> PublishReport:
    """Load ``source`` into a new version graph, check the engine's count, switch readers to it, drop the old.

    Any failure (the engine's refusal, the ``timeout`` for the whole run, Ctrl-C) before the switch leaves the
    pointer as it was: the :class:`PublishError` names the staging graph and how to go on."""
    if batch < 1:
        raise ValueError("the batch size must be at least 1")
    say = progress or (lambda line: None)
    path = resolve_source(source)  # a wrong path is refused before the engine is touched
    label = path.parent.name if path.name == directory.STORE and path.parent.name.startswith("v-") else ""
    started = time.monotonic()
    content = dataset_content(path)
    staging = version_graph(target.graph, label)
    try:
        engine = _engine(target, timeout)
        dropped = _drop_marked(engine, engine.pointers(), say)
        engine.mark(insert=[(STAGING, staging)])
        if content is not None:
            engine.record(staging, content)
    except EngineError as error:
        raise PublishError(f"{error}; nothing was loaded, readers still read what they read") from error
    sent = number = loaded = 0
    try:
        with contextlib.closing(prefetched(batches(source_triples(path), batch))) as bodies:
            for number, body in enumerate(bodies, start=1):
                engine.load(staging, body)
                sent, loaded = sent + body.count(b"\n"), number
                say(f"batch {number}: {sent} triples sent ({sent / (time.monotonic() - started):,.0f} triples/s)")
        remote = engine.count(staging)
        duplicates_possible = is_dump(path)  # a store holds each triple once; a dump may repeat lines
        if remote > sent or (remote < sent and not duplicates_possible) or (sent and not remote):
            raise EngineError(f"{target.sparql} counts {remote} triples in <{staging}> after {sent} were sent")
    except (EngineError, PublishError, KeyboardInterrupt) as error:
        stopped = "interrupted" if isinstance(error, KeyboardInterrupt) else str(error)
        raise PublishError(
            f"{stopped} ({loaded} batches, {sent} triples, loaded). Readers still read the graph they read: the"
            f" pointer of <{target.graph}> is untouched. The partial load is in <{staging}>: publish again (it drops"
            " that graph first, then loads afresh), or run `bibgraph publish --clean` with the same --to and --graph"
        ) from error
    return _switch(engine, staging, sent, number, remote, started, dropped, say)


def _switch(
    engine: Engine,
    staging: str,
    sent: int,
    number: int,
    remote: int,
    started: float,
    dropped: list[str],
    say: Callable[[str], None],
) -> PublishReport:
    """Point readers at ``staging``, then drop the version before the one replaced.

    The new ``current`` is inserted before the old one is deleted: a reader finds one or two (and takes the
    latest), never none. The graph replaced stays as ``previous`` until the next publish."""
    try:
        marked = engine.pointers()
        engine.mark(insert=[(CURRENT, staging)])
        engine.mark(
            insert=[(PREVIOUS, graph) for graph in marked[CURRENT]] + [(DROPPING, graph) for graph in marked[PREVIOUS]],
            delete=[(CURRENT, graph) for graph in marked[CURRENT]]
            + [(PREVIOUS, graph) for graph in marked[PREVIOUS]]
            + [(STAGING, staging)],
        )
        say(f"readers switched to <{staging}>")
        dropped += _drop_marked(engine, engine.pointers(), say)
        if not marked[CURRENT] and engine.count(engine.target.graph):  # what readers read before the first version
            say(f"dropping <{engine.target.graph}> (loaded before versions were published; readers left it)")
            engine.drop(engine.target.graph)
            dropped.append(engine.target.graph)
    except EngineError as error:
        raise PublishError(
            f"{error} while switching readers to <{staging}> (all {sent} triples are loaded): publish again, or"
            " run `bibgraph publish --clean` to finish"
        ) from error
    return PublishReport(sent, number, remote, staging, time.monotonic() - started, tuple(dropped))


def clean(target: Target, timeout: float = DEFAULT_TIMEOUT, progress: Callable[[str], None] | None = None) -> list[str]:
    """Drop what interrupted publishes left (staging graphs, graphs marked to drop); readers are never affected."""
    try:
        engine = _engine(target, timeout)
        return _drop_marked(engine, engine.pointers(), progress or (lambda line: None))
    except EngineError as error:
        raise PublishError(str(error)) from error
