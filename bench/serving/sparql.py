"""Benchmark the SPARQL endpoint over HTTP against Oxigraph's own server and rdflib-endpoint.

All servers load the same N-Triples dump of synthetic lists, in the same run, on loopback, and
run side by side; latency requests go to each in turn, so a slow spell of a shared machine hits all.
Reported: median latency of eight queries, throughput with 8 concurrent clients, and peak memory
(PSS summed over each server's process tree, so pages bibgraph's processes share copy-on-write are
counted once). Requests ask for a fresh evaluation (``Cache-Control: no-cache``); bibgraph is also
measured answering repeated queries from its answer cache, the "(cached)" rows. Usage:
``python -m bench.serving.sparql --sizes 10000 100000`` (needs ``pip install -e '.[bench]'``). ``--before PYTHON``
adds "bibgraph-before": the bibgraph that ``PYTHON`` imports (say, a venv holding ``main``), so a change is
measured against the code before it in the same run. ``--store-dir PATH`` measures an existing store instead of
building one: a bibgraph dataset directory (served by ``bibgraph serve PATH``) or an on-disk store directory
(``--store disk:PATH``), with Oxigraph's ``serve-read-only`` over the same files; only the two on-disk servers run
(``bibgraph-disk``, ``oxigraph``; with ``--before``, also ``bibgraph-before``), nothing is written into the store.
"""

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.generate import write_lists
from bench.servers import kept_top_authors, stop
from bibgraph.graph.dataset.build import build_graph
from bibgraph.graph.dataset.directory import current_version, is_dataset
from bibgraph.graph.dataset.dumps import write_dump
from bibgraph.graph.rdf.formats import rdf_syntax
from bibgraph.graph.rdf.vocab import sparql_prologue
from bibgraph.graph.sparql.queries import integer
from bibgraph.graph.stores.store import OxigraphGraphStore

P = sparql_prologue()
QUERIES = {
    "count papers": P + "SELECT (COUNT(?p) AS ?n) WHERE { ?p a schema:ScholarlyArticle }",
    "papers per area": P + "SELECT ?c (COUNT(?p) AS ?n) WHERE { ?p dcterms:subject ?s . ?s skos:broader? ?c ."
    " ?c skos:topConceptOf ?scheme } GROUP BY ?c",
    "co-authors of an author": P + "SELECT ?b (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator <AUTHOR>, ?b"
    " FILTER(?b != <AUTHOR>) } GROUP BY ?b ORDER BY DESC(?n)",
    "top 20 authors": P + "SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator ?a } GROUP BY ?a"
    " ORDER BY DESC(?n) LIMIT 20",
    "co-author pairs": P + "SELECT ?a ?b (COUNT(?p) AS ?n) WHERE { ?p dcterms:creator ?a, ?b"
    " FILTER(STR(?a) < STR(?b)) } GROUP BY ?a ?b",
    "abstract word": P + 'SELECT ?p WHERE { ?p dcterms:abstract ?t FILTER(CONTAINS(LCASE(?t), "federated")) }',
    "describe paper": "DESCRIBE <PAPER>",
    "two-hop co-authors": P + "SELECT DISTINCT ?c WHERE { ?p1 dcterms:creator <AUTHOR>, ?b ."
    " ?p2 dcterms:creator ?b, ?c FILTER(?c != <AUTHOR>) }",
}
THROUGHPUT = ("count papers", "co-authors of an author", "top 20 authors")
SERVERS = ("bibgraph", "bibgraph-disk", "oxigraph-memory", "oxigraph", "rdflib-endpoint")
CACHED = " (cached)"  # bibgraph answering a repeated query from its answer cache
CACHE_LIMIT = 4 * 1024 * 1024  # bibgraph keeps answers up to an eighth of its 32 MiB cache


REQUEST_TIMEOUT = 300.0


def request(endpoint: str, query: str, timeout: float | None = None, cached: bool = False) -> bytes:
    """POST ``query``; unless ``cached``, ask for a fresh evaluation (bibgraph caches answers, the others ignore it)."""
    data = urllib.parse.urlencode({"query": query}).encode()
    accept = "application/n-triples" if query.startswith("DESCRIBE") else "application/sparql-results+json"
    headers = {"Accept": accept} | ({} if cached else {"Cache-Control": "no-cache"})
    req = urllib.request.Request(endpoint, data=data, headers=headers)
    with urllib.request.urlopen(req, timeout=timeout or REQUEST_TIMEOUT) as response:
        return response.read()


def pss_kb(root: int, children: bool = True) -> int:
    """Proportional set size of ``root`` and (unless ``children`` is false) its descendants."""
    total = 0
    pids = [root]
    while pids:
        pid = pids.pop()
        with contextlib.suppress(OSError):
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
            if not children:
                break
            for task in os.listdir(f"/proc/{pid}/task"):
                with contextlib.suppress(OSError):
                    pids.extend(int(c) for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split())
    return total


class MemoryWatch:
    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._stop = pid, 0, threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, pss_kb(self.pid))
            time.sleep(0.2)

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return self.peak / 1024


def wait(endpoint: str, process: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            request(endpoint, "ASK { ?s ?p ?o }", timeout=5)
            return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(endpoint)


BEFORE = "bibgraph-before"  # bibgraph as another interpreter imports it (--before)
BEFORE_PYTHON = ""


EXISTING: Path | None = None  # --store-dir: a dataset or store directory measured as it is


def oxigraph_location(existing: Path) -> Path:
    """The store directory of a dataset (its current version's), or ``existing`` when it is a store."""
    return current_version(existing) / "store" if is_dataset(existing) else existing


@contextlib.contextmanager
def server(kind: str, dump: Path, scratch: Path, port: int) -> Iterator[tuple[str, subprocess.Popen]]:
    bindir = Path(sys.executable).parent
    if kind.startswith("bibgraph"):
        store = f"disk:{scratch / 'bibgraph-store'}" if kind == "bibgraph-disk" else "memory"
        source = [str(dump)]
        if EXISTING is not None:
            source, store = ([str(EXISTING)], "") if is_dataset(EXISTING) else ([], f"disk:{EXISTING}")
        launch = [BEFORE_PYTHON, "-m", "bibgraph"] if kind == BEFORE else [str(bindir / "bibgraph")]
        command = [
            *launch,
            "serve",
            *source,
            "--port",
            str(port),
            *(["--store", store] if store else []),
            "--timeout",
            "600",
            "--query-threads",
            "8",
            "--max-result-bytes",  # the others send any answer: let bibgraph too, for the co-author pairs
            str(2**40),
            "--client-queries",  # every bench client has the same address; the others have no per-client share
            "0",
        ]
    elif kind == "oxigraph-memory":  # in memory, loaded over HTTP once it listens
        command = [str(bindir / "oxigraph"), "serve", "--bind", f"127.0.0.1:{port}"]
    elif kind == "oxigraph":
        location = scratch / "oxigraph-store" if EXISTING is None else oxigraph_location(EXISTING)
        if EXISTING is None:
            subprocess.run(
                [str(bindir / "oxigraph"), "load", "--location", str(location), "--file", str(dump)],
                check=True,
                capture_output=True,
            )
        command = [
            str(bindir / "oxigraph"),
            "serve-read-only",
            "--location",
            str(location),
            "--bind",
            f"127.0.0.1:{port}",
        ]
    else:
        command = [str(bindir / "rdflib-endpoint"), "serve", str(dump), "--host", "127.0.0.1", "--port", str(port)]
    path = {"oxigraph": "query", "oxigraph-memory": "query", "rdflib-endpoint": ""}.get(kind, "sparql")
    endpoint = f"http://127.0.0.1:{port}/{path}"  # rdflib-endpoint serves at /
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(endpoint, process, timeout=1800)
        if kind == "oxigraph-memory":
            load = urllib.request.Request(
                f"http://127.0.0.1:{port}/store?default",
                data=dump.read_bytes(),
                headers={"Content-Type": "application/n-triples"},
            )
            urllib.request.urlopen(load, timeout=1800).read()
        yield endpoint, process
    finally:
        stop(process, timeout=20)


def throughput(endpoint: str, query: str, clients: int = 8, seconds: float = 5.0, cached: bool = False) -> float:
    done = [0] * clients
    stop = time.monotonic() + seconds

    def loop(index: int) -> None:
        while time.monotonic() < stop:
            request(endpoint, query, cached=cached)
            done[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / seconds


@dataclass
class Running:
    """A server under test and what was measured of it."""

    kind: str
    endpoint: str
    process: subprocess.Popen
    row: dict[str, float] = field(default_factory=dict)
    watch: "MemoryWatch | None" = None


def start_all(kinds: list[str], dump: Path, scratch: Path, stack: contextlib.ExitStack) -> list[Running]:
    """Start every server (each timed alone) and let bibgraph's background view warm-up finish."""
    running = []
    for index, kind in enumerate(kinds):
        started = time.monotonic()
        try:
            endpoint, process = stack.enter_context(server(kind, dump, scratch, 7900 + index))
        except Exception as error:  # a baseline that cannot load this size is reported, not fatal
            print(f"{kind} failed to start: {error}", file=sys.stderr)
            continue
        server_row = Running(kind, endpoint, process, {"start s": time.monotonic() - started})
        if kind.startswith("bibgraph"):  # the warm-up is not endpoint work: wait for it
            warm = time.monotonic()
            for view in ("/graph/coauthors", "/graph/topics"):
                urllib.request.urlopen(endpoint.removesuffix("/sparql") + view, timeout=1800).read()
            server_row.row["views warm-up s"] = time.monotonic() - warm
        running.append(server_row)
    for server_row in running:
        server_row.watch = MemoryWatch(server_row.process.pid)
    return running


def interleaved_latency(targets: list[Running], queries: dict[str, str], runs: int, cached: bool) -> dict[str, int]:
    """Median latency per server, the servers taking turns request by request so that a slow spell of
    this shared machine hits them alike; returns each query's answer size."""
    sizes = {}
    for name, query in queries.items():
        label = name + (CACHED if cached else "")
        timings: dict[str, list[float]] = {}
        for target in targets:
            try:
                sizes[name] = len(request(target.endpoint, query, cached=cached))  # warm-up, for all alike
                timings[target.kind] = []
            except OSError as error:  # a timeout or a refusal is a result: reported as nan
                print(f"{target.kind} {label}: {error}", file=sys.stderr)
                target.row[label] = float("nan")
        for _ in range(runs):
            for target in targets:
                if target.kind in timings:
                    started = time.perf_counter()
                    request(target.endpoint, query, cached=cached)
                    timings[target.kind].append(time.perf_counter() - started)
        for target in targets:
            if target.kind in timings:
                target.row[label] = statistics.median(timings[target.kind]) * 1000
    return sizes


def measure(running: list[Running], queries: dict[str, str], args: argparse.Namespace) -> None:
    """Latency of every query and throughput of a few; bibgraph also as answered from its cache
    (only answers small enough to be cached: the others would just be measured twice)."""
    sizes = interleaved_latency(running, queries, args.runs, cached=False)
    ours = [target for target in running if target.kind.startswith("bibgraph")]
    cacheable = {name: query for name, query in queries.items() if sizes.get(name, 0) < CACHE_LIMIT}
    interleaved_latency(ours, cacheable, args.runs, cached=True)
    for name in () if args.no_throughput else [name for name in THROUGHPUT if name in queries]:
        for cached, targets in ((False, running), (True, ours)):
            for target in targets:
                label = f"{name}{CACHED if cached else ''} req/s"
                try:
                    target.row[label] = throughput(target.endpoint, queries[name], seconds=args.seconds, cached=cached)
                except OSError:
                    target.row[label] = float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--servers", nargs="+", default=list(SERVERS))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each throughput measurement")
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT)
    parser.add_argument("--no-throughput", action="store_true")
    parser.add_argument("--before", metavar="PYTHON", help="also measure the bibgraph this interpreter imports")
    parser.add_argument("--store-dir", type=Path, help="measure this dataset or disk store rather than building one")
    parser.add_argument("--only", nargs="+", help="measure only the queries whose names contain one of these words")
    args = parser.parse_args()
    globals()["REQUEST_TIMEOUT"] = args.request_timeout
    if args.only:
        for name in [name for name in QUERIES if not any(word in name for word in args.only)]:
            del QUERIES[name]
    if args.before:
        globals()["BEFORE_PYTHON"] = args.before
        args.servers = [BEFORE, *args.servers]
    if args.store_dir:
        globals()["EXISTING"] = args.store_dir.resolve()
        args.servers = [kind for kind in args.servers if kind in (BEFORE, "bibgraph-disk", "oxigraph")]
        store = OxigraphGraphStore.disk(oxigraph_location(args.store_dir), read_only=True)
        with tempfile.TemporaryDirectory() as scratch_name, contextlib.ExitStack() as stack:
            papers = store.select(P + "SELECT (COUNT(?p) AS ?n) WHERE { ?p a schema:ScholarlyArticle }")[0]["n"]
            run(integer(papers), store, Path(scratch_name) / "unused.nt", Path(scratch_name), stack, args)
        return
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as scratch_name, contextlib.ExitStack() as stack:
            scratch = Path(scratch_name)
            built, _ = build_graph(write_lists(scratch / "lists", size), progress=False)
            dump = scratch / "dump.nt"
            write_dump(built, dump, rdf_syntax("nt"))
            run(size, built, dump, scratch, stack, args)


def bound_queries(queries: dict[str, str], store: Any) -> dict[str, str]:
    """``queries`` with AUTHOR the most prolific author and PAPER the first paper: the author from the incidence
    an existing dataset keeps (a GROUP BY over every creator takes minutes at a million papers)."""
    kept = kept_top_authors(oxigraph_location(EXISTING).parent) if EXISTING is not None else []
    author = (
        kept[0][0]
        if kept
        else store.select(
            P + "SELECT ?a WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(COUNT(?p)) ?a LIMIT 1"
        )[0]["a"]
    )
    paper = store.select(P + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle } ORDER BY ?p LIMIT 1")[0]["p"]
    return {n: q.replace("AUTHOR", str(author)).replace("PAPER", str(paper)) for n, q in queries.items()}


def run(
    size: int, store: Any, dump: Path, scratch: Path, stack: contextlib.ExitStack, args: argparse.Namespace
) -> None:
    """Measure every server over ``store``'s data (``dump`` of it, unless an existing store is measured)."""
    queries = bound_queries(QUERIES, store)
    del store
    running = start_all(args.servers, dump, scratch, stack)
    measure(running, queries, args)
    results: dict[str, dict[str, Any]] = {kind: {} for kind in args.servers}
    for target in running:
        assert target.watch is not None  # start_all watches every server it started
        target.row["peak MB"] = target.watch.stop()
        results[target.kind] = target.row
        print(f"{size} {target.kind}: {target.row}", file=sys.stderr, flush=True)
    report(size, results)


PAIRS = (  # (ours, theirs): each bibgraph store next to the Oxigraph server with the same kind of storage
    (BEFORE, "oxigraph-memory"),
    ("bibgraph", "oxigraph-memory"),
    ("bibgraph-disk", "oxigraph"),
)
EXISTING_PAIRS = ((BEFORE, "oxigraph"), ("bibgraph-disk", "oxigraph"))  # --store-dir: both serve that store


def report(size: int, results: dict[str, dict[str, float]]) -> None:
    """One markdown table; ratios compare like with like, cached rows against the others' evaluation."""
    kinds = list(results)
    known = PAIRS if EXISTING is None else EXISTING_PAIRS
    pairs = [(ours, theirs) for ours, theirs in known if results.get(ours) and results.get(theirs)]
    rdflib = results.get("rdflib-endpoint", {})
    print(f"\n### {size} records: median latency (ms), throughput (req/s, 8 clients), peak memory (MB)\n")
    ratios = [f"{ours} / {theirs}" for ours, theirs in pairs] + ["rdflib-endpoint / bibgraph"]
    print("| measure | " + " | ".join(kinds + ratios) + " |")
    print("|---|" + "---:|" * (len(kinds) + len(ratios)))
    measures = list(dict.fromkeys(m for row in results.values() for m in row))
    for measure in measures:
        plain = measure.replace(CACHED, "")
        cells = [f"{results[k][measure]:,.1f}" if measure in results[k] else "n/a" for k in kinds]
        for ours, theirs in pairs:
            mine, other = results[ours].get(measure), results[theirs].get(plain)
            cells.append(f"{mine / other:.2f}" if mine and other else "n/a")
        mine = results.get("bibgraph", {}).get(measure)
        cells.append(f"{rdflib[plain] / mine:.1f}" if mine and rdflib.get(plain) else "n/a")
        print(f"| {measure} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
