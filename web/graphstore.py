"""The app's graph store resource (the Flask tutorial's ``db.py`` pattern).

``init_app`` prepares the store and the query pool once per app; ``get_store`` is the accessor
views use. Every read goes through the pool, so pages, networks and the SPARQL endpoint all
see exactly what a SPARQL client sees, under the same deadline.
"""

import atexit
import shutil
from pathlib import Path
from typing import Any, BinaryIO

from flask import Flask, current_app
from rdflib import Graph

from bibgraph.graph.dataset import prepare
from bibgraph.graph.formats import RdfSyntax
from bibgraph.graph.memory import release_free_memory
from bibgraph.graph.pool import QueryPool
from bibgraph.graph.store import Answer, GraphStore
from bibgraph.graph.vocab import PREFIXES

EXTENSION = "bibgraph"


class PooledStore(GraphStore):
    """A :class:`GraphStore` whose every call runs in a pool worker under the query deadline."""

    def __init__(self, pool: QueryPool, kind: str, deadline: float | None = None, fresh: bool = False) -> None:
        self.pool = pool
        self.kind = kind
        self.deadline = deadline  # None: the pool's (the public query deadline)
        self.fresh = fresh  # True: evaluate again rather than answer from the cache

    def with_deadline(self, seconds: float) -> "PooledStore":
        """The same store for trusted internal work (deriving networks) that may run longer."""
        return PooledStore(self.pool, self.kind, seconds, self.fresh)

    def uncached(self) -> "PooledStore":
        """The same store evaluating every query again (a client sent ``Cache-Control: no-cache``)."""
        return PooledStore(self.pool, self.kind, self.deadline, fresh=True)

    def _call(self, method: str, *args: str) -> Any:
        return self.pool.call(method, *args, deadline=self.deadline, fresh=self.fresh)

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
        return self.pool.call("dump_file", path, syntax, deadline=self.deadline)  # type: ignore[no-any-return]

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
    pool = QueryPool(
        opener,
        threads=int(app.config["QUERY_THREADS"]),
        deadline=float(app.config["QUERY_TIMEOUT"]),
        max_result_bytes=int(app.config["MAX_RESULT_BYTES"]),
        memory_limit=app.config["WORKER_MEMORY_LIMIT"],
        # A remote store's data can change behind our back; an embedded one is read-only while served.
        cache_bytes=0 if kind == "sparql" else int(app.config["RESULT_CACHE_BYTES"]),
        # The embedded engine federates SERVICE itself: its workers get no network at all. A remote
        # store's worker must reach the remote server (the forwarding is bibgraph's, not an engine's).
        isolate=kind != "sparql",
    )
    app.extensions[EXTENSION] = PooledStore(pool, kind)
    app.config["BIBGRAPH_SUMMARY"] = summary
    atexit.register(pool.close)


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
    """The current app's store."""
    return current_app.extensions[EXTENSION]  # type: ignore[no-any-return]
