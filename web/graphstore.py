"""The app's graph store resource (the Flask tutorial's ``db.py`` pattern).

``init_app`` prepares the store and the query pool once per app; ``get_store`` is the accessor
views use. Every read goes through the pool, so pages, networks and the SPARQL endpoint all
see exactly what a SPARQL client sees, under the same deadline and the same fair share
(each request's calls are charged to its client: :func:`client_key`).
"""

import ipaddress
from pathlib import Path
from typing import Any

from flask import Flask, current_app, has_request_context, request

from bibgraph.graph.dataset.opener import prepare
from bibgraph.graph.serving.memory import release_free_memory
from bibgraph.graph.serving.pool import Opener, QueryPool
from bibgraph.graph.serving.pooled import PooledStore
from bibgraph.web.settings import worker_memory_limit

EXTENSION = "bibgraph"
SPARQL_BLUEPRINT = "sparql"  # web/sparql/endpoint.py's: the one place a client's query text runs


def init_app(app: Flask) -> None:
    """Prepare the graph named by the app's settings and start its query worker."""
    inputs = [Path(p) for p in app.config["BIBGRAPH_INPUTS"] or []]
    kind = app.config["BIBGRAPH_STORE"].split(":", 1)[0]
    opener, summary = prepare(inputs, app.config["BIBGRAPH_STORE"], app.config["BIBGRAPH_BASE"])
    release_free_memory()  # before the fork, so the zygote and worker do not inherit the build's garbage
    install(app, start_pool(app, opener, kind), kind, summary)
    app.add_url_rule("/health", "health", health)


def install(app: Flask, pool: QueryPool, kind: str, summary: str) -> None:
    """Make ``pool`` the app's store (at start, and when a dataset's version changes)."""
    app.config["BIBGRAPH_SUMMARY"] = summary
    app.extensions[EXTENSION] = PooledStore(pool, kind, slow=float(app.config["SLOW_QUERY_SECONDS"]))


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
        max_waiting=int(app.config["WAITING_QUERIES"]),
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
    """The current app's store, charging its calls to the requesting client.

    Only the SPARQL endpoint runs a client's own query text: elsewhere (pages, sitemaps, VoID, views) the queries
    are the site's, and the limits on clients' answers (``MAX_RESULT_BYTES``) are not theirs."""
    store: PooledStore = current_app.extensions[EXTENSION]
    if not has_request_context():
        return store.for_client("", site=True)
    gone = request.environ.get("waitress.client_disconnected")  # waitress tells, reading ahead (web/server.py)
    return store.for_client(client_key(), site=request.blueprint != SPARQL_BLUEPRINT, gone=gone)


def client_key() -> str:
    """Who is asking: the remote address (from X-Forwarded-For only behind ``PROXY_HOPS`` trusted proxies).

    An IPv6 client usually holds a whole /64, so it counts as one client.
    """
    address = request.remote_addr or ""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        # a proxy may forward "1.2.3.4:5678" or "[2001:db8::1]:5678": the port differs per connection
        host = address.rpartition(":")[0].strip("[]") if address.count(":") == 1 or "]:" in address else ""
        try:
            parsed = ipaddress.ip_address(host)
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
    switches = current_app.extensions.get("bibgraph-versions")  # a served dataset: its version, and any refused
    if switches is not None:
        state["dataset"] = switches.state()
    return state, 200 if state["ok"] else 503
