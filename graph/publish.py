"""Publishing a graph into an external SPARQL engine through the SPARQL 1.1 Graph Store HTTP Protocol.

A graph that outgrows one machine is served by an engine built for it (Virtuoso, QLever, ...),
with bibgraph as its front end (``serve --store sparql:URL``). This module streams a dump or an
on-disk store to the engine in batches of N-Triples, one HTTP request per batch (so each batch is
applied whole or not at all, and memory stays bounded whatever the size), then checks the
engine's triple count against the number of triples sent.
"""

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import pyoxigraph as ox

from .dataset import _DUMP_SUFFIXES, COMPLETE_MARKER, is_dump

DEFAULT_BATCH = 100_000  # triples per request: ~15 MB of N-Triples, a few seconds of work for the engine
PASSWORD_ENV = "BIBGRAPH_PUBLISH_PASSWORD"


class PublishError(Exception):
    """Publishing stopped; the message says how far it got and what to do."""


@dataclass(frozen=True)
class Target:
    """Where to publish: a Graph Store Protocol endpoint, the graph IRI, and how to log in.

    ``url`` never holds credentials, so that it can be printed; ``sparql`` is the query endpoint
    used to count what arrived.
    """

    url: str
    graph: str
    sparql: str
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(
        cls, url: str, graph: str, sparql: str | None = None, user: str | None = None, password: str | None = None
    ) -> "Target":
        """A target from ``url``; credentials in its userinfo (``http://user:pw@host/...``) are moved out of it."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"publish needs an http(s) Graph Store endpoint URL, not {_shown(url)!r}")
        user = user or (urllib.parse.unquote(parts.username) if parts.username else None)
        password = password or (urllib.parse.unquote(parts.password) if parts.password else None)
        netloc = parts.hostname + (f":{parts.port}" if parts.port else "")
        clean = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
        if sparql is None:  # Virtuoso and Fuseki keep the query endpoint beside the graph store one
            sparql = urllib.parse.urlunsplit(parts._replace(netloc=netloc, path="/sparql", query=""))
        return cls(clean, graph, sparql, user, password)


def _shown(url: str) -> str:
    """``url`` without its userinfo: what may appear in messages and logs."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return url
    return urllib.parse.urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


@dataclass(frozen=True)
class PublishReport:
    sent: int  # triples sent
    batches: int
    remote: int  # triples in the graph afterwards, counted by the engine
    before: int  # triples in the graph before (0 after --replace)
    seconds: float

    def summary(self) -> str:
        rate = self.sent / self.seconds if self.seconds else 0.0
        return (
            f"published {self.sent} triples in {self.batches} batches in {self.seconds:.1f} s ({rate:,.0f} triples/s);"
            f" the graph now holds {self.remote} triples"
        )


def source_triples(source: Path) -> Iterator[ox.Triple]:
    """The triples of ``source``, streamed: a dump file, or an on-disk store directory.

    Where a dataset directory keeps its store or dump, :func:`resolve_source` finds it.
    """
    source = resolve_source(source)
    if is_dump(source):
        syntax = _DUMP_SUFFIXES[source.suffix.lower()]
        try:
            for quad in ox.parse(path=str(source), format=syntax.oxigraph):
                yield quad.triple
        except SyntaxError as error:
            raise PublishError(f"{source}: cannot read this dump: {error}") from error
        return
    from .stores.store import OxigraphGraphStore

    store = OxigraphGraphStore.disk(source, read_only=True)
    for quad in store.store.quads_for_pattern(None, None, None, ox.DefaultGraph()):
        yield quad.triple


def resolve_source(source: Path) -> Path:
    """The dump or store that ``source`` names: itself, or the store inside a dataset directory."""
    if is_dump(source):
        return source
    if source.is_dir() and (source / COMPLETE_MARKER).is_file():
        return source
    if source.is_dir() and (source / "store" / COMPLETE_MARKER).is_file():  # a dataset directory
        return source / "store"
    raise PublishError(
        f"{source}: not a dump ({', '.join(sorted(_DUMP_SUFFIXES))}), nor a complete bibgraph store directory"
    )


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


class Engine:
    """The HTTP side: Graph Store requests, and counting through the query endpoint."""

    def __init__(self, target: Target, timeout: float = 600.0) -> None:
        self.target = target
        self.timeout = timeout
        handlers: list[urllib.request.BaseHandler] = []
        if target.user is not None:
            passwords = urllib.request.HTTPPasswordMgrWithDefaultRealm()
            passwords.add_password(None, target.url, target.user, target.password or "")
            # Virtuoso's /sparql-graph-crud-auth asks for digest; others for basic.
            handlers += [urllib.request.HTTPDigestAuthHandler(passwords)]
            handlers += [urllib.request.HTTPBasicAuthHandler(passwords)]
        self.opener = urllib.request.build_opener(*handlers)

    def _graph_url(self) -> str:
        separator = "&" if "?" in self.target.url else "?"
        return f"{self.target.url}{separator}{urllib.parse.urlencode({'graph': self.target.graph})}"

    def send(self, method: str, body: bytes | None = None) -> None:
        headers = {"Content-Type": "application/n-triples"} if body is not None else {}
        request = urllib.request.Request(self._graph_url(), data=body, method=method, headers=headers)
        try:
            with self.opener.open(request, timeout=self.timeout) as response:
                response.read()
        except urllib.error.HTTPError as error:
            if method == "DELETE" and error.code == 404:  # no such graph yet: nothing to clear
                return
            message = error.read().decode("utf-8", "replace").strip()
            if error.code in (401, 403):
                message = f"not allowed (check --user and {PASSWORD_ENV}) {message}"
            raise PublishError(f"{method} {self.target.url} answered {error.code}: {message[:300]}") from error
        except OSError as error:
            raise PublishError(f"{method} {self.target.url} failed: {error}") from error

    def count(self) -> int:
        query = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{self.target.graph}> {{ ?s ?p ?o }} }}"
        data = urllib.parse.urlencode({"query": query}).encode()
        request = urllib.request.Request(
            self.target.sparql, data=data, headers={"Accept": "application/sparql-results+json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                bindings = json.load(response)["results"]["bindings"]
        except (OSError, ValueError, KeyError) as error:
            raise PublishError(f"cannot count the triples at {self.target.sparql}: {error}") from error
        return int(bindings[0]["n"]["value"]) if bindings else 0


RETRIES = 3  # a batch the engine rolled back as a deadlock (SQLSTATE 40001) is sent again this many times


def _send_batch(engine: Engine, body: bytes) -> None:
    """POST one batch; again after a deadlock, which the engine rolled back whole (Virtuoso's SR172 under load)."""
    for attempt in range(RETRIES + 1):
        try:
            engine.send("POST", body)
            return
        except PublishError as error:
            if attempt == RETRIES or not ("40001" in str(error) or "deadlock" in str(error).lower()):
                raise
            time.sleep(2**attempt)


def publish(
    source: Path,
    target: Target,
    batch: int = DEFAULT_BATCH,
    replace: bool = False,
    progress: Callable[[str], None] | None = None,
) -> PublishReport:
    """Send ``source`` to ``target`` in batches of ``batch`` triples, then check the engine's count.

    With ``replace`` the graph is cleared first (Graph Store ``DELETE``). A failed batch stops
    the run with a :class:`PublishError` naming it; the batches before it stay loaded, so the
    message says to publish again with ``--replace``.
    """
    if batch < 1:
        raise ValueError("the batch size must be at least 1")
    resolve_source(source)  # a wrong path is refused before the engine is touched
    engine = Engine(target)
    started = time.monotonic()
    if replace:
        engine.send("DELETE")
    before = engine.count()
    sent = number = 0
    for number, body in enumerate(batches(source_triples(source), batch), start=1):
        size = body.count(b"\n")
        try:
            _send_batch(engine, body)
        except PublishError as error:
            raise PublishError(
                f"batch {number} (triples {sent + 1}-{sent + size}) was not loaded: {error}."
                f" Batches 1-{number - 1} ({sent} triples) are in <{target.graph}>: publish again with --replace"
            ) from error
        sent += size
        elapsed = time.monotonic() - started
        if progress is not None:
            progress(f"batch {number}: {sent} triples sent ({sent / elapsed:,.0f} triples/s)")
    remote = engine.count()
    report = PublishReport(sent, number, remote, before, time.monotonic() - started)
    # Triples already in the graph are not added twice, so without a clear graph the count can only be bounded.
    expected_low, expected_high = max(before, sent), before + sent
    if not expected_low <= remote <= expected_high:
        raise PublishError(
            f"{target.sparql} counts {remote} triples in <{target.graph}> after {sent} were sent"
            + (f" to a graph of {before}" if before else "")
            + ": the load is incomplete"
        )
    return report
