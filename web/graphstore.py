"""The app's graph store resource (the Flask tutorial's ``db.py`` pattern).

``init_app`` prepares the store and the query pool once per app; ``get_store`` is the accessor
views use. Every read goes through the pool, so pages, networks and the SPARQL endpoint all
see exactly what a SPARQL client sees, under the same deadline and the same fair share
(each request's calls are charged to its client: :func:`client_key`).
"""

import atexit
import ipaddress
import shutil
from pathlib import Path
from typing import Any, BinaryIO

from flask import Flask, Response, current_app, has_request_context, request
from rdflib import Graph

from bibgraph.graph.dataset import prepare
from bibgraph.graph.formats import RdfSyntax
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.serving.pool import (
    Opener,
    OverShare,
    QueryCrashed,
    QueryPool,
    QueryTimeout,
    ServerBusy,
    WorkerFailed,
)
from bibgraph.graph.stores.store import Answer, GraphStore
from bibgraph.graph.vocab import PREFIXES

from .errors import error_page, prefers_html
from .settings import worker_memory_limit

EXTENSION = "bibgraph"


class PooledStore(GraphStore):
    """A :class:`GraphStore` whose every call runs in a pool worker under the query deadline."""

    def __init__(
        self, pool: QueryPool, kind: str, deadline: float | None = None, fresh: bool = False, client: str = ""
    ) -> None:
        self.pool = pool
        self.kind = kind
        self.deadline = deadline  # None: the pool's (the public query deadline)
        self.fresh = fresh  # True: evaluate again rather than answer from the cache
        self.client = client  # whose share of the query threads the calls use

    def with_deadline(self, seconds: float) -> "PooledStore":
        """The same store for trusted internal work (deriving networks) that may run longer."""
        return PooledStore(self.pool, self.kind, seconds, self.fresh, self.client)

    def uncached(self) -> "PooledStore":
        """The same store evaluating every query again (a client sent ``Cache-Control: no-cache``)."""
        return PooledStore(self.pool, self.kind, self.deadline, True, self.client)

    def for_client(self, client: str) -> "PooledStore":
        """The same store charging its calls to ``client``."""
        return PooledStore(self.pool, self.kind, self.deadline, self.fresh, client)

    def _call(self, method: str, *args: str) -> Any:
        return self.pool.call(method, *args, deadline=self.deadline, fresh=self.fresh, client=self.client)

    def ask(self, query: str) -> bool:
        return bool(self._call("ask", query))

    def answer(self, query: str, results: str, graphs: str) -> Answer:
        """Small answers come in memory, large ones as a temporary file (``Answer.spooled``)."""
        return self._call("answer", query, results, graphs)  # type: ignore[no-any-return]

    def write_answer(self, query: str, results: str, graphs: str, out: BinaryIO) -> tuple[str, str]:
        answer = self.answer(query, results, graphs)
        with answer.open() as body:
            shutil.copyfileobj(body, out)
        return answer.form, answer.media_type

    def dump_file(self, path: str, syntax: str) -> int:
        return self.pool.call(  # type: ignore[no-any-return]
            "dump_file", path, syntax, deadline=self.deadline, client=self.client
        )

    def construct(self, query: str) -> Graph:
        answer = self.answer(query, "json", "nt")
        graph = Graph()
        for prefix, iri in PREFIXES.items():
            graph.bind(prefix, iri, override=True)
        return graph.parse(data=answer.read(), format="nt")

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        self.write_answer("CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "json", syntax.name, out)

    def close(self) -> None:
        self.pool.close()


def init_app(app: Flask) -> None:
    """Prepare the graph named by the app's settings and start its query worker."""
    inputs = [Path(p) for p in app.config["BIBGRAPH_INPUTS"] or []]
    kind = app.config["BIBGRAPH_STORE"].split(":", 1)[0]
    opener, summary = prepare(inputs, app.config["BIBGRAPH_STORE"], app.config["BIBGRAPH_BASE"])
    release_free_memory()  # before the fork, so the zygote and worker do not inherit the build's garbage
    pool = start_pool(app, opener, kind)
    app.extensions[EXTENSION] = PooledStore(pool, kind)
    app.config["BIBGRAPH_SUMMARY"] = summary
    atexit.register(pool.close)
    app.register_error_handler(OverShare, _over_share)
    for busy in (QueryTimeout, ServerBusy, WorkerFailed):
        app.register_error_handler(busy, _unavailable)
    app.register_error_handler(QueryCrashed, _crashed)
    app.add_url_rule("/health", "health", health)


def start_pool(app: Flask, opener: Opener, kind: str) -> QueryPool:
    """The query pool of a store, as the app's settings say (also used when a dataset's version changes)."""
    return QueryPool(
        opener,
        threads=int(app.config["QUERY_THREADS"]),
        deadline=float(app.config["QUERY_TIMEOUT"]),
        max_result_bytes=int(app.config["MAX_RESULT_BYTES"]),
        memory_limit=worker_memory_limit(app.config["WORKER_MEMORY_LIMIT"]),
        # A remote store's data can change behind our back; an embedded one is read-only while served.
        cache_bytes=0 if kind == "sparql" else int(app.config["RESULT_CACHE_BYTES"]),
        client_calls=int(app.config["CLIENT_QUERIES"]),
        # The embedded engine federates SERVICE itself: its workers get no network at all. A remote
        # store's worker must reach the remote server (the forwarding is bibgraph's, not an engine's).
        isolate=kind != "sparql",
    )


def sandbox_refusal() -> str | None:
    """Why the SPARQL endpoint must not run client queries, or None (see ``SPARQL_UNSANDBOXED``)."""
    error = get_store().pool.sandbox_error
    if error is None or current_app.config["SPARQL_UNSANDBOXED"]:
        return None
    return (
        f"the SPARQL endpoint is off: its query worker could not be cut off from the network ({error});"
        " the operator may start the server with --unsandboxed to serve it anyway"
    )


def get_store() -> PooledStore:
    """The current app's store, charging its calls to the requesting client."""
    store: PooledStore = current_app.extensions[EXTENSION]
    return store.for_client(client_key()) if has_request_context() else store


def client_key() -> str:
    """Who is asking: the remote address (from X-Forwarded-For only behind ``PROXY_HOPS`` trusted proxies).

    An IPv6 client usually holds a whole /64, so it counts as one client.
    """
    address = request.remote_addr or ""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


def health() -> tuple[dict[str, Any], int]:
    """``GET /health``: the query pool's state (a dead zygote or worker is brought back first); 200 or 503."""
    state = get_store().pool.health()
    return state, 200 if state["ok"] else 503


def _plain(message: str, status: int, retry_after: int | None = None) -> Response:
    """Plain text, or the site's error page for a browser."""
    if prefers_html(request):
        response = error_page(status, message, "Too many requests" if status == 429 else None)
    else:
        response = Response(message.rstrip() + "\n", status=status, mimetype="text/plain")
    if retry_after is not None:
        response.headers["Retry-After"] = str(retry_after)
    return response


def _over_share(error: OverShare) -> Response:
    return _plain(str(error), 429, error.retry_after)


def _unavailable(error: Exception) -> Response:
    if isinstance(error, WorkerFailed):
        current_app.logger.error("query worker failed: %s", error)
    return _plain(f"the query could not be answered: {error}", 503, 1)


def _crashed(error: QueryCrashed) -> Response:
    return _plain(str(error), 400)
