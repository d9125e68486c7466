"""The same bibgraph app behind waitress (as ``bibgraph serve`` runs it) and behind granian (a Rust WSGI server),
with the Oxigraph server as the floor, over an existing dataset (issue 28: the fixed cost of a small query).

The servers take turns request by request, so that a slow spell of a shared machine hits all alike. Measured:
latency (median and p90, ms) of a small SPARQL ``COUNT``, a co-authors query (both fresh evaluations,
``Cache-Control: no-cache``, as :mod:`bench.serving.querypath`'s ``bibgraph`` column), a paper page and a static
asset, each on one kept-alive connection and on a new connection per request; then throughput (requests per second)
of ``--clients`` concurrent clients on kept-alive connections, the servers alternating round by round. Oxigraph
answers only the SPARQL rows. The "bare WSGI app" row is each server alone: :func:`bench.serving.querypath.floor_app`
answering the count's bytes, behind waitress (with ``serve``'s options) and behind granian. granian serves the app
as ``bibgraph serve`` makes it (the same settings, the same warm-up), with waitress's limits mapped where granian
has one (:func:`granian_server`). Usage:
``python -m bench.serving.wsgiservers DATASET [--runs 200] [--clients 4] [--seconds 5]``
(needs ``pip install -e '.[bench]'``).
"""

import argparse
import contextlib
import http.client
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench.serving.querypath as querypath
import bench.serving.sparql as sparql
from bench.servers import bibgraph_process, free_port, stop, wait_for_http
from bibgraph.graph.dataset.directory import read_manifest
from bibgraph.graph.dataset.opener import dataset_version
from bibgraph.graph.stores.store import OxigraphGraphStore

SERVERS = ("waitress", "granian", "oxigraph", "waitress floor", "granian floor")
FAMILY = {"waitress floor": "waitress", "granian floor": "granian"}  # a floor's figures go in its server's columns
FLOOR = "bare WSGI app"  # the floors' only row: querypath's floor app answering the count's bytes
SPARQL_ROWS = ("count papers", "co-authors of an author")
# What every bench client shares: one loopback address, so the per-client share of queries would refuse them.
SHARED = ["--client-queries", "0"]


def dataset_config(dataset: Path, port: int) -> dict[str, Any]:
    """The settings ``bibgraph serve DATASET --port PORT --client-queries 0`` resolves (the dataset's own base)."""
    base = read_manifest(dataset_version(dataset))["base"]
    return {
        "BIBGRAPH_STORE": f"dataset:{dataset.absolute()}",
        "BIBGRAPH_BASE": base,
        "HOST": "127.0.0.1",
        "PORT": port,
        "CLIENT_QUERIES": 0,
    }


def granian_server(port: int, settings: Mapping[str, Any]) -> Any:
    """granian with ``serve``'s limits where it has one, HTTP/1 only as waitress: ``WEB_THREADS`` blocking threads;
    its backpressure (what it calls requests in flight is a permit each accepted connection holds until it closes,
    idle or not) as ``CONNECTION_LIMIT``; ``BACKLOG``; ``CHANNEL_TIMEOUT`` as its header-read timeout, which also
    closes a connection idle before or between requests."""
    from granian.constants import HTTPModes, Interfaces
    from granian.http import HTTP1Settings
    from granian.server import Server

    return Server(
        "bibgraph",
        address="127.0.0.1",
        port=port,
        interface=Interfaces.WSGI,
        http=HTTPModes.http1,
        blocking_threads=int(settings["WEB_THREADS"]),
        backpressure=int(settings["CONNECTION_LIMIT"]),
        backlog=int(settings["BACKLOG"]),
        http1_settings=HTTP1Settings(header_read_timeout=int(settings["CHANNEL_TIMEOUT"]) * 1000),
    )


def serve_granian(dataset: Path, port: int) -> None:
    """Serve the app with granian until killed: one worker process makes the app as ``serve`` does (after the fork,
    so that the query worker, its threads and the warm-up are the worker's own)."""
    from bibgraph.web.settings import resolve

    config = dataset_config(dataset, port)
    settings = resolve(config)

    def load() -> Any:
        from bibgraph.graph.serving.memory import limit_arenas

        limit_arenas()
        from bibgraph.web.app import create_app
        from bibgraph.web.graphstore import sandbox_refusal
        from bibgraph.web.logs import configure
        from bibgraph.web.server import warm_up
        from bibgraph.web.versionswitch import watch

        configure(settings["LOG_FORMAT"])
        app = create_app(config)
        with app.app_context():
            print(f"granian worker: sandbox refusal: {sandbox_refusal()}", file=sys.stderr, flush=True)
        watch(app)
        warm_up(app)
        return app

    granian_server(port, settings).serve(target_loader=load, wrap_loader=False)


def serve_granian_floor(bodies: Path, port: int) -> None:
    """:func:`bench.serving.querypath.floor_app` (a WSGI app that only answers bytes) served by granian."""
    from bibgraph.web.settings import defaults

    granian_server(port, defaults()).serve(target_loader=lambda: querypath.floor_app(bodies), wrap_loader=False)


@contextlib.contextmanager
def started(kind: str, dataset: Path, scratch: Path) -> Iterator[str]:
    """``kind`` serving ``dataset`` (or the floor's bodies) on a free loopback port, warmed up; yields its root URL."""
    port = free_port()
    if kind == "waitress":
        with bibgraph_process([str(dataset), *SHARED], scratch / "waitress.log", port, timeout=600) as (root, _):
            yield warmed(root)
        return
    ready = "/sparql?query=ASK%7B%7D"
    itself = [sys.executable, "-m", "bench.serving.wsgiservers", str(dataset)]
    if kind == "granian":
        command = [*itself, "--serve-granian", str(port)]
    elif kind == "waitress floor":
        command = [sys.executable, "-m", "bench.serving.querypath", "--floor", str(scratch), "--port", str(port)]
        ready = "/ready"
    elif kind == "granian floor":
        command, ready = [*itself, "--serve-granian", str(port), "--floor", str(scratch)], "/ready"
    else:
        store = sparql.oxigraph_location(dataset)
        command = [str(Path(sys.executable).parent / "oxigraph"), "serve-read-only", "--location", str(store)]
        command += ["--bind", f"127.0.0.1:{port}"]
        ready = "/query?query=ASK%7B%7D"
    with (scratch / f"{kind}.log").open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            root = f"http://127.0.0.1:{port}"
            wait_for_http(root + ready, process, timeout=600)
            yield warmed(root) if kind == "granian" else root
        finally:
            stop(process, timeout=20)


def warmed(root: str) -> str:
    """``root`` once its default maps are made (the warm-up's work, not the requests')."""
    for view in ("/graph/coauthors", "/graph/topics"):
        with contextlib.closing(http.client.HTTPConnection(urllib.parse.urlsplit(root).netloc, timeout=600)) as c:
            c.request("GET", view)
            c.getresponse().read()
    return root


@dataclass(frozen=True)
class Call:
    """One request: method, path (relative to the server's root) and body."""

    method: str
    path: str
    body: bytes | None = None
    headers: tuple[tuple[str, str], ...] = ()


class Client:
    """Requests to one server: on one kept-alive connection, or a new connection for each."""

    def __init__(self, root: str, keep_alive: bool) -> None:
        self.netloc, self.keep_alive = urllib.parse.urlsplit(root).netloc, keep_alive
        self.connection: http.client.HTTPConnection | None = None

    def send(self, call: Call) -> int:
        if self.connection is None:
            self.connection = http.client.HTTPConnection(self.netloc, timeout=60)
        headers = dict(call.headers) | ({} if self.keep_alive else {"Connection": "close"})
        self.connection.request(call.method, call.path, body=call.body, headers=headers)
        response = self.connection.getresponse()
        response.read()
        if not self.keep_alive or response.will_close:
            self.close()
        if response.status != 200:
            raise RuntimeError(f"{call.method} {call.path}: {response.status}")
        return response.status

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def sparql_call(endpoint_path: str, query: str) -> Call:
    body = urllib.parse.urlencode({"query": query}).encode()
    headers = (
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Accept", "application/sparql-results+json"),
        ("Cache-Control", "no-cache"),
    )
    return Call("POST", endpoint_path, body, headers)


def calls(kind: str, queries: dict[str, str], paper_path: str) -> dict[str, Call]:
    """What ``kind`` is asked, by row: the SPARQL rows, and for bibgraph a page and a static asset."""
    if kind in FAMILY:
        return {FLOOR: sparql_call("/count", queries["count papers"])}
    endpoint = "/query" if kind == "oxigraph" else "/sparql"
    rows = {name: sparql_call(endpoint, queries[name]) for name in SPARQL_ROWS}
    if kind != "oxigraph":
        rows |= {"paper page": Call("GET", paper_path), "static asset": Call("GET", "/static/site.css")}
    return rows


Table = dict[str, dict[str, float]]


def latency(roots: dict[str, str], rows: dict[str, dict[str, Call]], runs: int) -> Table:
    """Median and p90 ms per row, keep-alive and not, per server; the servers in turn, request by request."""
    table: Table = {}
    names = list(dict.fromkeys(name for per in rows.values() for name in per))
    for keep_alive in (True, False):
        for name in names:
            kinds = [kind for kind in roots if name in rows[kind]]
            clients = {kind: Client(roots[kind], keep_alive) for kind in kinds}
            timings: dict[str, list[float]] = {kind: [] for kind in kinds}
            for kind in kinds:  # warm-up, for all alike
                clients[kind].send(rows[kind][name])
            for _ in range(runs):
                for kind in kinds:
                    started = time.perf_counter()
                    clients[kind].send(rows[kind][name])
                    timings[kind].append((time.perf_counter() - started) * 1000)
            for kind in kinds:
                clients[kind].close()
                cuts = statistics.quantiles(timings[kind], n=10)
                label = f"{name}, {'keep-alive' if keep_alive else 'new connection'}"
                row = table.setdefault(label, {})
                family = FAMILY.get(kind, kind)
                row |= {f"{family} median": statistics.median(timings[kind]), f"{family} p90": cuts[8]}
            print(f"{name} keep-alive={keep_alive}: {table[label]}", file=sys.stderr, flush=True)
    return table


def throughput(root: str, call: Call, clients: int, seconds: float) -> float:
    """Requests per second of ``clients`` threads, each on its own kept-alive connection, for ``seconds``."""
    done = [0] * clients
    errors: list[BaseException] = []
    until = time.monotonic() + seconds

    def loop(index: int) -> None:
        client = Client(root, keep_alive=True)
        try:
            while time.monotonic() < until:
                client.send(call)
                done[index] += 1
        except (OSError, RuntimeError, http.client.HTTPException) as error:
            errors.append(error)
        finally:
            client.close()

    threads = [threading.Thread(target=loop, args=(index,)) for index in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise RuntimeError(f"{len(errors)} clients failed: {errors[0]}")
    return sum(done) / seconds


def throughputs(roots: dict[str, str], rows: dict[str, dict[str, Call]], args: argparse.Namespace) -> Table:
    """Mean req/s over ``args.rounds`` rounds per row and server, the servers alternating round by round."""
    table: Table = {}
    for name in ("count papers", "paper page", FLOOR):
        kinds = [kind for kind in roots if name in rows[kind]]
        measured: dict[str, list[float]] = {kind: [] for kind in kinds}
        for _ in range(args.rounds):
            for kind in kinds:
                measured[kind].append(throughput(roots[kind], rows[kind][name], args.clients, args.seconds))
        label = f"{name}, {args.clients} clients (req/s)"
        table[label] = {FAMILY.get(kind, kind): statistics.mean(values) for kind, values in measured.items()}
        print(f"{label}: {measured}", file=sys.stderr, flush=True)
    return table


def report(table: Table, kinds: list[str], columns: tuple[str, ...]) -> None:
    """One markdown table: a column per server and figure, and each candidate's ratio to waitress."""
    heads = [f"{kind}{column}" for kind in kinds for column in columns]
    ratios = [kind for kind in kinds if kind != "waitress"]
    print("\n| measure | " + " | ".join(heads + [f"{kind} / waitress" for kind in ratios]) + " |")
    print("|---|" + "---:|" * (len(heads) + len(ratios)))
    for measure, row in table.items():
        cells = [f"{row[head]:,.2f}" if head in row else "n/a" for head in heads]
        first = f"waitress{columns[0]}"
        for kind in ratios:
            theirs = row.get(f"{kind}{columns[0]}")
            cells.append(f"{theirs / row[first]:.2f}" if theirs and row.get(first) else "n/a")
        print(f"| {measure} | " + " | ".join(cells) + " |")


def paper_path(store: OxigraphGraphStore, base: str) -> str:
    """The page of the first paper, as a path on any of the servers (its IRI minus the dataset's base)."""
    found = store.select(sparql.P + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle } ORDER BY ?p LIMIT 1")
    return "/" + str(found[0]["p"]).removeprefix(base)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path, help="a bibgraph dataset directory")
    parser.add_argument("--servers", nargs="+", default=list(SERVERS), choices=SERVERS)
    parser.add_argument("--runs", type=int, default=200, help="requests per row, server and connection kind")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=5.0, help="each throughput round's length")
    parser.add_argument("--rounds", type=int, default=3, help="throughput rounds per server and row")
    parser.add_argument("--scratch", type=Path, default=Path("."), help="where the servers' logs are written")
    parser.add_argument("--serve-granian", type=int, metavar="PORT", help=argparse.SUPPRESS)  # run as that server
    parser.add_argument("--floor", type=Path, help=argparse.SUPPRESS)  # ... serving the floor app's bodies
    args = parser.parse_args()
    dataset = args.dataset.resolve()
    if args.serve_granian:
        if args.floor:
            serve_granian_floor(args.floor, args.serve_granian)
        else:
            serve_granian(dataset, args.serve_granian)
        return
    sparql.EXISTING = dataset
    store = OxigraphGraphStore.disk(sparql.oxigraph_location(dataset), read_only=True)
    queries = sparql.bound_queries({name: sparql.QUERIES[name] for name in SPARQL_ROWS}, store)
    paper = paper_path(store, read_manifest(dataset_version(dataset))["base"])
    args.scratch.mkdir(parents=True, exist_ok=True)
    (args.scratch / "ready").write_bytes(b"")  # the floors' bodies: what the floor apps answer
    (args.scratch / "count").write_bytes(store.answer(queries["count papers"], "json", "nt").body)
    del store
    with contextlib.ExitStack() as stack:
        roots = {kind: stack.enter_context(started(kind, dataset, args.scratch)) for kind in args.servers}
        rows = {kind: calls(kind, queries, paper) for kind in roots}
        latencies = latency(roots, rows, args.runs)
        rates = throughputs(roots, rows, args)
    kinds = list(dict.fromkeys(FAMILY.get(kind, kind) for kind in roots))
    report(latencies, kinds, (" median", " p90"))
    report(rates, kinds, ("",))


if __name__ == "__main__":
    main()
