"""Where a SPARQL request's time goes, layer by layer, next to the Oxigraph server, over an existing dataset.

For each query (by default the cheap ones of :mod:`bench.serving.sparql`, where a fixed cost per request shows),
one client times, request by request in turn so that a slow spell of a shared machine hits all alike:

- ``engine``: pyoxigraph evaluating the query and writing its answer in this process (no HTTP at all);
- ``waitress``: waitress, with the options ``bibgraph serve`` gives it, answering the same bytes from a
  WSGI app that does nothing else: the floor of HTTP in Python;
- ``cached``: bibgraph answering from its answer cache: waitress, Flask, the endpoint, no query worker;
- ``bibgraph``: bibgraph asked for a fresh evaluation (``Cache-Control: no-cache``), as ``bench.serving.sparql``;
- ``oxigraph``: Oxigraph's server (``serve-read-only``) over the same store.

The layers it prints are differences of medians: Flask and the endpoint = cached - waitress; the query
worker (the hand-over to its process and back) = bibgraph - cached - engine. Usage:
``python -m bench.serving.querypath --store-dir DATASET [--runs 200] [--only describe count]``.
"""

import argparse
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import bench.serving.sparql as sparql
from bench.servers import free_port, stop, wait_for_http
from bibgraph.graph.stores.store import OxigraphGraphStore

CHEAP = ("count papers", "describe paper", "co-authors of an author", "top 20 authors")
COLUMNS = ("engine", "waitress", "cached", "bibgraph", "oxigraph")


def floor_app(bodies: Path) -> Any:
    """A WSGI app answering ``/N`` with the bytes of ``bodies/N`` (after reading the request body, as any would)."""

    def app(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))
        body = (bodies / environ["PATH_INFO"].strip("/")).read_bytes()
        start_response("200 OK", [("Content-Type", "application/octet-stream"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def serve_floor(bodies: Path, port: int) -> None:
    """Serve :func:`floor_app` with ``bibgraph serve``'s waitress options (its defaults), until killed."""
    from waitress import serve

    from bibgraph.web.server import waitress_options
    from bibgraph.web.settings import defaults

    serve(floor_app(bodies), host="127.0.0.1", port=port, **waitress_options(defaults()))


@contextlib.contextmanager
def floor_server(bodies: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "bench.serving.querypath", "--floor", str(bodies), "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/ready", process)
        yield f"http://127.0.0.1:{port}/"
    finally:
        stop(process)


Table = dict[str, dict[str, float]]


def measure(queries: dict[str, str], store: OxigraphGraphStore, runs: int, scratch: Path) -> Table:
    """Median milliseconds per query and column, and each answer's size."""
    with contextlib.ExitStack() as stack:
        ours, _ = stack.enter_context(sparql.server("bibgraph-disk", scratch / "unused.nt", scratch, free_port()))
        theirs, _ = stack.enter_context(sparql.server("oxigraph", scratch / "unused.nt", scratch, free_port()))
        bodies = scratch / "bodies"
        bodies.mkdir()
        (bodies / "ready").write_bytes(b"")
        for index, query in enumerate(queries.values()):
            (bodies / str(index)).write_bytes(sparql.request(theirs, query))
        floor = stack.enter_context(floor_server(bodies))
        table = {}
        for index, (name, query) in enumerate(queries.items()):
            calls: dict[str, Callable[[], object]] = {
                "engine": partial(store.answer, query, "json", "nt"),
                "waitress": partial(sparql.request, f"{floor}{index}", query),
                "cached": partial(sparql.request, ours, query, cached=True),
                "bibgraph": partial(sparql.request, ours, query),
                "oxigraph": partial(sparql.request, theirs, query),
            }
            for call in calls.values():  # warm-up, for all alike (and the answer cache filled)
                call()
            timings: dict[str, list[float]] = {column: [] for column in COLUMNS}
            for _ in range(runs):
                for column, call in calls.items():
                    started = time.perf_counter()
                    call()
                    timings[column].append(time.perf_counter() - started)
            table[name] = {column: statistics.median(values) * 1000 for column, values in timings.items()}
            table[name]["bytes"] = (bodies / str(index)).stat().st_size
            print(f"{name}: {table[name]}", file=sys.stderr, flush=True)
    return table


def report(table: Table) -> None:
    layers = "Flask + endpoint | worker hop | bibgraph - oxigraph"
    print("\n| query | answer bytes | " + " | ".join(COLUMNS) + f" | {layers} |")
    print("|---|" + "---:|" * (len(COLUMNS) + 4))
    for name, row in table.items():
        flask = row["cached"] - row["waitress"]
        worker = row["bibgraph"] - row["cached"] - row["engine"]
        cells = [f"{row[column]:.2f}" for column in COLUMNS]
        gap = f"{row['bibgraph'] - row['oxigraph']:+.2f} ({row['bibgraph'] / row['oxigraph']:.2f}x)"
        print(f"| {name} | {row['bytes']:,.0f} | " + " | ".join(cells) + f" | {flask:.2f} | {worker:.2f} | {gap} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store-dir", type=Path, help="a bibgraph dataset directory or on-disk store")
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--only", nargs="+", help="the queries whose names contain one of these words")
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # run as the floor server
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        serve_floor(args.floor, args.port)
        return
    if args.store_dir is None:
        parser.error("--store-dir is required")
    sparql.EXISTING = args.store_dir.resolve()
    store = OxigraphGraphStore.disk(sparql.oxigraph_location(sparql.EXISTING), read_only=True)
    names = [name for name in sparql.QUERIES if any(word in name for word in args.only or CHEAP)]
    queries = sparql.bound_queries({n: sparql.QUERIES[n] for n in names}, store)
    with tempfile.TemporaryDirectory() as scratch:
        report(measure(queries, store, args.runs, Path(scratch)))


if __name__ == "__main__":
    main()
