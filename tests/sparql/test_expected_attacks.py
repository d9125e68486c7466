"""Red team: explaining a syntax error must cost its client a query, never the web process.

graph/sparql/expected.py probes the engine with starts of the query; a start that parses is *evaluated*
(on an empty store, but VALUES need no data): a 675-byte ``ASK { VALUES ×5 … FILTER(sum = -1) } }``
(one stray ``}``) kept the web process busy for 51 s, and a GROUP BY over the same rows took 0.9 GB,
outside every deadline, memory limit and fair share. The probes belong in the query worker.
"""

import pytest

BROKEN = "SELECT * WHERE { ?s ?p ?o "  # the query ends: the engine expects "}" among others


def cross_product(n: int, k: int) -> str:
    """An ASK whose start evaluates ``n**k`` rows on an empty store, then one ``}`` too many."""
    values = " ".join(str(i) for i in range(n))
    body = " ".join(f"VALUES ?v{j} {{ {values} }}" for j in range(k))
    total = " + ".join(f"?v{j}" for j in range(k))
    return f"ASK {{ {body} FILTER({total} = -1) }} }}"


class _NoEngineHere:
    def Store(self) -> None:  # stands in for pyoxigraph.Store
        raise AssertionError("the web process ran the engine to explain a syntax error")


@pytest.mark.parametrize("accept", ["*/*", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"])
def test_the_web_process_never_runs_the_explanation_probes(short_app, monkeypatch, accept: str) -> None:
    from bibgraph.graph.sparql import expected

    monkeypatch.setattr(expected, "ox", _NoEngineHere())  # the web process only: the worker was forked before
    expected._explain.cache_clear()
    response = short_app.test_client().get("/sparql", query_string={"query": BROKEN}, headers={"Accept": accept})
    assert response.status_code == 400
    body = response.get_data(as_text=True)
    assert "}" in body and ("where the engine expects" in body or "What the engine accepts there" in body)


def test_an_explanation_that_would_run_away_is_stopped_at_the_deadline(short_app) -> None:
    pool = short_app.extensions["bibgraph"].pool
    before = pool.worker_pid
    response = short_app.test_client().get("/sparql", query_string={"query": cross_product(30, 5)})
    assert response.status_code == 400
    assert response.get_data(as_text=True).startswith("query syntax error: ")  # the engine's message alone
    assert pool.worker_pid != before, "the probes ran in the worker and were stopped at its deadline"
    assert short_app.test_client().get("/sparql", query_string={"query": "ASK {}"}).status_code == 200
