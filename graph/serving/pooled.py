"""The store the web app reads: every call runs in the query pool, under its deadline and fair share."""

import logging
import shutil
import time
from collections.abc import Callable
from typing import Any, BinaryIO

from rdflib import Graph

from bibgraph.graph.rdf.formats import RdfSyntax
from bibgraph.graph.rdf.vocab import prefixed_graph
from bibgraph.graph.serving.pool import QueryPool, QueryTimeout
from bibgraph.graph.serving.worker import serialise, serialise_site
from bibgraph.graph.stores.store import Answer, GraphStore

EVERYTHING = "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }"
LOGGED_QUERY_CHARACTERS = 4000  # of a query's text in the log (its spaces collapsed); longer ones end with "…"
log = logging.getLogger("bibgraph.queries")


def logged_text(query: str) -> str:
    """A query's text on one line, as the slow-query log writes it."""
    text = " ".join(query.split())
    return text if len(text) <= LOGGED_QUERY_CHARACTERS else text[: LOGGED_QUERY_CHARACTERS - 1] + "…"


class PooledStore(GraphStore):
    """A :class:`GraphStore` whose queries run in a pool worker; answers are cached unless ``fresh``.

    Every query that takes ``slow`` seconds or more, or is stopped at its deadline, is logged with its text
    and client, whoever asked: the SPARQL endpoint's clients and the pages alike (a slow author page shows
    which of its queries is slow)."""

    def __init__(
        self,
        pool: QueryPool,
        kind: str,
        deadline: float | None = None,
        fresh: bool = False,
        client: str = "",
        slow: float | None = None,
        site: bool = False,
        gone: Callable[[], bool] | None = None,
    ) -> None:
        self.pool = pool
        self.kind = kind
        self.deadline = deadline  # None: the pool's (the public query deadline)
        self.fresh = fresh  # True: evaluate again rather than answer from the cache
        self.client = client  # whose share of the query threads the calls use
        self.slow = slow  # seconds from which a query is logged; None: never
        self.site = site  # the site's own queries: not held to the clients' MAX_RESULT_BYTES
        self.gone = gone  # whether the client has closed its connection: its query is then stopped (pool.py)

    def _copy(self, **changes: Any) -> "PooledStore":
        names = ("deadline", "fresh", "client", "slow", "site", "gone")
        state = {name: getattr(self, name) for name in names} | changes
        return PooledStore(self.pool, self.kind, **state)

    def with_deadline(self, seconds: float) -> "PooledStore":
        """The same store for trusted internal work (deriving networks) that may run longer."""
        return self._copy(deadline=seconds)

    def uncached(self) -> "PooledStore":
        """The same store evaluating every query again (a client sent ``Cache-Control: no-cache``)."""
        return self._copy(fresh=True)

    def for_client(self, client: str, site: bool = False, gone: Callable[[], bool] | None = None) -> "PooledStore":
        """The same store charging its calls to ``client``; ``site``: the calls are the site's own queries (a page
        answering that client), which the limits on clients' SPARQL answers do not apply to; ``gone``: whether
        the client has left (its query is then stopped)."""
        return self._copy(client=client, site=site, gone=gone)

    def run(self, function: Callable[..., Any], *args: Any) -> Any:
        """``function(store, *args)`` in the worker, never cached (e.g.
        :func:`bibgraph.graph.dataset.dumps.dump_file`)."""
        return self.pool.call(
            function, *args, deadline=self.deadline, client=self.client, gone=self.gone, site=self.site
        )

    def answer(self, query: str, results: str, graphs: str) -> Answer:
        """Small answers come in memory, large ones as a temporary file (``Answer.spooled``)."""
        started = time.perf_counter()
        try:
            answer: Answer = self.pool.call(
                serialise_site if self.site else serialise,
                query,
                results,
                graphs,
                cache=True,
                deadline=self.deadline,
                fresh=self.fresh,
                client=self.client,
                gone=self.gone,
                site=self.site,
            )
        except QueryTimeout:
            self._log("query stopped", query, time.perf_counter() - started)
            raise
        seconds = time.perf_counter() - started
        if self.slow is not None and seconds >= self.slow:
            self._log("slow query", query, seconds)
        return answer

    def _log(self, what: str, query: str, seconds: float) -> None:
        """One line; a JSON log (``--log-format json``) also has the text, seconds and client as fields."""
        client, text = self.client or "the server", logged_text(query)
        fields = {"query": text, "seconds": round(seconds, 4), "client": client}
        log.warning("%s (%.2f s) for %s: %s", what, seconds, client, text, extra=fields)

    def construct(self, query: str) -> Graph:
        return prefixed_graph().parse(data=self.answer(query, "json", "nt").read(), format="nt")

    def dump(self, out: BinaryIO, syntax: RdfSyntax) -> None:
        with self.answer(EVERYTHING, "json", syntax.name).open() as body:
            shutil.copyfileobj(body, out)

    def close(self) -> None:
        self.pool.close()
