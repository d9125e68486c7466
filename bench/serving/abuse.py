"""Abuse a live ``bibgraph serve`` on loopback the way a hostile or unlucky public would, and measure a normal client.

Three scenarios, each against a fresh server, each bounded (it stops by itself):

- ``slow``: 20 clients loop slow queries (each runs until the query deadline) while one client
  sends cheap COUNT queries (with a pause between them, as a person or a polite script would):
  the cheap client's p50/p99 latency and its errors. Target: p99 <= 1 s, no error.
- ``crash``: one client loops a query that kills the query worker (a deeply nested group; each
  time with a new comment, so it is never refused from memory), then something kills the worker
  from outside every half second, while a normal client queries: the normal client's success
  rate in each phase. Target: >= 99 %.
- ``idle``: 200 connections that send half a request and nothing more, while a normal client
  queries: its answers and latency, against the same client with no idle connections first.
- ``costly`` (give ``--serve-args DATASET``): one client runs four whole-network downloads at once, each time
  with fresh parameters, while another asks for new maps, ego networks and a cached view: the other client's
  latencies (p50, p99) and statuses, the greedy client's statuses (429 past its share), and the server's process
  tree PSS over time; then ``--distinct`` whole-network computations in a row and the PSS after each (issue 25's
  memory target: at most 1.6x the figure after warm-up, the default map).
- ``gone`` (give ``--serve-args DATASET``): a client starts a whole-network download with fresh parameters and
  closes its socket ``--gone-after`` seconds later, ``--gone-runs`` times: the server's CPU seconds (utime + stime of
  its process tree, from /proc) in each second after the close, how long it takes to fall back to idle, and the
  next request's status and time. ``--server-python`` serves from another checkout's venv (a baseline).
  ``--gone-what sparql``: a SPARQL query that runs until its deadline instead (give ``serve --query-timeout 30``).

Every client has its own loopback address (127.0.0.N), as distinct clients would, since the
server shares its threads per client address. Requests ask for a fresh evaluation
(``Cache-Control: no-cache``). Usage: ``python -m bench.serving.abuse [--scenarios slow crash idle]``.
"""

import argparse
import contextlib
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.parse
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from bench.servers import stop
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.serving.memory import children, tree_pss

P = sparql_prologue()
SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"  # runs until the deadline
CHEAP = P + "SELECT (COUNT(?p) AS ?n) WHERE { ?p a schema:ScholarlyArticle }"
NORMAL = P + "SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(?n) LIMIT 20"
CRASHER = "SELECT * WHERE " + "{" * 5000 + "}" * 5000  # overflows the engine's stack
SCENARIOS = ("slow", "crash", "idle", "costly", "gone")
FORMATS = ("graphml", "gexf", "json", "vosviewer")


@dataclass
class Tally:
    """Statuses and latencies of one client's requests."""

    statuses: Counter = field(default_factory=Counter)
    seconds: list[float] = field(default_factory=list)

    def add(self, status: int, seconds: float) -> None:
        self.statuses[status] += 1
        self.seconds.append(seconds)

    @property
    def ok(self) -> int:
        return self.statuses[200]

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.seconds)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else float("nan")

    def line(self) -> str:
        total = sum(self.statuses.values())
        codes = ", ".join(f"{code}: {count}" for code, count in sorted(self.statuses.items()))
        return (
            f"{self.ok}/{total} answered 200 ({100 * self.ok / max(1, total):.1f} %); p50 {self.percentile(0.5):.3f} s,"
            f" p99 {self.percentile(0.99):.3f} s, max {max(self.seconds, default=float('nan')):.3f} s [{codes}]"
        )


def request(
    port: int,
    source: str,
    method: str,
    path: str,
    timeout: float,
    body: str | None = None,
    headers: dict[str, str] | None = None,
    opened: set[http.client.HTTPConnection] | None = None,
) -> tuple[int, float]:
    """One request from the loopback address ``source``, its body read through; the status (0: no answer) and the
    seconds it took. Its connection is in ``opened`` while it runs (another thread may close it: the client leaves)."""
    started = time.monotonic()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(source, 0))
    if opened is not None:
        opened.add(connection)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        response.read()
        status = response.status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        if opened is not None:
            opened.discard(connection)
        connection.close()
    return status, time.monotonic() - started


def post(port: int, source: str, query: str, timeout: float = 120.0) -> tuple[int, float]:
    """POST ``query`` to the endpoint, uncached, from ``source``."""
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Accept": "application/sparql-results+json",
        "Cache-Control": "no-cache",
    }
    return request(port, source, "POST", "/sparql", timeout, urllib.parse.urlencode({"query": query}), headers)


@contextlib.contextmanager
def server(args: argparse.Namespace) -> Iterator[tuple[int, subprocess.Popen]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [args.server_python, "-m", "bibgraph.web.commands.cli", "serve", "--port", str(port), *args.serve_args]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        ends = time.monotonic() + 300
        while post(port, "127.0.0.1", "ASK {}", timeout=5)[0] != 200:
            if process.poll() is not None or time.monotonic() > ends:
                raise RuntimeError("the server did not start")
            time.sleep(0.3)
        yield port, process
    finally:
        stop(process, timeout=20)


def loop_until(stop: threading.Event, port: int, source: str, make_query: Callable[[int], str], tally: Tally) -> None:
    number = 0
    while not stop.is_set():
        tally.add(*post(port, source, make_query(number)))
        number += 1


def scenario_slow(args: argparse.Namespace) -> None:
    with server(args) as (port, _):
        stop, slow = threading.Event(), Tally()
        hammers = [
            threading.Thread(target=loop_until, args=(stop, port, f"127.0.0.{2 + n}", lambda _: SLOW, slow))
            for n in range(args.slow_clients)
        ]
        for thread in hammers:
            thread.start()
        time.sleep(args.warm_up)  # every slow client has a query running or waiting
        cheap = Tally()
        for _ in range(args.requests):
            cheap.add(*post(port, "127.0.0.200", CHEAP))
            time.sleep(args.pause)
        stop.set()
        for thread in hammers:
            thread.join()
    print(f"(a) {args.slow_clients} slow clients + 1 cheap client ({args.requests} requests, {args.pause} s apart)")
    print(f"    cheap client: {cheap.line()}")
    print(f"    slow clients: {slow.line()}")


def scenario_crash(args: argparse.Namespace) -> None:
    with server(args) as (port, process):
        stop, attacker, normal = threading.Event(), Tally(), Tally()
        crashing = threading.Thread(
            target=loop_until, args=(stop, port, "127.0.0.2", lambda n: f"{CRASHER} # {n}", attacker)
        )
        crashing.start()
        for _ in range(args.requests):
            normal.add(*post(port, "127.0.0.3", NORMAL))
        stop.set()
        crashing.join()
        print(f"(b) 1 client looping a worker-killing query (new text each time) + 1 normal client ({args.requests})")
        print(f"    normal client: {normal.line()}")
        print(f"    attacker: {attacker.line()}")
        killed, normal = 0, Tally()
        for number in range(args.requests):
            if number % 5 == 0:  # about every half second: kill whichever process is the worker now
                workers = [worker for zygote in children(process.pid) for worker in children(zygote)]
                for pid in workers:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed += 1
            normal.add(*post(port, "127.0.0.3", NORMAL))
        print(f"    then the worker SIGKILLed from outside {killed} times; normal client: {normal.line()}")


def scenario_idle(args: argparse.Namespace) -> None:
    with server(args) as (port, _):
        before = Tally()
        for _ in range(args.requests):
            before.add(*post(port, "127.0.0.3", NORMAL))
        with contextlib.ExitStack() as idle:
            for n in range(args.idle_connections):
                connection = idle.enter_context(
                    socket.create_connection(("127.0.0.1", port), source_address=(f"127.0.1.{1 + n % 250}", 0))
                )
                connection.send(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the end of the request
            during = Tally()
            for _ in range(args.requests):
                during.add(*post(port, "127.0.0.3", NORMAL, timeout=30))
    print(f"(c) {args.idle_connections} idle connections + 1 normal client ({args.requests} requests)")
    print(f"    without them: {before.line()}")
    print(f"    with them:    {during.line()}")
    print(f"    p50 ratio with/without: {during.percentile(0.5) / before.percentile(0.5):.2f}")


def get(
    port: int, source: str, path: str, timeout: float = 600.0, opened: set[http.client.HTTPConnection] | None = None
) -> tuple[int, float]:
    """GET ``path`` from the loopback address ``source``."""
    return request(port, source, "GET", path, timeout, opened=opened)


def _authors(port: int, count: int) -> list[str]:
    """The paths of ``count`` authors' pages, from the sitemap (no map computed to find them). None found is an
    error: at 1M papers, under the greedy client, the sitemap once answered no author, and the other client asked
    nothing (its figures "0/0")."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    connection.request("GET", "/sitemap-authors-1.xml")
    response = connection.getresponse()
    text = response.read().decode()
    connection.close()
    locations = [urllib.parse.urlsplit(loc).path for loc in re.findall(r"<loc>([^<]+)</loc>", text)]
    if not locations:
        raise RuntimeError(f"/sitemap-authors-1.xml named no author (HTTP {response.status}): {text[:200]!r}")
    return locations[:: max(1, len(locations) // count)][:count]


def scenario_costly(args: argparse.Namespace) -> None:
    with server(args) as (port, process):
        started = time.monotonic()
        pss: list[tuple[float, int]] = [(0.0, tree_pss(process.pid))]
        get(port, "127.0.0.1", "/graph/coauthors")  # warm-up: the default map (kept by the dataset)
        pss.append((time.monotonic() - started, tree_pss(process.pid)))
        get(port, "127.0.0.1", "/graph/coauthors.json")  # and one whole-network download (kept by the dataset)
        pss.append((time.monotonic() - started, tree_pss(process.pid)))
        warm = pss[-1][1]
        authors = _authors(port, args.costly_requests)  # before the greedy client: finding them is not measured
        idle = _idle_cpu(process.pid)
        stop, greedy = threading.Event(), Tally()

        def sample() -> None:
            while not stop.wait(2.0):
                pss.append((time.monotonic() - started, tree_pss(process.pid)))

        fresh = iter(range(10**6))
        opened: set[http.client.HTTPConnection] = set()  # the greedy client's connections, closed when it leaves

        def download(index: int) -> None:  # one of the greedy client's four, with fresh parameters every time
            while not stop.is_set():
                number = next(fresh)
                resolution = 0.1 + (number % 99) / 10  # a new step each time
                path = f"/graph/coauthors.{FORMATS[index]}?resolution={resolution:.1f}&min_joint={1 + number // 99}"
                status, seconds = get(port, "127.0.0.2", path, opened=opened)
                if not stop.is_set():  # a download cut because its client left is no answer of the server's
                    greedy.add(status, seconds)
                if greedy.statuses[429] and greedy.seconds[-1] < 0.5:
                    time.sleep(1.0)  # as Retry-After asks (a polite greedy client; a rude one is refused the same)

        threads = [threading.Thread(target=sample), *(threading.Thread(target=download, args=(i,)) for i in range(4))]
        for thread in threads:
            thread.start()
        time.sleep(args.warm_up)
        maps, egos, kept = Tally(), Tally(), Tally()
        for number, author in enumerate(authors):
            maps.add(*get(port, "127.0.0.3", f"/graph/coauthors?min_papers={2 + number % 5}&min_joint={2 + number}"))
            egos.add(*get(port, "127.0.0.3", f"/graph/ego{author}?top={10 + number}"))
            kept.add(*get(port, "127.0.0.3", "/graph/coauthors"))  # a cached view (the dataset's default map)
            time.sleep(args.pause)
        stop.set()  # both clients leave: the greedy one closes its downloads' connections
        left = tree_cpu(process.pid)
        while any(thread.is_alive() for thread in threads):  # again: a request may connect just after a close
            for connection in list(opened):
                sock = connection.sock
                if sock is not None:
                    with contextlib.suppress(OSError):
                        sock.shutdown(socket.SHUT_RDWR)
            for thread in threads:
                thread.join(0.2)
        per_second = _cpu_each_second(process.pid, left, args.gone_watch)
        print("(d) 1 client: 4 whole-network downloads at once, fresh parameters; another: new maps and ego networks")
        print(f"    other client's new maps: {maps.line()}")
        print(f"    other client's ego networks: {egos.line()}")
        print(f"    other client's cached view (the default map): {kept.line()}")
        print(f"    greedy client: {greedy.line()}")
        print(f"    after both left: {_cpu_line(per_second, idle)}")
        peak = max(size for _, size in pss)
        print(
            f"    PSS (process tree): start {pss[0][1] / 2**20:.0f} MB, default map {pss[1][1] / 2**20:.0f} MB,"
            f" one whole network {warm / 2**20:.0f} MB,"
            f" peak {peak / 2**20:.0f} MB"
        )
        print(
            "    PSS over time (s: MB): "
            + ", ".join(f"{t:.0f}: {size / 2**20:.0f}" for t, size in pss[:: max(1, len(pss) // 20)])
        )
        after = []

        def joint(number: int) -> int:  # 1: every link, the whole network (fresh by its resolution)
            return 1 if args.distinct_whole else 50 + number

        for number in range(args.distinct):
            status, seconds = get(
                port,
                "127.0.0.4",
                f"/graph/coauthors.json?resolution={1.1 + number / 10:.1f}&min_joint={joint(number)}",  # not 1.0: kept
            )
            after.append((status, seconds, tree_pss(process.pid)))
            print(f"      {number + 1}: {status} in {seconds:.1f} s, PSS {after[-1][2] / 2**20:.0f} MB", flush=True)
        if after:
            print(
                f"    then {args.distinct} distinct whole-network computations in a row (status, s, PSS MB): "
                + ", ".join(f"{s} {t:.1f} {m / 2**20:.0f}" for s, t, m in after)
            )
            print(
                f"    PSS after them / after the default map (warm-up): {after[-1][2] / pss[1][1]:.2f};"
                f" / after one whole-network download: {after[-1][2] / warm:.2f}"
            )


def tree_cpu(pid: int) -> float:
    """CPU seconds (utime + stime) of ``pid`` and its descendants, from /proc (threads included), and of the
    children they reaped (cutime + cstime: a download's child process, once it has ended)."""
    total, pending, tick = 0.0, [pid], os.sysconf("SC_CLK_TCK")
    while pending:
        process = pending.pop()
        with contextlib.suppress(OSError, IndexError, ValueError):
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])) / tick
        pending += children(process)
    return total


def _idle_cpu(pid: int) -> float:
    """CPU-s per second the server's tree uses over one second (nothing asked of it by this bench meanwhile)."""
    before = tree_cpu(pid)
    time.sleep(1.0)
    return tree_cpu(pid) - before


def _cpu_each_second(pid: int, since: float, seconds: int) -> list[float]:
    """CPU-s the server's tree used in each of the next ``seconds`` seconds (``since``: its CPU-s now)."""
    per_second = []
    for _ in range(seconds):
        time.sleep(1.0)
        now = tree_cpu(pid)
        per_second.append(now - since)
        since = now
    return per_second


def _cpu_line(per_second: list[float], idle: float) -> str:
    """The CPU used in each second after the clients left, and the last second it was still busy."""
    busy = [n for n, used in enumerate(per_second, 1) if used > max(0.1, 3 * idle)]
    return (
        f"CPU-s in each second after the close: {', '.join(f'{u:.2f}' for u in per_second)}"
        f" (idle before {idle:.2f}); busy until {max(busy, default=0)} s after the close;"
        f" CPU-s in seconds 4-{len(per_second)}: {sum(per_second[3:]):.2f}"
    )


def scenario_gone(args: argparse.Namespace) -> None:
    with server(args) as (port, process):
        get(port, "127.0.0.1", "/graph/coauthors")  # warm-up: the default map, and the incidence every map needs
        get(port, "127.0.0.1", "/graph/coauthors.json?resolution=0.5&min_joint=1")
        what = "a query running until its deadline" if args.gone_what == "sparql" else "a whole-network download"
        print(f"(e) {what} with fresh parameters, its socket closed {args.gone_after} s in")
        for run in range(args.gone_runs):
            time.sleep(2.0)
            idle = _idle_cpu(process.pid)
            path = f"/graph/coauthors.{FORMATS[run % len(FORMATS)]}?resolution={1.1 + run / 10:.1f}&min_joint=1"
            if args.gone_what == "sparql":  # a query that runs until its deadline (give serve a long --query-timeout)
                path = f"/sparql?query={urllib.parse.quote(f'{SLOW} # {run}')}"
            connection = socket.create_connection(("127.0.0.1", port), source_address=("127.0.0.5", 0))
            accept = "Accept: application/sparql-results+json\r\n"
            connection.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n{accept}\r\n".encode())
            time.sleep(args.gone_after)
            connection.close()
            per_second = _cpu_each_second(process.pid, tree_cpu(process.pid), args.gone_watch)
            status, seconds = get(port, "127.0.0.6", "/graph/coauthors")
            print(f"    run {run + 1}: {_cpu_line(per_second, idle)}; next request {status} in {seconds:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    parser.add_argument("--requests", type=int, default=100, help="requests of the measured client per scenario")
    parser.add_argument("--pause", type=float, default=0.2, help="seconds between the cheap client's requests")
    parser.add_argument("--slow-clients", type=int, default=20)
    parser.add_argument("--warm-up", type=float, default=12.0, help="seconds the slow clients run before measuring")
    parser.add_argument("--idle-connections", type=int, default=200)
    parser.add_argument("--costly-requests", type=int, default=10, help="new maps and ego networks of the other client")
    parser.add_argument("--distinct", type=int, default=20, help="distinct whole-network computations for memory")
    parser.add_argument(
        "--distinct-whole", action="store_true", help="the distinct computations keep every link (else min_joint 50+)"
    )
    parser.add_argument("--gone-after", type=float, default=1.0, help="seconds before the download's socket closes")
    parser.add_argument("--gone-runs", type=int, default=3)
    parser.add_argument("--gone-what", choices=("download", "sparql"), default="download", help="what ``gone`` leaves")
    parser.add_argument("--gone-watch", type=int, default=12, help="seconds the server's CPU is watched after a close")
    parser.add_argument("--server-python", default=sys.executable, help="the Python that runs bibgraph serve")
    parser.add_argument(
        "--serve-args", nargs=argparse.REMAINDER, default=[], help="passed to bibgraph serve (last option)"
    )
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each figure as soon as it is measured
    print(f"bibgraph serve {' '.join(args.serve_args) or '(defaults: the seeds)'}; {os.cpu_count()} CPUs")
    for name in args.scenarios:
        globals()[f"scenario_{name}"](args)


if __name__ == "__main__":
    main()
