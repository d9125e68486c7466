"""The store the web app reads: every call runs in the query pool, under its deadline and fair share."""

import shutil
from collections.abc import Callable
from typing import Any, BinaryIO

from rdflib import Graph

from ..formats import RdfSyntax
from ..stores.store import Answer, GraphStore
from ..vocab import prefixed_graph
from .pool import QueryPool
from .worker import serialise

EVERYTHING = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"


class PooledStore(GraphStore):
    """A :class:`GraphStore` whose queries run in a pool worker; answers are cached unless ``fresh``."""

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

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(store, *args)`` in the worker, never cached (e.g. :func:`bibgraph.graph.dump.dump_file`)."""
        return self.pool.call(function, *args, deadline=self.deadline, client=self.client)

    def answer(self, query: str, results: str, graphs: str) -> Answer:
        """Small answers come in memory, large ones as a temporary file (``Answer.spooled``)."""
        answer: Answer = self.pool.call(
            serialise, query, results, graphs, cache=True, deadline=self.deadline, fresh=self.fresh, client=self.client
        )
        return answer

    def construct(self, query: str) -> Graph:
        return prefixed_graph().parse(data=self.answer(query, "json", "nt").read(), format="nt")

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        with self.answer(EVERYTHING, "json", syntax.name).open() as body:
            shutil.copyfileobj(body, out)

    def close(self) -> None:
        self.pool.close()
