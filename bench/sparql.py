"""Benchmark the SPARQL endpoint over HTTP against Oxigraph's own server and rdflib-endpoint.

All servers load the same N-Triples dump of synthetic lists, in the same run, on loopback.
Reported: median latency of eight queries, throughput with 8 concurrent clients, and peak memory
(PSS summed over each server's process tree, so copy-on-write pages shared by bibgraph's query
workers are counted once). Usage:
``python -m bench.sparql --sizes 10000 100000`` (needs ``pip install -e '.[bench]'``).
"""

import argparse
import contextlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from bench.generate import write_lists
from bibgraph.graph.build import build_graph
from bibgraph.graph.dump import write_dump
from bibgraph.graph.formats import rdf_syntax
from bibgraph.graph.vocab import sparql_prologue

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


REQUEST_TIMEOUT = 300.0


def request(endpoint: str, query: str, timeout: float | None = None) -> bytes:
    data = urllib.parse.urlencode({"query": query}).encode()
    accept = "application/n-triples" if query.startswith("DESCRIBE") else "application/sparql-results+json"
    req = urllib.request.Request(endpoint, data=data, headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=timeout or REQUEST_TIMEOUT) as response:
        return response.read()


def pss_kb(root: int) -> int:
    """Proportional set size of ``root`` and its descendants."""
    total = 0
    pids = [root]
    while pids:
        pid = pids.pop()
        with contextlib.suppress(OSError):
            rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
            total += sum(int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:"))
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


@contextlib.contextmanager
def server(kind: str, dump: Path, scratch: Path, port: int) -> Iterator[tuple[str, subprocess.Popen]]:
    bindir = Path(sys.executable).parent
    if kind.startswith("bibgraph"):
        store = "memory" if kind == "bibgraph" else f"disk:{scratch / 'bibgraph-store'}"
        command = [
            str(bindir / "bibgraph"),
            "serve",
            str(dump),
            "--port",
            str(port),
            "--store",
            store,
            "--timeout",
            "600",
            "--query-threads",
            "8",
        ]
    elif kind == "oxigraph":
        location = scratch / "oxigraph-store"
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
    path = {"oxigraph": "query", "rdflib-endpoint": ""}.get(kind, "sparql")  # rdflib-endpoint serves at /
    endpoint = f"http://127.0.0.1:{port}/{path}"
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait(endpoint, process, timeout=1800)
        yield endpoint, process
    finally:
        process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=20)
        process.kill()


def throughput(endpoint: str, query: str, clients: int = 8, seconds: float = 5.0) -> float:
    done = [0] * clients
    stop = time.monotonic() + seconds

    def loop(index: int) -> None:
        while time.monotonic() < stop:
            request(endpoint, query)
            done[index] += 1

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--servers", nargs="+", default=["bibgraph", "bibgraph-disk", "oxigraph", "rdflib-endpoint"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0, help="duration of each throughput measurement")
    parser.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT)
    parser.add_argument("--no-throughput", action="store_true")
    args = parser.parse_args()
    globals()["REQUEST_TIMEOUT"] = args.request_timeout
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as scratch_name:
            scratch = Path(scratch_name)
            store, _ = build_graph(write_lists(scratch / "lists", size), progress=False)
            dump = scratch / "dump.nt"
            write_dump(store, dump, rdf_syntax("nt"))
            author = store.select(
                P + "SELECT ?a WHERE { ?p dcterms:creator ?a } GROUP BY ?a ORDER BY DESC(COUNT(?p)) ?a LIMIT 1"
            )[0]["a"]
            paper = store.select(P + "SELECT ?p WHERE { ?p a schema:ScholarlyArticle } ORDER BY ?p LIMIT 1")[0]["p"]
            del store
            queries = {n: q.replace("AUTHOR", str(author)).replace("PAPER", str(paper)) for n, q in QUERIES.items()}
            results: dict[str, dict[str, float]] = {}
            for kind in args.servers:
                (scratch / "bibgraph-store").exists() and shutil.rmtree(scratch / "bibgraph-store")
                started = time.monotonic()
                try:
                    with server(kind, dump, scratch, 7900 + len(results)) as (endpoint, process):
                        row: dict[str, float] = {"start s": time.monotonic() - started}
                        if kind.startswith("bibgraph"):
                            # Let the background warm-up of the network views finish: it is not endpoint work.
                            warm = time.monotonic()
                            site = endpoint.removesuffix("/sparql")
                            for view in ("/graph/coauthors", "/graph/topics"):
                                urllib.request.urlopen(site + view, timeout=1800).read()
                            row["views warm-up s"] = time.monotonic() - warm
                        watch = MemoryWatch(process.pid)
                        for name, query in queries.items():
                            try:
                                request(endpoint, query)  # warm-up, for every server alike
                                timings = []
                                for _ in range(args.runs):
                                    t = time.perf_counter()
                                    request(endpoint, query)
                                    timings.append(time.perf_counter() - t)
                                row[name] = statistics.median(timings) * 1000
                            except OSError as error:  # a timeout is a result: "slower than the limit"
                                print(f"{size} {kind} {name}: {error}", file=sys.stderr)
                                row[name] = float("nan")
                        for name in () if args.no_throughput else THROUGHPUT:
                            try:
                                row[f"{name} req/s"] = throughput(endpoint, queries[name], seconds=args.seconds)
                            except OSError:
                                row[f"{name} req/s"] = float("nan")
                        row["peak MB"] = watch.stop()
                except Exception as error:  # a baseline that cannot load this size is reported, not fatal
                    print(f"{size}: {kind} failed: {error}", file=sys.stderr)
                    row = {}
                results[kind] = row
                print(f"{size} {kind}: {row}", file=sys.stderr, flush=True)
            report(size, results)


def report(size: int, results: dict[str, dict[str, float]]) -> None:
    kinds = list(results)
    oxigraph = results.get("oxigraph", {})
    rdflib = results.get("rdflib-endpoint", {})
    print(f"\n### {size} records: median latency (ms), throughput (req/s, 8 clients), peak memory (MB)\n")
    print("| measure | " + " | ".join(kinds) + " | bibgraph / oxigraph | rdflib-endpoint / bibgraph |")
    print("|---|" + "---:|" * (len(kinds) + 2))
    measures = list(next((r for r in results.values() if r), {}).keys())
    for measure in measures:
        cells = [f"{results[k][measure]:,.1f}" if measure in results[k] else "n/a" for k in kinds]
        ours = results.get("bibgraph", {}).get(measure)
        vs_ox = f"{ours / oxigraph[measure]:.2f}" if ours and oxigraph.get(measure) else "n/a"
        vs_rdflib = f"{rdflib[measure] / ours:.1f}" if ours and rdflib.get(measure) else "n/a"
        print(f"| {measure} | " + " | ".join(cells) + f" | {vs_ox} | {vs_rdflib} |")


if __name__ == "__main__":
    main()
