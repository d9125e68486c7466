"""Benchmark serving a dataset: build time, serve-ready time, per-page latency cold and warm, server memory.

Baseline measured in the same run: the Oxigraph server (``oxigraph serve-read-only``) on the very store
the dataset holds, answering a SPARQL query; memory is the proportional set size (PSS) of each server's
whole process tree, sampled every 0.2 s. "Ready" is the time from starting ``bibgraph serve DIR`` until
``/``, ``/sparql``, ``/graph/coauthors`` and an author page have all answered.
Each server run uses ``--query-threads N`` (one run per N) and ends with N whole-store queries at once, so
the memory figures show whether memory grows with the query threads.
Usage: ``python -m bench.serve --sizes 10000 100000`` (``--dataset DIR`` measures an existing dataset).
"""

import argparse
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench.generate import write_lists
from bench.servers import free_port, stop
from bench.sparql import MemoryWatch
from bibgraph.graph.datadir import STORE, current_version, read_manifest

COUNT_PAPERS = "SELECT (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/abstract> ?a }"
TOP_AUTHOR = """SELECT ?a (COUNT(?p) AS ?n) WHERE { ?p <http://purl.org/dc/terms/creator> ?a }
GROUP BY ?a ORDER BY DESC(?n) ?a LIMIT 2"""
ONE_PAPER = "SELECT ?p WHERE { ?p <http://purl.org/dc/terms/abstract> ?a } ORDER BY ?p LIMIT 1"
ONE_AREA = "SELECT ?c WHERE { ?c <http://www.w3.org/2004/02/skos/core#inScheme> ?s } ORDER BY ?c LIMIT 1"


def busy(n: int) -> str:
    """A query that reads the whole store (a different one per thread, so no answer comes from the cache)."""
    return f"SELECT (COUNT(*) + {n} AS ?n) WHERE {{ ?s ?p ?o }}"


def get(url: str, timeout: float = 600) -> float:
    """Seconds to fetch ``url`` completely (an HTTP error raises)."""
    started = time.perf_counter()
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        answer.read()
    return time.perf_counter() - started


def select(endpoint: str, query: str) -> list[list[str]]:
    url = urllib.request.Request(f"{endpoint}?query={urllib.parse.quote(query)}", headers={"Accept": "text/csv"})
    with urllib.request.urlopen(url, timeout=600) as answer:
        lines = answer.read().decode("utf-8").splitlines()[1:]
    return [line.split(",") for line in lines]


def wait_until(url: str, process: subprocess.Popen, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            get(url, timeout=5)
            return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(url)


def local(base: str, iri: str) -> str:
    """The app path of an IRI minted under ``base``."""
    return "/" + iri.removeprefix(base)


def measure(root: Path, log: Path, threads: int) -> list[tuple[str, float]]:
    version = current_version(root)
    base = read_manifest(version)["base"]
    figures, (top, paper, area) = oxigraph(version / STORE, threads)  # also finds the pages to ask for
    author, other = (local(base, row[0]) for row in top)
    paper, area = local(base, paper), local(base, area)
    port = free_port()
    server = f"http://127.0.0.1:{port}"
    bindir = Path(sys.executable).parent
    command = [str(bindir / "bibgraph"), "serve", str(root), "--port", str(port), "--timeout", "600"]
    command += ["--query-threads", str(threads), "--client-queries", "0"]  # one client here: no fair share
    started = time.perf_counter()
    with log.open("w") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        watch = MemoryWatch(process.pid)
        wait_until(f"{server}/health", process)
        figures.append(("serve: /health answers", time.perf_counter() - started))
        for path in ("/", f"/sparql?query={urllib.parse.quote(COUNT_PAPERS)}", "/graph/coauthors", author):
            figures.append((f"serve: first {path.split('?')[0]}", get(server + path)))
        figures.append(("serve: ready (/, /sparql, /graph/coauthors, top author page)", time.perf_counter() - started))
        pages = {
            "home": "/",
            "paper": paper,
            f"author ({top[0][1]} papers)": author,
            "area": area,
            "search": "/search?q=learning",
            "search, one letter": "/search?q=a",
            "author autocomplete": "/graph/authors.json?q=li",
            "co-author map": "/graph/coauthors",
            "co-author map, min 2 papers": "/graph/coauthors?min_papers=2",
            "ego": "/graph/ego" + author,
            "path": f"/graph/path?from={urllib.parse.quote(author)}&to={urllib.parse.quote(other)}",
            "topics": "/graph/topics",
        }
        for name, path in pages.items():
            cold = get(server + path)
            warm = get(server + path)
            figures += [(f"page {name}: first", cold), (f"page {name}: again", warm)]
        with ThreadPoolExecutor(threads) as clients:  # every query thread busy at once
            list(clients.map(lambda n: get(f"{server}/sparql?query={urllib.parse.quote(busy(n))}"), range(threads)))
        figures.append(("bibgraph server peak PSS (MB)", watch.stop()))
    finally:
        stop(process, timeout=20)
    return figures


def oxigraph(store: Path, threads: int) -> tuple[list[tuple[str, float]], tuple[list[list[str]], str, str]]:
    """The Oxigraph server on the same store: ready time and peak memory after the same queries as bibgraph's;
    and what it answered (the two most prolific authors, a paper, an area)."""
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}/query"
    bindir = Path(sys.executable).parent
    command = [str(bindir / "oxigraph"), "serve-read-only", "--location", str(store), "--bind", f"127.0.0.1:{port}"]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        watch = MemoryWatch(process.pid)
        wait_until(f"{endpoint}?query={urllib.parse.quote('ASK {}')}", process)
        ready = time.perf_counter() - started
        select(endpoint, COUNT_PAPERS)
        found = select(endpoint, TOP_AUTHOR), select(endpoint, ONE_PAPER)[0][0], select(endpoint, ONE_AREA)[0][0]
        with ThreadPoolExecutor(threads) as clients:  # as many whole-store queries at once as bibgraph gets
            list(clients.map(lambda n: get(f"{endpoint}?query={urllib.parse.quote(busy(n))}"), range(threads)))
        return [("oxigraph server: ready", ready), ("oxigraph server peak PSS (MB)", watch.stop())], found
    finally:
        stop(process, timeout=20)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000])
    parser.add_argument("--dataset", type=Path, help="measure this dataset rather than building one")
    parser.add_argument("--query-threads", type=int, nargs="+", default=[4, 16], help="one server run per count")
    args = parser.parse_args()
    print("| records | measure | seconds (or MB) |")
    print("|---:|---|---:|")
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        runs: list[tuple[str, Path]] = []
        if args.dataset:
            runs.append((str(read_manifest(current_version(args.dataset))["counts"]["records"]), args.dataset))
        for size in [] if args.dataset else args.sizes:
            write_lists(scratch / f"lists-{size}", size)
            root = scratch / f"dataset-{size}"
            started = time.perf_counter()
            bindir = Path(sys.executable).parent
            build = ["build", str(scratch / f"lists-{size}"), "--dataset", str(root), "--quiet"]
            subprocess.run([str(bindir / "bibgraph"), *build], check=True)
            print(f"| {size} | build --dataset | {time.perf_counter() - started:.2f} |", flush=True)
            runs.append((str(size), root))
        for size, root in runs:
            for threads in args.query_threads:
                for measure_name, value in measure(root, scratch / f"serve-{size}.log", threads):
                    print(f"| {size} | {measure_name} ({threads} query threads) | {value:.2f} |", flush=True)


if __name__ == "__main__":
    main()
